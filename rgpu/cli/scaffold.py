"""`rgpu new` (and `rgpu init`)."""

from __future__ import annotations

from pathlib import Path

import click

from rgpu.cli.main import cli
from rgpu.util.output import reporter


@cli.command()
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(path_type=Path),
    default=Path("."),
    show_default=True,
    help="Parent directory to create the workspace in.",
)
@click.option(
    "--template",
    default="bitonic",
    show_default=True,
    metavar="T",
    help="bitonic (the multi-backend sort demo) or minimal (one small kernel).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Write into an existing directory: only files it lacks; conflicts are listed.",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="With --force: replace conflicting files, keeping each as NAME.rgpu-backup.",
)
def new(name: str, parent: Path, template: str, force: bool, overwrite: bool) -> None:
    """Create a new workspace NAME from a template."""
    from rgpu.scaffold.new import new_workspace

    dest, statuses = new_workspace(
        name, parent, force=force, overwrite=overwrite, template=template
    )
    for status in statuses:
        reporter().status(status.word, status.path)
    conflicts = [s.path for s in statuses if s.word == "conflict"]
    if conflicts:
        reporter().warn(
            f"{len(conflicts)} file(s) exist with other content and were left alone: "
            f"{', '.join(conflicts)} (compare them with a fresh `rgpu new`; "
            "`--force --overwrite` replaces them, keeping backups)"
        )
    reporter().info(f"{'updated' if force else 'created'} {dest}")
    reporter().info(f"next: cd {dest} && rgpu test")
