"""The `rgpu` command group, and the options and helpers its commands share.

Every command module (build.py, ci.py, doctor.py, scaffold.py, toolchain.py) registers its
commands on `cli` here; main.py imports them and is the one place rgpu exits."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from rgpu import __version__
from rgpu.backends import summary
from rgpu.errors import RgpuError

dir_option = click.option(
    "-C",
    "directory",
    type=click.Path(path_type=Path),
    default=None,
    help="Run as if started in DIR (searched upward for the workspace), like git -C.",
)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def load_workspace(directory: Path | None) -> Any:
    from rgpu import workspace

    return workspace.load(directory or Path.cwd())


def options_for(ws: Any, **cli: Any) -> Any:
    from rgpu import config

    return config.resolve(metadata=ws.metadata, env=os.environ, cli=cli)


def profile_of(release: bool | None) -> str | None:
    return None if release is None else ("release" if release else "debug")


def step_summary(render: Callable[[Any], str]) -> None:
    """Append to GitHub's step summary; rgpu.ci.summary is imported only under Actions."""
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from rgpu.ci import summary

        summary.append(render(summary))


def summary_of_failure(label: str, error: RgpuError) -> None:
    step_summary(lambda s: s.failure_markdown(label, error))


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    help=f"rgpu: build plain-Rust GPU kernels for {summary()}.",
)
@click.version_option(__version__, prog_name="rgpu")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    ctx.obj = {"debug": debug}


class ChildExit(Exception):
    """A program rgpu ran exited non-zero and already said why: pass its code on."""

    def __init__(self, code: int) -> None:
        self.code = code
