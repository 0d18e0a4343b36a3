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
