"""`rgpu doctor`: what this machine has for each backend, and the fix for the rest."""

from __future__ import annotations

import sys

import click

from rgpu.backends import check_codegen, codegen_choices, get_backend, names_help
from rgpu.cli.group import ChildExit, cli, emit_json
from rgpu.errors import BackendUnavailableError, ExitCode
from rgpu.util.output import reporter


@cli.command()
@click.option(
    "--backend",
    "backend",
    default=None,
    metavar="B",
    help=f"Exit {int(ExitCode.BACKEND_UNAVAILABLE)} unless rgpu can build backend B "
    f"({names_help()}) here.",
)
@click.option(
    "--codegen",
    default=None,
    metavar="C",
    help=f"With --backend: its codegen ({codegen_choices()}).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
def doctor(backend: str | None, codegen: str | None, as_json: bool) -> None:
    """Check this machine for every backend; each problem comes with its fix."""
    # start-up: ~129 ms to import doctor.report; only this path pays it
    from rgpu.doctor import report as doc

    chosen = get_backend(backend) if backend is not None else None
    report = doc.diagnose(
        backend=chosen, codegen=check_codegen(codegen) if codegen is not None else None
    )
    if as_json:
        emit_json({**report.to_dict(), "backend": backend})
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
            raise ChildExit(int(error.exit_code))
