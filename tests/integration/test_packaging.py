"""Issue 11, packaging: the wheel is `rgpu-cli` with an `rgpu` console script, carries the
data rgpu needs (templates, toolchain pins, the Rust crates it vendors into workspaces, the
JSON schemas) and nothing else of the checkout, and works from the wheel alone."""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from rgpu import __version__
from tests.conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    try:
        import build  # noqa: F401  (pypa/build, installed by scripts/setup-test-env.sh)

        argv = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)]
    except ImportError:
        argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (found,) = out.glob("*.whl")
    return found


def dist_info(names: list[str], file: str) -> str:
    (path,) = [n for n in names if n.endswith(f".dist-info/{file}")]
    return path


def test_metadata_names_rgpu_cli_and_the_rgpu_command(wheel: Path) -> None:
    assert wheel.name == f"rgpu_cli-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = email.parser.Parser().parsestr(
            archive.read(dist_info(names, "METADATA")).decode("utf-8")
        )
        entry_points = archive.read(dist_info(names, "entry_points.txt")).decode("utf-8")
    assert meta["Name"] == "rgpu-cli" and meta["Version"] == __version__
    assert meta["Requires-Python"] == ">=3.11"
    assert "[console_scripts]\nrgpu = rgpu.entry:main" in entry_points


def tracked(*dirs: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--", *dirs], cwd=REPO, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [line for line in out.stdout.splitlines() if line]


def test_the_data_is_exactly_the_checkouts_templates_toolchains_and_crates(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        data = {n.removeprefix("rgpu/_data/") for n in archive.namelist() if "/_data/" in n}
        files = tracked("templates", "toolchains", "crates")
        assert data == set(files)
        for rel in files:
            assert archive.read(f"rgpu/_data/{rel}") == (REPO / rel).read_bytes(), rel
        names = set(archive.namelist())
    assert "rgpu/schemas/doctor.schema.json" in names
    assert "rgpu/schemas/test.schema.json" in names
    assert "rgpu/entry.py" in names and "rgpu/cli/main.py" in names
    assert not [n for n in names if n.startswith(("tests/", "scripts/", "benchmarks/"))]
    for crate in ("rgpu", "rgpu-macros", "rgpu-runtime"):
        assert f"rgpu/_data/crates/{crate}/Cargo.toml" in names
    check = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "check-wheel.py"), str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr


def test_build_output_in_the_checkout_stays_out_of_the_wheel(tmp_path: Path) -> None:
    """A cargo build in crates/ leaves crates/target (and one in a template, target/): the
    wheel must not carry them. Built from a copy of the checkout with such output added."""
    copy = tmp_path / "checkout"
    for rel in tracked("."):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, copy / rel)
    for junk in ("crates/target/release/libbig.rlib", "templates/bitonic/target/debug/x"):
        (copy / junk).parent.mkdir(parents=True)
        (copy / junk).write_bytes(b"\0" * 1024)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(copy)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    (built,) = out.glob("*.whl")
    with zipfile.ZipFile(built) as archive:
        assert not [n for n in archive.namelist() if "/target/" in n]


def test_rgpu_from_the_wheel_alone_scaffolds_a_workspace(wheel: Path, tmp_path: Path) -> None:
    """Unpacked where nothing of the checkout is on sys.path: `rgpu new` finds its template
    and vendors the crates from the wheel's own data."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}
    where = subprocess.run(
        [sys.executable, "-c", "import rgpu.resources as r; print(r.crates_dir())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert where.stdout.strip() == str(site / "rgpu" / "_data" / "crates")
    proc = subprocess.run(
        [sys.executable, "-m", "rgpu", "new", "fromwheel", "--dir", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    vendored = tmp_path / "fromwheel" / "vendor" / f"rgpu-{__version__}"
    for crate in ("rgpu", "rgpu-macros", "rgpu-runtime"):
        assert (vendored / crate / "Cargo.toml").read_bytes() == (
            REPO / "crates" / crate / "Cargo.toml"
        ).read_bytes()
    shown = subprocess.run(
        [sys.executable, "-m", "rgpu", "toolchain", "show", "nvptx"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert f"file:        {site / 'rgpu' / '_data' / 'toolchains' / 'nvptx.toml'}" in shown.stdout
