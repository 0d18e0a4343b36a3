"""What `rgpu init` reads of an existing Cargo project before it plans anything: the root
Cargo.toml, the workspace members' manifests and each package's binaries. Reading only;
`init` plans from this snapshot without touching the disk.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.errors import ConfigError, DestinationError

MANIFEST = "Cargo.toml"


@dataclass(frozen=True)
class Package:
    name: str
    dir: str  # relative to the project root, POSIX; "" for the root package
    text: str  # its Cargo.toml
    binaries: tuple[str, ...]

    @property
    def manifest(self) -> str:
        return f"{self.dir}/{MANIFEST}" if self.dir else MANIFEST


@dataclass(frozen=True)
class Project:
    root: Path
    text: str  # the root Cargo.toml
    data: dict[str, Any]  # the same, parsed
    packages: tuple[Package, ...]  # the root package first, if there is one

    @property
    def root_package(self) -> Package | None:
        return self.packages[0] if self.packages and self.packages[0].dir == "" else None

    @property
    def name(self) -> str:
        """The project's name: the root package's, else the directory's (as a crate name)."""
        if self.root_package is not None:
            return self.root_package.name
        name = re.sub(r"[^a-z0-9_-]+", "-", self.root.name.lower()).strip("-_")
        return name if name[:1].isalpha() else f"project-{name}".rstrip("-")

    @property
    def binaries(self) -> tuple[str, ...]:
        return tuple(b for p in self.packages for b in p.binaries)

    def package(self, name: str) -> Package | None:
        return next((p for p in self.packages if p.name == name), None)


def read_text(path: Path, shown_as: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{shown_as} is not UTF-8 text", f"fix the encoding of {shown_as}"
        ) from None
    except OSError as exc:
        raise DestinationError(
            f"cannot read {shown_as}: {exc.strerror or exc}", "check its permissions"
        ) from exc


def load(text: str, shown_as: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{shown_as} is not valid TOML: {exc}",
            f"fix the syntax in {shown_as} (cargo refuses it too), then run `rgpu init` again",
        ) from None


def read(root: Path) -> Project:
    """Read the Cargo project in ``root`` (not its parents)."""
    if not root.is_dir():
        raise DestinationError(
            f"{root} is not a directory", "pass the Cargo project's directory with -C DIR"
        )
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise DestinationError(
            f"{root} is not a Cargo project (no {MANIFEST})",
            "make it one first (`cargo init`), or create a new rgpu workspace with `rgpu new NAME`",
        )
    _refuse_member_of_outer_workspace(root)
    text = read_text(manifest, MANIFEST)
    data = load(text, MANIFEST)
    if not isinstance(data.get("package"), dict) and not isinstance(data.get("workspace"), dict):
        raise ConfigError(
            f"{MANIFEST} has neither [package] nor [workspace]",
            "make it a package (`cargo init`) or a workspace ([workspace] members = [...])",
        )
    packages: list[Package] = []
    if isinstance(data.get("package"), dict):
        packages.append(_package(root, "", text, data))
    workspace = data.get("workspace")
    if isinstance(workspace, dict):
        for rel in member_dirs(root, workspace):
            member_text = read_text(root / rel / MANIFEST, f"{rel}/{MANIFEST}")
            member = load(member_text, f"{rel}/{MANIFEST}")
            if isinstance(member.get("package"), dict):
                packages.append(_package(root, rel, member_text, member))
    return Project(root=root, text=text, data=data, packages=tuple(packages))


def _refuse_member_of_outer_workspace(root: Path) -> None:
    for directory in root.resolve().parents:
        manifest = directory / MANIFEST
        if not manifest.is_file():
            continue
        try:
            outer = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        workspace = outer.get("workspace")
        if isinstance(workspace, dict):
            rel = root.resolve().relative_to(directory).as_posix()
            excludes = [e.strip("/") for e in workspace.get("exclude", []) if isinstance(e, str)]
            if any(rel == e or rel.startswith(f"{e}/") for e in excludes):
                return  # excluded from it: a workspace of its own
            raise ConfigError(
                f"{root} is inside the Cargo workspace of {manifest}",
                f"run `rgpu init -C {directory}` to add rgpu to that workspace",
            )


def member_dirs(root: Path, workspace: dict[str, Any]) -> list[str]:
    """The directories `members` names (globs expanded) that hold a Cargo.toml, minus
    `exclude`, relative to ``root``; in order, without duplicates."""
    members = workspace.get("members", [])
    excludes = [e.strip("/") for e in workspace.get("exclude", []) if isinstance(e, str)]
    found: list[str] = []
    for pattern in members if isinstance(members, list) else []:
        if not isinstance(pattern, str):
            continue
        matches = sorted(root.glob(pattern)) if any(c in pattern for c in "*?[") else [
            root / pattern
        ]  # fmt: skip
        for path in matches:
            if not (path / MANIFEST).is_file():
                continue
            rel = path.resolve().relative_to(root.resolve()).as_posix()
            if rel == "." or any(rel == e or rel.startswith(f"{e}/") for e in excludes):
                continue
            found.append(rel)
    return list(dict.fromkeys(found))


def _package(root: Path, rel: str, text: str, data: dict[str, Any]) -> Package:
    shown_as = f"{rel}/{MANIFEST}" if rel else MANIFEST
    name = data["package"].get("name")
    if not isinstance(name, str):
        raise ConfigError(f"{shown_as} has no [package] name", f"add `name = ...` to {shown_as}")
    return Package(name=name, dir=rel, text=text, binaries=binaries(root / rel, name, data))


def binaries(directory: Path, name: str, data: dict[str, Any]) -> tuple[str, ...]:
    """The package's binary targets, as cargo finds them: [[bin]] tables, and unless
    `autobins = false`, src/main.rs (named like the package) and src/bin/*."""
    names: list[str] = []
    explicit_paths: set[str] = set()
    for table in data.get("bin", []) if isinstance(data.get("bin"), list) else []:
        if isinstance(table, dict) and isinstance(table.get("name"), str):
            names.append(table["name"])
            if isinstance(table.get("path"), str):
                explicit_paths.add(Path(table["path"]).as_posix())
    if data["package"].get("autobins", True) is not False:
        if (directory / "src" / "main.rs").is_file() and "src/main.rs" not in explicit_paths:
            names.append(name)
        bin_dir = directory / "src" / "bin"
        if bin_dir.is_dir():
            for path in sorted(bin_dir.iterdir()):
                if path.suffix == ".rs" and path.is_file():
                    names.append(path.stem)
                elif (path / "main.rs").is_file():
                    names.append(path.name)
    return tuple(dict.fromkeys(names))
