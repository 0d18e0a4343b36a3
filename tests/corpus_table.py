"""The portability corpus (tests/corpus/): its workspace, and its table in docs/portability.md.

The corpus workspace is a fresh sort demo (`rgpu new`: its two bitonic kernels, and the
kernels of rgpu-primitives, which its kernel crate depends on for the radix sort) whose kernel
crate gets the corpus's kernels as modules: tests/corpus/kernels.rs (the corpus's own kernels)
as `corpus`, and each real file of INCLUDED (the kernels the repository's Rust files define:
a template's, the benchmarks', those tests write into a kernel crate) as its module, so the
corpus covers those by inclusion, not by copy; tests/corpus/main.rs becomes the program
`corpus`, which runs every corpus kernel and prints a checksum a kernel.

The table says, per kernel, whether rgpu's build reached each platform's language (WGSL,
MSL, HLSL: naga translated the kernel and its validator accepted it) or why not, as the
build's manifest records it. tests/integration/test_corpus.py builds the corpus, renders the
table and compares it with the one in docs/portability.md (RGPU_UPDATE_DOCS=1 writes it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "corpus"
DOC = REPO / "docs" / "portability.md"
BEGIN = "<!-- corpus table: tests/integration/test_corpus.py writes it (RGPU_UPDATE_DOCS=1) -->"
END = "<!-- end of the corpus table -->"
COLUMNS = (("webgpu", "WGSL (WebGPU)"), ("metal", "MSL (Metal)"), ("dx12", "HLSL (DirectX 12)"))
# The sort demo's own kernels: in the corpus workspace through the template.
SORT_KERNELS = ("bitonic_tile", "bitonic_global")
# The library of kernels the demo's kernel crate depends on (its radix sort is `sort_keys`):
# `rgpu build` compiles all its kernels into the workspace's module.
PRIMITIVES = REPO / "crates" / "rgpu-primitives"
KERNEL = re.compile(r"#\[rgpu::kernel(?:\([^)]*\))?\]\s*(?:///[^\n]*\n\s*)*pub fn (\w+)")
# The real files the corpus includes, each as a module of the corpus workspace's kernel crate
# (module -> the file, from the repository's root): copied as they are, except that a crate
# root's own lines (`#![...]` and `rgpu::embed_kernels!();`: the corpus crate has its own)
# are left blank, so every line keeps its number.
INCLUDED = {
    "minimal": "templates/minimal/kernel/src/lib.rs",
    # Kernels that Python writes into a kernel crate, read from these files.
    "norm": "tests/kernels/norm.rs",  # tests/integration/test_kernel_api.py
    "unrolled": "tests/kernels/unrolled.rs",  # test_kernel_api.py
    "mandelbrot": "benchmarks/startup_and_launch_overhead_kernel.rs",
    "brighten": "tests/kernels/brighten.rs",  # tests/integration/test_init_story.py
    "mad_chain": "tests/kernels/mad_chain.rs",  # tests/saxpy.py
    # The benchmarks' kernel crates.
    "math_precision": "benchmarks/math_precision/kernel/src/lib.rs",
    "user_kernels": "benchmarks/user_kernels/kernel/src/kernels.rs",
}
CRATE_ROOT_LINE = re.compile(r"#!\[.*\]|rgpu::embed_kernels!\(\);")


def modules() -> dict[str, Path]:
    """The corpus's modules in the workspace's kernel crate: its own file, then INCLUDED."""
    return {"corpus": CORPUS / "kernels.rs", **{m: REPO / p for m, p in INCLUDED.items()}}


def module_text(path: Path) -> str:
    """A corpus file as its module holds it: crate-root lines blank."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#![") and not CRATE_ROOT_LINE.fullmatch(line):
            raise ValueError(f"{path}:{i + 1}: a crate-level attribute on more than one line")
    return "\n".join("" if CRATE_ROOT_LINE.fullmatch(line) else line for line in lines)


def corpus_kernels() -> list[str]:
    """The corpus's kernels: kernels.rs's, then each included file's, each in its order."""
    return [k for path in modules().values() for k in KERNEL.findall(path.read_text("utf-8"))]


def primitives_kernels() -> list[str]:
    """rgpu-primitives' kernels, file by file (sorted), each file's in its order."""
    files = sorted((PRIMITIVES / "src").rglob("*.rs"))
    return [k for path in files for k in KERNEL.findall(path.read_text(encoding="utf-8"))]


def workspace_kernels() -> list[str]:
    """Every kernel of the corpus workspace's module, in the table's order."""
    return [*corpus_kernels(), *SORT_KERNELS, *primitives_kernels()]


def make_workspace(ws: Path) -> None:
    """Turn a fresh sort demo at `ws` into the corpus workspace."""
    kernel = ws / "kernel"
    for module, path in modules().items():
        (kernel / "src" / f"{module}.rs").write_text(module_text(path), encoding="utf-8")
    lib = kernel / "src" / "lib.rs"
    declared = "".join(f"pub mod {module};\n" for module in modules())
    lib.write_text(lib.read_text(encoding="utf-8") + "\n" + declared, encoding="utf-8")
    manifest = kernel / "Cargo.toml"
    text = manifest.read_text(encoding="utf-8")
    # `norm` calls a third-party no_std crate, as test_kernel_api.py's user does.
    text = text.replace("[dependencies]\n", '[dependencies]\nlibm = "0.2"\n', 1)
    manifest.write_text(text, encoding="utf-8")
    (ws / "src" / "bin").mkdir(parents=True, exist_ok=True)
    (ws / "src" / "bin" / "corpus.rs").write_text(
        (CORPUS / "main.rs").read_text(encoding="utf-8"), encoding="utf-8"
    )


def cell(platform: str, status: str, sources: Mapping[str, Any]) -> str:
    """One kernel on one platform: `yes`, or `no:` and why (the construct and where in
    the source, else naga's message)."""
    if status == "ok":
        return "yes"
    place = sources.get(platform, {})
    if "construct" in place:
        where = f" (`{place['source']}`)" if "source" in place else ""
        return f"no: {place['construct']}{where}"
    return "no: " + status.replace("|", "\\|").replace("`", "'")


def table(extra: Mapping[str, Any], kernels: list[str]) -> str:
    """The markdown table of the corpus's SPIR-V artifact (`extra` of its manifest entry)."""
    results: Mapping[str, Mapping[str, str]] = extra["portability"]
    sources: Mapping[str, Any] = extra.get("sources", {})
    lines = [
        "| kernel | " + " | ".join(title for _, title in COLUMNS) + " |",
        "|---|" + "---|" * len(COLUMNS),
    ]
    for kernel in kernels:
        row = results[kernel]
        at = sources.get(kernel, {})
        cells = [cell(platform, row[platform], at) for platform, _ in COLUMNS]
        lines.append(f"| `{kernel}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def documented() -> str:
    """The table as docs/portability.md has it."""
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n") + "\n"


def write_documented(new: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + new + text[end:], encoding="utf-8")
