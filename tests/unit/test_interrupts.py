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
