"""Console output: plain lines when not on a terminal, folded groups under GitHub Actions.

Logs go to stderr so that ``--json`` results on stdout stay machine-readable. Rich is
imported lazily (only for colour on a terminal) to keep start-up fast.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator, Mapping
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


class Reporter:
    """Writes progress for people; never prompts."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.github = in_github_actions()
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
        if self.github:
            print(f"::group::{title}", file=self.stream, flush=True)
        elif not self.quiet:
            self._write(f"==> {title}", style="bold")
        started, ok = time.perf_counter(), False
        try:
            yield
            ok = True
        finally:
            self.timings.append((title, time.perf_counter() - started, ok))
            if self.github:
                print("::endgroup::", file=self.stream, flush=True)


_reporter: Reporter | None = None


def reporter() -> Reporter:
    global _reporter
    if _reporter is None:
        _reporter = Reporter()
    return _reporter


def set_reporter(new: Reporter) -> None:
    global _reporter
    _reporter = new
