"""PTX helpers shared by the CUDA codegens and external artifacts: CUDA arch names, the
`.entry`/`.target`/`.version` lines of a PTX file, and ptxas (find it, check with it)."""

from __future__ import annotations

import re
import sysconfig
from collections.abc import Iterable, Mapping
from pathlib import Path

from rgpu.errors import ArtifactError, UsageError
from rgpu.util import cmd

# sm_70, sm_90a, sm_100f: the forms `-Ctarget-cpu` and `ptxas -arch` accept.
_ARCH = re.compile(r"^sm_(\d{2,3})([af]?)$")
_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)", re.M)
_TARGET = re.compile(r"^\s*\.target\s+(sm_\d+[af]?)", re.M)
_SHARED = re.compile(r"^\s*\.shared\s", re.M)
_VERSION = re.compile(r"^\s*\.version\s+(\d+\.\d+)", re.M)
# The entry points the template's CUDA runner launches; an external PTX must have them all.
REQUIRED_ENTRY_POINTS = ("bitonic_tile", "bitonic_global")


def tile_memory(text: str) -> str:
    """Where the PTX keeps the sort's tiles: "shared" when it declares a `.shared` array
    (the nvptx route of REFERENCE.md section 3), else "global" (a global-memory fallback)."""
    return "shared" if _SHARED.search(text) else "global"


def arch_number(arch: str) -> int:
    """`sm_86` -> 86."""
    match = _ARCH.match(arch)
    if match is None:
        raise UsageError(
            f"`{arch}` is not a CUDA arch name",
            "use names like sm_75,sm_80,sm_90, or `native` for this machine's GPU",
        )
    return int(match.group(1))


def parse_archs(values: Iterable[str], env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Comma-separated arch lists -> sorted unique arch names; `native` asks nvidia-smi."""
    names: list[str] = []
    for value in values:
        for part in (p.strip().lower() for p in value.split(",")):
            if part == "native":
                names += native_archs(env)
            elif part:
                arch_number(part)
                names.append(part)
    if not names:
        raise UsageError("no CUDA arch given", "pass --arch sm_75,sm_80,sm_90 or --arch native")
    return tuple(sorted(dict.fromkeys(names), key=lambda a: (arch_number(a), a)))


def native_archs(env: Mapping[str, str] | None = None) -> list[str]:
    """The arch of every GPU nvidia-smi lists (compute capability 9.0 -> sm_90)."""
    hint = "pass the arch instead, e.g. --arch sm_80 (or run on a machine with an NVIDIA GPU)"
    if cmd.which("nvidia-smi", env) is None:
        raise UsageError("--arch native needs nvidia-smi, which is not on PATH", hint)
    result = cmd.run(
        ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
        env=env,
        capture=True,
        check=False,
        echo=False,
    )
    caps = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    if result.returncode != 0 or not caps:
        raise UsageError("--arch native: nvidia-smi found no GPU", hint)
    return [arch_of_capability(cap) for cap in caps]


def arch_of_capability(cap: str) -> str:
    """`9.0` -> `sm_90`."""
    major, _, minor = cap.partition(".")
    if not (major.isdigit() and minor.isdigit()):
        raise UsageError(f"unexpected compute capability `{cap}` from nvidia-smi")
    return f"sm_{int(major)}{int(minor)}"


def entry_points(text: str) -> tuple[str, ...]:
    return tuple(_ENTRY.findall(text))


def target_of(text: str) -> str | None:
    match = _TARGET.search(text)
    return match.group(1) if match else None


def isa_version(text: str) -> str | None:
    match = _VERSION.search(text)
    return match.group(1) if match else None


def find_ptxas(env: Mapping[str, str]) -> str | None:
    """ptxas on PATH, else the nvidia-cuda-nvcc wheel's (nvidia/cu*/bin), else CUDA_PATH's."""
    found = cmd.which("ptxas", env)
    if found:
        return found
    purelib = Path(sysconfig.get_paths()["purelib"])
    for candidate in sorted(purelib.glob("nvidia/cu*/bin/ptxas"), reverse=True):
        if candidate.is_file():
            return str(candidate)
    for root in (env.get("CUDA_PATH"), env.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "ptxas").is_file():
            return str(Path(root) / "bin" / "ptxas")
    return None


def check_with_ptxas(ptxas: str, file: Path, arch: str, env: Mapping[str, str]) -> str:
    """Assemble ``file`` for ``arch``: "accepted", or why it was not checked (this ptxas
    does not know the arch: CUDA 13 dropped sm_70/sm_72). A rejection is an ArtifactError
    with ptxas's words."""
    result = cmd.run(
        [ptxas, f"-arch={arch}", str(file), "-o", "/dev/null"],
        env=env,
        capture=True,
        check=False,
    )
    if result.returncode != 0 and "is not defined for option 'gpu-name'" in result.stderr:
        return f"not run: this ptxas does not support {arch}"
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise ArtifactError(
            f"ptxas rejected {file} for {arch}:\n{detail}",
            "fix the kernel (or the arch list) and run `rgpu build --backend cuda` again",
        )
    return "accepted"
