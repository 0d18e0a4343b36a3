"""Console output: plain lines when not on a terminal, folded groups under GitHub Actions.

Logs go to stderr so that ``--json`` results on stdout stay machine-readable. Rich is
imported lazily (only for colour on a terminal) to keep start-up fast.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO


def in_github_actions(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    """A workflow command's message must stay on one line: GitHub's own escapes."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def use_colour(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if "NO_COLOR" in env:
        return False
    return stream.isatty()


# A step that takes this long says how long it took when it ends.
LONG_STEP_SECONDS = 5.0
# While a step runs, a line every this many seconds says it is still running (not on a
# terminal, where cargo draws its own progress; in logs and CI a long compile is otherwise
# minutes of silence).
HEARTBEAT_SECONDS = 60.0


def duration(seconds: float) -> str:
    """12.3 s, or 8 min 12 s."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


class Reporter:
    """Writes progress for people; never prompts."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        quiet: bool = False,
        heartbeat: float | None = HEARTBEAT_SECONDS,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.github = in_github_actions()
        # Seconds between "still running" lines; None: never.
        self.heartbeat = heartbeat
        # (title, seconds, ok) of every group, for the GitHub step summary.
        self.timings: list[tuple[str, float, bool]] = []

    def _write(self, text: str, style: str | None = None) -> None:
        if style and use_colour(self.stream):
            from rich.console import Console

            Console(file=self.stream, highlight=False, soft_wrap=True).print(
                text, style=style, markup=False
            )
        else:
            print(text, file=self.stream, flush=True)

    def info(self, text: str) -> None:
        if not self.quiet:
            self._write(text)

    def command(self, argv_text: str) -> None:
        if not self.quiet:
            self._write(f"+ {argv_text}", style="dim")

    def status(self, word: str, subject: str) -> None:
        """One status word per file or step, the same words in real and dry runs."""
        if not self.quiet:
            styles = {
                "create": "green",
                "change": "yellow",
                "overwrite": "yellow",
                "conflict": "red",
            }
            self._write(f"{word:>10}  {subject}", style=styles.get(word))

    def warn(self, text: str) -> None:
        if self.github:
            print(f"::warning::{escape_data(text)}", file=self.stream, flush=True)
        else:
            self._write(f"warning: {text}", style="yellow")

    def error(self, text: str, hint: str | None = None) -> None:
        if self.github:
            body = f"{text}\nfix: {hint}" if hint else text
            print(f"::error title=rgpu::{escape_data(body)}", file=self.stream, flush=True)
        self._write(f"error: {text}", style="bold red")
        if hint:
            self._write(f"  fix: {hint}", style="cyan")

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        """A step: its title first, a "still running" line now and then while it runs (in
        logs), and how long it took when that was long."""
        if self.github:
            print(f"::group::{title}", file=self.stream, flush=True)
        elif not self.quiet:
            self._write(f"==> {title}", style="bold")
        started, ok = time.perf_counter(), False
        stop = self._heartbeat(title, started)
        try:
            yield
            ok = True
        finally:
            if stop is not None:
                stop()
            elapsed = time.perf_counter() - started
            self.timings.append((title, elapsed, ok))
            if elapsed >= LONG_STEP_SECONDS and not self.quiet:
                word = "done" if ok else "stopped"
                self._write(f"==> {title}: {word} after {duration(elapsed)}", style="dim")
            if self.github:
                print("::endgroup::", file=self.stream, flush=True)

    def _heartbeat(self, title: str, started: float) -> Callable[[], None] | None:
        """A thread that says every `heartbeat` seconds that the step still runs; returns
        how to stop it. None on a terminal (cargo draws its own progress there)."""
        every = self.heartbeat
        if every is None or self.quiet or (self.stream.isatty() and not self.github):
            return None
        import threading

        done = threading.Event()

        def beat() -> None:
            while not done.wait(every):
                elapsed = duration(time.perf_counter() - started)
                self._write(f"    ... still running: {title} ({elapsed})", style="dim")

        thread = threading.Thread(target=beat, name="rgpu-heartbeat", daemon=True)
        thread.start()

        def stop() -> None:
            done.set()
            thread.join(timeout=1)

        return stop


_reporter: Reporter | None = None


def reporter() -> Reporter:
    global _reporter
    if _reporter is None:
        _reporter = Reporter()
    return _reporter


def set_reporter(new: Reporter) -> None:
    global _reporter
    _reporter = new
