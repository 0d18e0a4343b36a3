"""The portability corpus holds every kernel rgpu's templates, tests, README, docs and
benchmarks compile, and holds it by inclusion, not by copy: a new kernel there is a new row
of docs/portability.md's table, or this test says which one is missing.

The corpus's kernels are those of tests/corpus/kernels.rs (its own, and those whose only home
is text: the README's, the docs', variants of a test's) and those of the real files
tests/corpus_table.py's INCLUDED names (a template's, the benchmarks', and those that tests
read the kernels they write into a kernel crate from), which the corpus workspace holds as
they are (plus the sort demo's and rgpu-primitives', which come with the workspace). A kernel that
a Rust file defines is covered only by including that file: defined a second time anywhere
in Rust (a copy in kernels.rs, or in another file), it is an error naming both places.
(tests/unit's kernels are source text for the parsers, never compiled.)"""

from __future__ import annotations

from pathlib import Path

from tests.corpus_table import (
    CORPUS,
    INCLUDED,
    KERNEL,
    PRIMITIVES,
    REPO,
    SORT_KERNELS,
    corpus_kernels,
    make_workspace,
    module_text,
    modules,
    primitives_kernels,
)

SEARCHED = (
    "templates",
    "tests/integration",
    "tests/saxpy.py",
    "tests/kernels",
    "benchmarks",
    "README.md",
    "docs",
)
SUFFIXES = (".rs", ".py", ".jinja", ".md", ".sh")
# Kernels wrong on purpose, which the corpus (every backend equal to the cpu) cannot hold:
# the name and why.
WRONG_ON_PURPOSE = {
    "read_past_end": "tests/integration/test_checked.py reads one past the end (checked "
    "launches); out of range is undefined on Vulkan",
    "count_past_end": "tests/integration/test_checked.py adds one past the end of a Global "
    "(checked launches)",
    "spin": "tests/integration/test_webgpu_browser.py never ends (the launch timeout in a "
    "browser); the corpus runs every kernel to its end",
}
# Kernels of a Rust file that the corpus does not include because another corpus kernel has
# the name (kernel names are one namespace of entry points): (file, name) -> what each is.
NAMESAKES = {
    ("benchmarks/user_kernels/kernel/src/lib.rs", "saxpy"): "`y = a * x + y` in one rounding "
    "(`mul_add`); the corpus's `saxpy` is the minimal template's (the README's)",
    ("benchmarks/user_kernels/kernel/src/lib.rs", "histogram"): "a byte histogram; the "
    "corpus's `histogram` is its own (workgroup and global atomics, kernels.rs)",
}
# The sort demo's kernels: in the corpus workspace through the template.
SORT_TEMPLATE = "templates/bitonic/kernel/src/kernels.rs"


def kernels_in_the_repository() -> dict[str, set[str]]:
    """Every kernel name the searched files declare, with the files (Rust or text)."""
    found: dict[str, set[str]] = {}
    for name in SEARCHED:
        root = REPO / name
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in files:
            if path.is_file() and path.suffix in SUFFIXES:
                for kernel in KERNEL.findall(path.read_text(encoding="utf-8", errors="replace")):
                    found.setdefault(kernel, set()).add(str(path.relative_to(REPO)))
    return found


def rust_definitions() -> dict[str, list[str]]:
    """Every kernel a Rust file defines (the corpus's own file, the searched Rust files,
    rgpu-primitives'), with each file that defines it."""
    files = {CORPUS / "kernels.rs", *(PRIMITIVES / "src").rglob("*.rs")}
    for name in SEARCHED:
        root = REPO / name
        files.update(p for p in ([root] if root.is_file() else root.rglob("*.rs")))
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in files if p.suffix == ".rs" and "target" not in p.parts):
        for kernel in KERNEL.findall(path.read_text(encoding="utf-8", errors="replace")):
            found.setdefault(kernel, []).append(str(path.relative_to(REPO)))
    return found


def test_every_kernel_rgpu_builds_is_in_the_corpus() -> None:
    corpus = set(corpus_kernels()) | set(SORT_KERNELS)
    missing = {k: sorted(where) for k, where in kernels_in_the_repository().items()}
    missing = {k: v for k, v in missing.items() if k not in corpus and k not in WRONG_ON_PURPOSE}
    assert missing == {}, (
        "add these kernels to the corpus (a Rust file's by including the file: "
        f"tests/corpus_table.py's INCLUDED; a text's to tests/corpus/kernels.rs): {missing}"
    )


