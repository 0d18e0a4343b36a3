"""CUDA archs as a type: `Arch` (`sm_90a` -> 90 and `a`), the one parser and check of arch
names with its messages, and `CudaArchs`, a list as asked (`native` included) that is
resolved against this machine once, here, the only place that asks nvidia-smi.

Names typed by the user (`--arch`, `cuda-archs` in [workspace.metadata.rgpu],
RGPU_CUDA_ARCHS) are parsed where they enter (config.py) and carried as `CudaArchs` from
then on; the pipeline resolves `native` once per build, before any codegen reads the list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from rgpu.errors import RgpuError, UsageError
from rgpu.util import cmd

# sm_70, sm_90a, sm_100f: the forms `-Ctarget-cpu` and `ptxas -arch` accept.
_ARCH = re.compile(r"^sm_(\d{2,3})([af]?)$")
# Every compute capability NVIDIA has shipped (CUDA 13 programming guide, compute
# capabilities table): any other `sm_XX` is refused as not a GPU that exists.
KNOWN_ARCHS = frozenset(
    "50 52 53 60 61 62 70 72 75 80 86 87 88 89 90 100 101 103 110 120 121".split()
)
HINT = "use names like sm_75,sm_80,sm_90, or `native` for this machine's GPU"
NATIVE = "native"


class Arch(NamedTuple):
    """One CUDA arch: `sm_90a` is number 90 with suffix `a` (arch-specific; `f`: family).
    Ordered by number, then suffix, as the archs are built and listed. (A NamedTuple, not a
    frozen dataclass: it is on the no-op build's path, docs/design.md.)"""

    number: int
    suffix: str = ""

    @property
    def name(self) -> str:
        return f"sm_{self.number}{self.suffix}"

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(
        cls,
        text: str,
        where: str = "",
        error: type[RgpuError] = UsageError,
        hint: str = HINT,
    ) -> Arch:
        """``text`` (already lowercased) as an Arch; else ``error`` naming ``where`` it came
        from (none: the name alone), with ``hint``."""
        match = _ARCH.match(text)
        known = match is not None and match.group(1) in KNOWN_ARCHS
        if match is None or not known:
            why = (
                " name"
                if match is None
                else " (known: sm_" + ", sm_".join(sorted(KNOWN_ARCHS, key=int)) + ")"
            )
            head = (
                f"{where} names `{text}`, not a CUDA arch"
                if where
                else f"`{text}` is not a CUDA arch"
            )
            raise error(head + why, hint)
        return cls(int(match.group(1)), match.group(2))

    @classmethod
    def of_capability(cls, cap: str) -> Arch:
        """nvidia-smi's compute capability `9.0` -> sm_90."""
        major, _, minor = cap.partition(".")
        if not (major.isdigit() and minor.isdigit()):
            raise UsageError(f"unexpected compute capability `{cap}` from nvidia-smi")
        return cls(int(f"{int(major)}{int(minor)}"))


class CudaArchs(NamedTuple):
    """The CUDA archs a build is asked for: the ones named, in the order given, and whether
    `native` (the arch of each GPU of this machine) was asked too."""

    named: tuple[Arch, ...]
    native: bool = False

    @classmethod
    def parse(
        cls,
        values: Iterable[str],
        where: str = "",
        error: type[RgpuError] = UsageError,
        hint: str = HINT,
    ) -> CudaArchs:
        """Names as typed, each may be "a,b" (case ignored; duplicates dropped). An empty
        list is ``error`` too."""
        named: list[Arch] = []
        native = False
        for value in values:
            for part in (p.strip().lower() for p in value.split(",")):
                if part == NATIVE:
                    native = True
                elif part:
                    named.append(Arch.parse(part, where, error, hint))
        if not named and not native:
            what = f"{where} is empty" if where else "no CUDA arch given"
            raise error(what, hint if where else "pass --arch sm_75,sm_80,sm_90 or --arch native")
        return cls(tuple(dict.fromkeys(named)), native)

    def names(self) -> tuple[str, ...]:
        """As the user writes them (`native` last), e.g. for build.json."""
        return (*(a.name for a in self.named), *((NATIVE,) if self.native else ()))

    def on_this_machine(self, env: Mapping[str, str] | None = None) -> CudaArchs:
        """`native` replaced by the archs of this machine's GPUs (asked of nvidia-smi,
        here only), and the list sorted: what the codegens build for."""
        found = [*self.named, *(native_archs(env) if self.native else ())]
        return CudaArchs(tuple(sorted(dict.fromkeys(found))))

    @property
    def exact(self) -> tuple[Arch, ...]:
        """The archs to build for, sorted; only once `native` is resolved (on_this_machine)."""
        if self.native:
            raise RuntimeError("CUDA archs used before `native` was resolved (on_this_machine)")
        return tuple(sorted(dict.fromkeys(self.named)))


def native_archs(env: Mapping[str, str] | None = None) -> list[Arch]:
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
    return [Arch.of_capability(cap) for cap in caps]
