"""Validate a new workspace's name: it becomes a Cargo package, a binary and a directory."""

from __future__ import annotations

import re

from rgpu.errors import InvalidNameError

# Strict and reserved keywords of Rust 2024 (a package name becomes a crate identifier).
RUST_KEYWORDS = frozenset(
    """
    as async await break const continue crate dyn else enum extern false fn for gen if impl
    in let loop match mod move mut pub ref return self Self static struct super trait true
    try type unsafe use where while abstract become box do final macro override priv typeof
    unsized virtual yield
    """.split()
)
# Names of the standard crates, cargo's own directories, and device names Windows reserves.
RESERVED = frozenset(
    """
    std core alloc proc_macro proc-macro test build deps examples incremental
    con prn aux nul com1 com2 com3 com4 com5 com6 com7 com8 com9
    lpt1 lpt2 lpt3 lpt4 lpt5 lpt6 lpt7 lpt8 lpt9
    """.split()
)
_VALID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
MAX_LEN = 64


def validate_crate_name(name: str) -> str:
    """Return ``name`` if it is usable as the workspace, package and binary name."""
    hint = (
        "use ASCII letters, digits, `-` and `_`, starting with a letter, e.g. `rgpu new sortdemo`"
    )
    if not name:
        raise InvalidNameError("the project name is empty", hint)
    if not name.isascii():
        raise InvalidNameError(f"project name {name!r} contains non-ASCII characters", hint)
    if len(name) > MAX_LEN:
        raise InvalidNameError(f"project name {name!r} is longer than {MAX_LEN} characters", hint)
    if not _VALID.match(name):
        if name[0].isdigit():
            why = "starts with a digit"
        elif any(c in name for c in "/\\") or name in (".", ".."):
            why = "is a path, not a name (use --dir PARENT to choose where it goes)"
        elif any(c.isspace() for c in name):
            why = "contains whitespace"
        else:
            bad = sorted({c for c in name if not (c.isalnum() or c in "-_")})
            why = f"contains {' '.join(repr(c) for c in bad) or 'a leading `-` or `_`'}"
        raise InvalidNameError(f"project name {name!r} {why}", hint)
    ident = name.replace("-", "_")
    if name in RUST_KEYWORDS or ident in RUST_KEYWORDS:
        raise InvalidNameError(
            f"project name {name!r} is a Rust keyword", f"pick another name, e.g. `my-{name}`"
        )
    if name.lower() in RESERVED or ident.lower() in RESERVED:
        raise InvalidNameError(
            f"project name {name!r} is reserved (a standard crate or a device name)",
            f"pick another name, e.g. `my-{name}`",
        )
    if ident in ("kernel", "shared"):
        raise InvalidNameError(
            f"project name {name!r} clashes with the workspace's own `kernel`/`shared` crates",
            f"pick another name, e.g. `my-{name}`",
        )
    return name
