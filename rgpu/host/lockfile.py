"""What a build changed in the workspace's Cargo.lock, in words.

cargo may move a locked dependency when a new requirement needs it (adding rgpu once moved a
user's bytemuck from 1.17.0 to 1.25.2); the user should hear that from rgpu, not find it in
a diff. The lock's bytes are read before the build and compared after; only when they differ
is it parsed (a no-op build pays one file read).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

LOCK = "Cargo.lock"


class Package(NamedTuple):
    name: str
    version: str
    dependencies: tuple[str, ...]  # names


def read_bytes(root: Path) -> bytes | None:
    try:
        return (root / LOCK).read_bytes()
    except OSError:
        return None


def packages(data: bytes) -> list[Package]:
    import tomllib

    try:
        doc: Mapping[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    found = []
    for entry in doc.get("package", []):
        if isinstance(entry, dict) and "name" in entry and "version" in entry:
            deps = tuple(str(d).split(" ", 1)[0] for d in entry.get("dependencies", []))
            found.append(Package(str(entry["name"]), str(entry["version"]), deps))
    return found


def changes(before: bytes | None, after: bytes | None) -> list[str]:
    """One line per package whose locked versions changed, then the count of packages
    added and removed; [] when nothing changed or there was no lock before (a first build
    writes it: nothing of the user's moved)."""
    if before is None or after is None or before == after:
        return []
    old, new = packages(before), packages(after)
    versions_before = _versions(old)
    versions_after = _versions(new)
    new_names = {(p.name, p.version) for p in new} - {(p.name, p.version) for p in old}
    lines = []
    for name in sorted(versions_before.keys() & versions_after.keys()):
        gone = sorted(versions_before[name] - versions_after[name])
        came = sorted(versions_after[name] - versions_before[name])
        if not gone and not came:
            continue
        moved = f"{', '.join(gone) or '-'} -> {', '.join(came) or '-'}"
        lines.append(f"Cargo.lock: {name} {moved}{_why(name, new, new_names)}")
    added = sorted(versions_after.keys() - versions_before.keys())
    removed = sorted(versions_before.keys() - versions_after.keys())
    if added:
        lines.append(f"Cargo.lock: {_count(added)} added ({_some(added)})")
    if removed:
        lines.append(f"Cargo.lock: {_count(removed)} removed ({_some(removed)})")
    return lines


def _versions(found: list[Package]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for p in found:
        out.setdefault(p.name, set()).add(p.version)
    return out


def _why(name: str, new: list[Package], new_names: set[tuple[str, str]]) -> str:
    """Who depends on it now: the packages new in the lock first (their requirement is the
    likely cause), else every dependent."""
    users = [p for p in new if name in p.dependencies]
    fresh = [p for p in users if (p.name, p.version) in new_names]
    if fresh:
        return f" (needed by {_some([f'{p.name} {p.version}' for p in fresh])})"
    if users:
        return f" (used by {_some([f'{p.name} {p.version}' for p in users])})"
    return ""


def _count(names: list[str]) -> str:
    return f"{len(names)} package{'s' if len(names) != 1 else ''}"


def _some(names: list[str], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
