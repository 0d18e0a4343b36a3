"""Command line: parse, call the library, render the result. Only main() exits."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from rgpu import __version__
from rgpu.errors import ExitCode, RgpuError, UsageError
from rgpu.util.output import reporter

BACKEND_CHOICES = ("cpu", "cuda", "wgpu", "ash")
F = TypeVar("F", bound=Callable[..., Any])

dir_option = click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run as if started in DIR (searched upward for the workspace), like git -C.",
)


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def _load_project(directory: Path | None) -> Any:
    from rgpu import project

    return project.load(directory or Path.cwd())


def _options(project: Any, **cli: Any) -> Any:
    from rgpu import config

    return config.resolve(metadata=project.metadata, env=os.environ, cli=cli)


def _split_backends(values: Sequence[str]) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    from rgpu.backends import get_backend

    for name in names:
        get_backend(name)  # unknown names fail here with a did-you-mean
    return list(dict.fromkeys(names))


def _parse_archs(values: Sequence[str]) -> list[str] | None:
    if not values:
        return None
    from rgpu.ptx import parse_archs

    return list(parse_archs(values, os.environ))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rgpu")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """rgpu: build plain-Rust GPU kernels for CUDA, Vulkan (wgpu, ash) and the CPU."""
    ctx.obj = {"debug": debug}


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
@click.option("--force", is_flag=True, help="Write into an existing directory (keeps other files).")
def new(name: str, parent: Path, force: bool) -> None:
    """Create a new workspace NAME from the bitonic-sort template."""
    from rgpu.scaffold import new_workspace

    dest, statuses = new_workspace(name, parent, force=force)
    for status in statuses:
        reporter().status(status.word, status.path)
    reporter().info(f"created {dest}")
    reporter().info(f"next: cd {dest} && rgpu run -- --verify")


def _backend_option(default_help: str) -> Callable[[F], F]:
    return click.option(
        "--backend",
        "backends",
        multiple=True,
        metavar="B",
        help=f"Backend to build: {', '.join(BACKEND_CHOICES)}; repeat or comma-separate. "
        f"{default_help}",
    )


@cli.command()
@dir_option
@_backend_option("Default: cpu, or `backend` in [workspace.metadata.rgpu].")
@click.option("--release/--debug", "release", default=None, help="Cargo profile (default release).")
@click.option(
    "--docker/--no-docker",
    "docker",
    default=None,
    help="Compile kernels in a container (docker or podman) or here. Default: per codegen "
    "(nvptx here; nvvm in a container unless LLVM 7 is found).",
)
@click.option(
    "--image",
    default=None,
    metavar="IMAGE",
    help="Container image for --docker (default: rgpu-toolchain:<version>-offline for nvptx).",
)
@click.option("--codegen", default=None, metavar="C", help="Kernel codegen (cuda: nvptx).")
@click.option(
    "--arch",
    "archs",
    multiple=True,
    metavar="A",
    help="CUDA archs, e.g. sm_75,sm_80,sm_90 (the default), or `native` (this machine's GPU).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan of commands; run nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@click.option(
    "--kernel-artifact",
    "kernel_artifacts",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Embed this kernel file (.spv, .ptx) instead of compiling the kernel crate; repeatable.",
)
@click.option(
    "--yes", "-y", is_flag=True, default=None, help="Allow toolchain installs (RGPU_YES)."
)
def build(
    directory: Path | None,
    backends: tuple[str, ...],
    release: bool | None,
    docker: bool | None,
    image: str | None,
    codegen: str | None,
    archs: tuple[str, ...],
    dry_run: bool,
    as_json: bool,
    kernel_artifacts: tuple[Path, ...],
    yes: bool | None,
) -> None:
    """Compile the kernels for a backend, then build the host with its feature."""
    from rgpu import build as pipeline

    project = _load_project(directory)
    profile = None if release is None else ("release" if release else "debug")
    cuda_archs = _parse_archs(archs)
    options = _options(
        project,
        profile=profile,
        yes=yes,
        docker=docker,
        image=image,
        codegen=codegen,
        cuda_archs=cuda_archs,
    )
    names = _split_backends(backends) or _split_backends([options.backend])
    try:
        result = pipeline.build(
            project, options, names, dry_run=dry_run, kernel_artifacts=kernel_artifacts
        )
    except RgpuError as error:
        _summary_of_failure(f"rgpu build ({', '.join(names)})", error)
        raise
    if not dry_run:
        _step_summary(lambda s: s.build_markdown(result))
    if as_json:
        _emit_json({"ok": True, "dry_run": dry_run, **result.to_dict()})
    elif dry_run:
        click.echo(result.plan.render())
    else:
        reporter().info(f"built {result.binary} ({', '.join(result.backends)})")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@dir_option
@click.option("--backend", "backend", default=None, metavar="B", help="Backend to build and run.")
@click.option("--release/--debug", "release", default=None, help="Cargo profile (default release).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(
    directory: Path | None, backend: str | None, release: bool | None, args: tuple[str, ...]
) -> None:
    """Build if needed, then run the demo binary with ARGS (after --)."""
    from rgpu import build as pipeline
    from rgpu.util.cmd import exec_replace

    project = _load_project(directory)
    profile = None if release is None else ("release" if release else "debug")
    options = _options(project, profile=profile)
    if backend is not None:
        names = _split_backends([backend])
    else:
        state = pipeline.read_state(project)
        names = state["backends"] if state else _split_backends([options.backend])
    result = pipeline.build(project, options, names)
    argv = [str(result.binary)]
    if backend is not None:
        argv += ["--backend", backend]
    code = exec_replace([*argv, *args])
    if code != 0:
        raise _ChildExit(code)


@cli.command()
@dir_option
@click.option("--release/--debug", "release", default=None, help="Cargo profile (default release).")
def test(directory: Path | None, release: bool | None) -> None:
    """Run the workspace's own tests, with the backends of the last build."""
    from rgpu import testing

    project = _load_project(directory)
    profile = None if release is None else ("release" if release else "debug")
    options = _options(project, profile=profile)
    from rgpu import build as pipeline

    try:
        testing.run_tests(project, options)
    except RgpuError as error:
        _summary_of_failure("rgpu test", error)
        raise
    state = pipeline.read_state(project)
    _step_summary(lambda s: s.tests_markdown(state["features"] if state else ["cpu"]))


