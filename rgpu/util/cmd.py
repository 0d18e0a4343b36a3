"""The one place that starts processes: argv lists, never a shell."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rgpu.errors import CommandFailedError, InterruptedByUser, RgpuError, ToolMissingError
from rgpu.util.output import reporter

if TYPE_CHECKING:
    import subprocess

# subprocess, shutil and shlex are imported where a process is started or looked up: a
# no-op `rgpu build` starts none, and these imports (shutil loads bz2 and lzma) are a
# measurable part of its time (BENCHMARKS.md, issue 20).

STDERR_FD = 2


class Result(NamedTuple):
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def which(program: str, env: Mapping[str, str] | None = None) -> str | None:
    import shutil

    path = (env or os.environ).get("PATH")
    return shutil.which(program, path=path)


def require(program: str, hint: str, env: Mapping[str, str] | None = None) -> str:
    found = which(program, env)
    if found is None:
        raise ToolMissingError(f"`{program}` was not found on PATH", hint)
    return found


def format_argv(argv: Sequence[str]) -> str:
    import shlex

    return shlex.join(argv)


def child_env(argv: Sequence[str], env: Mapping[str, str] | None) -> dict[str, str] | None:
    """The child's environment; with NO_COLOR set, cargo is told so (it reads its own
    CARGO_TERM_COLOR, not NO_COLOR)."""
    base = os.environ if env is None else env
    is_cargo = os.path.basename(str(argv[0])).removesuffix(".exe") == "cargo"
    if is_cargo and "NO_COLOR" in base and "CARGO_TERM_COLOR" not in base:
        return {**base, "CARGO_TERM_COLOR": "never"}
    return dict(env) if env is not None else None


RUNTIME_DIR_ENV = "XDG_RUNTIME_DIR"


def runtime_dir() -> Path | None:
    """A private XDG_RUNTIME_DIR for children when the session has none (a container, ssh,
    CI): Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" otherwise.
    `<tmp>/rgpu-runtime-<uid>`, mode 0700 and ours, as the XDG spec asks; None when that
    cannot be had (then the variable stays unset)."""
    if os.name != "posix":
        return None
    import stat
    import tempfile

    path = Path(tempfile.gettempdir()) / f"rgpu-runtime-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
        st = path.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def with_runtime_dir(env: dict[str, str] | None) -> dict[str, str] | None:
    """``env`` (None: ours) with XDG_RUNTIME_DIR set when it is unset or empty."""
    base = os.environ if env is None else env
    if base.get(RUNTIME_DIR_ENV):
        return env
    found = runtime_dir()
    if found is None:
        return env
    return {**base, RUNTIME_DIR_ENV: str(found)}


def _env_for(argv: Sequence[str], env: Mapping[str, str] | None) -> dict[str, str] | None:
    """What every child rgpu starts gets: `child_env`, and an XDG_RUNTIME_DIR."""
    return with_runtime_dir(child_env(argv, env))


def error_line(text: str, returncode: int) -> str:
    """The line of a failed program's output that says why: its first `error:` line (a
    RUST_BACKTRACE=1 rustup or cargo ends with a stack backtrace, not with the reason),
    else its last line."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for line in lines:
        if line.lower().startswith(("error:", "error[", "fatal:")):
            return line
    return lines[-1] if lines else f"exit code {returncode}"


