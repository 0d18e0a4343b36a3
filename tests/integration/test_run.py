"""Issue 11, trust: `rgpu run` passes the program's own exit on, and says when the program
died of a signal (exit 128+N, as a shell reports it: rgpu/host/run.py). A length the sort
cannot take is refused up front by the program, with the limit, not with a panic."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rgpu.errors import ExitCode
from tests.conftest import run_rgpu
from tests.integration.conftest import new_workspace

# An example program of the test's own: it dies of SIGABRT, or prints its pid and waits to
# be killed.
SIGNAL_EXAMPLE = """\
fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("abort") => std::process::abort(),
        _ => {
            println!("{}", std::process::id());
            std::thread::sleep(std::time::Duration::from_secs(300));
        }
    }
}
"""


def test_a_length_over_the_limit_is_refused_up_front(cuda_ws: Path) -> None:
    proc = run_rgpu(
        "run", "--", "--len", "99999999999", cwd=cuda_ws, env={"RUST_BACKTRACE": "1"}, check=False
    )
    # README, exit codes: 1 is the program's own failure, passed on by `rgpu run`.
    assert proc.returncode == ExitCode.FAILURE, proc.stderr
    assert "error: --len 99999999999 is more than the 2147483648 keys one sort accepts" in (
        proc.stderr
    )
    for noise in ("panicked", "stack backtrace", "Traceback", "memory allocation"):
        assert noise not in proc.stderr


@pytest.fixture(scope="module")
def signal_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = new_workspace(tmp_path_factory.mktemp("signals"), "sigdemo")
    (ws / "examples" / "signal.rs").write_text(SIGNAL_EXAMPLE, encoding="utf-8")
    run_rgpu("build", cwd=ws)
    return ws


def test_a_program_killed_by_sigabrt_exits_134_and_rgpu_says_so(signal_ws: Path) -> None:
    proc = run_rgpu("run", "--example", "signal", "--", "abort", cwd=signal_ws, check=False)
    assert proc.returncode == 128 + signal.SIGABRT, proc.stderr
    assert "error: signal was killed by SIGABRT (6)" in proc.stderr
    assert "128+N" in proc.stderr  # the fix line explains the code
    assert "Traceback" not in proc.stderr


def test_a_program_killed_by_sigkill_exits_137(signal_ws: Path) -> None:
    rgpu = subprocess.Popen(
        [sys.executable, "-m", "rgpu", "run", "--example", "signal", "--", "wait"],
        cwd=signal_ws,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert rgpu.stdout is not None
        pid = int(rgpu.stdout.readline())  # the program's first line
        assert pid != rgpu.pid  # the program itself, not rgpu
        os.kill(pid, signal.SIGKILL)
        _, stderr = rgpu.communicate(timeout=60)
    finally:
        if rgpu.poll() is None:
            rgpu.kill()
    assert rgpu.returncode == 128 + signal.SIGKILL, stderr
    assert "signal was killed by SIGKILL (9)" in stderr
    assert "Traceback" not in stderr


def test_ctrl_c_while_the_program_runs_is_exit_130(signal_ws: Path) -> None:
    """A terminal's Ctrl-C reaches rgpu and the program (one process group)."""
    rgpu = subprocess.Popen(
        [sys.executable, "-m", "rgpu", "run", "--example", "signal", "--", "wait"],
        cwd=signal_ws,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert rgpu.stdout is not None
        int(rgpu.stdout.readline())  # the program runs
        os.killpg(rgpu.pid, signal.SIGINT)
        _, stderr = rgpu.communicate(timeout=60)
    finally:
        if rgpu.poll() is None:
            os.killpg(rgpu.pid, signal.SIGKILL)
    assert rgpu.returncode == ExitCode.INTERRUPTED, stderr
    assert "error: interrupted" in stderr
    assert "Traceback" not in stderr


def test_a_first_run_through_a_dot_dot_path_finds_the_program(tmp_path: Path) -> None:
    """`rgpu run -C ../ws` (the README's quick start) on a workspace never built: the
    programs cargo reports (normalized paths) are the workspace's own."""
    here = tmp_path / "checkout"
    here.mkdir()
    run_rgpu("new", "dotdot", "--dir", str(tmp_path))
    proc = run_rgpu("run", "-C", "../dotdot", "--", "--len", "10", "--verify", cwd=here)
    assert "sorted 10 u32 keys" in proc.stdout, proc.stderr
    assert "verified: identical to Rust's sort" in proc.stdout
