"""Portability checked at build time: each kernel's SPIR-V through naga for WebGPU, Metal, DX12.

Where wgpu has no SPIR-V passthrough (Metal, DirectX 12, WebGPU in a browser) it hands the
SPIR-V to naga, which writes MSL, HLSL or WGSL. rgpu does the same at build time, with
rgpu-naga (toolchains/naga.py) on the naga version wgpu uses: per kernel, per platform, a
file next to the .spv in target/rgpu/kernels/ (`<module stem>.<kernel>.wgsl|.metal|.hlsl`,
manifest kinds "wgsl", "msl", "hlsl") or naga's message. naga's validator at the platform's
capabilities is the whole check: MSL and HLSL are never compiled by Apple's or Microsoft's
compilers here, nor run.

The WGSL contract (what the WebGPU host binds): buffer i is `@group(0) @binding(i)`, the
params block is a read-only storage buffer at `@group(0) @binding(<the kernel's number of
buffers>)`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.errors import ArtifactError
from rgpu.util import cmd
from rgpu.util.files import write_bytes_if_changed

# platform key -> (display name, manifest kind)
PLATFORMS: dict[str, tuple[str, str]] = {
    "webgpu": ("WebGPU", "wgsl"),
    "metal": ("Metal", "msl"),
    "dx12": ("DirectX 12", "hlsl"),
}
CHECKED_BY = {
    "webgpu": "naga's validator at WebGPU's capabilities (with the subgroups and shader-f16 "
    "features)",
    "metal": "naga's validator at Metal's capabilities (MSL 2.4); never compiled by Apple's "
    "compiler or run",
    "dx12": "naga's validator at DX12's capabilities (shader model 6.0); never compiled by "
    "DXC or run",
}


@dataclass(frozen=True)
class Outcome:
    """One kernel on one platform: the file naga wrote, or why it could not."""

    kernel: str
    platform: str
    file: str | None  # relative to the report's directory
    message: str | None
    buffers: int | None

    @property
    def ok(self) -> bool:
        return self.file is not None


@dataclass(frozen=True)
class Finding:
    """A kernel that will not run on a platform, as rgpu reports it."""

    kernel: str
    platform: str
    message: str  # naga's
    change: str  # what to change
    construct: str | None = None  # what the platform lacks ("f64"), when naga names it
    source: str | None = None  # where the kernel uses it (file:line:column), when found
    at: str | None = None  # where the kernel is written (file:line)
    # The package that declares the kernel, when it is a library the kernel crate depends
    # on (None: the kernel crate's own).
    crate: str | None = None

    def line(self) -> str:
        name = PLATFORMS[self.platform][0]
        kernel = f"`{self.kernel}`" + (f" ({self.at})" if self.at else "")
        if self.crate:
            kernel += f" (from {self.crate})"
        if self.construct is None:
            return f"{kernel} will not run on {name}: {self.message} ({self.change})"
        where = f" at {self.source}" if self.source else ""
        return (
            f"{kernel} will not run on {name}: it uses {self.construct}{where}; "
            f"{self.change} (naga: {self.message})"
        )

    def to_dict(self) -> dict[str, str]:
        found = {
            "kernel": self.kernel,
            "platform": self.platform,
            "message": self.message,
            "change": self.change,
        }
        for key in ("construct", "source", "at", "crate"):
            value = getattr(self, key)
            if value is not None:
                found[key] = value
        return found


def parse_report(text: str, kernels: Sequence[str]) -> tuple[str, list[Outcome]]:
    """rgpu-naga's JSON report -> (naga version, one Outcome per kernel and platform). A
    kernel cargo-gpu listed but the report lacks fails everywhere."""
    try:
        data = json.loads(text)
        version = str(data["naga"])
        outcomes: list[Outcome] = []
        seen: set[str] = set()
        for entry in data["kernels"]:
            name = str(entry["name"])
            seen.add(name)
            buffers = entry.get("buffers")
            for platform in PLATFORMS:
                result = entry["platforms"][platform]
                ok = bool(result["ok"])
                outcomes.append(
                    Outcome(
                        kernel=name,
                        platform=platform,
                        file=str(result["file"]) if ok else None,
                        message=None if ok else str(result["message"]),
                        buffers=None if buffers is None else int(buffers),
                    )
                )
    except (ValueError, KeyError, TypeError) as exc:
        raise ArtifactError(
            f"rgpu-naga's report is not what rgpu expects: {exc}",
            "reinstall it: delete the rgpu-naga directory in rgpu's cache (~/.cache/rgpu) "
            "and run the same rgpu build again",
        ) from exc
    for name in kernels:
        if name not in seen:
            outcomes += [
                Outcome(name, p, None, "rgpu-naga did not report this kernel", None)
                for p in PLATFORMS
            ]
    return version, outcomes


# What rgpu says for a kernel naga would translate with its atomics' orderings dropped.
ORDERINGS = (
    "naga translates atomics without their memory orderings (its SPIR-V reader ignores the "
    "semantics; WGSL's, MSL's and HLSL's atomics are relaxed), so this kernel's acquire/"
    "release atomics would run relaxed there"
)


def weakened(outcomes: Sequence[Outcome], raw: Path | None) -> list[Outcome]:
    """``outcomes`` with each kernel that has ordered atomics (rust-gpu's module ``raw``,
    spirv.sources.Sources.ordered_atomics) refused where naga translated it: naga would
    run its acquire/release atomics relaxed, a silently different program."""
    # start-up: ~31 ms to import spirv.sources; only this path pays it
    from rgpu.spirv.sources import Sources

    if raw is None or not any(o.ok for o in outcomes):
        return list(outcomes)
    try:
        sources = Sources(raw.read_bytes())
    except (OSError, ValueError):
        return list(outcomes)
    ordered = {k for k in {o.kernel for o in outcomes} if sources.ordered_atomics(k)}
    return [
        Outcome(o.kernel, o.platform, None, ORDERINGS, o.buffers)
        if o.ok and o.kernel in ordered
        else o
        for o in outcomes
    ]


def change_for(platform: str, message: str, kept: str | None = None) -> str:
    """What to change in a kernel that naga cannot take to ``platform``, from naga's text
    (``kept``: why rgpu left the module's 8/16-bit memory as it was, when it did)."""
    name = PLATFORMS[platform][0]
    lower = message.lower()
    if "float64" in lower or "f64" in lower or ("width 8" in lower and "float" in lower):
        return f"{name} has no f64: use f32 in kernels that must run there"
    if "scalar width 1" in lower or "width 1" in lower or "int8" in lower:
        why = f" ({kept})" if kept else ""
        return (
            f"{name} has no 8-bit integers, and rgpu could not move this module's 8-bit "
            f"memory into 32-bit words{why}: use u32 words there, or report the kernel"
        )
    if "memory orderings" in lower:
        return (
            f"{name} has no acquire/release atomics: run the kernel on CUDA or Vulkan, or "
            f"leave {name} out of require-platforms (the relaxed `atomic_*` methods port)"
        )
    if "shader_float32_atomic" in lower:
        return f"{name} has no f32 atomics: accumulate in u32/i32 (fixed point) there"
    if "int16" in lower or "width 2" in lower:
        return f"{name} has no 16-bit integers: use u32"
    if "int64" in lower or ("width 8" in lower and "int" in lower):
        return f"{name} has no 64-bit integers: use u32 pairs"
    if "cannot read the spir-v" in lower:
        return (
            "naga's SPIR-V reader rejects the module, and wgpu uses the same reader on "
            "Metal, DX12 and in browsers: change the construct naga names"
        )
    if "reader panicked" in lower:
        return (
            f"naga's SPIR-V reader (wgpu's on {name}) crashed on the module, a naga bug that "
            f"rgpu's build does not rewrite yet: report the kernel to rgpu, or leave {name} "
            "out of require-platforms"
        )
    return f"change what naga names, or leave {name} out of require-platforms"


def findings(outcomes: Iterable[Outcome]) -> list[Finding]:
    return [
        Finding(o.kernel, o.platform, o.message or "", change_for(o.platform, o.message or ""))
        for o in outcomes
        if not o.ok
    ]


def findings_of(
    artifacts: Iterable[Any], libraries: Mapping[str, str] | None = None
) -> list[Finding]:
    """The findings recorded in manifest artifacts' `extra` (SPIR-V modules): `portability`
    {kernel: {platform: "ok" | naga's message}}, `sources` {kernel: {"at": file:line,
    platform: {"construct", "source"}}} and `narrow_memory` {"kept": why or None};
    ``libraries``: kernel -> the library crate that declares it (the kernel crate's own
    kernels are not in it)."""
    libraries = libraries or {}
    found: list[Finding] = []
    for artifact in artifacts:
        table = artifact.extra.get("portability")
        if not isinstance(table, Mapping):
            continue
        sources = artifact.extra.get("sources")
        sources = sources if isinstance(sources, Mapping) else {}
        narrow = artifact.extra.get("narrow_memory")
        kept = narrow.get("kept") if isinstance(narrow, Mapping) else None
        for kernel, platforms in sorted(table.items()):
            places = sources.get(kernel, {})
            for platform in PLATFORMS:
                message = platforms.get(platform, "not checked")
                if message == "ok":
                    continue
                place = places.get(platform, {})
                found.append(
                    Finding(
                        kernel,
                        platform,
                        message,
                        change_for(platform, message, kept if isinstance(kept, str) else None),
                        construct=place.get("construct"),
                        source=place.get("source"),
                        at=places.get("at"),
                        crate=libraries.get(kernel),
                    )
                )
    return found


def locate(outcomes: Iterable[Outcome], raw: Path, root: Path) -> dict[str, dict[str, Any]]:
    """{kernel: {"at": where it is written, platform: {"construct", "source"}, "rounding":
    where it first does float arithmetic}} from rust-gpu's module as cargo-gpu wrote it
    (``raw``, with its OpLine debug lines; spirv/sources.py), paths relative to ``root``:
    "at" and the platforms for the kernels naga refused somewhere, "rounding" for those
    with float arithmetic that reach a platform (ROUNDING says why: "" when no line says
    where)."""
    # start-up: ~36 ms to import spirv.sources; only this path pays it
    from rgpu.spirv.sources import Sources, construct_of

    outcomes = list(outcomes)
    if not outcomes:
        return {}
    try:
        sources = Sources(raw.read_bytes())
    except (OSError, ValueError):
        return {}
    found: dict[str, dict[str, Any]] = {}
    for o in outcomes:
        if o.ok:
            continue
        entry = found.setdefault(o.kernel, {})
        if "at" not in entry:
            at = sources.kernel(o.kernel)
            if at is not None:
                entry["at"] = at.text(root)
        construct = construct_of(o.message or "")
        if construct is not None:
            place = construct.find(sources, o.kernel)
            entry[o.platform] = {
                "construct": construct.name,
                **({"source": place.text(root)} if place is not None else {}),
            }
    for kernel in sorted({o.kernel for o in outcomes if o.ok}):
        floats = sources.float_arithmetic(kernel)
        if floats is not False:
            found.setdefault(kernel, {})["rounding"] = "" if floats is True else floats.text(root)
    return found


# Why a kernel's float results may differ on the naga platforms (docs/reference.md, naga 30).
ROUNDING = (
    "float results may differ from the cpu's, CUDA's and Vulkan's in the last bits there: "
    "naga keeps no NoContraction, and WGSL and Metal's default fast math let the shader "
    "compiler fuse and reorder float operations"
)


def rounding_of(
    artifacts: Iterable[Any], libraries: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """(kernel, where it first does float arithmetic, or "") for each kernel of the
    manifest artifacts' `sources` that has a "rounding" entry; a library's kernels are
    named with their crate (``libraries``: kernel -> crate)."""
    libraries = libraries or {}
    found: list[tuple[str, str]] = []
    for artifact in artifacts:
        sources = artifact.extra.get("sources")
        if not isinstance(sources, Mapping):
            continue
        for kernel, entry in sorted(sources.items()):
            if isinstance(entry, Mapping) and isinstance(entry.get("rounding"), str):
                name = kernel + (f" (from {libraries[kernel]})" if kernel in libraries else "")
                found.append((name, entry["rounding"]))
    return found


def rounding_line(kernels: Sequence[tuple[str, str]], platforms: Iterable[str]) -> str | None:
    """One note for the kernels with float arithmetic on the naga platforms of `platforms`
    (none of those, or no such kernel: None)."""
    wanted = set(platforms)
    names = [PLATFORMS[p][0] for p in PLATFORMS if p in wanted]
    if not kernels or not names:
        return None
    shown = ", ".join(f"`{k}`" + (f" ({where})" if where else "") for k, where in kernels[:5])
    more = f" and {len(kernels) - 5} more" if len(kernels) > 5 else ""
    which = f"{len(kernels)} kernel(s) do float arithmetic ({shown}{more})"
    return f"on {' / '.join(names)}, {which}: {ROUNDING}"


def table_of(outcomes: Iterable[Outcome]) -> dict[str, dict[str, str]]:
    """{kernel: {platform: "ok" | message}}: what the SPIR-V artifact's manifest entry keeps."""
    table: dict[str, dict[str, str]] = {}
    for o in outcomes:
        table.setdefault(o.kernel, {})[o.platform] = "ok" if o.ok else (o.message or "")
    return table


def required_failures(found: Iterable[Finding], required: Iterable[str]) -> list[Finding]:
    wanted = set(required)
    return [f for f in found if f.platform in wanted]


def require(found: Sequence[Finding], required: Sequence[str]) -> None:
    """An error when a kernel cannot reach a platform the project requires."""
    failed = required_failures(found, required)
    if not failed:
        return
    lines = "; ".join(f.line() for f in failed)
    raise ArtifactError(
        f"{len(failed)} kernel translation(s) failed for required platforms: {lines}",
        "change the kernels as each line says, or drop the platform from "
        "[workspace.metadata.rgpu] require-platforms / --require-platform",
    )


def describe_outputs(
    outcomes: Iterable[Outcome], staging: Path, base: Path, *, module: str, naga: str,
    codegen: str, source: str = "built",
) -> list[Any]:  # fmt: skip
    """Copy the files naga wrote from ``staging`` into ``base`` (only those that changed)
    and describe each as a manifest artifact of kind wgsl/msl/hlsl."""
    # start-up: ~25 ms to import artifacts.manifest; only this path pays it
    from rgpu.artifacts import manifest

    found = []
    for o in outcomes:
        if o.file is None:
            continue
        dest = base / Path(module).parent / o.file
        write_bytes_if_changed(dest, (staging / o.file).read_bytes())
        extra: dict[str, Any] = {
            "naga": naga,
            "module": module,
            "buffers": o.buffers,
            "validated": CHECKED_BY[o.platform],
        }
        if o.platform == "webgpu":
            extra["params_binding"] = o.buffers
        found.append(
            manifest.describe(
                dest,
                base,
                kind=PLATFORMS[o.platform][1],
                codegen=codegen,
                target=o.platform,
                entry_points=[o.kernel],
                source=source,
                extra=extra,
            )
        )
    return found


@dataclass(frozen=True)
class Checked:
    """One SPIR-V module's portability check: the translated files as artifacts, and the
    {kernel: {platform: "ok" | message}} table its own manifest entry keeps."""

    artifacts: list[Any]
    table: dict[str, dict[str, str]]
    naga: str
    sources: dict[str, dict[str, Any]]  # where each refused kernel uses what (locate)


def check(
    spv: Path,
    kernels: Sequence[str],
    translator: Path,
    staging: Path,
    base: Path,
    *,
    codegen: str,
    source: str = "built",
    raw: Path | None = None,
    root: Path | None = None,
) -> Checked:
    """Run rgpu-naga on ``spv`` (already copied under ``base``) for ``kernels``; with
    ``raw`` (rust-gpu's module with its debug lines), say where each refused kernel uses
    what the platform lacks, paths relative to ``root``."""
    import shutil

    if staging.exists():
        shutil.rmtree(staging)
    argv = [str(translator), "--spv", str(spv), "--out-dir", str(staging)]
    for kernel in kernels:
        argv += ["--kernel", kernel]
    result = cmd.run(argv, capture=True, check=False, echo=False)
    if result.returncode != 0:
        raise ArtifactError(
            f"rgpu-naga could not check {spv}: {cmd.error_line(result.stderr, result.returncode)}",
            f"run it by hand to see more: `{cmd.format_argv(argv)}`",
        )
    naga, outcomes = parse_report(result.stdout, kernels)
    outcomes = weakened(outcomes, raw)
    module = spv.relative_to(base).as_posix()
    artifacts = describe_outputs(
        outcomes, staging, base, module=module, naga=naga, codegen=codegen, source=source
    )
    sources = locate(outcomes, raw, root or raw.parent) if raw is not None else {}
    return Checked(artifacts=artifacts, table=table_of(outcomes), naga=naga, sources=sources)
