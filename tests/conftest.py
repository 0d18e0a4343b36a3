"""Shared test setup.

- One cargo target directory for the whole suite (``target/test-cargo`` in the repo, or
  ``$RGPU_TEST_TARGET_DIR``), so each crate is compiled once per run.
- ``run_rgpu`` runs the real CLI in a subprocess, as a user would.
- Tests under ``tests/integration`` are marked ``integration``, under ``tests/gpu`` ``gpu``;
  the gpu tier skips itself where no NVIDIA GPU answers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TARGET_DIR = Path(os.environ.get("RGPU_TEST_TARGET_DIR", REPO / "target" / "test-cargo"))
os.environ["CARGO_TARGET_DIR"] = str(TARGET_DIR)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.integration)
        if "gpu" in parts:
            item.add_marker(pytest.mark.gpu)


def has_nvidia_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    proc = subprocess.run([smi, "-L"], capture_output=True, text=True, check=False)
    return proc.returncode == 0 and "GPU" in proc.stdout


requires_gpu = pytest.mark.skipif(not has_nvidia_gpu(), reason="no NVIDIA GPU on this machine")


def run_rgpu(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 1800,
) -> subprocess.CompletedProcess[str]:
    """Run ``rgpu ARGS`` as a user would; on unexpected failure show its output."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "rgpu", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"rgpu {' '.join(args)} exited {proc.returncode}\n"
            f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    return proc


@pytest.fixture(scope="session")
def sortdemo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One scaffolded workspace shared by the integration tests that only read it."""
    parent = tmp_path_factory.mktemp("ws")
    run_rgpu("new", "sortdemo", "--dir", str(parent))
    yield parent / "sortdemo"
