"""The Cargo.toml edits of `rgpu init`, on tomlkit documents: a host package gets the kernel
crate, `rgpu` and the backend features; the root gets [workspace] members/exclude,
[workspace.dependencies] rgpu and [workspace.metadata.rgpu].

Each edit first looks for everything in its way and returns those conflicts (file, table,
key, and the fix) without touching the document; only with none does it add what is
missing. What is there already with the same meaning is left as it is, so a second run adds
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.items import Table

from rgpu import __version__
from rgpu.backends import BACKENDS as TABLE
from rgpu.errors import ConfigError, RgpuError
from rgpu.scaffold import toml_edit
from rgpu.scaffold.project import MANIFEST
from rgpu.scaffold.vendor import rgpu_dependency

COMMAND = "rgpu init"
DEFAULT_KERNEL = "kernel"
# The host's backend features: one per backend that has one (the cpu backend needs none).
BACKENDS = tuple(b.name for b in TABLE.values() if b.feature)


@dataclass(frozen=True)
class Conflict:
    """Something in the way: where (file, table, key), what, and the fix."""

    where: str
    problem: str
    fix: str
    error: type[RgpuError] = ConfigError


def edit_host(doc: Any, manifest: str, key: str, ours: Mapping[str, str]) -> list[Conflict]:
    """Add the kernel crate (as `key`), `rgpu` and the backend features to one host."""
    out: list[Conflict] = []
    package = ours["package"]
    deps = doc.get("dependencies")
    if deps is not None and not isinstance(deps, Table):
        return [
            Conflict(
                f"{manifest} dependencies",
                "is not a [dependencies] table",
                "write it as a [dependencies] table",
            )
        ]
    # The kernel crate, under its short name.
    for table_name in ("dependencies", "dev-dependencies", "build-dependencies"):
        table = doc.get(table_name)
        if not toml_edit.is_table(table):
            continue
        for name, value in table.items():
            spec = toml_edit.plain(value)
            renamed = isinstance(spec, dict) and spec.get("package") == package
            if name not in (key, package) and not renamed:
                continue
            if table_name == "dependencies" and name == key and spec == dict(ours):
                continue
            out.append(
                Conflict(
                    f"{manifest} [{table_name}] {name}",
                    f"= {toml_edit.show(value)} is in the way of the kernel crate "
                    f"(rgpu init adds {key} = {toml_edit.show(dict(ours))})",
                    "rename or remove that dependency, or pick another kernel directory "
                    "(the names follow it): `rgpu init --kernel OTHER`",
                )
            )
    rgpu_spec = toml_edit.plain(deps.get("rgpu")) if deps is not None else None
    if rgpu_spec is not None and not (
        isinstance(rgpu_spec, dict) and rgpu_spec.get("workspace") is True
    ):
        out.append(
            Conflict(
                f"{manifest} [dependencies] rgpu",
                f"= {toml_edit.show(rgpu_spec)} is not the workspace's rgpu",
                "remove it (rgpu init adds rgpu = { workspace = true }, the vendored crate)",
            )
        )
    # The backend features, for plain `cargo build --features cuda`.
    features = doc.get("features")
    if features is not None and not isinstance(features, Table):
        out.append(
            Conflict(f"{manifest} features", "is not a [features] table", "write it as [features]")
        )
        features = None
    optional = _optional_dependencies(doc)
    for backend in BACKENDS:
        want = f"{key}/{backend}"
        if backend in optional:
            out.append(
                Conflict(
                    f"{manifest} [dependencies] {backend}",
                    f"is optional, so `{backend}` is its feature; rgpu init adds the feature "
                    f'{backend} = ["{want}"]',
                    f'name it as "dep:{backend}" in the feature that turns it on (then it has no '
                    f"feature of its own), or rename the dependency",
                )
            )
        if features is None or backend not in features:
            continue
        have = toml_edit.string_list(features[backend])
        if have is None or want not in have:
            out.append(
                Conflict(
                    f"{manifest} [features] {backend}",
                    f"= {toml_edit.show(features[backend])} exists with other content "
                    f'(rgpu init adds {backend} = ["{want}"])',
                    f'add "{want}" to it, or rename your feature `{backend}`',
                )
            )
    if out:
        return out
    if deps is None:
        doc["dependencies"] = tomlkit.table()
        deps = doc["dependencies"]
    added: list[tuple[str | None, Any]] = []
    if key not in deps:
        added.append((key, toml_edit.inline(ours)))
    if "rgpu" not in deps:
        added.append(("rgpu", toml_edit.inline({"workspace": True})))
    toml_edit.add(deps, added)
    missing = [b for b in BACKENDS if features is None or b not in features]
    if missing:
        if features is None:
            doc["features"] = tomlkit.table()
            features = doc["features"]
        comment = tomlkit.comment(
            "GPU backends, for plain `cargo build --features cuda` (rgpu build uses the "
            "kernel crate's)."
        )
        toml_edit.add(features, [(None, comment), *((b, [f"{key}/{b}"]) for b in missing)])
    return out


def _optional_dependencies(doc: Any) -> set[str]:
    """Optional dependencies that have a feature of their own name: those no feature names
    as `dep:NAME` (cargo makes the implicit feature only then)."""
    table = doc.get("dependencies")
    features = toml_edit.plain(doc.get("features")) or {}
    named = {v for values in features.values() if isinstance(values, list) for v in values}
    found = set()
    if toml_edit.is_table(table):
        for name, value in table.items():
            spec = toml_edit.plain(value)
            if (
                isinstance(spec, dict)
                and spec.get("optional") is True
                and f"dep:{name}" not in named
            ):
                found.add(name)
    return found


def edit_workspace(doc: Any, kernel_dir: str, binaries: Sequence[str]) -> list[Conflict]:
    """[workspace] members/exclude, [workspace.dependencies] rgpu, [workspace.metadata.rgpu]."""
    out: list[Conflict] = []
    where = f"{MANIFEST} [workspace]"
    workspace = doc.get("workspace")
    if workspace is not None and not isinstance(workspace, Table):
        return [Conflict(f"{MANIFEST} workspace", "is not a table", "make it [workspace]")]
    lists = {}
    for name in ("members", "exclude"):
        value = workspace.get(name) if workspace is not None else None
        lists[name] = toml_edit.string_list(value) if value is not None else []
        if lists[name] is None:
            out.append(Conflict(f"{where} {name}", "is not a list of paths", f"fix {name}"))
    excluded = [e for e in lists["exclude"] or [] if toml_edit.glob_matches(e, kernel_dir)]
    if excluded or any(kernel_dir.startswith(f"{e.strip('/')}/") for e in lists["exclude"] or []):
        out.append(
            Conflict(
                f"{where} exclude",
                f"leaves out {kernel_dir}/, where the kernel crate goes",
                "take it out of `exclude`, or pick another directory: `rgpu init --kernel OTHER`",
            )
        )
    section = workspace.get("dependencies") if workspace is not None else None
    ours = rgpu_dependency()
    have = toml_edit.plain(section.get("rgpu")) if isinstance(section, Table) else None
    if section is not None and not isinstance(section, Table):
        out.append(Conflict(f"{where} dependencies", "is not a table", "make it a table"))
    elif have is not None and have != ours:
        vendored = isinstance(have, dict) and "vendor/rgpu-" in str(have.get("path", ""))
        out.append(
            Conflict(
                f"{MANIFEST} [workspace.dependencies] rgpu",
                f"= {toml_edit.show(have)}, not rgpu {__version__}'s vendored crate",
                f"run `rgpu vendor` to move the workspace to rgpu {__version__}'s crates"
                if vendored
                else f"remove it (rgpu init adds rgpu = {toml_edit.show(ours)})",
            )
        )
    metadata = workspace.get("metadata") if workspace is not None else None
    meta = metadata.get("rgpu") if isinstance(metadata, Table) else None
    if metadata is not None and not isinstance(metadata, Table):
        out.append(Conflict(f"{where} metadata", "is not a table", "make it a table"))
    elif meta is not None and not isinstance(meta, Table):
        out.append(
            Conflict(f"{MANIFEST} workspace.metadata.rgpu", "is not a table", "make it a table")
        )
    elif meta is not None and meta.get("kernel", DEFAULT_KERNEL) != kernel_dir:
        out.append(
            Conflict(
                f"{MANIFEST} [workspace.metadata.rgpu] kernel",
                f"= {toml_edit.show(meta.get('kernel', DEFAULT_KERNEL))}, but --kernel asks "
                f'for "{kernel_dir}"',
                "drop --kernel to keep the workspace's kernel crate, or change `kernel` there",
            )
        )
    if out:
        return out
    if workspace is None:
        doc["workspace"] = tomlkit.table()
        workspace = doc["workspace"]
    members, exclude = lists["members"] or [], lists["exclude"] or []
    added: list[tuple[str | None, Any]] = []
    if "members" not in workspace:
        added.append(("members", [kernel_dir]))
    elif not any(toml_edit.glob_matches(m, kernel_dir) for m in members):
        workspace["members"].append(kernel_dir)
    if "exclude" not in workspace:
        added.append(("exclude", ["vendor"]))
    elif not any(e.strip("/") == "vendor" for e in exclude):
        workspace["exclude"].append("vendor")
    toml_edit.add(workspace, added)
    section = toml_edit.child_table(workspace, "dependencies")
    assert section is not None
    if "rgpu" not in section:
        toml_edit.add(section, [("rgpu", toml_edit.inline(ours))])
    metadata = toml_edit.child_table(workspace, "metadata", super_table=True)
    assert metadata is not None
    if "rgpu" not in metadata:
        table = tomlkit.table()
        table.add(tomlkit.comment("rgpu reads this table; cargo ignores it."))
        metadata["rgpu"] = table
    meta = metadata["rgpu"]
    added = []
    if "kernel" not in meta:
        added.append(("kernel", kernel_dir))
    if "binary" not in meta and len(binaries) == 1:
        added.append(("binary", binaries[0]))
    toml_edit.add(meta, added)
    return out


def conflict_error(conflicts: Sequence[Conflict]) -> RgpuError:
    """One error for every conflict: the first one's kind sets the exit code."""
    first = conflicts[0]
    if len(conflicts) == 1:
        return first.error(f"{first.where} {first.problem}; nothing was written", first.fix)
    lines = "\n".join(f"  {c.where} {c.problem}\n    fix: {c.fix}" for c in conflicts)
    return first.error(
        f"{len(conflicts)} conflicts; nothing was written:\n{lines}",
        f"fix each one, then run `{COMMAND}` again (`{COMMAND} --dry-run` shows the changes)",
    )