def run(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    capture: bool = False,
    check: bool = True,
    echo: bool = True,
    hint: str | None = None,
    stdin_devnull: bool = True,
    timeout: float | None = None,
    stdout_to_stderr: bool = False,
    keep_output: bool = False,
    hide: Sequence[str] = (),
) -> Result:
    """Run ``argv``; echo ``+ cmd``; raise CommandFailedError on a non-zero exit.

    ``env`` is the complete environment of the child (callers merge with os.environ
    themselves, so that tests can pass exactly what they mean). ``timeout`` (seconds) stops
    a child that hangs, such as a container client waiting for a daemon.
    ``stdout_to_stderr`` (when not capturing) sends what the child prints to rgpu's stderr:
    for steps whose output is progress, where rgpu's stdout is kept for its own result
    (`rgpu build --json`).
    ``keep_output`` (when not capturing) streams stdout and stderr, merged, to rgpu's stderr
    as they come and also keeps them: Result.stderr and the CommandFailedError's ``output``,
    so the caller can explain a failure in its own words.
    """
    import subprocess

    argv = [str(a) for a in argv]
    program = argv[0]
    if os.sep not in program and which(program, env) is None:
        raise ToolMissingError(
            f"`{program}` was not found on PATH", hint or f"install {program} and retry"
        )
    if echo:
        reporter().command(format_argv(argv))
    if keep_output and not capture:
        return _run_kept(argv, cwd, env, hint, check, hide)
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=_env_for(argv, env),
            stdin=subprocess.DEVNULL if stdin_devnull else None,
            stdout=subprocess.PIPE if capture else (STDERR_FD if stdout_to_stderr else None),
            stderr=subprocess.PIPE if capture else None,
            text=True,
            errors="replace",
            check=False,
            timeout=timeout,
        )
    except KeyboardInterrupt as exc:
        raise InterruptedByUser(f"interrupted while running {program}") from exc
    except FileNotFoundError as exc:
        raise ToolMissingError(f"`{program}` could not be started: {exc}", hint) from exc
    except subprocess.TimeoutExpired as exc:
        raise CommandFailedError(
            f"`{format_argv(argv)}` did not finish within {timeout:g} s", hint
        ) from exc
    result = Result(tuple(argv), proc.returncode, proc.stdout or "", proc.stderr or "")
    if check and proc.returncode != 0:
        detail = f": {error_line(result.stderr, proc.returncode)}" if result.stderr.strip() else ""
        raise CommandFailedError(
            f"`{format_argv(argv)}` failed with exit code {proc.returncode}{detail}",
            hint,
            returncode=proc.returncode,
        )
    return result


class LineFilter:
    """Which lines of a command's output to show: not those matching one of `hide`
    (regular expressions, whole line: warnings rgpu causes itself), nor the blank line
    right after one."""

    def __init__(self, hide: Sequence[str]) -> None:
        import re

        self._hidden = [re.compile(p) for p in hide]
        self._after_hidden = False

    def __call__(self, line: str) -> bool:
        was_after = self._after_hidden
        self._after_hidden = any(h.fullmatch(line) for h in self._hidden)
        return not (self._after_hidden or (was_after and not line.strip()))

    def text(self, text: str) -> str:
        """`text` without its hidden lines."""
        return "".join(line for line in text.splitlines(keepends=True) if self(line.rstrip("\n")))


def _run_kept(
    argv: list[str], cwd: Path | None, env: Mapping[str, str] | None, hint: str | None,
    check: bool, hide: Sequence[str],
) -> Result:  # fmt: skip
    import sys

    kept: list[str] = []
    shown = LineFilter(hide)

    def keep(line: str) -> None:
        kept.append(line + "\n")
        if shown(line):
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    with _heartbeat(kept):
        returncode = stream(
            argv, keep, cwd=cwd, env=env, check=False, hint=hint, merge_stderr=True, echo=False
        ).returncode
    output = "".join(kept)
    if check and returncode != 0:
        detail = f": {error_line(output, returncode)}" if output.strip() else ""
        error = CommandFailedError(
            f"`{format_argv(argv)}` failed with exit code {returncode}{detail}",
            hint,
            returncode=returncode,
        )
        error.output = output
        raise error
    return Result(tuple(argv), returncode, "", output)


# A step that prints nothing for this long gets a line saying it still runs (rust-gpu's first
# build waits minutes on a file lock or on rustc_codegen_spirv with no output at all).
HEARTBEAT_S = 30.0


