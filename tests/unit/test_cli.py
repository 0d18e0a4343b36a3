"""The command line's one exit point (cli.main) and the console script (entry)."""

from __future__ import annotations

import json
import signal
import sys
import types
from pathlib import Path

import pytest

from rgpu import entry
from rgpu.cli import main
from rgpu.errors import ExitCode


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


def test_errors_are_json_on_stdout_with_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["build", "--json", "-C", str(tmp_path / "nope")])
    assert code == ExitCode.NOT_A_WORKSPACE == 5
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["ok"] is False and data["error"] == "NotAWorkspaceError"
    assert data["exit_code"] == 5 and "does not exist" in data["message"]
    assert "error:" in err


def test_without_json_errors_are_one_message_and_a_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["build", "-C", str(tmp_path / "nope")]) == 5
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == f"error: {tmp_path / 'nope'} does not exist"
    assert err.splitlines()[1].startswith("  fix: ")


def test_json_after_the_double_dash_belongs_to_the_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["run", "-C", str(tmp_path / "nope"), "--", "--json"]) == 5
    assert capsys.readouterr().out == ""


def test_a_click_usage_error_exits_2_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["build", "--json", "--no-such-flag"]) == ExitCode.USAGE
    data = json.loads(capsys.readouterr().out)
    assert data["error"] == "UsageError" and "--no-such-flag" in data["message"]


def test_a_config_error_in_the_workspace_exits_9(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.unit.projects import write_workspace

    write_workspace(tmp_path, metadata='docker = "false"')
    assert run(["build", "--dry-run", "-C", str(tmp_path)]) == ExitCode.CONFIG
    assert "TOML boolean" in capsys.readouterr().err


def test_version_and_help_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--version"]) == 0
    assert "rgpu" in capsys.readouterr().out
    assert run(["--help"]) == 0
    assert "build" in capsys.readouterr().out


def test_an_interrupt_before_the_cli_runs_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[tuple[int, bytes]] = []

    def fake_exit(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(entry.os, "write", lambda fd, data: written.append((fd, data)))
    monkeypatch.setattr(entry.os, "_exit", fake_exit)
    with pytest.raises(SystemExit) as done:
        entry._interrupted(signal.SIGINT, None)
    assert done.value.code == 130
    assert written == [(2, b"error: interrupted\n")]


def test_the_console_script_handles_ctrl_c_while_the_cli_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, object] = {}

    class LoadingCli(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            seen["while importing"] = signal.getsignal(signal.SIGINT)

            def fake_main(argv: list[str]) -> None:
                seen["while running"] = signal.getsignal(signal.SIGINT)
                seen["argv"] = argv
                raise SystemExit(0)

            return fake_main

    monkeypatch.setitem(sys.modules, "rgpu.cli", LoadingCli("rgpu.cli"))
    monkeypatch.setattr(sys, "argv", ["rgpu", "doctor", "--json"])
    before = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit):
            entry.main()
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen["while importing"] is entry._interrupted
    assert seen["while running"] is entry._keyboard_interrupt
    assert seen["argv"] == ["doctor", "--json"]
