"""The wheel carries the templates and toolchain files, and installs a working `rgpu`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO


def test_wheel_ships_templates_and_toolchains(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("rgpu-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    template_files = sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "templates").rglob("*") if p.is_file()
    )
    for rel in template_files:
        assert f"rgpu/_data/{rel}" in names, rel
    assert "rgpu/cli.py" in names
    for pin in ("spirv", "nvvm", "nvptx"):
        assert f"rgpu/_data/toolchains/{pin}.toml" in names
    assert "rgpu/schemas/doctor.schema.json" in names
