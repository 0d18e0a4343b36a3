"""`rgpu vendor`: the running rgpu's crates written beside the old ones and
[workspace.dependencies] rgpu moved to them, round-trip; the old directory is left alone."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from rgpu import __version__
from rgpu.cli import main
from rgpu.errors import ExitCode
from rgpu.scaffold import init
from rgpu.scaffold.vendor import crate_files
from tests.unit.test_init import BIN_MANIFEST, snapshot, write

VENDOR = f"vendor/rgpu-{__version__}"
OLD = "vendor/rgpu-0.1.0"


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


@pytest.fixture
def older(tmp_path: Path) -> Path:
    """A workspace `rgpu init` made with an older rgpu (0.1.0)."""
    root = write(tmp_path / "histo", {"Cargo.toml": BIN_MANIFEST, "src/main.rs": "fn main() {}\n"})
    init.apply(init.plan_project(root, init.Request()))
    text = (root / "Cargo.toml").read_text()
    text = text.replace(
        f'rgpu = {{ version = "={__version__}", path = "{VENDOR}/rgpu" }}',
        f'rgpu = {{ version = "=0.1.0", path = "{OLD}/rgpu", default-features = false }}  # pin',
    )
    (root / "Cargo.toml").write_text(text)
    shutil.move(root / VENDOR, root / OLD)
    return root


def test_vendor_writes_the_new_crates_and_moves_the_dependency(
    older: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old_files = {p: b for p, b in snapshot(older).items() if p.startswith(OLD)}
    capsys.readouterr()
    assert run(["vendor", "-C", str(older / "src")]) == 0  # found upward, like every command
    err = capsys.readouterr().err
    n = len(crate_files())
    assert f"    create  {n} files ({n} in {VENDOR}/; -v lists them)" in err
    assert "    change  Cargo.toml" in err
    assert f"{OLD}/ is no longer used: you may delete it (`rm -r {OLD}`)" in err
    for rel, data in crate_files().items():
        assert (older / rel).read_bytes() == data
    assert {p: b for p, b in snapshot(older).items() if p.startswith(OLD)} == old_files
    text = (older / "Cargo.toml").read_text()
    assert (
        f'rgpu = {{ version = "={__version__}", path = "{VENDOR}/rgpu", '
        "default-features = false }  # pin\n"
    ) in text
    assert text.startswith("# histo: brightness histograms\n")  # the rest as it was


def test_vendor_twice_changes_nothing(older: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["vendor", "-C", str(older)]) == 0
    after = snapshot(older)
    capsys.readouterr()
    assert run(["vendor", "-C", str(older)]) == 0
    err = capsys.readouterr().err
    statuses = {line.split()[0] for line in err.splitlines() if line.startswith(" ")}
    assert statuses == {"identical"}
    assert f"uses rgpu {__version__}'s crates already" in err
    assert snapshot(older) == after


def test_vendor_dry_run_shows_the_diff_and_writes_nothing(
    older: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(older)
    capsys.readouterr()
    assert run(["vendor", "--dry-run", "-C", str(older)]) == 0
    out = capsys.readouterr().out
    assert f'-rgpu = {{ version = "=0.1.0", path = "{OLD}/rgpu"' in out
    assert snapshot(older) == before


def test_vendor_outside_an_rgpu_workspace_says_rgpu_init(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"Cargo.toml": BIN_MANIFEST, "src/main.rs": ""})
    assert run(["vendor", "-C", str(tmp_path)]) == ExitCode.NOT_A_WORKSPACE
    assert f"rgpu init -C {tmp_path}" in capsys.readouterr().err
    assert tomllib.loads((tmp_path / "Cargo.toml").read_text())["package"]["name"] == "histo"


def test_vendor_moves_an_rgpu_primitives_dependency_too(older: Path) -> None:
    manifest = older / "Cargo.toml"
    text = manifest.read_text().replace(
        "[workspace.dependencies]\n",
        "[workspace.dependencies]\n"
        f'rgpu-primitives = {{ version = "=0.1.0", path = "{OLD}/rgpu-primitives" }}\n',
    )
    manifest.write_text(text)
    assert run(["vendor", "-C", str(older)]) == 0
    deps = tomllib.loads(manifest.read_text())["workspace"]["dependencies"]
    assert deps["rgpu-primitives"] == {
        "version": f"={__version__}",
        "path": f"{VENDOR}/rgpu-primitives",
    }
    assert (older / VENDOR / "rgpu-primitives" / "src" / "radix.rs").is_file()
