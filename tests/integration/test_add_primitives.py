"""`rgpu add primitives` on a fresh minimal workspace, for real: --dry-run writes nothing,
the edits make a host example that calls `rgpu_primitives::sort_keys` build and run on the
cpu backend, a second run changes nothing, and a workspace without the vendored crate gets
the fix instead of an edit."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import run_rgpu

EXAMPLE = """//! Sorts a few keys with rgpu-primitives on the best backend built in.
use rgpu_primitives::Order;

fn main() -> Result<(), rgpu::Error> {
    let (device, _skipped) = rgpu::Device::select()?;
    let mut keys = vec![5u32, 3, 9, 1, 7];
    rgpu_primitives::sort_keys(&device, &mut keys, Order::Ascending)?;
    println!("{keys:?}");
    Ok(())
}
"""


def snapshot(ws: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(ws)): p.read_bytes()
        for p in ws.rglob("*")
        if p.is_file() and "target" not in p.parts
    }


def test_add_primitives_edits_once_and_the_library_builds_and_runs(tmp_path: Path) -> None:
    run_rgpu("new", "addprims", "--template", "minimal", "--dir", str(tmp_path))
    ws = tmp_path / "addprims"
    before = snapshot(ws)

    dry = run_rgpu("add", "primitives", "--dry-run", cwd=ws)
    assert "+rgpu-primitives.workspace = true" in dry.stdout
    assert snapshot(ws) == before

    run_rgpu("add", "primitives", cwd=ws)
    root = (ws / "Cargo.toml").read_text()
    assert (
        'rgpu-primitives = { version = "=0.2.0", path = "vendor/rgpu-0.2.0/rgpu-primitives" }'
        in root
    )
    assert "rgpu-primitives.workspace = true" in root
    assert "rgpu-primitives.workspace = true" in (ws / "kernel" / "Cargo.toml").read_text()
    assert "use rgpu_primitives as _;" in (ws / "kernel" / "src" / "lib.rs").read_text()
    assert "RGPU_WORKSPACE" in (ws / ".cargo" / "config.toml").read_text()

    (ws / "examples" / "sorted.rs").write_text(EXAMPLE)
    run_rgpu("build", cwd=ws)
    ran = run_rgpu("run", "--example", "sorted", cwd=ws)
    assert "[1, 3, 5, 7, 9]" in ran.stdout

    edited = snapshot(ws)
    again = run_rgpu("add", "primitives", cwd=ws)
    assert "nothing to change" in again.stderr + again.stdout
    assert snapshot(ws) == edited


def test_without_the_vendored_crate_nothing_is_written_and_the_fix_is_named(
    tmp_path: Path,
) -> None:
    run_rgpu("new", "noprims", "--template", "minimal", "--dir", str(tmp_path))
    ws = tmp_path / "noprims"
    shutil.rmtree(ws / "vendor" / "rgpu-0.2.0" / "rgpu-primitives")
    before = snapshot(ws)
    bad = run_rgpu("add", "primitives", cwd=ws, check=False)
    assert bad.returncode != 0
    assert "rgpu-primitives is not vendored" in bad.stderr and "rgpu vendor" in bad.stderr
    assert snapshot(ws) == before
