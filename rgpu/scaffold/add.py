"""`rgpu add primitives`: the edits that let a workspace use rgpu-primitives, planned as
file changes (shown, then written all-or-nothing by scaffold/changes.py).

1. `[workspace.dependencies] rgpu-primitives`, beside `rgpu` and vendored the same way
   (`vendor/rgpu-<version>/rgpu-primitives`, which `rgpu new`/`rgpu vendor` wrote);
2. `rgpu-primitives.workspace = true` in the kernel crate's and every host's `[dependencies]`
   (a host: a package of the workspace that depends on the kernel crate), so that the kernel
   build compiles its kernels and the host can call them;
3. `use rgpu_primitives as _;` in the kernel crate's `src/lib.rs` (a crate nothing names is
   not linked, and its kernels would not be built);
4. `RGPU_WORKSPACE` in `.cargo/config.toml`'s `[env]`: the library embeds the kernels that
   `rgpu build` writes into this workspace.

What is there already is left as it is: a second run changes nothing. Anything in a shape
rgpu does not edit (a dependency given another way, a `[dependencies]` that is not a table)
stops the plan with the file and the edit to make by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tomlkit

from rgpu import __version__
from rgpu.errors import ConfigError
from rgpu.resources import templates_dir
from rgpu.scaffold import toml_edit
from rgpu.scaffold.changes import FileChange, on_disk
from rgpu.scaffold.vendor import rgpu_dependency
from rgpu.workspace import WORKSPACE_VAR, Workspace

COMMAND = "rgpu add primitives"
CRATE = "rgpu-primitives"
USE_LINE = "use rgpu_primitives as _; // its kernels are built with this crate's (rgpu add)"
CONFIG = ".cargo/config.toml"


def config_text() -> str:
    """The sort demo's `.cargo/config.toml` (its comment says what the setting is for)."""
    return (templates_dir() / "bitonic" / CONFIG).read_text(encoding="utf-8")


def _read(root: Path, rel: str) -> bytes | None:
    return on_disk(root / rel)


def _toml(root: Path, rel: str) -> Any:
    data = _read(root, rel)
    if data is None:
        raise ConfigError(f"{root / rel} does not exist", f"run `{COMMAND}` in an rgpu workspace")
    return toml_edit.parse(data.decode("utf-8"), str(root / rel), COMMAND)


def _change(root: Path, rel: str, new: str) -> FileChange:
    return FileChange(rel, new.encode("utf-8"), _read(root, rel))


def _root_manifest(root: Path, is_host: bool) -> FileChange:
    """[workspace.dependencies] rgpu-primitives, and the root package's own dependency when
    the root package is a host."""
    doc = _toml(root, "Cargo.toml")
    deps = toml_edit.child_table(doc.get("workspace", {}), "dependencies", super_table=True)
    if deps is None or "rgpu" not in deps:
        raise ConfigError(
            f"{root / 'Cargo.toml'} has no [workspace.dependencies] rgpu",
            "run `rgpu init` first (it adds rgpu), then this command",
        )
    if CRATE not in deps:
        ours = rgpu_dependency(__version__, CRATE)
        if not (root / ours["path"]).is_dir():
            raise ConfigError(
                f"rgpu-primitives is not vendored in {root / ours['path']}",
                "run `rgpu vendor` (it writes rgpu's crates there), then this command",
            )
        toml_edit.add(deps, [(CRATE, toml_edit.inline(ours))])
    if is_host:
        _add_dependency(doc, root / "Cargo.toml")
    return _change(root, "Cargo.toml", toml_edit.dumps(doc, str(root / "Cargo.toml")))


def _add_dependency(doc: Any, shown: Path) -> None:
    """`rgpu-primitives.workspace = true` in a package's [dependencies] (unless there)."""
    deps = doc.get("dependencies")
    if not isinstance(deps, tomlkit.items.Table):
        raise ConfigError(
            f"{shown} has no [dependencies] table rgpu can add to",
            f"add `{CRATE}.workspace = true` under its [dependencies] by hand",
        )
    if CRATE not in deps:  # written as the template writes `rgpu.workspace = true`
        toml_edit.add(deps, [(tomlkit.key([CRATE, "workspace"]), True)])


def _crate_dependency(root: Path, rel: str) -> FileChange:
    doc = _toml(root, rel)
    _add_dependency(doc, root / rel)
    return _change(root, rel, toml_edit.dumps(doc, str(root / rel)))


def _use_line(root: Path, rel: str) -> FileChange:
    data = _read(root, rel)
    if data is None:
        raise ConfigError(f"{root / rel} does not exist", "the kernel crate needs a src/lib.rs")
    text = data.decode("utf-8")
    if "use rgpu_primitives" in text:
        return _change(root, rel, text)
    lines = text.splitlines(keepends=True)
    # After the crate's inner attributes and `rgpu::embed_kernels!()`, before its items.
    at = 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(("#![", "//!")) or "embed_kernels!" in stripped:
            at = i + 1
    lines.insert(at, USE_LINE + "\n")
    return _change(root, rel, "".join(lines))


def _config(root: Path) -> FileChange:
    data = _read(root, CONFIG)
    if data is None:
        return _change(root, CONFIG, config_text())
    doc = toml_edit.parse(data.decode("utf-8"), str(root / CONFIG), COMMAND)
    env = doc.get("env")
    if env is None:
        doc.add("env", tomlkit.table())
        env = doc["env"]
    if not isinstance(env, tomlkit.items.Table):
        raise ConfigError(
            f"{root / CONFIG}: [env] is not a table",
            'add `RGPU_WORKSPACE = { value = ".", relative = true }` under [env] by hand',
        )
    if WORKSPACE_VAR not in env:
        entry = toml_edit.inline({"value": ".", "relative": True})
        toml_edit.add(env, [(WORKSPACE_VAR, entry)])
    return _change(root, CONFIG, toml_edit.dumps(doc, str(root / CONFIG)))


def hosts(ws: Workspace) -> list[str]:
    """The manifests (relative to the root) of the packages that depend on the kernel crate:
    the root package and the workspace's listed members (globs are not followed)."""
    root_doc = _toml(ws.root, "Cargo.toml")
    members = toml_edit.string_list(root_doc.get("workspace", {}).get("members")) or []
    manifests = ["Cargo.toml"] if "package" in root_doc else []
    manifests += [f"{m}/Cargo.toml" for m in members if "*" not in m and m not in ("", ".")]
    kernel = ws.kernel_dir.resolve()
    found = []
    for rel in manifests:
        if (ws.root / rel).parent.resolve() == kernel or not (ws.root / rel).is_file():
            continue
        deps = _toml(ws.root, rel).get("dependencies") or {}
        for value in deps.values() if toml_edit.is_table(deps) else ():
            if toml_edit.is_table(value) and value.get("package") == ws.kernel_package:
                found.append(rel)
                break
        else:
            if ws.kernel_package in deps:
                found.append(rel)
    return found


def plan_primitives(ws: Workspace) -> list[FileChange]:
    """Every file `rgpu add primitives` writes, with what it holds now."""
    kernel = ws.kernel_dir.relative_to(ws.root).as_posix()
    host_manifests = hosts(ws)
    planned = [_root_manifest(ws.root, "Cargo.toml" in host_manifests)]
    for rel in [*host_manifests, f"{kernel}/Cargo.toml"]:
        if rel != "Cargo.toml":
            planned.append(_crate_dependency(ws.root, rel))
    planned.append(_use_line(ws.root, f"{kernel}/src/lib.rs"))
    planned.append(_config(ws.root))
    return planned
