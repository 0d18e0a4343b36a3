"""`rgpu toolchain list|show|install`: the codegens' pinned toolchains."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from rgpu.backends import codegen_names
from rgpu.cli.group import cli, emit_json, json_option
from rgpu.util.output import reporter


@cli.group()
def toolchain() -> None:
    """Pinned toolchains of the codegens: list, show, install."""


def _toolchain_row(status: Any, env: dict[str, str]) -> dict[str, Any]:
    pin = status.pin
    state = "ok" if status.ok else ("missing" if status.toolchain is None else "incomplete")
    if status.hash_ok is False:
        state = "wrong commit hash"
    summary = status.summary()
    if not status.ok and pin.table("system"):  # nvptx: a system rustc may stand in
        # start-up: ~116 ms to import doctor.report; only this path pays it
        from rgpu.doctor.report import codegen_checks

        first = codegen_checks(pin.name, pin, env)[0]
        if first.status == "ok":
            state, summary = "ok (system)", first.detail
    return {
        "name": pin.name,
        "channel": pin.channel,
        "commit_hash": pin.commit_hash or None,
        "components": list(pin.components),
        "installed": status.toolchain,
        "release": status.rustc.get("release"),
        "missing_components": list(status.missing),
        "state": state,
        "summary": summary,
        "install_command": " ".join(status.install_argv() or []) or None,
        "exercised_in_ci": pin.exercised_in_ci,
        "source": {
            "repository": pin.source.repository,
            "rev": pin.source.rev,
            "file": pin.source.file,
            "confirmed": pin.source.confirmed,
        },
    }


@toolchain.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def toolchain_list(as_json: bool) -> None:
    """What is pinned, what is installed, what is missing."""
    # start-up: ~32 ms to import toolchains.rustup; only this path pays it
    from rgpu.toolchains import pins, rustup

    env = rustup.child_env()
    rows = [_toolchain_row(rustup.status(p, env), env) for p in pins.load_all(env)]
    if as_json:
        emit_json({"ok": True, "toolchains": rows})
        return
    for row in rows:
        note = "" if row["exercised_in_ci"] else "  [not exercised in rgpu's CI]"
        click.echo(
            f"{row['name']:<6} {row['channel']:<20} {row['state']:<18} {row['summary']}{note}"
        )
        if row["install_command"]:
            click.echo(
                f"{'':<6} install: rgpu toolchain install {row['name']}  "
                f"(runs `{row['install_command']}`)"
            )


@toolchain.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def toolchain_show(name: str, as_json: bool) -> None:
    """Everything about one pin: channel, hash, components, upstream source, state."""
    # start-up: ~24 ms to import toolchains.rustup; only this path pays it
    from rgpu.toolchains import pins, rustup

    env = rustup.child_env()
    pin = pins.load(name, env)
    row = _toolchain_row(rustup.status(pin, env), env)
    row["file"] = str(pin.path)
    row["tables"] = {k: dict(v) for k, v in pin.tables.items()}
    if as_json:
        emit_json({"ok": True, "toolchain": row})
        return
    src = row["source"]
    lines = [
        f"{pin.name}: {pin.description}",
        f"  file:        {pin.path}",
        f"  channel:     {pin.channel}",
        f"  commit hash: {pin.commit_hash or '(not pinned upstream: channel only)'}",
        f"  components:  {', '.join(pin.components)}",
        f"  source:      {src['repository']} @ {src['rev']} ({src['file']}), "
        f"confirmed {src['confirmed']}",
        f"  installed:   {row['installed'] or 'no'} ({row['summary']})",
        f"  state:       {row['state']}",
    ]
    for key, table in row["tables"].items():
        lines.append(f"  [{key}] " + ", ".join(f"{k} = {v}" for k, v in table.items()))
    if not pin.exercised_in_ci:
        lines.append("  note: this codegen is not exercised in rgpu's CI")
    if row["install_command"]:
        lines.append(
            f"  install:     rgpu toolchain install {pin.name}  (runs `{row['install_command']}`)"
        )
    click.echo("\n".join(lines))


@toolchain.command("install")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Install without asking (also RGPU_YES=1).")
@json_option("toolchain-install.schema.json")
def toolchain_install(name: str, yes: bool, as_json: bool) -> None:
    """Install what the pin NAME needs and is missing; safe to run again."""
    # start-up: ~27 ms to import toolchains.rustup; only this path pays it
    from rgpu.toolchains import pins, rustup

    env = rustup.child_env()
    pin = pins.load(name, env)
    yes = yes or rustup.yes_from_env(env)
    interactive = rustup.can_prompt(sys.stdin.isatty(), env)

    def confirm(question: str) -> bool:
        return click.confirm(question, default=False, err=True)

    own = _codegen_installer(name)
    if own is not None:  # nvptx: the pinned nightly, else the system packages
        summary = own(pin, env, yes=yes, interactive=interactive, confirm=confirm)
        reporter().info(f"{pin.name}: ready ({summary})")
    else:
        result = rustup.install(pin, env, yes=yes, interactive=interactive, confirm=confirm)
        summary = result.after.summary()
        if result.ran is None:
            reporter().info(f"{pin.name}: already installed, nothing to do ({summary})")
        else:
            reporter().info(f"{pin.name}: installed ({summary})")
    tools = _build_tools(pin.name, env, yes=yes, confirm=confirm if interactive else None)
    if as_json:
        emit_json({"ok": True, "toolchain": pin.name, "summary": summary, "tools": tools})


def _build_tools(
    name: str, env: dict[str, str], *, yes: bool, confirm: Callable[[str], bool] | None
) -> dict[str, dict[str, Any]]:
    """The programs the codegen's builds run on what the compiler made (spirv-opt and
    spirv-val; ptxas), found or obtained as `rgpu build --yes` does (toolchains/obtain.py);
    each one's path (None: not there) and whether it was downloaded now."""
    # start-up: ~20 ms to import toolchains.tools; only this path pays it
    from rgpu.toolchains import obtain, tools

    needed = obtain.needs([name])
    obtained = obtain.ensure([name], env, yes=yes, confirm=confirm) if needed else []
    found_tools: dict[str, dict[str, Any]] = {}
    for tool in needed:
        found = tools.find_tool(tool.name, env)
        found_tools[tool.name] = {"path": found, "downloaded": tool.name in obtained}
        if found is not None:
            how = "downloaded" if tool.name in obtained else "found"
            reporter().info(f"{name}: {tool.name} {how} ({found})")
        elif tool.name == "ptxas":  # ensure leaves ptxas's warning to the build, per PTX
            fix = tools.obtain_fix(tool, env)
            reporter().warn(f"{tool.name} not found: {tool.lacking} (fix: {fix})")
    return found_tools


def _codegen_installer(name: str) -> Any:
    """The codegen's own `install_toolchain` when it has one (routes beyond rustup)."""
    # start-up: ~2 ms to import codegens; only this path pays it
    from rgpu import codegens

    if name not in codegen_names():  # a pin without a codegen: rustup alone installs it
        return None
    return getattr(codegens.get(name), "install_toolchain", None)
