"""Cargo's JSON messages -> readable compiler output plus GitHub annotations.

Under GitHub Actions, rgpu runs cargo's compiling commands with ``--message-format=json``
(``json-diagnostic-rendered-ansi`` on a colour terminal), prints each diagnostic's own
rendering (the text cargo would have printed) and adds a ``::error file=...,line=...,col=...``
line, so errors and warnings show inline on the pull request. Paths are made relative to
``$GITHUB_WORKSPACE`` (the repository root), which is what GitHub expects.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.errors import CommandFailedError
from rgpu.util import cmd
from rgpu.util.output import escape_data, in_github_actions, use_colour

# Cargo subcommands that compile and accept --message-format (`run` is left alone: its
# program's stdout must reach the user untouched).
JSON_SUBCOMMANDS = frozenset({"build", "check", "test", "rustc", "clippy"})
ANNOTATED_LEVELS = {"error": "error", "warning": "warning"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Diagnostic:
    level: str  # "error" or "warning"
    message: str
    file: str | None  # relative to the annotation base, or absolute when outside it
    line: int | None
    col: int | None
    end_line: int | None
    end_col: int | None

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.file else "(no location)"


def _cargo_subcommand_index(argv: Sequence[str]) -> int | None:
    if not argv or Path(argv[0]).name not in ("cargo", "cargo.exe"):
        return None
    for index, arg in enumerate(argv[1:], start=1):
        if not arg.startswith("+"):  # skip a `+toolchain` override
            return index if arg in JSON_SUBCOMMANDS else None
    return None


def json_argv(argv: Sequence[str], colour: bool) -> list[str] | None:
    """``argv`` with cargo's JSON message format added, or None when it does not apply."""
    index = _cargo_subcommand_index(argv)
    if index is None or any(a.startswith("--message-format") for a in argv):
        return None
    fmt = "json-diagnostic-rendered-ansi" if colour else "json"
    return [*argv[: index + 1], f"--message-format={fmt}", *argv[index + 1 :]]


def _escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(diag: Diagnostic, rendered: str) -> str:
    props = []
    if diag.file:
        props.append(f"file={_escape_property(diag.file)}")
        for key, value in (
            ("line", diag.line),
            ("col", diag.col),
            ("endLine", diag.end_line),
            ("endColumn", diag.end_col),
        ):
            if value is not None:
                props.append(f"{key}={value}")
    props.append(f"title={_escape_property(diag.message)}")
    return f"::{diag.level} {','.join(props)}::{escape_data(rendered.rstrip())}"


def _primary_span(message: Mapping[str, Any]) -> dict[str, Any] | None:
    spans = [s for s in message.get("spans", []) if s.get("is_primary")]
    span: dict[str, Any] | None = spans[0] if spans else None
    # A span inside a macro names `<...macros>`: follow the expansion to the user's code.
    while span and str(span.get("file_name", "")).startswith("<") and span.get("expansion"):
        span = span["expansion"].get("span")
    return span


def resolve_file(file_name: str, cwd: Path, manifest: Path | None, base: Path) -> str:
    """cargo reports paths relative to the workspace it ran in; GitHub wants the repo's."""
    path = Path(file_name)
    if not path.is_absolute():
        roots = [cwd, *([manifest.parent, *manifest.parent.parents] if manifest else [])]
        found = next((r / path for r in roots if (r / path).is_file()), cwd / path)
        path = found
    path = Path(os.path.abspath(path))
    try:
        return path.relative_to(base.resolve()).as_posix()
    except ValueError:
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            return path.as_posix()


def parse(record: Mapping[str, Any], cwd: Path, base: Path) -> Diagnostic | None:
    message = record.get("message") or {}
    level = ANNOTATED_LEVELS.get(str(message.get("level", "")))
    if level is None:
        return None
    span = _primary_span(message)
    manifest = Path(record["manifest_path"]) if record.get("manifest_path") else None
    file = resolve_file(str(span["file_name"]), cwd, manifest, base) if span else None
    return Diagnostic(
        level=level,
        message=str(message.get("message", "")),
        file=file,
        line=span.get("line_start") if span else None,
        col=span.get("column_start") if span else None,
        end_line=span.get("line_end") if span else None,
        end_col=span.get("column_end") if span else None,
    )


class CargoMessages:
    """Line handler for cargo's stdout: JSON records become text and annotations."""

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.base = Path(env.get("GITHUB_WORKSPACE") or cwd)
        self.colour = use_colour(sys.stderr, env)
        self.annotate = in_github_actions(env)
        self.diagnostics: list[Diagnostic] = []

    def __call__(self, line: str) -> None:
        if not line.startswith("{"):
            print(line, flush=True)  # test harness output and anything else: unchanged
            return
        try:
            record = json.loads(line)
        except ValueError:
            print(line, flush=True)
            return
        if record.get("reason") != "compiler-message":
            return
        rendered = str((record.get("message") or {}).get("rendered") or "")
        if rendered:
            print(rendered if self.colour else ANSI.sub("", rendered), end="", file=sys.stderr)
        diag = parse(record, self.cwd, self.base)
        if diag is None:
            return
        self.diagnostics.append(diag)
        SEEN.append(diag)
        if self.annotate and diag.file is not None:
            print(annotation(diag, ANSI.sub("", rendered)), file=sys.stderr, flush=True)

    def first_error(self) -> str:
        for diag in self.diagnostics:
            if diag.level == "error" and diag.file:
                return f"{diag.message} at {diag.location()}"
        return ""


def run_cargo(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> cmd.Result | None:
    """Run a compiling cargo command with JSON messages; None when ``argv`` is not one."""
    handler = CargoMessages(cwd, env)
    full = json_argv(argv, handler.colour)
    if full is None:
        return None
    try:
        return cmd.stream(full, handler, cwd=cwd, env=env, failure_detail=handler.first_error)
    except CommandFailedError as exc:
        first = next((d for d in handler.diagnostics if d.level == "error" and d.file), None)
        if exc.hint is None and first is not None:
            exc.hint = f"fix the error at {first.location()} (shown above), then run again"
        raise


# Every diagnostic seen in this process, for the step summary.
SEEN: list[Diagnostic] = []
