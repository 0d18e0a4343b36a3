"""PTX: what a PTX file says about itself (`.version`, `.target`, `.entry`),
and the one check every PTX gets before it is embedded (built or given with
--kernel-artifact): it is PTX, its target is an arch rgpu knows and was asked for, and ptxas
assembles it."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from rgpu.cuda_archs import Arch
from rgpu.errors import ArtifactError, UsageError
from rgpu.util import cmd

# What reads PTX text is compiled on first use (re caches it): a no-op build reads none.
_ENTRY_HEAD = r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+"
_ENTRY = _ENTRY_HEAD + r"([A-Za-z_$][\w$]*)"
_TARGET = r"^\s*\.target\s+(\S+?)\s*(?:,|$)"
_VERSION = r"^\s*\.version\s+(\d+\.\d+)"
_SHARED = r"^\s*\.shared\s"


def entry_points(text: str) -> tuple[str, ...]:
    return tuple(re.findall(_ENTRY, text, re.M))


def target_of(text: str) -> str | None:
    match = re.search(_TARGET, text, re.M)
    return match.group(1) if match else None


def isa_version(text: str) -> str | None:
    match = re.search(_VERSION, text, re.M)
    return match.group(1) if match else None


def declares_shared(text: str) -> bool:
    return bool(re.search(_SHARED, text, re.M))


# `// rgpu-entry-directive NAME DIRECTIVE`: a line the kernel macro puts in the module's PTX
# (`#[rgpu::kernel(registers = 64)]` -> `.maxnreg 64`), since rustc has no attribute for a
# PTX entry's performance directives.
_ENTRY_DIRECTIVE = (
    r"^\s*// rgpu-entry-directive ([A-Za-z_$][\w$]*) "
    r"(\.(?:maxnreg|maxntid|minnctapersm|reqntid) [\d, ]+)$"
)


def entry_directives(text: str) -> str:
    """`text` with each `rgpu-entry-directive` line's directive placed in its entry's header
    (after the parameter list, where PTX puts `.maxnreg`); unchanged without such lines. A
    line naming no entry of the module is an ArtifactError (the macro and the PTX disagree)."""
    wanted: dict[str, list[str]] = {}
    for name, directive in re.findall(_ENTRY_DIRECTIVE, text, re.M):
        wanted.setdefault(name, []).append(directive.strip())
    for name, directives in wanted.items():
        header = re.search(
            _ENTRY_HEAD + rf"{re.escape(name)}\s*\([^)]*\)[^\n]*\n",
            text,
            re.M,
        )
        if header is None:
            raise ArtifactError(
                f"the PTX asks for {', '.join(directives)} on kernel `{name}`, "
                "but has no entry point of that name",
                "rebuild the kernels (`rgpu build`); if it persists, report it as an rgpu bug",
            )
        lines = "".join(f"{d}\n" for d in directives)
        text = text[: header.end()] + lines + text[header.end() :]
    return text


class Checked(NamedTuple):
    arch: str
    entry_points: tuple[str, ...]
    isa: str
    ptxas: str  # "accepted", or why it was not run
    # With `keep_sass`: the cubin ptxas wrote when it accepted the PTX (artifacts/sass.py).
    sass: bytes | None = None


def read(file: Path, shown_as: str) -> str:
    """The PTX text of `file`; an empty or binary file is an ArtifactError naming
    `shown_as` (the path the user knows)."""
    data = file.read_bytes()
    if not data.strip():
        raise ArtifactError(f"{shown_as} is empty, not PTX", "pass the .ptx file a build wrote")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ArtifactError(
            f"{shown_as} is not PTX (not text)", "pass the .ptx file a build wrote"
        ) from None


def check(
    file: Path,
    ptxas: str | None,
    env: Mapping[str, str],
    *,
    shown_as: str,
    expect_arch: Arch | None = None,
    allowed_archs: Iterable[Arch] | None = None,
    keep_sass: bool = False,
) -> Checked:
    """Everything rgpu checks before a PTX file is embedded; errors name `shown_as`. With
    `keep_sass`, what ptxas wrote for the arch (the SASS, a cubin) comes back too."""
    text = read(file, shown_as)
    version, arch, entries = isa_version(text), target_of(text), entry_points(text)
    if version is None or arch is None or not entries:
        missing = [n for n, v in ((".version", version), (".target", arch)) if v is None]
        if not entries:
            missing.append(".entry")
        raise ArtifactError(
            f"{shown_as} is not PTX rgpu can embed: no {', '.join(missing)} line",
            "pass a .ptx file with kernels in it (what `rgpu build --backend cuda` writes)",
        )
    try:
        target = Arch.parse(arch)
    except UsageError as error:
        raise ArtifactError(
            f"{shown_as}: {error.message}",
            "build the PTX for a real GPU arch, e.g. `-Ctarget-cpu=sm_80`",
        ) from None
    if expect_arch is not None and target != expect_arch:
        raise ArtifactError(
            f"{shown_as} is PTX for {arch}, but {expect_arch} was asked for",
            f"build it for {expect_arch}, or ask for --arch {arch}",
        )
    allowed = tuple(allowed_archs or ())
    if allowed and target not in allowed:
        names = [a.name for a in allowed]
        raise ArtifactError(
            f"{shown_as} is PTX for {arch}, but the build asks for {', '.join(names)}",
            f"pass --arch {arch} (or add it to cuda-archs), or give PTX built for "
            f"{' or '.join(names)}",
        )
    if ptxas is None:
        return Checked(arch, entries, version, "not run: no ptxas found")
    if not keep_sass:
        return Checked(arch, entries, version, check_with_ptxas(ptxas, file, arch, env, shown_as))
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rgpu-sass-") as tmp:
        out = Path(tmp) / f"{file.stem}.cubin"
        checked = check_with_ptxas(ptxas, file, arch, env, shown_as, out)
        sass = out.read_bytes() if checked == "accepted" and out.is_file() else None
    return Checked(arch, entries, version, checked, sass)


def check_with_ptxas(
    ptxas: str,
    file: Path,
    arch: str,
    env: Mapping[str, str],
    shown_as: str,
    output: Path | None = None,
) -> str:
    """Assemble ``file`` for ``arch`` (into ``output``, else nowhere): "accepted", or why it
    was not checked (this ptxas does not know the arch: CUDA 13 dropped sm_70/sm_72). A
    rejection is an ArtifactError with ptxas's words."""
    result = cmd.run(
        [ptxas, f"-arch={arch}", str(file), "-o", str(output) if output else os.devnull],
        env=env,
        capture=True,
        check=False,
        echo=False,
    )
    if result.returncode != 0 and "is not defined for option 'gpu-name'" in result.stderr:
        return f"not run: this ptxas does not support {arch}"
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise ArtifactError(
            f"ptxas rejected {shown_as} for {arch}:\n{detail}",
            "fix the kernel (or the arch list) and run `rgpu build --backend cuda` again",
        )
    return "accepted"


def ptxas_version(ptxas: str, env: Mapping[str, str]) -> str | None:
    """ptxas's release line ("Cuda compilation tools, release 13.5, V13.5.37"); None when
    it does not run."""
    result = cmd.run_quiet([ptxas, "--version"], env)
    if result is None or result.returncode != 0:
        return None
    lines = [ln for ln in result.stdout.splitlines() if "release" in ln]
    if lines:
        return lines[-1].strip()
    rest = result.stdout.strip().splitlines()
    return rest[-1] if rest else None
