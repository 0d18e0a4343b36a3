"""`rgpu ci init|cache-key|check-ptx`: GitHub Actions."""

from __future__ import annotations

from pathlib import Path

import click

from rgpu.backends import names_help
from rgpu.cli.group import (
    ChildExit,
    cli,
    dir_option,
    emit_json,
    json_option,
    load_workspace,
    options_for,
)
from rgpu.errors import ArtifactError
from rgpu.util.output import reporter


@cli.group()
def ci() -> None:
    """GitHub Actions: write rgpu's workflow, and the helpers its jobs call."""


@ci.command("init")
@dir_option
@click.option(
    "--backends",
    "backends",
    multiple=True,
    metavar="B",
    help=f"Backends to prove in CI ({names_help()}; comma-separated or repeated). Default: "
    "cpu,wgpu,ash,cuda.",
)
@click.option(
    "--rgpu-source",
    default=None,
    metavar="REQ",
    help="pip requirement CI installs rgpu from, pinned (default: the git commit this rgpu "
    "was installed from).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing .github/workflows/rgpu.yml.")
@json_option("ci-init.schema.json")
def ci_init(
    directory: Path | None,
    backends: tuple[str, ...],
    rgpu_source: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Write .github/workflows/rgpu.yml: CPU, Vulkan (lavapipe) and CUDA-compile jobs."""
    # start-up: ~9 ms to import ci.workflow; only this path pays it
    from rgpu.ci import workflow

    ws = load_workspace(directory)
    names = workflow.chosen_backends(backends)
    ci_run = options_for(ws).ci_run  # `ci-run` in [workspace.metadata.rgpu]
    rendered = workflow.render(ws.root, names, workflow.require_source(rgpu_source), ci_run)
    word = workflow.write_workflow(rendered, force=force)
    reporter().status(word, str(rendered.path))
    reporter().info(f"jobs: {', '.join(j.id for j in workflow.jobs_for(names))}")
    reporter().info(f"next: commit {rendered.path.name} and push; each job runs on GitHub")
    if as_json:
        jobs = [j.id for j in workflow.jobs_for(names)]
        emit_json({"ok": True, "status": word, "workflow": str(rendered.path), "jobs": jobs})


@ci.command("cache-key")
def ci_cache_key() -> None:
    """Print the cache key of rgpu's pinned toolchain files (used by the workflow)."""
    # start-up: ~12 ms to import ci.workflow; only this path pays it
    from rgpu.ci import workflow

    click.echo(workflow.toolchains_key())


@ci.command("check-ptx")
@dir_option
@json_option("check-ptx.schema.json")
def ci_check_ptx(directory: Path | None, as_json: bool) -> None:
    """Check every PTX in target/rgpu/kernels/manifest.json with ptxas, for its arch, and
    that every cubin (its SASS) is the one built from it."""
    # start-up: ~30 ms to import ci.check; only this path pays it
    from rgpu.ci.check import check_ptx

    checks = check_ptx(load_workspace(directory))
    for check in checks:
        reporter().status("ok" if check.ok else "rejected", f"{check.path} ({check.arch})")
    ptxs = [c for c in checks if c.kind == "ptx"]
    failed = [c for c in ptxs if not c.ok]
    stale = [c for c in checks if c.kind != "ptx" and not c.ok]
    error = None
    if failed:
        error = ArtifactError(
            f"ptxas rejected {len(failed)} of {len(ptxs)} PTX files: {failed[0].detail}",
            "fix the kernel or the arch list, then `rgpu build --backend cuda` again",
        )
    elif stale:
        error = ArtifactError(
            f"{len(stale)} cubin(s) do not match their PTX: {stale[0].detail}",
            "rebuild the kernels with `rgpu build --backend cuda`",
        )
    if not as_json:
        if error is not None:
            raise error
        return
    rows = [
        {"path": str(c.path), "arch": c.arch, "kind": c.kind, "ok": c.ok, "detail": c.detail}
        for c in checks
    ]
    emit_json({"ok": error is None, "checks": rows, "error": error and error.to_dict()})
    if error is not None:  # the JSON above is the report; the error line goes to stderr
        reporter().error(error.message, error.hint)
        raise ChildExit(int(error.exit_code))
