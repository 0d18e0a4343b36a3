"""The pinned toolchains: one `toolchains/NAME.toml` per codegen, read in one place.

`RGPU_TOOLCHAINS_DIR` (a directory of NAME.toml files) replaces the packaged pins for every
command: `rgpu build`, `rgpu doctor` and `rgpu toolchain` all read pins through `load`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from rgpu.errors import ToolchainError, did_you_mean
from rgpu.resources import toolchains_dir as packaged_toolchains_dir

TOOLCHAINS_DIR_ENV = "RGPU_TOOLCHAINS_DIR"
# Old spellings rustup still accepts and lists under the new name.
_COMPONENT_ALIASES = {"llvm-tools-preview": "llvm-tools"}


class Source(NamedTuple):
    repository: str
    rev: str
    file: str
    confirmed: str


class Pin(NamedTuple):
    """One toolchains/NAME.toml: what a codegen's compiler must be."""

    name: str
    description: str
    channel: str
    commit_hash: str  # empty: upstream pins the channel only (or any nightly will do)
    components: tuple[str, ...]
    exercised_in_ci: bool
    source: Source
    path: Path
    tables: Mapping[str, Any] = MappingProxyType({})  # [llvm], [cuda], [images], ...

    @property
    def any_nightly(self) -> bool:
        return self.channel == "nightly" and not self.commit_hash

    def table(self, name: str) -> Mapping[str, Any]:
        """One `[name]` table of the pin file (empty when the file has none)."""
        value = self.tables.get(name, {})
        return value if isinstance(value, Mapping) else {}


def toolchains_dir(env: Mapping[str, str]) -> Path:
    """RGPU_TOOLCHAINS_DIR, else the pins packaged with rgpu."""
    override = env.get(TOOLCHAINS_DIR_ENV)
    return Path(override) if override else packaged_toolchains_dir()


def split_host(name: str) -> tuple[str, str | None]:
    """`nightly-2026-04-08-x86_64-unknown-linux-gnu` -> ("nightly-2026-04-08", "x86_64-...")."""
    import re

    match = re.search(
        r"-((?:x86_64|aarch64|i686|i586|armv7|arm|riscv64gc|powerpc64le|powerpc64|s390x"
        r"|loongarch64)-[a-z0-9_]+-[a-z0-9_]+(?:-[a-z0-9_]+)?)$",
        name,
    )
    return (name[: match.start()], match.group(1)) if match else (name, None)


def normalize_component(name: str) -> str:
    base, _host = split_host(name)
    return _COMPONENT_ALIASES.get(base, base)


def parse_pin(path: Path) -> Pin:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        source = data.get("source", {})
        return Pin(
            name=str(data["name"]),
            description=str(data.get("description", "")),
            channel=str(data["channel"]),
            commit_hash=str(data.get("commit_hash", "")),
            components=tuple(normalize_component(str(c)) for c in data.get("components", [])),
            exercised_in_ci=bool(data.get("exercised_in_ci", False)),
            source=Source(
                repository=str(source.get("repository", "")),
                rev=str(source.get("rev", "")),
                file=str(source.get("file", "")),
                confirmed=str(source.get("confirmed", "")),
            ),
            path=path,
            tables={k: v for k, v in data.items() if isinstance(v, dict) and k != "source"},
        )
    except (OSError, KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ToolchainError(
            f"cannot read toolchain pin {path}: {exc}",
            f"fix the file, or unset {TOOLCHAINS_DIR_ENV} / reinstall rgpu to use its "
            "packaged pins",
        ) from exc


def load_all(env: Mapping[str, str]) -> list[Pin]:
    directory = toolchains_dir(env)
    if not directory.is_dir():
        raise ToolchainError(
            f"{TOOLCHAINS_DIR_ENV}={directory} is not a directory of toolchain pins",
            f"point {TOOLCHAINS_DIR_ENV} at a directory of NAME.toml files, or unset it",
        )
    return [parse_pin(p) for p in sorted(directory.glob("*.toml"))]


def load(name: str, env: Mapping[str, str]) -> Pin:
    # Each pin's file is named after it (toolchains/NAME.toml): read that one first, and all
    # of them only to say which exist (every build reads its codegens' pins).
    own = toolchains_dir(env) / f"{name}.toml"
    if own.is_file():
        pin = parse_pin(own)
        if pin.name == name:
            return pin
    pins = {p.name: p for p in load_all(env)}
    if name not in pins:
        raise ToolchainError(
            f"no pinned toolchain `{name}` in {toolchains_dir(env)}"
            f"{did_you_mean(name, tuple(pins))}",
            f"pinned toolchains: {', '.join(pins) or 'none'} (see `rgpu toolchain list`)",
        )
    return pins[name]
