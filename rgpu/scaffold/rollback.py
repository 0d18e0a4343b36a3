"""Writing files into a user's directory so that an interruption leaves it as it was.

Every write is atomic (a temporary file beside the target, then a rename: a reader sees the
old file or the new one, never half of one) and recorded before it happens, so `undo()` can
remove the files created, restore the files replaced and remove the directories made, in
reverse order. `rgpu new --force` and `rgpu init` call it on Ctrl-C or any failure.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from rgpu.util.files import write_atomic
from rgpu.util.output import reporter


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Hold Ctrl-C off while undoing (a second Ctrl-C must not stop the undo halfway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class Rollback:
    """What was written into a directory, undoable until the caller is done."""

    created: list[Path] = field(default_factory=list)
    # A file replaced in place: its old bytes and permissions.
    restores: list[tuple[Path, bytes, int]] = field(default_factory=list)
    # A file moved aside as a backup (`rgpu new --overwrite`): (file, its backup).
    backups: list[tuple[Path, Path]] = field(default_factory=list)
    made_dirs: list[Path] = field(default_factory=list)

    def mkdirs(self, directory: Path) -> None:
        """Make ``directory`` and its missing parents, remembering each one made."""
        missing = []
        while not directory.exists():
            missing.append(directory)
            directory = directory.parent
        for d in reversed(missing):
            self.made_dirs.append(d)
            d.mkdir()

    def write(self, path: Path, data: bytes) -> None:
        """Create or replace ``path`` atomically (recorded first, so undo covers it)."""
        if path.is_file():
            old = path.read_bytes()
            mode = stat.S_IMODE(path.stat().st_mode)
            self.restores.append((path, old, mode))
            write_atomic(path, data, mode)
            return
        self.mkdirs(path.parent)
        self.created.append(path)
        write_atomic(path, data)

    def undo(self) -> None:
        """Put everything back, newest first; a step that fails is reported and skipped."""
        steps: list[tuple[str, Callable[[], object]]] = []
        for path in reversed(self.created):
            steps.append((f"remove {path}", partial(path.unlink, missing_ok=True)))
        for path, old, mode in reversed(self.restores):
            steps.append((f"restore {path}", partial(write_atomic, path, old, mode)))
        for path, backup in reversed(self.backups):
            steps.append((f"restore {path} from {backup}", partial(os.replace, backup, path)))
        with _no_interrupts():
            for what, step in steps:
                try:
                    step()
                except OSError as exc:
                    reporter().warn(f"could not {what}: {exc.strerror or exc}")
            for directory in reversed(self.made_dirs):
                with contextlib.suppress(OSError):
                    directory.rmdir()
