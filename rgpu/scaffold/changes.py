"""A planned set of file changes in a user's directory: shown (status words, unified diffs),
then written all-or-nothing.

`rgpu init` and `rgpu vendor` plan every change in memory first; nothing is written until
the whole plan exists and no conflict stopped it. Then each file is written atomically, and
Ctrl-C (or any failure) during the writes undoes every write made so far.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu.errors import DestinationError, InterruptedByUser
from rgpu.scaffold.rollback import Rollback


@dataclass(frozen=True)
class FileChange:
    """One file of a plan: its path relative to the root, what it holds and what it will."""

    path: str
    new: bytes
    old: bytes | None  # None: the file does not exist yet

    @property
    def word(self) -> str:
        if self.old is None:
            return "create"
        return "identical" if self.old == self.new else "change"


def on_disk(path: Path) -> bytes | None:
    """What a file of the plan holds now (None: it does not exist); unreadable is an error."""
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError as exc:
        raise DestinationError(
            f"cannot read {path}: {exc.strerror or exc}", "check its permissions"
        ) from exc


def diff(change: FileChange) -> str:
    """The unified diff of a change (empty for an identical file)."""
    if change.old == change.new:
        return ""
    old = [] if change.old is None else _lines(change.old)
    return "".join(
        difflib.unified_diff(
            old,
            _lines(change.new),
            fromfile="/dev/null" if change.old is None else f"a/{change.path}",
            tofile=f"b/{change.path}",
        )
    )


def _lines(data: bytes) -> list[str]:
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def report(
    changes: Iterable[FileChange], extra: Sequence[tuple[str, str]] = (), *, verbose: bool = False
) -> None:
    """Status lines (the same words in real and dry runs): one per changed file, created and
    identical files summed up (scaffold/tally.py); with ``verbose`` one per file."""
    # start-up: <1 ms to import scaffold.tally; only this path pays it
    from rgpu.scaffold import tally

    tally.report([(c.word, c.path) for c in changes] + list(extra), verbose=verbose)


def write(root: Path, changes: Sequence[FileChange], command: str) -> None:
    """Write every change that is not identical; on Ctrl-C or a failure, undo them all.
    ``command`` is what to run again (named in the interruption's fix)."""
    rollback = Rollback()
    try:
        for change in changes:
            if change.word != "identical":
                rollback.write(root / change.path, change.new)
    except KeyboardInterrupt as exc:
        rollback.undo()
        raise InterruptedByUser(
            f"interrupted: {root} is as it was", f"run `{command}` again"
        ) from exc
    except OSError as exc:
        rollback.undo()
        raise DestinationError(
            f"could not write {exc.filename or root}: {exc.strerror or exc}; {root} is as it was",
            "check free disk space and permissions, then run again",
        ) from exc
    except BaseException:
        rollback.undo()
        raise
