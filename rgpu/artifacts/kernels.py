"""The workspace's kernels: the `#[rgpu::kernel]` functions of its kernel crate and of the
crates it depends on that hold kernels (a library of kernels: a path dependency, a crate
vendored into the workspace, a published crate).

The macro says what is a kernel. Every `#[rgpu::kernel]` expansion has, on every target, an
empty private module `__rgpu_kernel_<name>` (its mark: crates/rgpu-macros/src/expand.rs),
and rustc writes that name into the crate's metadata (`.rmeta`). rgpu runs `cargo check`
of the kernel crate for this machine (`check_argv`; the cpu backend compiles the same crate
for the same target, and the macro's reading of a function does not depend on the codegen):
cargo's JSON messages name the metadata file of every crate of the kernel crate's normal
dependency graph, checked again or up to date (an incremental build leaves a crate cargo
did not recompile with the file, and the marks, of its last check), and `marks` reads the
kernel names from each. A kernel made by a `macro_rules!` macro is listed; an example in a
comment or a string is not (no mark: the macro never ran on it). In the metadata an
identifier is its length (LEB128) then its bytes, so a mark is read only where that length
precedes it (a doc comment or a longer string that mentions one is not; a string constant
that is exactly a mark, `"__rgpu_kernel_x"`, is the one thing that reads as one).

Which crates (`check`, `from_messages`): the kernel crate, then every other crate whose
metadata has marks, by package name (rgpu's own crates, which declare no kernels, are not
read). kernel_build.listed_crates keeps the list with a stamp, so that a build whose
sources did not change starts no cargo for it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.errors import CommandFailedError, ConfigError
from rgpu.util import cmd
from rgpu.workspace import Workspace, load_toml

MARK = b"__rgpu_kernel_"
OWN_CRATES = ("rgpu", "rgpu-macros", "rgpu-runtime")
_IDENT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _leb128(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def marks(metadata: bytes) -> tuple[str, ...]:
    """The kernels whose marks a crate's metadata holds, sorted and unique."""
    found: set[str] = set()
    at = metadata.find(MARK)
    while at >= 0:
        end = at + len(MARK)
        while end < len(metadata) and metadata[end] in _IDENT:
            end += 1
        prefix = _leb128(end - at)
        if end > at + len(MARK) and metadata[max(0, at - len(prefix)) : at] == prefix:
            found.add(metadata[at + len(MARK) : end].decode("ascii"))
        at = metadata.find(MARK, end)
    return tuple(sorted(found))


class KernelCrate(NamedTuple):
    """A crate that holds kernels: the workspace's kernel crate or one it depends on."""

    package: str  # cargo's package name
    src_dir: Path  # the directory of its library's root file
    manifest: Path  # its Cargo.toml
    outside: bool  # outside the workspace's directory (a registry crate, a path elsewhere)
    kernels: tuple[str, ...]  # its `#[rgpu::kernel]`s, from its metadata (`marks`)


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


def check_argv(ws: Workspace) -> list[str]:
    """`cargo check` of the kernel crate's library for this machine, with JSON messages."""
    return [
        "cargo",
        "check",
        "--lib",
        "--package",
        ws.kernel_package,
        "--message-format=json",
    ]


