"""Small file helpers kept free of heavy imports (they sit on the no-op build path).

Every file rgpu writes that another program reads (artifacts, manifests, generated crates,
state) is written atomically, and only when its content changes: an unchanged file keeps its
bytes and its timestamp, so cargo (which compares timestamps) sees nothing new.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def write_atomic(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename: readers
    see the old file or the new one, never half of one. ``mode`` sets the new file's
    permissions (to keep those of the file it replaces; without it, the umask's). The
    directory must exist."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.rgpu-tmp")
    try:
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data)


def write_bytes_if_changed(path: Path, data: bytes) -> bool:
    """Write `data` atomically unless the file already holds exactly it; True if written."""
    try:
        if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except OSError:
        pass
    _atomic_write(path, data)
    return True


def write_text_if_changed(path: Path, text: str) -> bool:
    return write_bytes_if_changed(path, text.encode("utf-8"))


def atomic_write_text(path: Path, text: str) -> None:
    _atomic_write(path, text.encode("utf-8"))


def absolute(path: Path) -> Path:
    """``path`` made absolute with ``..`` folded away, as a shell's ``cd`` does (symlinks are
    not resolved): cargo reports paths that way, and a directory's parents are then its real
    ancestors."""
    return Path(os.path.normpath(path.absolute()))


def is_utf8(path: Path) -> bool:
    """Whether the path's bytes are valid UTF-8 (cargo and rustc accept no others)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(path: Path) -> str:
    """The path for a message: bytes that are not UTF-8 as \\xNN, as `ls -b` shows them."""
    return os.fsencode(path).decode("utf-8", errors="backslashreplace")


def write_tree(directory: Path, files: dict[str, str] | Any) -> list[tuple[str, bool]]:
    """Write generated files (relative path -> text) under ``directory``, each only when its
    text changed; [(relative path, written)]. A file whose text starts with `#!` (a script)
    is made executable. A path that would leave ``directory`` is a ValueError."""
    done = []
    for rel, text in files.items():
        target = (directory / rel).resolve()
        if not target.is_relative_to(directory.resolve()):
            raise ValueError(f"{rel} would leave {directory}")
        done.append((rel, write_text_if_changed(target, text)))
        if text.startswith("#!") and not os.access(target, os.X_OK):
            target.chmod(target.stat().st_mode | 0o111)
    return done