def test_every_rust_file_with_kernels_is_in_the_corpus_by_inclusion() -> None:
    """A Rust file's kernels are the corpus's only through the file itself: INCLUDED names
    it, or the workspace brings it (the sort template, rgpu-primitives)."""
    held = {*INCLUDED.values(), SORT_TEMPLATE, str((CORPUS / "kernels.rs").relative_to(REPO))}
    left_out = {
        (path, kernel)
        for kernel, paths in rust_definitions().items()
        for path in paths
        if path not in held
        and not path.startswith(str(PRIMITIVES.relative_to(REPO)))
        and kernel not in WRONG_ON_PURPOSE
        and (path, kernel) not in NAMESAKES
    }
    assert left_out == set(), (
        "these Rust files define kernels the corpus does not include: add each file to "
        f"tests/corpus_table.py's INCLUDED: {sorted(left_out)}"
    )


def test_no_kernel_is_defined_twice() -> None:
    """A kernel defined in two Rust files is a copy (one can drift from the other; the
    corpus would then test a kernel nobody ships), or two kernels of one name, which one
    module cannot hold: NAMESAKES names the ones kept apart on purpose."""
    twice = {
        kernel: paths
        for kernel, paths in rust_definitions().items()
        if len([p for p in paths if (p, kernel) not in NAMESAKES]) > 1
    }
    assert twice == {}, (
        "kernels defined in more than one Rust file: keep the real one and include its file "
        f"in the corpus (tests/corpus_table.py's INCLUDED) instead of a copy: {twice}"
    )
    # What the corpus holds in place of each namesake is there.
    assert {name for _, name in NAMESAKES} <= set(corpus_kernels())


def test_the_corpus_has_each_kernel_once_and_the_sort_demos_are_the_templates() -> None:
    names = corpus_kernels()
    assert len(names) == len(set(names)) >= 66
    template = (REPO / "templates" / "bitonic" / "kernel" / "src").rglob("*.rs")
    assert sorted(k for p in template for k in KERNEL.findall(p.read_text())) == sorted(
        SORT_KERNELS
    )
    # The demo's radix sort is rgpu-primitives': its kernels are in the workspace too.
    manifest = (REPO / "templates" / "bitonic" / "kernel" / "Cargo.toml.jinja").read_text()
    assert "rgpu-primitives.workspace = true" in manifest
    library = primitives_kernels()
    assert {"prim_radix_upsweep", "prim_radix_scan", "prim_radix_downsweep"} <= set(library)
    assert not set(library) & (set(names) | set(SORT_KERNELS))


def test_the_workspace_holds_the_included_files_as_they_are(tmp_path: Path) -> None:
    """make_workspace writes each module from its real file: the same lines, a crate root's
    own lines (`#![no_std]`, `rgpu::embed_kernels!();`) blank."""
    src = tmp_path / "kernel" / "src"
    src.mkdir(parents=True)
    (src / "lib.rs").write_text("#![no_std]\nrgpu::embed_kernels!();\n")
    (tmp_path / "kernel" / "Cargo.toml").write_text('[package]\n[dependencies]\nrgpu = "0"\n')
    make_workspace(tmp_path)
    lib = (src / "lib.rs").read_text()
    assert lib.endswith("\n" + "".join(f"pub mod {m};\n" for m in modules()))
    assert next(iter(modules())) == "corpus" and set(modules()) == {"corpus", *INCLUDED}
    for module, path in modules().items():
        real = path.read_text(encoding="utf-8").split("\n")
        held = (src / f"{module}.rs").read_text(encoding="utf-8").split("\n")
        assert len(held) == len(real), module
        changed = {r for r, h in zip(real, held, strict=True) if r != h}
        assert all(h == "" for r, h in zip(real, held, strict=True) if r != h), module
        assert changed <= {"#![no_std]", "rgpu::embed_kernels!();"}, (module, changed)
        assert KERNEL.findall("\n".join(held)), f"{path} defines no kernel"
        assert "\n".join(held) == module_text(path)
    assert (src / "corpus.rs").read_text() == (CORPUS / "kernels.rs").read_text()
    assert (tmp_path / "src" / "bin" / "corpus.rs").read_text() == (CORPUS / "main.rs").read_text()
