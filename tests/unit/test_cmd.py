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
