"""`rgpu new`, `rgpu init`, `rgpu vendor` and `rgpu add`: making and updating workspaces."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rgpu import __version__
from rgpu.cli.group import (
    cli,
    dir_option,
    directory_option,
    emit_json,
    json_option,
    load_workspace,
    verbose,
)
from rgpu.errors import DestinationError
from rgpu.util.output import reporter

if TYPE_CHECKING:
    from rgpu.scaffold.changes import FileChange

FILES_SCHEMA = "files.schema.json"


@cli.command()
@click.argument("name")
@directory_option("Run as if started in DIR, like git -C: --dir is relative to it.")
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
@json_option(FILES_SCHEMA)
def new(
    name: str,
    directory: Path | None,
    parent: Path,
    template: str,
    force: bool,
    overwrite: bool,
    as_json: bool,
) -> None:
    """Create a new workspace NAME from a template."""
    # start-up: ~67 ms to import scaffold.new; only this path pays it
    from rgpu.scaffold.new import new_workspace

    if directory is not None:
        if not directory.is_dir():
            raise DestinationError(
                f"{directory} (given to -C) is not a directory",
                f"create it first (`mkdir -p {directory}`) or pass an existing one to -C",
            )
        parent = directory / parent

    dest, statuses = new_workspace(
        name, parent, force=force, overwrite=overwrite, template=template
    )
    # start-up: <1 ms to import scaffold.tally; only this path pays it
    from rgpu.scaffold import tally

    tally.report([(s.word, s.path) for s in statuses], verbose=verbose())
    conflicts = [s.path for s in statuses if s.word == "conflict"]
    if conflicts:
        reporter().warn(
            f"{len(conflicts)} file(s) exist with other content and were left alone: "
            f"{', '.join(conflicts)} (compare them with a fresh `rgpu new`; "
            "`--force --overwrite` replaces them, keeping backups)"
        )
    reporter().info(f"{'updated' if force else 'created'} {dest}")
    reporter().info(f"next: cd {dest} && rgpu test")
    if as_json:
        files = [{"status": s.word, "path": s.path, "diff": None} for s in statuses]
        emit_json(files_result("new", dest, files, dry_run=False, next=f"cd {dest} && rgpu test"))


def files_result(
    command: str, root: Path, files: Sequence[dict[str, Any]], *, dry_run: bool, next: str | None
) -> dict[str, Any]:
    """The JSON of a command that writes files (rgpu/schemas/files.schema.json)."""
    return {
        "ok": True,
        "command": command,
        "root": str(root),
        "dry_run": dry_run,
        "wrote": not dry_run and any(f["status"] not in ("identical", "keep") for f in files),
        "files": list(files),
        "next": next,
    }


def _files_of(file_changes: Sequence[FileChange], dry_run: bool) -> list[dict[str, Any]]:
    """Each file of a plan as JSON; with --dry-run a changed file's diff too."""
    # start-up: ~6 ms to import scaffold.changes; only this path pays it
    from rgpu.scaffold import changes

    return [
        {
            "status": c.word,
            "path": c.path,
            "diff": changes.diff(c) if dry_run and c.word == "change" else None,
        }
        for c in file_changes
    ]


def _show_plan(file_changes: Sequence[FileChange], dry_run: bool, as_json: bool = False) -> None:
    """Status words for every file; with --dry-run, the diff of each change on stdout (with
    --json, in the JSON instead)."""
    # start-up: ~10 ms to import scaffold.changes; only this path pays it
    from rgpu.scaffold import changes

    changes.report(file_changes, verbose=verbose())
    if dry_run and not as_json:
        for change in file_changes:
            if change.word == "change":
                click.echo(changes.diff(change), nl=False)


