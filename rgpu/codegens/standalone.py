"""The kernel crate restated as a standalone package, for the codegens that compile it in a
nested cargo build of their own (rust-gpu through cargo-gpu, rustc_codegen_nvvm through
cuda_builder).

The generated package's library root is the kernel crate's own `src/lib.rs`, and its
dependencies are the kernel crate's, read from its Cargo.toml: `workspace = true` entries
are resolved against the workspace's [workspace.dependencies], relative paths become
absolute, and the `rgpu` dependency gets the codegen's feature (`spirv` or `nvvm`); the
workspace's [patch] tables are copied the same way. So the
kernel's dependencies are written once, in kernel/Cargo.toml, and a third-party `no_std`
crate added there reaches every codegen. The package is its own workspace (an empty
[workspace] table) with its own lock file, so the user's Cargo.lock never sees the
codegen's crates.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rgpu import __version__
from rgpu.errors import ConfigError
from rgpu.workspace import Workspace, load_toml

DEP_TABLES = ("dependencies", "build-dependencies")
FACADE = "rgpu"


def _absolute(table: dict[str, Any], base: Path) -> dict[str, Any]:
    if "path" in table:
        table["path"] = str((base / str(table["path"])).resolve())
    return table


def _resolve_dep(
    name: str, spec: Any, base: Path, ws_deps: Mapping[str, Any], ws_root: Path
) -> dict[str, Any]:
    if isinstance(spec, str):
        return {"version": spec}
    if not isinstance(spec, dict):
        raise ConfigError(
            f"dependency `{name}` of the kernel crate is not a version or a table",
            "fix kernel/Cargo.toml",
        )
    table = dict(spec)
    if table.pop("workspace", False):
        inherited = ws_deps.get(name)
        if inherited is None:
            raise ConfigError(
                f"the kernel crate's `{name}.workspace = true` has no "
                "[workspace.dependencies] entry",
                f"add `{name}` to [workspace.dependencies] in the root Cargo.toml",
            )
        merged = _resolve_dep(name, inherited, ws_root, {}, ws_root)
        features = [*merged.get("features", []), *table.pop("features", [])]
        merged.update(table)
        if features:
            merged["features"] = list(dict.fromkeys(features))
        return merged
    return _absolute(table, base)


def _deps(
    section: Mapping[str, Any], base: Path, ws_deps: Mapping[str, Any], ws_root: Path
) -> dict[str, Any]:
    return {n: _resolve_dep(n, s, base, ws_deps, ws_root) for n, s in section.items()}


def _package_value(kernel: Mapping[str, Any], root: Mapping[str, Any], key: str) -> Any:
    value = kernel.get("package", {}).get(key)
    if isinstance(value, dict) and value.get("workspace"):
        return root.get("workspace", {}).get("package", {}).get(key)
    return value


def manifest(
    ws: Workspace,
    *,
    package: str,
    feature: str,
    crate_types: tuple[str, ...],
    extra_dependencies: Mapping[str, Any] | None = None,
    patch: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The generated package's Cargo.toml, as data."""
    kernel = load_toml(ws.kernel_dir / "Cargo.toml")
    root = load_toml(ws.root / "Cargo.toml")
    ws_deps = root.get("workspace", {}).get("dependencies", {})
    base = ws.kernel_dir
    lib = kernel.get("lib", {})
    lib_path = (base / str(lib.get("path", "src/lib.rs"))).resolve()
    data: dict[str, Any] = {
        "package": {
            "name": package,
            "version": "0.0.0",
            "edition": str(_package_value(kernel, root, "edition") or "2021"),
            "publish": False,
        },
        "lib": {
            "name": ws.kernel_crate_name,
            "path": str(lib_path),
            "crate-type": list(crate_types),
        },
    }
    build = kernel.get("package", {}).get("build")
    if isinstance(build, str):
        data["package"]["build"] = str((base / build).resolve())
    elif build is None and (base / "build.rs").is_file():
        data["package"]["build"] = str((base / "build.rs").resolve())
    for table in DEP_TABLES:
        if kernel.get(table):
            data[table] = _deps(kernel[table], base, ws_deps, ws.root)
    targets: dict[str, Any] = {}
    for cfg, tables in kernel.get("target", {}).items():
        entry = {t: _deps(tables[t], base, ws_deps, ws.root) for t in DEP_TABLES if t in tables}
        if entry:
            targets[cfg] = entry
    if targets:
        data["target"] = targets
    deps = data.setdefault("dependencies", {})
    if FACADE not in deps:
        raise ConfigError(
            f"the kernel crate {ws.kernel_package} does not depend on `{FACADE}`",
            f"add the {FACADE} dependency to {ws.kernel_dir / 'Cargo.toml'} "
            "(`rgpu init` does this)",
        )
    facade = deps[FACADE]
    facade["features"] = list(dict.fromkeys([*facade.get("features", []), feature]))
    deps.update(extra_dependencies or {})
    if kernel.get("features"):
        data["features"] = kernel["features"]
    # The workspace's own [patch] tables reach the nested build too (a library of kernels
    # from crates.io that depends on `rgpu` is patched to the vendored crates there).
    patches: dict[str, Any] = {
        source: {n: _absolute(dict(spec), ws.root) for n, spec in table.items()}
        for source, table in root.get("patch", {}).items()
        if isinstance(table, dict)
    }
    if patch:
        patches.setdefault("crates-io", {}).update(patch)
    if patches:
        data["patch"] = patches
    data["workspace"] = {}
    return data


def render(data: Mapping[str, Any], what: str) -> str:
    import tomlkit

    header = (
        f"# Generated by rgpu {__version__} from the kernel crate's Cargo.toml for {what};\n"
        "# rewritten on every build. Edit kernel/Cargo.toml, not this file.\n"
    )
    return header + tomlkit.dumps(data)
