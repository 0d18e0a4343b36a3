"""rgpu's own Rust is rustfmt-clean, every tracked `.rs` file: also what `cargo fmt` cannot
reach (modules declared inside a macro, like rgpu-primitives' host side, which sits in
`rgpu::__host! { mod host; }`) and the programs that scripts and tests copy into workspaces.
Runs the real rustfmt (the toolchain's, as `cargo fmt` does), edition 2021 as every crate."""

from __future__ import annotations

import shutil
import subprocess

from tests.conftest import REPO

# Appended to a generated `lib.rs` (tests/integration/test_libm_patch.py): its leading blank
# line separates it from the template's last item, which rustfmt would remove.
SNIPPETS = {"tests/fixtures/libm_kernel/kernel.rs"}


def test_every_tracked_rust_file_is_rustfmt_clean() -> None:
    rustfmt = shutil.which("rustfmt")
    assert rustfmt, "rustfmt is not on PATH: `rustup component add rustfmt`"
    listed = subprocess.run(
        ["git", "ls-files", "*.rs"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    files = [f for f in listed if f not in SNIPPETS]
    assert len(files) > 100, f"git listed {len(files)} Rust files"
    proc = subprocess.run(
        [rustfmt, "--check", "--edition", "2021", *files],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, (
        "not rustfmt-clean (run `rustfmt --edition 2021 FILE` on each):\n"
        + proc.stdout[-4000:]
        + proc.stderr[-2000:]
    )
