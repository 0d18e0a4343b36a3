"""The workspace's kernels: the `#[rgpu::kernel]` functions of its kernel crate and of the
crates it depends on that hold kernels (a library of kernels: a path dependency, a crate
vendored into the workspace, a published crate).

Kernel names are read from a crate's sources (src/**/*.rs, comments left out), so rgpu knows
which entry points an artifact must have without compiling anything: an attribute
`#[rgpu::kernel]` or `#[kernel]` (with or without arguments), then other attributes or doc
comments, then `fn NAME`. Kernels declared through another macro are not seen; artifacts are
then checked by the launch itself, at run time.

Which crates: the kernel crate, then every package in its normal dependency graph that
depends on `rgpu` itself (only such a crate can declare a kernel) and declares one (`crates`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.errors import ConfigError
from rgpu.workspace import load_toml

_KERNEL = re.compile(
    r"#\[\s*(?:::)?(?:rgpu\s*::\s*)?kernel\s*(?:\([^\]]*\))?\s*\]"
    r"(?:\s*#\[[^\]]*\])*"
    r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)"
)
# Comments (doc comments too: an example kernel in a doc comment is not a kernel).
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
FACADE = "rgpu"
OWN_CRATES = (FACADE, "rgpu-macros", "rgpu-runtime")


def kernel_names(text: str) -> list[str]:
    return _KERNEL.findall(_COMMENTS.sub(" ", text))


def sources(src_dir: Path) -> list[Path]:
    return sorted(src_dir.rglob("*.rs"))


def find(kernel_dir: Path) -> tuple[str, ...]:
    """Every kernel name in one crate's sources (`kernel_dir/src`), sorted and unique."""
    return names_in(kernel_dir / "src")