@contextlib.contextmanager
def _heartbeat(lines: list[str]) -> Iterator[None]:
    """While the body runs: after each HEARTBEAT_S without a new line in ``lines``, one
    line on stderr with the time since the start and the last thing the step said."""
    import sys
    import threading
    import time

    start, done = time.monotonic(), threading.Event()

    def beat() -> None:
        seen, quiet_since = len(lines), time.monotonic()
        while not done.wait(min(HEARTBEAT_S, 1.0)):
            if len(lines) != seen:
                seen, quiet_since = len(lines), time.monotonic()
            elif time.monotonic() - quiet_since >= HEARTBEAT_S:
                elapsed = int(time.monotonic() - start)
                last = lines[-1].strip() if lines else ""
                waiting = f"; last: {last[:100]}" if last else ""
                sys.stderr.write(
                    f"  ... still running ({elapsed // 60}m{elapsed % 60:02d}s{waiting})\n"
                )
                sys.stderr.flush()
                quiet_since = time.monotonic()

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def stream(
    argv: Sequence[str],
    on_line: Callable[[str], None],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    hint: str | None = None,
    failure_detail: Callable[[], str] = lambda: "",
    merge_stderr: bool = False,
    echo: bool = True,
) -> Result:
    """Run ``argv`` and hand each line of its stdout to ``on_line`` as it arrives.

    stderr goes straight to ours (cargo's progress, test output), or with ``merge_stderr``
    into the same lines. Used to turn cargo's JSON messages into readable text and GitHub
    annotations while the build runs. ``failure_detail`` adds the first real error to the
    failure message.
    """
    import subprocess

    argv = [str(a) for a in argv]
    if os.sep not in argv[0] and which(argv[0], env) is None:
        raise ToolMissingError(
            f"`{argv[0]}` was not found on PATH", hint or f"install {argv[0]} and retry"
        )
    if echo:
        reporter().command(format_argv(argv))
    try:
        with subprocess.Popen(
            argv,
            cwd=cwd,
            env=_env_for(argv, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else None,
            text=True,
            errors="replace",
            bufsize=1,
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                on_line(line.rstrip("\r\n"))
            returncode = proc.wait()
    except KeyboardInterrupt as exc:
        raise InterruptedByUser(f"interrupted while running {argv[0]}") from exc
    except FileNotFoundError as exc:
        raise ToolMissingError(f"`{argv[0]}` could not be started: {exc}", hint) from exc
    if check and returncode != 0:
        detail = failure_detail()
        raise CommandFailedError(
            f"`{format_argv(argv)}` failed with exit code {returncode}"
            + (f": {detail}" if detail else ""),
            hint,
            returncode=returncode,
        )
    return Result(tuple(argv), returncode, "", "")


@contextlib.contextmanager
def background(
    argv: Sequence[str], *, env: Mapping[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``argv`` with no terminal and its output discarded (a browser the caller
    drives); it is terminated, then killed, when the block ends."""
    import subprocess

    argv = [str(a) for a in argv]
    reporter().command(format_argv(argv))
    # Its own process group (a session on POSIX), so that what it starts can be stopped too.
    group: dict[str, Any] = (
        {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}  # type: ignore[attr-defined]
        if os.name == "nt"
        else {"start_new_session": True}
    )
    try:
        proc = subprocess.Popen(
            argv,
            env=_env_for(argv, env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            **group,
        )
    except FileNotFoundError as exc:
        raise ToolMissingError(f"`{argv[0]}` could not be started: {exc}") from exc
    try:
        yield proc
    except KeyboardInterrupt as exc:
        raise InterruptedByUser(f"interrupted while running {argv[0]}") from exc
    finally:
        # The program and what it started (a browser's renderer and GPU processes): its own
        # session, so its process group.
        stop_group(proc, kill=False)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            stop_group(proc, kill=True)
            proc.wait()


def stop_group(proc: subprocess.Popen[bytes], *, kill: bool) -> None:
    """Ask a process started by `background` and its group to stop (SIGTERM), or make them
    (SIGKILL). Windows has no process groups to signal: there the process itself is
    terminated (TerminateProcess: asking and making are the same)."""
    if os.name == "nt":
        with contextlib.suppress(OSError):
            proc.kill() if kill else proc.terminate()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)


def exec_replace(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> int:
    """Run a program in the foreground with the terminal, and return its exit code."""
    import subprocess

    argv = [str(a) for a in argv]
    reporter().command(format_argv(argv))
    try:
        return subprocess.run(argv, env=_env_for(argv, env), check=False).returncode
    except KeyboardInterrupt as exc:
        raise InterruptedByUser(f"interrupted while running {argv[0]}") from exc
    except FileNotFoundError as exc:
        raise ToolMissingError(f"`{argv[0]}` could not be started: {exc}") from exc


def run_quiet(argv: Sequence[str], env: Mapping[str, str], timeout: float = 20) -> Result | None:
    """Run a probe; None when the program is missing or cannot start. Ctrl-C is not a probe
    that failed (`InterruptedByUser` is no RgpuError, rgpu/errors.py): it stops rgpu with
    the plain line, the probe being rgpu's own question and not a step the user ran."""
    try:
        return run(argv, env=env, capture=True, check=False, echo=False, timeout=timeout)
    except InterruptedByUser:
        raise KeyboardInterrupt from None
    except RgpuError:
        return None
