"""Ctrl-C once the CLI runs: KeyboardInterrupt, except inside Python's import system."""

from __future__ import annotations

import os
import signal
import types

import pytest

from rgpu import entry


def frame_in(filename: str, back: object = None) -> object:
    code = types.SimpleNamespace(co_filename=filename)
    return types.SimpleNamespace(f_code=code, f_back=back)


def test_an_interrupt_in_rgpus_code_is_a_keyboard_interrupt() -> None:
    frame = frame_in("/x/rgpu/pipeline.py", frame_in("/x/rgpu/cli/main.py"))
    with pytest.raises(KeyboardInterrupt):
        entry._keyboard_interrupt(signal.SIGINT, frame)


def test_an_interrupt_inside_an_import_stops_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[bytes] = []

    def fake_exit(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(os, "write", lambda fd, data: written.append(data))
    monkeypatch.setattr(os, "_exit", fake_exit)
    frame = frame_in("/x/rgpu/codegens/nvvm.py", frame_in("<frozen importlib._bootstrap>"))
    with pytest.raises(SystemExit) as done:
        entry._keyboard_interrupt(signal.SIGINT, frame)
    assert done.value.code == 130
    assert written == [b"error: interrupted\n"]


def run_entry(monkeypatch: pytest.MonkeyPatch, cli_main: object) -> tuple[int, list[bytes]]:
    """entry.main with the CLI replaced by `cli_main`; its exit code and what it wrote.
    The SIGINT handler it leaves is checked, then pytest's is put back."""
    import rgpu.cli

    written: list[bytes] = []

    def fake_exit(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(rgpu.cli, "main", cli_main)
    monkeypatch.setattr(os, "write", lambda fd, data: written.append(data))
    monkeypatch.setattr(os, "_exit", fake_exit)
    saved = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as done:
            entry.main()
        # Leaving rgpu (Python's shutdown still to come): a Ctrl-C now exits at once.
        assert signal.getsignal(signal.SIGINT) is entry._interrupted
    finally:
        signal.signal(signal.SIGINT, saved)
    return int(done.value.code or 0), written


def test_an_interrupt_that_escapes_the_cli_is_still_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def interrupted_while_reporting(argv: object) -> None:
        raise KeyboardInterrupt  # e.g. while the CLI was printing an error

    code, written = run_entry(monkeypatch, interrupted_while_reporting)
    assert code == 130 and written == [b"error: interrupted\n"]


def test_after_the_cli_exits_a_ctrl_c_stops_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    def finished(argv: object) -> None:
        raise SystemExit(0)

    code, written = run_entry(monkeypatch, finished)
    assert code == 0 and written == []


# --- InterruptedByUser is no RgpuError --------------------------------------------------------


def test_an_except_rgpu_error_or_exception_cannot_swallow_an_interrupt() -> None:
    """Code that tries something and falls back on failure catches RgpuError (or Exception):
    a Ctrl-C during it must still stop rgpu, so InterruptedByUser is a KeyboardInterrupt."""
    from rgpu.errors import ExitCode, InterruptedByUser, RgpuError

    for handler in (RgpuError, Exception):
        with pytest.raises(InterruptedByUser) as raised:
            try:
                raise InterruptedByUser("interrupted while running cargo", "run it again")
            except handler:
                pytest.fail(f"`except {handler.__name__}` caught the interrupt")
    error = raised.value
    assert isinstance(error, KeyboardInterrupt) and not isinstance(error, RgpuError)
    assert error.to_dict() == {
        "error": "InterruptedByUser",
        "message": "interrupted while running cargo",
        "hint": "run it again",
        "exit_code": int(ExitCode.INTERRUPTED),
    }


def interrupting_program(tmp_path: object, name: str) -> str:
    """A stand-in for a program rgpu runs (docker, rustup) that gets Ctrl-C'd: it sends
    SIGINT to rgpu (its parent), as the terminal does to the whole foreground group."""
    from pathlib import Path

    program = Path(str(tmp_path)) / name
    program.write_text("#!/bin/sh\nkill -INT $PPID\nsleep 5\n")
    program.chmod(0o755)
    return str(program)


def test_ctrl_c_while_the_container_engine_is_probed_stops_rgpu(tmp_path: object) -> None:
    """engine.probe turns a failing `docker info` into a ContainerError; a Ctrl-C is not one."""
    from rgpu.containers import engine
    from rgpu.errors import InterruptedByUser

    docker = interrupting_program(tmp_path, "docker")
    with pytest.raises(InterruptedByUser):
        engine.probe(docker, dict(os.environ))


def test_ctrl_c_while_rustup_is_asked_stops_rgpu(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The nvptx route asks rustup and, when rustup fails, tries the system rustc; a Ctrl-C
    during the question is not a failing rustup."""
    from pathlib import Path

    from rgpu.errors import InterruptedByUser
    from rgpu.toolchains import nvptx_routes, pins

    interrupting_program(tmp_path, "rustup")
    env = {
        **os.environ,
        "PATH": f"{tmp_path}:{os.environ['PATH']}",
        "RUSTUP_HOME": str(Path(str(tmp_path)) / "rh"),
    }
    with pytest.raises(InterruptedByUser):
        nvptx_routes.find_toolchain(pins.load("nvptx", env), env)