def names_in(src_dir: Path) -> tuple[str, ...]:
    names: set[str] = set()
    for source in sources(src_dir):
        try:
            names.update(kernel_names(source.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return tuple(sorted(names))


class KernelCrate(NamedTuple):
    """A crate that holds kernels: the workspace's kernel crate or one it depends on."""

    package: str  # cargo's package name
    src_dir: Path  # the directory of its library's root file
    manifest: Path  # its Cargo.toml
    outside: bool  # outside the workspace's directory (a registry crate, a path elsewhere)
    kernels: tuple[str, ...]


class Kernel(NamedTuple):
    name: str
    package: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "package": self.package}


def kernels_of(crates: Sequence[KernelCrate]) -> tuple[Kernel, ...]:
    """Every kernel with its crate; a name in two crates is an error (one namespace of
    entry points per module)."""
    owner: dict[str, str] = {}
    for crate in crates:
        for name in crate.kernels:
            other = owner.setdefault(name, crate.package)
            if other != crate.package:
                raise ConfigError(
                    f"kernel `{name}` is declared in two crates, {other} and {crate.package}: "
                    "the kernels of a workspace and of the crates it depends on share one "
                    "namespace of entry points (one PTX or SPIR-V module)",
                    f"rename one of them (a library of kernels prefixes its names, e.g. "
                    f"`{crate.package.replace('-', '_')}_{name}`)",
                )
    return tuple(Kernel(n, p) for n, p in sorted(owner.items()))


def names(crates: Sequence[KernelCrate]) -> tuple[str, ...]:
    return tuple(k.name for k in kernels_of(crates))


# --- the crates: the kernel crate's dependency graph, read without running cargo ---------


def _lib_dir(manifest: Path, data: Mapping[str, Any]) -> Path:
    lib = data.get("lib", {})
    path = lib.get("path", "src/lib.rs") if isinstance(lib, dict) else "src/lib.rs"
    return (manifest.parent / str(path)).parent


def _dependency_tables(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The normal dependencies (not dev-, not build-): what the codegens compile."""
    tables = [data.get("dependencies", {})]
    for target in data.get("target", {}).values():
        if isinstance(target, dict):
            tables.append(target.get("dependencies", {}))
    return [t for t in tables if isinstance(t, dict)]


class _Graph:
    """Cargo.toml files (path packages) and Cargo.lock (registry packages) of a workspace."""

    def __init__(self, root: Path, env: Mapping[str, str]) -> None:
        self.root = root
        data = load_toml(root / "Cargo.toml")
        self.ws_deps: Mapping[str, Any] = data.get("workspace", {}).get("dependencies", {})
        self.patches: dict[str, Path] = {}
        for table in data.get("patch", {}).values():
            for name, spec in table.items() if isinstance(table, dict) else ():
                if isinstance(spec, dict) and "path" in spec:
                    self.patches[str(spec.get("package", name))] = root / str(spec["path"])
        self.lock: dict[str, list[Mapping[str, Any]]] = {}
        lock = root / "Cargo.lock"
        if lock.is_file():
            for package in load_toml(lock).get("package", []):
                self.lock.setdefault(str(package["name"]), []).append(package)
        home = env.get("CARGO_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cargo")
        self.registry = Path(home) / "registry" / "src"

    def path_deps(self, manifest: Path, data: Mapping[str, Any]) -> list[tuple[str, Path | None]]:
        """(package name, its directory if it is a path package here) per dependency."""
        out: list[tuple[str, Path | None]] = []
        for table in _dependency_tables(data):
            for key, spec in table.items():
                base = manifest.parent
                if isinstance(spec, dict) and spec.get("workspace"):
                    spec, base = self.ws_deps.get(key, {}), self.root
                name = str(spec.get("package", key)) if isinstance(spec, dict) else key
                if isinstance(spec, dict) and "path" in spec:
                    out.append((name, base / str(spec["path"])))
                else:
                    out.append((name, self.patches.get(name)))
        return out

    def registry_dir(self, name: str) -> list[tuple[Path, list[str]]]:
        """The unpacked sources of a registry package in Cargo.lock, with its dependencies'
        names (not downloaded yet, or no lock: nothing; cargo fetches before compiling)."""
        found = []
        for package in self.lock.get(name, []):
            if not str(package.get("source", "")).startswith("registry+"):
                continue
            deps = [str(d).split(" ")[0] for d in package.get("dependencies", [])]
            for directory in sorted(self.registry.glob(f"*/{name}-{package['version']}")):
                found.append((directory, deps))
                break
        return found


def crates(root: Path, kernel_dir: Path, env: Mapping[str, str]) -> tuple[KernelCrate, ...]:
    """The crates holding kernels: the kernel crate first, then each crate of its normal
    dependency graph that depends on `rgpu` itself (only such a crate can declare a kernel)
    and declares one. Path packages (in the workspace, vendored, elsewhere; the workspace's
    [patch] tables too) are read from their Cargo.toml, registry packages from Cargo.lock and
    cargo's unpacked sources. No process is started: a build with nothing to compile stays
    as cheap as before."""
    graph = _Graph(root, env)
    resolved_root = root.resolve()
    found: list[KernelCrate] = []
    seen: set[Path] = set()
    todo: list[tuple[Path, list[str] | None]] = [(kernel_dir.resolve(), None)]
    while todo:
        directory, lock_deps = todo.pop(0)
        if directory in seen:
            continue
        seen.add(directory)
        manifest = directory / "Cargo.toml"
        if not manifest.is_file():
            continue
        data = load_toml(manifest)
        package = data.get("package", {}).get("name")
        if not isinstance(package, str):
            continue
        deps = graph.path_deps(manifest, data)
        names = {n for n, _ in deps} | set(lock_deps or ())
        src_dir = _lib_dir(manifest, data)
        first = not found
        kernels = names_in(src_dir)
        if first or (FACADE in names and kernels):
            outside = not directory.is_relative_to(resolved_root)
            found.append(KernelCrate(package, src_dir, manifest, outside, kernels))
        for name, path in deps:
            if name in OWN_CRATES:
                continue  # rgpu's facade, macros and runtime declare no kernels
            if path is not None:
                todo.append((path.resolve(), None))
            else:
                todo += [(d.resolve(), ds) for d, ds in graph.registry_dir(name)]
    return tuple(found)


def unlinked(
    modules: Sequence[tuple[str, Sequence[str]]], crates: Sequence[KernelCrate]
) -> dict[str, list[str]]:
    """The library crates whose kernels a built module (its name, its entry points) lacks,
    with the kernels: rustc links a dependency into the kernel crate's PTX and SPIR-V only
    when the kernel crate's code names it."""
    missing: dict[str, list[str]] = {}
    for _, entries in modules:
        have = set(entries)
        for crate in crates[1:]:
            lacking = [k for k in crate.kernels if k not in have]
            if lacking:
                missing.setdefault(crate.package, lacking)
    return missing


def require_linked(
    modules: Sequence[tuple[str, Sequence[str]]], crates: Sequence[KernelCrate], lib_rs: Path
) -> None:
    """An error naming the crates to `use` when a built module lacks a library's kernels."""
    missing = unlinked(modules, crates)
    if not missing:
        return
    shown = "; ".join(
        f"{c}: {', '.join(k[:4])}{', ...' if len(k) > 4 else ''}" for c, k in missing.items()
    )
    uses = " ".join(f"`use {c.replace('-', '_')} as _;`" for c in missing)
    raise ConfigError(
        f"the built kernels lack those of crates the kernel crate depends on ({shown}): "
        "rustc links a dependency into the kernel crate's PTX and SPIR-V only when the "
        "kernel crate's code names it",
        f"add {uses} to {lib_rs} (or `pub use` one of the crate's kernels), then build again",
    )
