"""util.cmd: where a child's output goes."""

from __future__ import annotations

import sys

import pytest

from rgpu.util import cmd

PRINT = [sys.executable, "-c", "print('from the child')"]


def test_a_childs_stdout_is_rgpus_stdout_by_default(capfd: pytest.CaptureFixture[str]) -> None:
    cmd.run(PRINT, echo=False)
    out, err = capfd.readouterr()
    assert "from the child" in out and "from the child" not in err


def test_progress_steps_print_to_stderr_keeping_stdout_for_the_result(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """What cargo-gpu prints ("Compiling shaders at ...") must not end up inside
    `rgpu build --json`'s JSON."""
    cmd.run(PRINT, echo=False, stdout_to_stderr=True)
    out, err = capfd.readouterr()
    assert "from the child" in err and "from the child" not in out


def test_captured_output_is_returned(capfd: pytest.CaptureFixture[str]) -> None:
    result = cmd.run(PRINT, echo=False, capture=True, stdout_to_stderr=True)
    assert result.stdout == "from the child\n"
    assert capfd.readouterr() == ("", "")


def test_hidden_lines_are_kept_but_not_shown(capfd: pytest.CaptureFixture[str]) -> None:
    """rust-gpu's warning that rgpu turned its optimizer off (codegens/spirv.py) is not shown,
    nor the blank line after it and cargo's count of it, while every other line is; the kept
    output (what a failure is explained from) still has them all."""
    from rgpu.codegens.spirv import HIDDEN_WARNINGS

    lines = [
        "   Compiling demo-kernel-spirv v0.0.0 (/w/target/rgpu/spirv/crate)",
        "warning: `spirv-opt` should have ran (optlevel=Aggressive, debuginfo=None) but was "
        "disabled by `--no-spirv-opt`",
        "",
        "warning: `demo-kernel-spirv` (lib) generated 1 warning",
        "warning: unused variable: `x`",
        "",
        "warning: `demo-kernel-spirv` (lib) generated 2 warnings",
        "    Finished `release` profile [optimized] target(s) in 1.00s",
    ]
    script = f"import sys; sys.stderr.write({chr(10).join(lines)!r} + '\\n')"
    result = cmd.run(
        [sys.executable, "-c", script], echo=False, keep_output=True, hide=HIDDEN_WARNINGS
    )
    _, err = capfd.readouterr()
    shown = err.splitlines()
    assert shown == [lines[0], *lines[4:]]
    assert result.stderr == "\n".join(lines) + "\n"


def test_a_quiet_step_says_it_still_runs_and_what_it_last_said(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """rust-gpu's first build prints `Waiting for file lock on ...` and then nothing for
    minutes: rgpu says the step still runs (with a 1 s interval here, 30 s for real)."""
    monkeypatch.setattr(cmd, "HEARTBEAT_S", 1.0)
    script = "import sys, time; print('Waiting for file lock', flush=True); time.sleep(2.6)"
    result = cmd.run([sys.executable, "-c", script], echo=False, keep_output=True)
    _, err = capfd.readouterr()
    beats = [line for line in err.splitlines() if "still running" in line]
    assert 1 <= len(beats) <= 3, err
    assert (
        beats[0].startswith("  ... still running (0m0")
        and "last: Waiting for file lock" in beats[0]
    )
    # The kept output (what a failure is explained from) is the step's own.
    assert result.stderr == "Waiting for file lock\n"