def _step_summary(render: Callable[[Any], str]) -> None:
    """Append to GitHub's step summary; rgpu.summary is imported only under Actions."""
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from rgpu import summary

        summary.append(render(summary))


def _summary_of_failure(label: str, error: RgpuError) -> None:
    _step_summary(lambda s: s.failure_markdown(label, error))


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
    help="Backends to prove in CI (comma-separated or repeated). Default: cpu,wgpu,ash,cuda.",
)
@click.option(
    "--rgpu-source",
    default=None,
    metavar="REQ",
    help="pip requirement CI installs rgpu from, pinned (default: the git commit this rgpu "
    "was installed from).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing .github/workflows/rgpu.yml.")
def ci_init(
    directory: Path | None, backends: tuple[str, ...], rgpu_source: str | None, force: bool
) -> None:
    """Write .github/workflows/rgpu.yml: CPU, Vulkan (lavapipe) and CUDA-compile jobs."""
    from rgpu import ci as workflow

    project = _load_project(directory)
    names = workflow.parse_backends(backends)
    rendered = workflow.render(project.root, names, workflow.require_source(rgpu_source))
    word = workflow.write_workflow(rendered, force=force)
    reporter().status(word, str(rendered.path))
    reporter().info(f"jobs: {', '.join(j.id for j in workflow.jobs_for(names))}")
    reporter().info(f"next: commit {rendered.path.name} and push; each job runs on GitHub")


@ci.command("cache-key")
def ci_cache_key() -> None:
    """Print the cache key of rgpu's pinned toolchain files (used by the workflow)."""
    from rgpu import ci as workflow

    click.echo(workflow.toolchains_key())


@ci.command("check-ptx")
@dir_option
def ci_check_ptx(directory: Path | None) -> None:
    """Check every PTX in target/rgpu/manifest.json with ptxas, for its arch."""
    from rgpu.ci_check import check_ptx
    from rgpu.errors import ArtifactError

    checks = check_ptx(_load_project(directory))
    for check in checks:
        reporter().status("ok" if check.ok else "rejected", f"{check.path} ({check.arch})")
    failed = [c for c in checks if not c.ok]
    if failed:
        raise ArtifactError(
            f"ptxas rejected {len(failed)} of {len(checks)} PTX files: {failed[0].detail}",
            "fix the kernel or the arch list, then `rgpu build --backend cuda` again",
        )


# --- toolchain and doctor (issue 3) ---------------------------------------------------------


