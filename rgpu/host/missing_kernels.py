"""Calls of kernels the kernel crate no longer has: named when a host build fails.

A user's first edit is often to rename or replace the template's kernel; the template's
example and test (`examples/split.rs`, `tests/parity.rs`) still call it, and `rgpu build`
compiles them, so cargo stops with E0425 in a file the user never opened. After a failed
host build rgpu looks for `KEY::NAME(` in the host's sources (KEY: the host's name for the
kernel crate) where the kernel crate defines no `fn NAME` and re-exports no `NAME` (`pub
use`), and says which files call what; a glob re-export (`pub use x::*`) turns this off.
"""

from __future__ import annotations

import re

from rgpu.artifacts.kernels import find
from rgpu.workspace import Workspace, load_toml

HOST_DIRS = ("src", "examples", "tests", "benches")
# What the kernel crate re-exports counts as defined; a glob re-export hides what is there.
REEXPORT = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);")
GLOB_REEXPORT = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+[^;]*\*")


def kernel_key(ws: Workspace) -> str | None:
    """The root package's name for the kernel crate (`kernel` in the templates)."""
    deps = load_toml(ws.root / "Cargo.toml").get("dependencies") or {}
    for key, value in deps.items():
        if key == ws.kernel_package or (
            isinstance(value, dict) and value.get("package") == ws.kernel_package
        ):
            return str(key).replace("-", "_")
    return None


def missing_calls(ws: Workspace) -> list[tuple[str, str]]:
    """(file relative to the root, name) for each call of a function the kernel crate lacks."""
    key = kernel_key(ws)
    if key is None:
        return []
    defined = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in (ws.kernel_dir / "src").rglob("*.rs")
    )
    if GLOB_REEXPORT.search(defined):
        return []  # `pub use other::*`: the crate's names are not all in its sources
    has = set(re.findall(r"\bfn\s+([A-Za-z_]\w*)", defined))
    for statement in REEXPORT.findall(defined):  # `pub use a::{b, c as d};`
        has.update(re.findall(r"[A-Za-z_]\w*", statement))
    found: list[tuple[str, str]] = []
    for folder in HOST_DIRS:
        for path in sorted((ws.root / folder).rglob("*.rs")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for name in sorted(set(re.findall(rf"\b{key}::([A-Za-z_]\w*)\s*\(", text))):
                if name not in has:
                    found.append((path.relative_to(ws.root).as_posix(), name))
    return found


def hint(ws: Workspace) -> str | None:
    """The fix for a host build that calls kernels the kernel crate lacks, or None."""
    try:
        calls = missing_calls(ws)
    except (OSError, ValueError):
        return None
    if not calls:
        return None
    where = ", ".join(f"{file} calls `{name}`" for file, name in calls)
    kernels = ", ".join(find(ws.kernel_dir)) or "none"
    return (
        f"the kernel crate has no such function ({where}; its kernels: {kernels}): update "
        "those calls, or delete the files you do not need (the template's example and test "
        "call its SAXPY kernel)"
    )
