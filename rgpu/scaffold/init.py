"""`rgpu init`: turn an existing Cargo project into an rgpu workspace.

It adds a kernel crate (`kernel/` by default: `#![no_std]`, `rgpu::embed_kernels!()` and one
example kernel), vendors rgpu's crates, and edits Cargo.toml files round-trip: the root gets
`[workspace]` (members += the kernel crate, exclude += vendor), `[workspace.dependencies]
rgpu` and `[workspace.metadata.rgpu]`; each host package gets the kernel crate and `rgpu` as
dependencies and the features `cuda`, `wgpu`, `ash`, `webgpu` for plain
`cargo build --features cuda`.

Planning (`plan`) is pure: it works on what `gather` read (the project, the files to write
and what is on disk in their place) and returns every file's new content, or raises one
error listing every conflict; nothing is written until then. `apply` writes the plan
all-or-nothing (rgpu.scaffold.changes). Every edit only adds: run twice, the second run
finds everything identical.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu import __version__
from rgpu.errors import DestinationError, UsageError, did_you_mean
from rgpu.resources import templates_dir
from rgpu.scaffold import changes, toml_edit
from rgpu.scaffold import project as reading
from rgpu.scaffold.changes import FileChange
from rgpu.scaffold.manifest_edits import (
    COMMAND,
    DEFAULT_KERNEL,
    Conflict,
    conflict_error,
    edit_host,
    edit_workspace,
)
from rgpu.scaffold.naming import RUST_KEYWORDS
from rgpu.scaffold.project import MANIFEST, Package, Project
from rgpu.scaffold.vendor import crate_files, match_times, vendor_dir
from rgpu.util.files import absolute

KERNEL_TEMPLATE = "init"  # templates/init: the kernel crate (not a template for `rgpu new`)
RESERVED_DIRS = ("vendor", "target")
_DIR = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*\Z")
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")


@dataclass(frozen=True)
class Request:
    """What the command line asked for."""

    kernel: str | None = None  # --kernel DIR (None: the workspace's own, else `kernel`)
    hosts: tuple[str, ...] = ()  # --host PACKAGE...


@dataclass(frozen=True)
class Inputs:
    """Everything the plan is made from, read beforehand by `gather`."""

    project: Project
    kernel_dir: str
    kernel_files: Mapping[str, bytes]  # the new kernel crate, relative to its directory
    vendor_files: Mapping[str, bytes]  # rgpu's crates, relative to the root
    on_disk: Mapping[str, bytes | None]  # what is at each of those paths now
    kernel_dir_exists: bool


@dataclass(frozen=True)
class InitPlan:
    root: Path
    kernel_dir: str
    kernel_package: str
    kernel_key: str  # the hosts' name for the kernel crate: `kernel::NAME(&device, ...)`
    hosts: tuple[str, ...]
    changes: tuple[FileChange, ...]
    kept: tuple[str, ...] = ()  # files of the kernel crate that are the user's now
    binaries: tuple[str, ...] = ()

    @property
    def writes(self) -> bool:
        return any(c.word != "identical" for c in self.changes)


# -- the kernel crate's directory and names ---------------------------------------------


def existing_kernel(data: Mapping[str, Any]) -> str | None:
    """`kernel` of [workspace.metadata.rgpu], if the project has the table."""
    meta = data.get("workspace", {}).get("metadata", {}).get("rgpu")
    if not isinstance(meta, dict):
        return None
    kernel = meta.get("kernel", DEFAULT_KERNEL)
    return kernel if isinstance(kernel, str) else None


def kernel_dir_of(request: Request, data: Mapping[str, Any]) -> str:
    """The kernel crate's directory, relative to the root: --kernel, else the one the
    workspace names already, else `kernel`. A directory that cannot hold it is a UsageError."""
    raw = request.kernel if request.kernel is not None else existing_kernel(data)
    kernel = (raw or DEFAULT_KERNEL).strip().rstrip("/")
    if kernel.startswith("./"):
        kernel = kernel[2:]
    fix = "pass a directory inside the project, e.g. `--kernel kernel` or `--kernel gpu`"
    if not _DIR.match(kernel) or ".." in kernel.split("/"):
        raise UsageError(f"--kernel {raw!r} is not a directory inside the project", fix)
    if kernel.split("/")[0] in RESERVED_DIRS:
        raise UsageError(f"--kernel {kernel}: `{kernel.split('/')[0]}/` is rgpu's or cargo's", fix)
    key = posixpath.basename(kernel)
    ident = key.replace("-", "_")
    if not _IDENT.match(key) or ident in RUST_KEYWORDS or ident in ("rgpu", "std", "core"):
        raise UsageError(
            f"--kernel {kernel}: the host code names the kernel crate `{ident}` (the directory's "
            "name), which is not a usable crate name",
            "pick a directory whose name is a plain identifier, e.g. `--kernel gpu_kernels`",
        )
    return kernel


def kernel_names(project: Project, kernel_dir: str) -> tuple[str, str]:
    """(the kernel crate's package name, the hosts' dependency name for it)."""
    key = posixpath.basename(kernel_dir)
    return f"{project.name}-{key}", key


# -- reading ------------------------------------------------------------------------------


def gather(project: Project, request: Request) -> Inputs:
    """Read what the plan needs besides the project: the kernel crate's template, rgpu's
    crates, and what is on disk where they would go."""
    # start-up: ~15 ms to import scaffold.new; only this path pays it
    from rgpu.scaffold.new import render_files

    kernel_dir = kernel_dir_of(request, project.data)
    package, key = kernel_names(project, kernel_dir)
    context = {
        "project": project.name,
        "package": package,
        "key": key,
        "kernel_dir": kernel_dir,
        "rgpu_version": __version__,
    }
    kernel_files = render_files(templates_dir() / KERNEL_TEMPLATE / "kernel", context)
    vendor_files = crate_files()
    paths = [f"{kernel_dir}/{rel}" for rel in kernel_files] + list(vendor_files)
    on_disk = {rel: changes.on_disk(project.root / rel) for rel in paths}
    target = project.root / kernel_dir
    return Inputs(
        project=project,
        kernel_dir=kernel_dir,
        kernel_files=kernel_files,
        vendor_files=vendor_files,
        on_disk=on_disk,
        kernel_dir_exists=target.exists() or target.is_symlink(),
    )


# -- planning (pure) ----------------------------------------------------------------------


def plan(inputs: Inputs, request: Request) -> InitPlan:
    """Every file `rgpu init` writes, with its new content; one error for all conflicts."""
    project, kernel_dir = inputs.project, inputs.kernel_dir
    package, key = kernel_names(project, kernel_dir)
    conflicts: list[Conflict] = []
    own = _own_kernel(project, kernel_dir, package)
    if not own:
        conflicts += _kernel_conflicts(inputs, package)
    hosts = choose_hosts(project, request, package)
    docs: dict[str, Any] = {}

    def doc_of(pkg: Package | None) -> Any:
        rel = pkg.manifest if pkg is not None else MANIFEST
        if rel not in docs:
            text = pkg.text if pkg is not None else project.text
            docs[rel] = toml_edit.parse(text, rel, COMMAND)
        return docs[rel]

    for host in hosts:
        pkg = project.package(host)
        assert pkg is not None
        ours = {"package": package, "path": posixpath.relpath(kernel_dir, pkg.dir or ".")}
        conflicts += edit_host(doc_of(pkg), pkg.manifest, key, ours)
    binaries = project.binaries
    conflicts += edit_workspace(doc_of(project.root_package), kernel_dir, binaries)
    vendor_changes = [
        FileChange(rel, data, inputs.on_disk.get(rel)) for rel, data in inputs.vendor_files.items()
    ]
    differing = [c.path for c in vendor_changes if c.word == "change"]
    if differing:
        conflicts.append(
            Conflict(
                f"{vendor_dir()}/",
                f"exists with files that differ from rgpu {__version__}'s crates "
                f"(e.g. {differing[0]})",
                f"run `rgpu vendor` to rewrite them, or move {vendor_dir()} away",
                DestinationError,
            )
        )
    if conflicts:
        raise conflict_error(conflicts)
    kernel_changes: list[FileChange] = []
    kept: list[str] = []
    for rel, data in inputs.kernel_files.items():
        path = f"{kernel_dir}/{rel}"
        old = inputs.on_disk.get(path)
        if not own or old == data:
            kernel_changes.append(FileChange(path, data, old))
        elif old is not None:
            kept.append(path)
    manifest_changes = []
    for rel, doc in docs.items():
        old_text = project.text if rel == MANIFEST else _text_of(project, rel)
        manifest_changes.append(
            FileChange(rel, toml_edit.dumps(doc, rel).encode("utf-8"), old_text.encode("utf-8"))
        )
    return InitPlan(
        root=project.root,
        kernel_dir=kernel_dir,
        kernel_package=package,
        kernel_key=key,
        hosts=tuple(hosts),
        changes=(*kernel_changes, *vendor_changes, *manifest_changes),
        kept=tuple(kept),
        binaries=binaries,
    )


def _text_of(project: Project, manifest: str) -> str:
    return next(p.text for p in project.packages if p.manifest == manifest)


def _own_kernel(project: Project, kernel_dir: str, package: str) -> bool:
    """Whether the kernel crate is there from an earlier `rgpu init` (the workspace names it
    and it is the package rgpu would make): a second run leaves it to the user."""
    found = project.package(package)
    return (
        existing_kernel(project.data) == kernel_dir
        and found is not None
        and found.dir == kernel_dir
    )


def _kernel_conflicts(inputs: Inputs, package: str) -> list[Conflict]:
    kernel_dir = inputs.kernel_dir
    out = []
    if inputs.kernel_dir_exists:
        out.append(
            Conflict(
                f"{kernel_dir}/",
                "exists already (rgpu init creates the kernel crate there)",
                "pick another directory: `rgpu init --kernel OTHER` (e.g. `--kernel gpu`)",
                DestinationError,
            )
        )
    taken = inputs.project.package(package)
    if taken is not None:
        out.append(
            Conflict(
                f"{taken.manifest} [package] name",
                f'is "{package}", the name of the kernel crate rgpu init would create',
                "pick another kernel directory (the name follows it): `rgpu init --kernel OTHER`",
                DestinationError,
            )
        )
    return out


def choose_hosts(project: Project, request: Request, kernel_package: str) -> list[str]:
    """The packages that launch kernels: --host, else the root package, else every member
    with a binary, else every member."""
    candidates = [p for p in project.packages if p.name != kernel_package]
    names = [p.name for p in candidates]
    if request.hosts:
        for name in request.hosts:
            if name not in names:
                raise UsageError(
                    f"--host {name}: no such package in the project{did_you_mean(name, names)}",
                    f"packages: {', '.join(names) or 'none'}",
                )
        return list(dict.fromkeys(request.hosts))
    if project.root_package is not None:
        return [project.root_package.name]
    with_binaries = [p.name for p in candidates if p.binaries]
    return with_binaries or names


# -- the command --------------------------------------------------------------------------


def plan_project(directory: Path, request: Request) -> InitPlan:
    """Read the project in ``directory`` and plan `rgpu init` for it (nothing is written)."""
    # start-up: ~24 ms to import scaffold.new; only this path pays it
    from rgpu.scaffold.new import check_utf8

    root = absolute(directory)
    check_utf8(root)
    found = reading.read(root)
    return plan(gather(found, request), request)


def apply(init_plan: InitPlan) -> None:
    """Write the plan all-or-nothing (Ctrl-C undoes every write made so far)."""
    changes.write(init_plan.root, init_plan.changes, COMMAND)
    match_times(init_plan.root)
