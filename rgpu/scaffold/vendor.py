"""rgpu's Rust support crates, vendored into a workspace.

A workspace made by `rgpu new` or `rgpu init` builds offline right away, and keeps building
when rgpu is reinstalled, upgraded or removed: it carries its own copy of the crates
(`rgpu`, `rgpu-macros`, `rgpu-runtime`, and `rgpu-primitives`, the library of device-wide
primitives a kernel crate may depend on) under `vendor/rgpu-<version>/`, referenced with
`path` and `version` from [workspace.dependencies]. The crates are the ones in rgpu's
repository (crates/), published to crates.io under the same names and versions, so the
`path` can be dropped once they are there. `rgpu vendor` writes the running rgpu's crates
beside the old ones and moves the dependency to them (moving to a newer rgpu).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.errors import ConfigError
from rgpu.resources import data_dir
from rgpu.scaffold import toml_edit
from rgpu.scaffold.changes import FileChange

COMMAND = "rgpu vendor"
MANIFEST = "Cargo.toml"

# rgpu-libm (package `libm`, never published) is libm's interface on the GPU's
# instructions, patched in by the nvptx kernel build only (codegens/nvptx.py).
CRATES = ("rgpu", "rgpu-macros", "rgpu-runtime", "rgpu-primitives", "rgpu-libm")
# The vendored crates a workspace names in [workspace.dependencies] (`rgpu`, and
# `rgpu-primitives` once a kernel crate uses it): `rgpu vendor` moves each one it finds.
DEPENDENCIES = ("rgpu", "rgpu-primitives")
SKIP = {"target", "Cargo.lock", ".gitignore", "tests", "examples"}


def vendor_dir(version: str = __version__) -> str:
    """The vendored crates' directory, relative to the workspace root."""
    return f"vendor/rgpu-{version}"


def rgpu_dependency(version: str = __version__, crate: str = "rgpu") -> dict[str, str]:
    """[workspace.dependencies] rgpu (or another vendored crate) for the vendored crates."""
    return {"version": f"={version}", "path": f"{vendor_dir(version)}/{crate}"}


def crates_source() -> Path:
    return data_dir("crates")


def _files(crate: Path) -> list[Path]:
    out = []
    for path in sorted(crate.rglob("*")):
        rel = path.relative_to(crate)
        if rel.parts[0] in SKIP or "__pycache__" in rel.parts:
            continue
        if path.is_file():
            out.append(rel)
    return out


def crate_files(version: str = __version__) -> dict[str, bytes]:
    """The crates to vendor: each file's path relative to the workspace root, its bytes."""
    source = crates_source()
    base = vendor_dir(version)
    return {
        f"{base}/{name}/{rel.as_posix()}": (source / name / rel).read_bytes()
        for name in CRATES
        for rel in _files(source / name)
    }


def vendor_files(root: Path) -> list[str]:
    """Copy the crates under `root/vendor/rgpu-<version>/`; return the relative paths."""
    files = crate_files()
    for rel, data in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    match_times(root)
    return list(files)


def match_times(root: Path, version: str = __version__) -> None:
    """Give each vendored file that holds the packaged crate's bytes the packaged file's
    modification time, as `cp -p` would. Every workspace vendoring this rgpu then has the
    same crates at the same relative path with the same times, which is what lets cargo
    share their build in one CARGO_TARGET_DIR: it names path crates inside the workspace by
    their relative path, and compares the sources' times with its outputs' (a copy newer
    than the last build would compile them again). Best effort: a file that cannot be
    touched keeps its own time (it is then only rebuilt once)."""
    import os

    source = crates_source()
    base = root / vendor_dir(version)
    for name in CRATES:
        for rel in _files(source / name):
            packaged, copy = source / name / rel, base / name / rel
            try:
                if copy.is_file() and copy.read_bytes() == packaged.read_bytes():
                    st = packaged.stat()
                    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
            except OSError:
                continue


# -- `rgpu vendor` ------------------------------------------------------------------------


@dataclass(frozen=True)
class VendorPlan:
    root: Path
    changes: tuple[FileChange, ...]
    old_dirs: tuple[str, ...]  # other vendor/rgpu-* directories: no longer used

    @property
    def writes(self) -> bool:
        return any(c.word != "identical" for c in self.changes)


def plan_vendor(
    root: Path,
    manifest_text: str,
    files: Mapping[str, bytes],
    on_disk: Mapping[str, bytes | None],
    vendored: Sequence[str],
) -> VendorPlan:
    """Pure: rgpu's crates (``files``) under vendor/rgpu-<version>/ and [workspace.
    dependencies] rgpu (and rgpu-primitives, where the workspace has it) pointing at them
    (path and `version = "=<version>"`; its other keys kept). ``vendored``: the
    vendor/rgpu-* directories there now."""
    doc = toml_edit.parse(manifest_text, MANIFEST, COMMAND)
    workspace = toml_edit.child_table(doc, "workspace")
    section = toml_edit.child_table(workspace, "dependencies") if workspace is not None else None
    if section is None:
        raise ConfigError(
            f"{MANIFEST} [workspace.dependencies] is not a table",
            "make it a table: [workspace.dependencies]",
        )
    for crate in DEPENDENCIES:
        want = rgpu_dependency(crate=crate)
        current = section.get(crate)
        if toml_edit.is_table(current):
            for key, value in want.items():
                if toml_edit.plain(current.get(key)) != value:
                    current[key] = value
        elif crate == "rgpu":
            section[crate] = toml_edit.inline(want)
    changes = [FileChange(rel, data, on_disk.get(rel)) for rel, data in files.items()]
    changes.append(
        FileChange(
            MANIFEST,
            toml_edit.dumps(doc, MANIFEST).encode("utf-8"),
            manifest_text.encode("utf-8"),
        )
    )
    old = tuple(d for d in vendored if d != vendor_dir())
    return VendorPlan(root=root, changes=tuple(changes), old_dirs=old)


def plan_workspace(root: Path) -> VendorPlan:
    """Read the workspace at ``root`` and plan `rgpu vendor` for it."""
    # start-up: ~10 ms to import scaffold.project; only this path pays it
    from rgpu.scaffold.project import read_text

    manifest_text = read_text(root / MANIFEST, MANIFEST)
    files = crate_files()
    on_disk = {rel: (root / rel).read_bytes() if (root / rel).is_file() else None for rel in files}
    vendor = root / "vendor"
    vendored = sorted(
        f"vendor/{d.name}" for d in (vendor.iterdir() if vendor.is_dir() else [])
        if d.is_dir() and d.name.startswith("rgpu-")
    )  # fmt: skip
    return plan_vendor(root, manifest_text, files, on_disk, vendored)
