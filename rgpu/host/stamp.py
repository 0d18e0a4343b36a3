"""Skip a cargo command that would find nothing to do, without starting cargo.

After a successful command rgpu records what its outputs were built from: every file named
in the outputs' dep-info files (cargo's `.d` files: all path-dependency sources, build-script
inputs and embedded files; their *content* is read, not their timestamp, because any plain
`cargo build` rewrites them even when it builds nothing), every Cargo.toml, Cargo.lock,
cargo config and rust-toolchain file that can affect it, the installed toolchains, the
environment variables cargo and rustc read, the outputs themselves, and the directories where
cargo finds targets by itself (each package's `src/`, `src/bin/`, `examples/`, `tests/`,
`benches/`: a directory's mtime changes when a file is added to it, removed or renamed, so a
new `examples/newone.rs`, which no dep-info names yet, is seen). The next run of the
same request skips cargo only if all of them are unchanged (same size and mtime). Registry
crates are immutable and pinned by Cargo.lock, so they need no stat. Anything unexpected (a
missing or unreadable file) means "not fresh", never "skip".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rgpu import __version__
from rgpu.util.files import atomic_write_text

STAMPS = "stamps"
_ENV_PREFIXES = ("CARGO", "RUSTC", "RUSTFLAGS", "RUSTDOC", "RUSTUP")
_ENV_NAMES = ("PATH",)


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def dep_info_files(dep_info: Path) -> list[Path]:
    """Paths named by a Makefile-style dep-info file (``target: dep dep ...``)."""
    text = dep_info.read_text(encoding="utf-8")
    first = text.split("\n\n", 1)[0]
    _, _, deps = first.partition(": ")
    names = deps.replace("\\\n", " ").replace("\\ ", "\0").split()
    return [Path(n.replace("\0", " ")) for n in names]


def _cargo_tomls(root: Path) -> list[Path]:
    found = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "target" and not d.startswith("."))
        if "Cargo.toml" in names:
            found.append(Path(directory) / "Cargo.toml")
    return found


# Where cargo discovers targets without a Cargo.toml entry (its "target auto-discovery").
_TARGET_DIRS = ("src", "src/bin", "examples", "tests", "benches")


def target_dirs(root: Path) -> list[Path]:
    """Each package's directories of auto-discovered targets (missing ones too: creating one
    changes its stat from nothing)."""
    return [toml.parent / d for toml in _cargo_tomls(root) for d in _TARGET_DIRS]


def config_files(root: Path, env: Mapping[str, str]) -> list[Path]:
    files = [*_cargo_tomls(root), root / "Cargo.lock"]
    for directory in (root, *root.parents):
        for name in ("config", "config.toml"):
            files.append(directory / ".cargo" / name)
        for name in ("rust-toolchain", "rust-toolchain.toml"):
            files.append(directory / name)
    home = Path(env.get("HOME", str(Path.home())))
    cargo_home = Path(env.get("CARGO_HOME", str(home / ".cargo")))
    rustup_home = Path(env.get("RUSTUP_HOME", str(home / ".rustup")))
    files += [cargo_home / "config", cargo_home / "config.toml", rustup_home / "settings.toml"]
    files += sorted(rustup_home.glob("toolchains/*/bin/rustc"))
    files += [Path("/usr/bin/rustc"), Path("/usr/bin/cargo")]
    return files


def request_key(argv: Sequence[str], env: Mapping[str, str], extra: Iterable[str] = ()) -> str:
    relevant = {k: v for k, v in env.items() if k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES}
    data = json.dumps([__version__, list(argv), sorted(relevant.items()), list(extra)])
    return hashlib.sha256(data.encode()).hexdigest()


def _snapshot(
    outputs: Sequence[Path], dep_infos: Sequence[Path], root: Path, env: Mapping[str, str]
) -> dict[str, list[int] | None]:
    files = [*outputs]
    for dep_info in dep_infos:
        files += dep_info_files(dep_info)
    files += config_files(root, env)
    files += target_dirs(root)
    return {str(p): _stat(p) for p in files}


def _path(stamp_dir: Path, name: str) -> Path:
    return stamp_dir / STAMPS / f"{name}.json"


def is_fresh(stamp_dir: Path, name: str, key: str, root: Path, env: Mapping[str, str]) -> bool:
    try:
        stamp = json.loads(_path(stamp_dir, name).read_text(encoding="utf-8"))
        if stamp.get("key") != key:
            return False
        outputs = [Path(p) for p in stamp["outputs"]]
        if not outputs or any(_stat(p) is None for p in outputs):
            return False
        dep_infos = [Path(p) for p in stamp["dep_infos"]]
        return bool(stamp.get("files") == _snapshot(outputs, dep_infos, root, env))
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return False


def record(
    stamp_dir: Path,
    name: str,
    key: str,
    outputs: Sequence[Path],
    dep_infos: Sequence[Path],
    root: Path,
    env: Mapping[str, str],
) -> None:
    """Remember a successful run; without outputs or readable dep-info, forget instead."""
    try:
        if not outputs:
            raise OSError("no outputs")
        files = _snapshot(outputs, dep_infos, root, env)
    except (OSError, UnicodeDecodeError):
        forget(stamp_dir, name)
        return
    data = {
        "key": key,
        "outputs": [str(p) for p in outputs],
        "dep_infos": [str(p) for p in dep_infos],
        "files": files,
    }
    atomic_write_text(_path(stamp_dir, name), json.dumps(data) + "\n")


def forget(stamp_dir: Path, name: str) -> None:
    _path(stamp_dir, name).unlink(missing_ok=True)


def stored_outputs(stamp_dir: Path, name: str) -> list[Path]:
    """The outputs the last successful run recorded (empty when there is none)."""
    try:
        stamp = json.loads(_path(stamp_dir, name).read_text(encoding="utf-8"))
        return [Path(p) for p in stamp["outputs"]]
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return []
