"""The repository's hygiene around scripts: benchmarks/ follows the layout rule at the top of
BENCHMARKS.md, and every script (the benchmarks', the SPIR-V fixture's) refuses an option it
does not know instead of taking it for a path (a `--help/` directory was once committed)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

BENCHMARKS = REPO / "benchmarks"


def tracked(*paths: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", *paths], cwd=REPO, capture_output=True, check=True
    ).stdout
    return [p for p in out.decode().split("\0") if p]


def entry_points() -> list[Path]:
    return sorted(p for p in BENCHMARKS.iterdir() if p.is_file())


def test_no_tracked_path_is_an_option_or_names_an_issue() -> None:
    assert [p for p in tracked(".") if p.startswith("-") or "/-" in p] == []
    assert [p for p in tracked("benchmarks") if "issue" in p.lower()] == []


def test_every_entry_point_has_a_row_with_its_command_in_benchmarks_md() -> None:
    text = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([^`]+)` \|.*\| `([^`]*)` ", text, flags=re.M)
    listed = {name: command for name, command in rows}
    for script in entry_points():
        assert script.name in listed, f"{script.name} has no row in BENCHMARKS.md's table"
        assert f"benchmarks/{script.name}" in listed[script.name], listed[script.name]


def test_logs_are_in_dated_folders_each_indexed() -> None:
    logs = BENCHMARKS / "logs"
    index = (logs / "README.md").read_text(encoding="utf-8")
    for entry in logs.iterdir():
        if entry.name == "README.md":
            continue
        assert entry.is_dir() and re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry.name), entry
        assert f"## {entry.name}" in index, f"{entry.name}/ has no section in logs/README.md"
        for log in entry.iterdir():
            stem = log.name.split(".")[0]
            assert stem in index or re.sub(r"\d+[a-z]?$", "", stem) in index, log


SCRIPTS = [*(p for p in entry_points() if p.suffix == ".py"), REPO / "tests" / "spirv_fixture.py"]


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_script_refuses_an_unknown_option_and_writes_nothing(
    script: Path, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [sys.executable, str(script), "--no-such-option", "x", "y"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "unrecognized arguments: --no-such-option" in proc.stderr
    assert list(tmp_path.iterdir()) == []
    helped = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert helped.returncode == 0 and "usage:" in helped.stdout
