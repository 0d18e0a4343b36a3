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


def test_dash_c_before_or_after_the_command_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.unit.projects import write_workspace

    write_workspace(tmp_path)
    for args in (
        ["-C", str(tmp_path), "build", "--dry-run", "--json"],
        ["build", "--dry-run", "--json", "-C", str(tmp_path)],
    ):
        assert run(args) == 0
        assert json.loads(capsys.readouterr().out)["ok"] is True
    # After the command name wins over before it.
    assert run(["-C", str(tmp_path / "nope"), "build", "--dry-run", "-C", str(tmp_path)]) == 0
    capsys.readouterr()
    assert run(["-C", str(tmp_path / "nope"), "build", "--dry-run"]) == ExitCode.NOT_A_WORKSPACE
    assert "nope does not exist" in capsys.readouterr().err


def test_every_command_accepts_dash_c(capsys: pytest.CaptureFixture[str]) -> None:
    import click

    from rgpu.cli import (
        cli,
        commands,  # noqa: F401
    )

    def walk(group: click.Group, path: str) -> list[tuple[str, click.Command]]:
        found: list[tuple[str, click.Command]] = []
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                found += walk(command, f"{path} {name}")
            else:
                found.append((f"{path} {name}", command))
        return found

    for path, command in walk(cli, "rgpu"):
        flags = {flag for p in command.params for flag in getattr(p, "opts", [])}
        assert {"-C", "-q", "-v", "--verbose", "--traceback"} <= flags, path


def test_dash_c_on_commands_without_a_workspace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["toolchain", "list", "--json", "-C", str(tmp_path)]) == 0
    capsys.readouterr()
    assert run(["toolchain", "list", "-C", str(tmp_path / "nope")]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "is not a directory" in err and "rgpu toolchain list --help" in err


def test_new_takes_dash_c_as_where_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "parent").mkdir()
    assert (
        run(["new", "demo", "-C", str(tmp_path), "--dir", "parent", "--template", "minimal"]) == 0
    )
    assert (tmp_path / "parent" / "demo" / "Cargo.toml").is_file()
    err = capsys.readouterr().err
    # One summary line for the created files, not one line per file.
    created = [line for line in err.splitlines() if line.startswith("    create  ")]
    assert len(created) == 1 and "files (" in created[0] and "in vendor/rgpu-" in created[0]
    assert run(["-C", str(tmp_path), "-v", "new", "demo2", "--template", "minimal"]) == 0
    err = capsys.readouterr().err
    assert (tmp_path / "demo2" / "Cargo.toml").is_file()
    assert err.count("    create  ") > 50  # -v lists them
    assert run(["new", "x", "-C", str(tmp_path / "nope")]) == ExitCode.DESTINATION
    assert "(given to -C) is not a directory" in capsys.readouterr().err


def test_run_refuses_unknown_options_before_the_double_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["run", "--backnd", "wgpu"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "rgpu run has no option --backnd (did you mean --backend?)" in err
    assert "program arguments go after `--`" in err and "rgpu run --help" in err
    assert run(["run", "stray"]) == ExitCode.USAGE
    assert "unexpected argument 'stray' before `--`" in capsys.readouterr().err
    # After `--` nothing is rgpu's: the workspace is looked for (and missing) as usual.
    assert run(["run", "-C", str(tmp_path / "nope"), "--", "--backnd", "-v", "stray"]) == 5


def test_run_passes_arguments_after_the_double_dash_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.unit.projects import write_workspace

    write_workspace(tmp_path)
    seen: list[tuple[str, ...]] = []

    def fake_run(ws: object, options: object, chosen: object, *rest: object, **_: object) -> int:
        seen.append(rest[-1])  # type: ignore[arg-type]
        return 0

    monkeypatch.setattr("rgpu.host.run.run", fake_run)
    program = ["--backnd", "wgpu", "-C", "x", "--", "--json", "-v"]
    assert run(["run", "-C", str(tmp_path), "--backend", "cpu", "--", *program]) == 0
    assert seen == [tuple(program)]


def test_usage_errors_point_at_the_commands_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    for args, helped in (
        (["build", "--nope"], "rgpu build --help"),
        (["doctor", "--nope"], "rgpu doctor --help"),
        (["ci", "init", "--nope"], "rgpu ci init --help"),
        (["--nope"], "rgpu --help"),
    ):
        assert run(args) == ExitCode.USAGE
        assert f"fix: see `{helped}`" in capsys.readouterr().err


def test_quiet_and_verbose_exclude_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["-q", "doctor", "-v"]) == ExitCode.USAGE
    assert "exclude each other" in capsys.readouterr().err


def test_quiet_keeps_results_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["new", "demo", "-q", "--dir", str(tmp_path), "--template", "minimal"]) == 0
    assert capsys.readouterr().err == ""
    assert run(["-q", "build", "-C", str(tmp_path / "nope")]) == 5
    assert "does not exist" in capsys.readouterr().err


def test_traceback_is_one_flag_and_debug_after_the_command_is_the_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--traceback", "build", "-C", str(tmp_path / "nope")]) == 5
    assert "Traceback" in capsys.readouterr().err
    assert run(["build", "--debug", "-C", str(tmp_path / "nope")]) == 5
    assert "Traceback" not in capsys.readouterr().err
    assert run(["--debug", "build", "-C", str(tmp_path / "nope")]) == 5  # the old name
    err = capsys.readouterr().err
    assert "Traceback" in err and "now `rgpu --traceback COMMAND`" in err


def test_runs_help_shows_where_the_programs_arguments_go(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["run", "--help"]) == 0
    assert "Usage: rgpu run [OPTIONS] [-- ARGS]..." in capsys.readouterr().out
