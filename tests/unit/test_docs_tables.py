"""README's and docs/'s tables against the code they describe (issue 37): the commands and
their options against the command line's parser (rgpu/cli/), the configuration keys and
variables against what rgpu/config.py accepts, the exit codes against rgpu/errors.py, and
the CI jobs against the workflow rgpu/ci/workflow.py writes. A failure names the entry that
is missing or extra."""

from __future__ import annotations

import re
from pathlib import Path

import click

from rgpu import config
from rgpu.backends import BACKENDS
from rgpu.ci import workflow
from rgpu.cli import commands  # noqa: F401  (registers every command on `cli`)
from rgpu.cli.group import cli
from rgpu.errors import ExitCode
from tests.conftest import REPO

README = REPO / "README.md"
COMMANDS = REPO / "docs" / "commands.md"
CI = REPO / "docs" / "ci.md"
# The options every command takes (docs/commands.md, "Options every command takes").
COMMON = {"-C", "-q", "--quiet", "-v", "--verbose", "--traceback", "-h", "--help"}


def table(path: Path, header: str) -> list[list[str]]:
    """The rows (cells, `\\|` kept as `|`) of the table in ``path`` whose header row starts
    with ``header``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    assert start is not None, f"{path.relative_to(REPO)} has no table headed `{header}`"
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows


def code(cell: str) -> list[str]:
    """The `code spans` of a cell."""
    return re.findall(r"`([^`]+)`", cell)


def leaf_commands(group: click.Group = cli, path: tuple[str, ...] = ()) -> dict[str, click.Command]:
    """Every command rgpu runs, by its words: {"build": ..., "ci init": ...}."""
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found |= leaf_commands(command, (*path, name))
        else:
            found[" ".join((*path, name))] = command
    return found


def command_of(synopsis: str) -> tuple[str, list[str]]:
    """`rgpu ci init [-C DIR] ...` -> ("ci init", the words after it before any option)."""
    words = synopsis.split()
    assert words[0] == "rgpu", f"`{synopsis}` does not start with rgpu"
    group: click.Command = cli
    path: list[str] = []
    rest = words[1:]
    while isinstance(group, click.Group) and rest and rest[0] in group.commands:
        group = group.commands[rest[0]]
        path.append(rest.pop(0))
    arguments = []
    for word in rest:
        if word.startswith(("[", "-")):
            break
        arguments.append(word)
    return " ".join(path), arguments


def option_names(command: click.Command) -> dict[str, set[str]]:
    """Each visible option's names, keyed by its parameter name."""
    return {
        str(p.name): set(p.opts) | set(p.secondary_opts)
        for p in command.params
        if isinstance(p, click.Option) and not p.hidden
    }


def test_the_commands_page_lists_every_command_with_its_real_options() -> None:
    real = leaf_commands()
    rows = table(COMMANDS, "| command |")
    documented: dict[str, str] = {}
    for row in rows:
        (synopsis, *_) = code(row[0])
        name, arguments = command_of(synopsis)
        assert name in real, f"docs/commands.md documents `rgpu {name}`, which rgpu has not"
        assert name not in documented, f"docs/commands.md lists `rgpu {name}` twice"
        documented[name] = synopsis
        command = real[name]
        expected = [p for p in command.params if isinstance(p, click.Argument)]
        assert len(arguments) == len(expected), (
            f"docs/commands.md: `{synopsis}` names the arguments {arguments}; rgpu {name} "
            f"takes {[p.name for p in expected]}"
        )
        for word, param in zip(arguments, expected, strict=True):
            if isinstance(param.type, click.Choice):
                assert word in param.type.choices, (
                    f"docs/commands.md: `rgpu {name} {word}`: {word} is not one of "
                    f"{list(param.type.choices)}"
                )
        named = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", synopsis)) - {"--"}
        names = option_names(command)
        every = set().union(*names.values()) if names else set()
        extra = named - every
        assert not extra, f"docs/commands.md: `rgpu {name}` has no option {sorted(extra)}"
        missing = [
            sorted(opts)[0] for opts in names.values() if not opts & COMMON and not opts & named
        ]
        assert not missing, (
            f"docs/commands.md: `rgpu {name}`'s synopsis lacks its option(s) {missing}"
        )
    assert set(documented) == set(real), (
        f"docs/commands.md lacks `rgpu {sorted(set(real) - set(documented))}`"
    )