@cli.group()
def toolchain() -> None:
    """Pinned toolchains of the codegens: list, show, install."""


def _toolchain_row(status: Any, env: dict[str, str]) -> dict[str, Any]:
    pin = status.pin
    state = "ok" if status.ok else ("missing" if status.toolchain is None else "incomplete")
    if status.hash_ok is False:
        state = "wrong commit hash"
    summary = status.summary()
    if not status.ok and "system" in pin.tables:  # nvptx: a system rustc may stand in
        from rgpu.doctor_checks import check_nvptx

        first = check_nvptx(pin, env)[0]
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
    from rgpu import toolchains

    env = toolchains.child_env()
    rows = [_toolchain_row(toolchains.status(p, env), env) for p in toolchains.load_all(env)]
    if as_json:
        _emit_json({"ok": True, "toolchains": rows})
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
    from rgpu import toolchains

    env = toolchains.child_env()
    pin = toolchains.load(name, env)
    row = _toolchain_row(toolchains.status(pin, env), env)
    row["file"] = str(pin.path)
    row["tables"] = {k: dict(v) for k, v in pin.tables.items()}
    if as_json:
        _emit_json({"ok": True, "toolchain": row})
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
def toolchain_install(name: str, yes: bool) -> None:
    """Install what the pin NAME needs and is missing; safe to run again."""
    from rgpu import toolchains

    env = toolchains.child_env()
    pin = toolchains.load(name, env)
    result = toolchains.install(
        pin,
        env,
        yes=yes or toolchains.yes_from_env(env),
        interactive=toolchains.can_prompt(sys.stdin.isatty(), env),
        confirm=lambda question: click.confirm(question, default=False, err=True),
    )
    if result.ran is None:
        reporter().info(f"{pin.name}: already installed, nothing to do ({result.after.summary()})")
    else:
        reporter().info(f"{pin.name}: installed ({result.after.summary()})")


@cli.command()
@click.option(
    "--backend",
    "backend",
    default=None,
    metavar="B",
    help=f"Exit {int(ExitCode.BACKEND_UNAVAILABLE)} unless rgpu can build backend B "
    f"({', '.join(BACKEND_CHOICES)}) here.",
)
@click.option("--codegen", default=None, metavar="C", help="With --backend cuda: nvptx or nvvm.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
def doctor(backend: str | None, codegen: str | None, as_json: bool) -> None:
    """Check this machine for every backend; each problem comes with its fix."""
    from rgpu import doctor as doc
    from rgpu.errors import BackendUnavailableError

    report = doc.diagnose(backend=backend, codegen=codegen)
    if as_json:
        _emit_json({**report.to_dict(), "backend": backend})
    else:
        click.echo("\n".join(doc.render(report, colour=sys.stdout.isatty())))
    if backend is not None:
        verdict = report.verdict(backend)
        if not verdict.builds:
            error = BackendUnavailableError(
                f"backend {backend} cannot be built here: {verdict.why}", verdict.fix
            )
            if not as_json:
                raise error
            # The report on stdout is the JSON result; a second JSON error would break it.
            reporter().error(error.message, error.hint)
            raise _ChildExit(int(error.exit_code))


class _ChildExit(Exception):
    """The demo binary exited non-zero: pass its code on, it already said why."""

    def __init__(self, code: int) -> None:
        self.code = code


def _fail(error: RgpuError, as_json: bool, debug: bool) -> NoReturn:
    if debug:
        import traceback

        traceback.print_exc()
    if as_json:
        click.echo(json.dumps({"ok": False, **error.to_dict()}, indent=2, sort_keys=True))
    reporter().error(error.message, error.hint)
    sys.exit(int(error.exit_code))


def main(argv: Sequence[str] | None = None) -> NoReturn:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    as_json = "--json" in args and "--" not in args[: args.index("--json")]
    try:
        cli.main(args=args, prog_name="rgpu", standalone_mode=False)
    except RgpuError as error:
        _fail(error, as_json, debug)
    except _ChildExit as child:
        sys.exit(child.code)
    except click.exceptions.Abort:
        reporter().error("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except KeyboardInterrupt:
        reporter().error("interrupted")
        sys.exit(int(ExitCode.INTERRUPTED))
    except click.ClickException as exc:
        _fail(UsageError(exc.format_message(), "see `rgpu --help`"), as_json, debug)
    sys.exit(0)
