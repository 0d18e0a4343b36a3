"""A user's first edit, for real: rename the minimal template's kernel and build on the cpu
backend; the template's example and test still call the old name, and the failed build says
which files call which kernel the crate no longer has (rgpu/host/missing_kernels.py)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_rgpu


def test_a_renamed_kernel_names_the_template_files_that_still_call_it(tmp_path: Path) -> None:
    """A user's first edit: rename the template's kernel (and the call in their program).
    The template's example and test still call `saxpy`; the build says which and why."""
    run_rgpu("new", "renamed", "--template", "minimal", "--dir", str(tmp_path))
    ws = tmp_path / "renamed"
    for rel in ("kernel/src/lib.rs", "src/main.rs"):
        path = ws / rel
        path.write_text(
            path.read_text().replace("fn saxpy(", "fn axpy(").replace("::saxpy(", "::axpy(")
        )
    bad = run_rgpu("build", cwd=ws, check=False)
    assert bad.returncode != 0
    assert "examples/split.rs calls `saxpy`" in bad.stderr, bad.stderr
    assert "tests/parity.rs calls `saxpy`" in bad.stderr
    assert "its kernels: axpy" in bad.stderr and "src/main.rs" not in bad.stderr.split("fix:")[-1]
