"""Skip a host build that cargo would find fresh, without starting cargo.

After a successful host build rgpu records what the binary was built from: every file in
cargo's own dep-info for the binary (``target/<profile>/<bin>.d``: all path-dependency
sources, build-script outputs and embedded kernels), every Cargo.toml, Cargo.lock, cargo
config and rust-toolchain file that can affect it, the installed toolchains, the
environment variables cargo and rustc read, and the binary itself. The next build with the
same request skips cargo only if all of them are unchanged (same size and mtime). Registry
crates are immutable and pinned by Cargo.lock, so they need no stat. Anything unexpected
(a missing or unreadable file) means "not fresh", never "skip".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rgpu import __version__
from rgpu.util.files import atomic_write_text

STAMP_NAME = "host-stamp.json"
_ENV_PREFIXES = ("CARGO", "RUSTC", "RUSTFLAGS", "RUSTDOC", "RUSTUP", "RGPU_")
_ENV_NAMES = ("PATH",)


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def _dep_info_files(dep_info: Path) -> list[Path]:
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


def _config_files(root: Path, env: Mapping[str, str]) -> list[Path]:
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


def _snapshot(binary: Path, root: Path, env: Mapping[str, str]) -> dict[str, list[int] | None]:
    dep_info = binary.with_suffix(".d")
    files = [binary, dep_info, *_dep_info_files(dep_info), *_config_files(root, env)]
    return {str(p): _stat(p) for p in files}


def is_fresh(stamp_dir: Path, key: str, binary: Path, root: Path, env: Mapping[str, str]) -> bool:
    try:
        stamp = json.loads((stamp_dir / STAMP_NAME).read_text(encoding="utf-8"))
        if stamp.get("key") != key or _stat(binary) is None:
            return False
        return bool(stamp.get("files") == _snapshot(binary, root, env))
    except (OSError, ValueError, UnicodeDecodeError):
        return False


def record(stamp_dir: Path, key: str, binary: Path, root: Path, env: Mapping[str, str]) -> None:
    try:
        files = _snapshot(binary, root, env)
    except (OSError, UnicodeDecodeError):
        forget(stamp_dir)
        return
    atomic_write_text(stamp_dir / STAMP_NAME, json.dumps({"key": key, "files": files}) + "\n")


def forget(stamp_dir: Path) -> None:
    (stamp_dir / STAMP_NAME).unlink(missing_ok=True)