@cli.command()
@directory_option(
    "The Cargo project's directory (default: here; its root Cargo.toml, not searched upward)."
)
@click.option(
    "--kernel",
    default=None,
    metavar="DIR",
    help="Directory of the kernel crate to create (default: kernel). The package is "
    "named PROJECT-<its name>.",
)
@click.option(
    "--host",
    "hosts",
    multiple=True,
    metavar="PACKAGE",
    help="A package that launches kernels (repeatable). Default: the root package, else "
    "every member with a binary, else every member.",
)
@click.option("--dry-run", is_flag=True, help="Show what would change (diffs); write nothing.")
@json_option(FILES_SCHEMA)
def init(
    directory: Path | None,
    kernel: str | None,
    hosts: tuple[str, ...],
    dry_run: bool,
    as_json: bool,
) -> None:
    """Add rgpu to the existing Cargo project in DIR (default: here)."""
    # start-up: ~75 ms to import scaffold.init; only this path pays it
    from rgpu.scaffold import init as initializing

    request = initializing.Request(kernel=kernel, hosts=hosts)
    plan = initializing.plan_project(directory or Path.cwd(), request)
    _show_plan(plan.changes, dry_run, as_json)
    for path in plan.kept:
        reporter().status("keep", f"{path} (yours)")
    files = _files_of(plan.changes, dry_run) + [
        {"status": "keep", "path": path, "diff": None} for path in plan.kept
    ]
    next_step = f"write kernels in {plan.kernel_dir}/src/lib.rs, then `rgpu test`"

    def result() -> None:
        if as_json:
            emit_json(files_result("init", plan.root, files, dry_run=dry_run, next=next_step))

    if dry_run:
        reporter().info(
            "dry run: nothing was written" + ("; run without --dry-run to apply" * plan.writes)
        )
        return result()
    initializing.apply(plan)
    where = plan.root
    if not plan.writes:
        reporter().info(f"{where} is an rgpu workspace already: nothing to change")
        return result()
    hosts_text = ", ".join(plan.hosts) or "none (add the kernel crate to a package yourself)"
    reporter().info(
        f"rgpu is set up in {where}: kernel crate `{plan.kernel_package}` in {plan.kernel_dir}/, "
        f"used by {hosts_text}"
    )
    if len(plan.binaries) > 1:
        reporter().info(
            f"{len(plan.binaries)} binaries: `rgpu run --bin NAME` picks one (or set "
            'binary = "NAME" in [workspace.metadata.rgpu])'
        )
    reporter().info(
        f"next: write kernels in {plan.kernel_dir}/src/lib.rs, call them as "
        f"`{plan.kernel_key}::NAME(&device, n, ...)` with a device from "
        "`rgpu::Device::select()`, then `rgpu test` and `rgpu build --backend cuda`"
    )
    result()


@cli.command()
@dir_option
@click.option("--dry-run", is_flag=True, help="Show what would change (diffs); write nothing.")
@json_option(FILES_SCHEMA)
def vendor(directory: Path | None, dry_run: bool, as_json: bool) -> None:
    """Vendor this rgpu's crates into the workspace and point it at them."""
    # start-up: ~54 ms to import scaffold.changes, scaffold.vendor; only this path pays it
    from rgpu.scaffold import changes
    from rgpu.scaffold.vendor import match_times, plan_workspace, vendor_dir

    ws = load_workspace(directory)
    plan = plan_workspace(ws.root)
    _show_plan(plan.changes, dry_run, as_json)
    if dry_run:
        reporter().info("dry run: nothing was written")
    elif plan.writes:
        changes.write(plan.root, plan.changes, "rgpu vendor")
        match_times(plan.root)
        reporter().info(f"the workspace uses rgpu {__version__}'s crates in {vendor_dir()}/")
    else:
        reporter().info(f"the workspace uses rgpu {__version__}'s crates already")
    for old in plan.old_dirs:
        reporter().info(f"{old}/ is no longer used: you may delete it (`rm -r {old}`)")
    if as_json:
        files = _files_of(plan.changes, dry_run)
        emit_json(files_result("vendor", plan.root, files, dry_run=dry_run, next=None))


@cli.command()
@click.argument("component", type=click.Choice(["primitives"]))
@dir_option
@click.option("--dry-run", is_flag=True, help="Show what would change (diffs); write nothing.")
@json_option(FILES_SCHEMA)
def add(component: str, directory: Path | None, dry_run: bool, as_json: bool) -> None:
    """Add a component of rgpu to the workspace: `primitives` (rgpu-primitives: sort, scan,
    reduce, histogram, top-k) as a dependency of the kernel crate and its hosts."""
    # start-up: ~71 ms to import scaffold.changes, scaffold.add; only this path pays it
    from rgpu.scaffold import changes
    from rgpu.scaffold.add import COMMAND, plan_primitives

    ws = load_workspace(directory)
    planned = plan_primitives(ws)
    _show_plan(planned, dry_run, as_json)
    if dry_run:
        reporter().info("dry run: nothing was written")
    elif any(c.word != "identical" for c in planned):
        changes.write(ws.root, planned, COMMAND)
        reporter().info(
            f"added {component}: `rgpu_primitives::sort_keys(&device, &mut keys, "
            "Order::Ascending)?` and the rest work in the host after the next `rgpu build`"
        )
    else:
        reporter().info(f"nothing to change: the workspace uses rgpu-{component} already")
    if as_json:
        files = _files_of(planned, dry_run)
        emit_json(files_result("add", ws.root, files, dry_run=dry_run, next=None))
