"""The portability corpus (tests/corpus/kernels.rs) holds every kernel rgpu's templates, tests,
README, docs and benchmarks compile, by name: a new kernel there is a new row of
docs/portability.md's table, or this test says which one is missing. (tests/unit's kernels
are source text for the parsers, never compiled.)"""

from __future__ import annotations

from tests.corpus_table import KERNEL, REPO, SORT_KERNELS, corpus_kernels, primitives_kernels

SEARCHED = ("templates", "tests/integration", "tests/saxpy.py", "benchmarks", "README.md", "docs")
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


def kernels_in_the_repository() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name in SEARCHED:
        root = REPO / name
        files = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in files:
            if path.is_file() and path.suffix in SUFFIXES:
                for kernel in KERNEL.findall(path.read_text(encoding="utf-8", errors="replace")):
                    found.setdefault(kernel, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_kernel_rgpu_builds_is_in_the_corpus() -> None:
    corpus = set(corpus_kernels()) | set(SORT_KERNELS)
    missing = {k: sorted(where) for k, where in kernels_in_the_repository().items()}
    missing = {k: v for k, v in missing.items() if k not in corpus and k not in WRONG_ON_PURPOSE}
    assert missing == {}, f"add these kernels to tests/corpus/kernels.rs: {missing}"


def test_the_corpus_has_each_kernel_once_and_the_sort_demos_are_the_templates() -> None:
    names = corpus_kernels()
    assert len(names) == len(set(names)) >= 53
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