def test_readmes_command_list_is_every_command() -> None:
    rows = table(README, "| command |")
    listed = [command_of(code(row[0])[0])[0] for row in rows]
    real = set(leaf_commands())
    assert not set(listed) - real, f"README lists commands rgpu has not: {set(listed) - real}"
    assert not real - set(listed), f"README's command table lacks: {sorted(real - set(listed))}"


def test_the_common_options_are_the_groups_own() -> None:
    group = set().union(*option_names(cli).values()) - {"--version"}
    assert group == COMMON - {"-h", "--help"} | {"-C"}, group
    text = COMMANDS.read_text(encoding="utf-8")
    common = text[text.index("## Options every command takes") :]
    for option in sorted(group):
        assert f"`{option}" in common, f"docs/commands.md's common options lack `{option}`"
    readme = README.read_text(encoding="utf-8")
    for option in sorted(group):
        assert f"`{option}" in readme, f"README's Commands section lacks `{option}`"


def test_readmes_configuration_table_is_what_config_accepts() -> None:
    rows = table(README, "| setting |")
    keys: dict[str, list[str]] = {}
    build = leaf_commands()["build"]
    build_options = set().union(*option_names(build).values())
    for row in rows:
        setting, key_cell, env_cell = row[0], row[1], row[2]
        names = code(key_cell)
        variables = re.findall(r"\bRGPU_[A-Z_]+", env_cell)
        for variable in variables:
            mapped = config.ENV_VARS.get(variable)
            if mapped is not None:
                assert names and names[0] == mapped, (
                    f"README's configuration table puts {variable} beside {names}; "
                    f"rgpu/config.py reads it as `{mapped}`"
                )
            else:
                used = any(
                    variable in p.read_text(encoding="utf-8") for p in (REPO / "rgpu").rglob("*.py")
                )
                assert used, (
                    f"README's configuration table names {variable}; rgpu reads no such variable"
                )
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", env_cell):
            assert flag in build_options, (
                f"README's configuration table names `{flag}`; rgpu build has no such option"
            )
        if names:
            keys[names[0]] = variables
        else:
            assert key_cell == "—", f"README's configuration row `{setting}` has no key: {key_cell}"
    assert not set(keys) - set(config.DEFAULTS), (
        f"README's configuration table has keys rgpu does not accept: "
        f"{sorted(set(keys) - set(config.DEFAULTS))}"
    )
    assert not set(config.DEFAULTS) - set(keys), (
        f"README's configuration table lacks the keys {sorted(set(config.DEFAULTS) - set(keys))}"
    )
    for variable, key in config.ENV_VARS.items():
        assert variable in keys[key], f"README's configuration row `{key}` lacks {variable}"
    text = README.read_text(encoding="utf-8").replace("\n", " ")
    for key in config.LAYOUT_KEYS:
        assert f"`{key}`" in text, f"README does not name the layout key `{key}`"


def test_readmes_exit_codes_are_rgpu_errors() -> None:
    rows = table(README, "| code |")
    codes = [row[0] for row in rows]
    numbers = {int(c) for c in codes if c.isdigit()}
    real = {int(c) for c in ExitCode}
    assert not numbers - real, f"README's exit codes that rgpu/errors.py lacks: {numbers - real}"
    assert not real - numbers, f"README's exit-code table lacks {sorted(real - numbers)}"
    assert len(numbers) == len([c for c in codes if c.isdigit()]), f"a code twice: {codes}"
    assert set(codes) - {str(n) for n in numbers} == {"128+N"}, codes


def test_the_ci_page_lists_every_job_the_workflow_writes() -> None:
    rows = table(CI, "| job |")
    documented = {job for row in rows for job in code(row[0].split("(")[0])}
    written = {job.id for job in workflow.jobs_for(tuple(BACKENDS.values()))}
    assert not written - documented, f"docs/ci.md lacks the jobs {sorted(written - documented)}"
    assert not documented - written, (
        f"docs/ci.md lists jobs rgpu writes not: {documented - written}"
    )


def test_the_variables_the_programs_read_are_read_by_the_runtime() -> None:
    text = COMMANDS.read_text(encoding="utf-8")
    section = text[text.index("## Variables the programs read") :]
    named = set(re.findall(r"\bRGPU_[A-Z_]+\b", section))
    assert named, "docs/commands.md names no variable the programs read"
    sources = "".join(
        p.read_text(encoding="utf-8")
        for p in (REPO / "crates").rglob("*.rs")
        if "target" not in p.parts
    )
    unread = sorted(v for v in named if f'"{v}"' not in sources)
    assert not unread, f"docs/commands.md names variables no crate reads: {unread}"
