"""`rgpu run [--bin NAME | --example NAME] [--backend B] [-- ARGS]`: build what is needed,
then run one of the workspace's programs with the user's arguments untouched.

The backend reaches the program through RGPU_BACKEND, which the runtime's
`Device::select()` reads. Backends accumulate, so choosing one already built in never
rebuilds.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence

from rgpu.backends import Backend
from rgpu.config import Options
from rgpu.errors import UsageError, did_you_mean
from rgpu.host import state as build_state
from rgpu.host.state import Build, Target
from rgpu.util import cmd
from rgpu.util.output import reporter
from rgpu.workspace import Workspace

BACKEND_ENV = "RGPU_BACKEND"


def choose(
    targets: Sequence[Target], ws: Workspace, binary: str | None, example: str | None
) -> Target:
    if example is not None:
        return _named(targets, "example", example)
    if binary is not None:
        return _named(targets, "bin", binary)
    if ws.default_binary is not None:
        return _named(targets, "bin", ws.default_binary)
    bins = [t for t in targets if t.kind == "bin"]
    if len(bins) == 1:
        return bins[0]
    names = ", ".join(t.name for t in bins) or "none"
    raise UsageError(
        f"the workspace has {len(bins)} binaries ({names}); which one should run?",
        'pass --bin NAME (or set binary = "NAME" in [workspace.metadata.rgpu])'
        if bins
        else "add a binary (src/main.rs or [[bin]]) or run an example with --example NAME",
    )


def _named(targets: Sequence[Target], kind: str, name: str) -> Target:
    for target in targets:
        if target.kind == kind and target.name == name:
            return target
    have = ", ".join(t.name for t in targets if t.kind == kind) or "none"

    raise UsageError(
        f"no {kind} named `{name}` in the workspace{did_you_mean(name, have.split(', '))}",
        f"{kind}s built: {have}",
    )


def exit_code(returncode: int, program: str) -> int:
    """A child killed by signal N exits 128+N, as a shell reports it, and rgpu says so."""
    if returncode >= 0:
        return returncode
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    reporter().error(
        f"{os.path.basename(program)} was killed by {name} ({number})",
        "exit code 128+N means the program was killed by signal N "
        "(e.g. SIGABRT: it aborted, SIGKILL: often out of memory)",
    )
    return 128 + number


def run(
    ws: Workspace,
    options: Options,
    backend: Backend | None,
    binary: str | None,
    example: str | None,
    args: Sequence[str],
    engine: str | None = None,
    *,
    build: Build,
    ask: Callable[[str], bool] | None = None,
) -> int:
    """Build (``build``: the pipeline's, passed by the command), then run the program;
    ``ask``: the question to the person at the terminal a missing download needs."""
    if engine is not None and (backend is None or not backend.host_target):
        raise UsageError(
            f"--engine {engine} picks what runs a webgpu page, and this run is not one",
            f"add --backend webgpu: `rgpu run --backend webgpu --engine {engine}`",
        )
    if backend is not None and backend.host_target:
        return run_web(
            ws, options, backend, binary, args, engine or "chromium", build=build, ask=ask
        )
    previous = build_state.read(ws.rgpu_dir)
    asked = [backend] if backend else list(previous.backends if previous else options.backends)
    targets = build(ws, options, asked)
    target = choose(targets, ws, binary, example)
    env = dict(os.environ)
    if backend is not None:
        env[BACKEND_ENV] = backend.name
    return exit_code(cmd.exec_replace([target.path, *args], env=env), target.path)


def run_web(
    ws: Workspace,
    options: Options,
    backend: Backend,
    binary: str | None,
    args: Sequence[str],
    engine: str,
    *,
    build: Build,
    ask: Callable[[str], bool] | None = None,
) -> int:
    """`rgpu run --backend webgpu`: the programs built for the browser with the WGSL the
    kernel manifest lists, and the page of `binary` (or the workspace's) served on
    127.0.0.1 and run in headless Chromium, or (`--engine dawn`) run in Node with Dawn
    (web/dawn.py); its output streams here and its status is returned."""
    # start-up: ~51 ms to import web.browser, web.build; only this path pays it
    from rgpu.web import browser, dawn
    from rgpu.web import build as web_build

    found = None
    if engine == "dawn":  # before the build: a missing download stops it in a second
        found = dawn.ensure(os.environ, options.yes, ask)
    build(ws, options, [backend])
    env = dict(os.environ)
    name = (binary or ws.default_binary or "").replace("-", "_")
    pages = sorted(p for p in web_build.web_dir(ws).iterdir() if (p / "index.html").is_file())
    chosen = [p for p in pages if p.name == name] or pages[:1]
    if not chosen:
        raise UsageError(
            "the workspace has no program built for the browser",
            "add a binary (src/main.rs) and run `rgpu build --backend webgpu`",
        )
    if found is None:
        return browser.run_page(chosen[0], args, env)
    argv = dawn.argv(found, chosen[0], args)
    return exit_code(cmd.exec_replace(argv, env=env), argv[0])