def _records(lines: Iterable[str]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for line in lines:
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def _package(manifest: Path) -> str | None:
    try:
        name = load_toml(manifest).get("package", {}).get("name")
    except (OSError, ValueError):
        return None
    return name if isinstance(name, str) else None


def from_messages(lines: Iterable[str], root: Path, kernel_package: str) -> tuple[KernelCrate, ...]:
    """The crates holding kernels, from `cargo check`'s JSON messages (`check_argv`): the
    kernel crate first (also without kernels), then each crate whose metadata has marks."""
    resolved_root = root.resolve()
    first = KernelCrate(kernel_package, root, root / "Cargo.toml", False, ())
    libraries: list[KernelCrate] = []
    for record in _records(lines):
        if record.get("reason") != "compiler-artifact":
            continue
        if "proc-macro" in ((record.get("target") or {}).get("kind") or []):
            continue
        manifest = Path(str(record.get("manifest_path", "")))
        package = _package(manifest)
        if package is None or package in OWN_CRATES:
            continue
        names: set[str] = set()
        for file in record.get("filenames") or []:
            if str(file).endswith(".rmeta"):
                try:
                    names.update(marks(Path(file).read_bytes()))
                except OSError:
                    continue
        target = record.get("target") or {}
        src = Path(str(target.get("src_path", manifest.parent / "src" / "lib.rs")))
        outside = not manifest.resolve().is_relative_to(resolved_root)
        crate = KernelCrate(package, src.parent, manifest, outside, tuple(sorted(names)))
        if package == kernel_package:
            first = crate
        elif names:
            libraries.append(crate)
    return (first, *sorted(libraries, key=lambda c: c.package))


def metadata_files(lines: Iterable[str]) -> tuple[Path, ...]:
    """Every metadata file cargo's JSON messages name (what the kernels' list is read from)."""
    return tuple(
        Path(str(f))
        for r in _records(lines)
        if r.get("reason") == "compiler-artifact"
        for f in r.get("filenames") or []
        if str(f).endswith(".rmeta")
    )


def manifests(lines: Iterable[str]) -> tuple[Path, ...]:
    """The Cargo.toml of every package cargo's JSON messages name (a path dependency's, out
    of the workspace too: a dependency added there changes the list)."""
    found = [
        Path(str(r["manifest_path"]))
        for r in _records(lines)
        if r.get("reason") == "compiler-artifact" and r.get("manifest_path")
    ]
    return tuple(dict.fromkeys(found))


class Checked(NamedTuple):
    crates: tuple[KernelCrate, ...]
    metadata: tuple[Path, ...]  # the files read: what a stamp of the list watches
    manifests: tuple[Path, ...]  # and the packages' Cargo.toml files


def check(ws: Workspace, env: Mapping[str, str]) -> Checked:
    """The crates holding kernels, from `cargo check` of the kernel crate (`check_argv`):
    cheap when nothing changed (cargo finds every crate fresh), and the same answer for
    every codegen. A crate that does not compile stops here, with cargo's errors."""
    result = cmd.run(check_argv(ws), cwd=ws.root, env=dict(env), capture=True, check=False)
    lines = result.stdout.splitlines()
    if result.returncode != 0:
        errors = [
            str((r.get("message") or {}).get("rendered") or "").rstrip()
            for r in _records(lines)
            if r.get("reason") == "compiler-message"
            and (r.get("message") or {}).get("level") == "error"
        ]
        shown = "\n".join(e for e in errors if e) or result.stderr.strip()
        raise CommandFailedError(
            f"`{cmd.format_argv(check_argv(ws))}` failed (exit code {result.returncode}): "
            f"rgpu reads the kernels' list from it\n{shown}",
            "fix the errors cargo reports (above), then build again",
            returncode=result.returncode,
        )
    crates = from_messages(lines, ws.root, ws.kernel_package)
    return Checked(crates, metadata_files(lines), manifests(lines))


def to_json(crates: Sequence[KernelCrate]) -> str:
    rows = [
        {"package": c.package, "src_dir": str(c.src_dir), "manifest": str(c.manifest),
         "outside": c.outside, "kernels": list(c.kernels)}
        for c in crates
    ]  # fmt: skip
    return json.dumps({"version": 1, "crates": rows}, indent=1) + "\n"


def from_json(text: str) -> tuple[KernelCrate, ...] | None:
    """`to_json`'s crates; None for anything else."""
    try:
        data = json.loads(text)
        if data.get("version") != 1:
            return None
        return tuple(
            KernelCrate(str(c["package"]), Path(c["src_dir"]), Path(c["manifest"]),
                        bool(c["outside"]), tuple(str(k) for k in c["kernels"]))
            for c in data["crates"]
        ) or None  # fmt: skip
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


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
