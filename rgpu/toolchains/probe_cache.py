"""Toolchain probes (`rustup toolchain list`, `rustc -vV`, ...) remembered between runs.

A build with nothing to do must be about as fast as cargo's own no-op, and each probe
starts a process (rustup's proxy alone takes ~20 ms). A probe's answer is reused while
nothing it depends on has changed: the program's own file, the environment variables that
steer rustup and rustc, and the files rustup rewrites whenever a toolchain or component is
installed, updated or removed (its settings, the toolchains directory, each toolchain's
component list and rustc). Anything else starts the probe again. Only successful answers
are kept; `rgpu doctor` and `rgpu build` both go through here, so they still give one
answer. RGPU_NO_PROBE_CACHE=1 turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rgpu.config import cache_dir
from rgpu.util import cmd
from rgpu.util.files import write_text_if_changed

ENV_KEYS = (
    "PATH", "HOME", "USERPROFILE", "RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN", "RUSTC",
)  # fmt: skip
CACHE_FILE = "probes.json"
MAX_ENTRIES = 64
DISABLE_ENV = "RGPU_NO_PROBE_CACHE"

_loaded: dict[Path, dict[str, dict[str, object]]] = {}


def rustup_home(env: Mapping[str, str]) -> Path:
    if env.get("RUSTUP_HOME"):
        return Path(env["RUSTUP_HOME"])
    # start-up: <1 ms to import util.platform; only this path pays it
    from rgpu.util.platform import home

    return home(env) / ".rustup"  # rustup's default on every system (%USERPROFILE% on Windows)


def rustup_watch(env: Mapping[str, str]) -> list[Path]:
    """What rustup rewrites when its toolchains or their components change."""
    home = rustup_home(env)
    toolchains = home / "toolchains"
    watch = [home / "settings.toml", toolchains, home / "update-hashes"]
    try:
        names = sorted(os.listdir(toolchains))
    except OSError:
        names = []
    for name in names:
        here = toolchains / name
        watch += [here, here / "lib" / "rustlib" / "components", here / "bin" / "rustc"]
    return watch


def _stat(path: Path | str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


def fingerprint(argv: Sequence[str], env: Mapping[str, str], watch: Sequence[Path]) -> str:
    program = argv[0] if os.sep in argv[0] else (cmd.which(argv[0], env) or argv[0])
    parts = [
        *argv,
        "\0",
        *(f"{k}={env.get(k, '')}" for k in ENV_KEYS),
        "\0",
        f"{os.path.realpath(program)}={_stat(os.path.realpath(program))}",
        *(f"{p}={_stat(p)}" for p in watch),
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def _path(env: Mapping[str, str]) -> Path:
    return cache_dir(env) / CACHE_FILE


def _entries(path: Path) -> dict[str, dict[str, object]]:
    if path not in _loaded:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        _loaded[path] = data if isinstance(data, dict) else {}
    return _loaded[path]


def _save(path: Path, entries: dict[str, dict[str, object]]) -> None:
    while len(entries) > MAX_ENTRIES:
        entries.pop(next(iter(entries)))
    with contextlib.suppress(OSError):  # a read-only cache only costs time
        write_text_if_changed(path, json.dumps(entries, indent=0))


def run(
    argv: Sequence[str],
    env: Mapping[str, str],
    watch: Sequence[Path],
    start: Callable[[], cmd.Result],
) -> cmd.Result:
    """`start()`'s result for `argv`, reused while its fingerprint holds."""
    if env.get(DISABLE_ENV, "").strip() not in ("", "0"):
        return start()
    key = fingerprint(argv, env, watch)
    path = _path(env)
    entries = _entries(path)
    hit = entries.get(key)
    if isinstance(hit, dict) and isinstance(hit.get("stdout"), str):
        return cmd.Result(tuple(argv), 0, str(hit["stdout"]), str(hit.get("stderr", "")))
    result = start()
    if result.returncode == 0:
        entries[key] = {"stdout": result.stdout, "stderr": result.stderr}
        _save(path, entries)
    return result
