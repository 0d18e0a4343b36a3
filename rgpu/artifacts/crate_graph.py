"""The kernel crate's dependency graph, read without running cargo: the crates that depend on
`rgpu` (only such a crate can declare a kernel), for what must be known before anything
compiles (the scalar types of their sources: rust-gpu's SPIR-V capabilities,
artifacts/capabilities.py). Which of them do declare kernels, and which kernels, is the
macro's word, read after `cargo check` (artifacts/kernels.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rgpu.workspace import load_toml

FACADE = "rgpu"
OWN_CRATES = (FACADE, "rgpu-macros", "rgpu-runtime")


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


def rgpu_crates(root: Path, kernel_dir: Path, env: Mapping[str, str]) -> tuple[Path, ...]:
    """The library source directories of the crates that may hold kernels: the kernel crate
    first, then each crate of its normal dependency graph that depends on `rgpu` itself.
    Path packages (in the workspace, vendored, elsewhere; the workspace's [patch] tables
    too) are read from their Cargo.toml, registry packages from Cargo.lock and cargo's
    unpacked sources."""
    graph = _Graph(root, env)
    found: list[Path] = []
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
        if not found or FACADE in names:
            found.append(_lib_dir(manifest, data))
        for name, path in deps:
            if name in OWN_CRATES:
                continue  # rgpu's facade, macros and runtime declare no kernels
            if path is not None:
                todo.append((path.resolve(), None))
            else:
                todo += [(d.resolve(), ds) for d, ds in graph.registry_dir(name)]
    return tuple(found)
