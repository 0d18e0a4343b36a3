"""The portability corpus (tests/corpus/): its workspace, and its table in docs/portability.md.

The corpus workspace is a fresh sort demo (`rgpu new`: its two bitonic kernels, and the
kernels of rgpu-primitives, which its kernel crate depends on for the radix sort) with
tests/corpus/kernels.rs as the kernel crate's `corpus` module and tests/corpus/main.rs as the
program `corpus`, which runs every corpus kernel and prints a checksum a kernel.

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


def corpus_kernels() -> list[str]:
    """The corpus's kernels, in the order kernels.rs declares them."""
    return KERNEL.findall((CORPUS / "kernels.rs").read_text(encoding="utf-8"))


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
    (kernel / "src" / "corpus.rs").write_text(
        (CORPUS / "kernels.rs").read_text(encoding="utf-8"), encoding="utf-8"
    )
    lib = kernel / "src" / "lib.rs"
    lib.write_text(lib.read_text(encoding="utf-8") + "\npub mod corpus;\n", encoding="utf-8")
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
