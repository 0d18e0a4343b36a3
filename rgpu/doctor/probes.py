"""Facts about this machine that only doctor asks (the NVIDIA driver, Vulkan, disk): each
probe asks the real tool or file. What builds also need (ptxas, CUDA, LLVM, rustc, the
container engine) is found by toolchains.tools and containers.engine, for both.

Probes never raise for a missing tool: they return what they found (None, empty) so that
doctor can say what is missing and how to fix it. All processes start through util.cmd.
"""

from __future__ import annotations

import ctypes
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rgpu.util.cmd import run_quiet

# --- CUDA toolkit and driver ---------------------------------------------------------------


# PTX ISA -> first CUDA version that loads it, from NVIDIA's PTX ISA release history as
# cuda-python's cuda/bindings/utils/_ptx_utils.py tabulates it (confirmed 2026-11-22).
PTX_ISA_BY_CUDA: tuple[tuple[tuple[int, int], str], ...] = (
    ((13, 1), "9.1"),
    ((13, 0), "9.0"),
    ((12, 9), "8.8"),
    ((12, 8), "8.7"),
    ((12, 7), "8.6"),
    ((12, 5), "8.5"),
    ((12, 4), "8.4"),
    ((12, 3), "8.3"),
    ((12, 2), "8.2"),
    ((12, 1), "8.1"),
    ((12, 0), "8.0"),
    ((11, 8), "7.8"),
    ((11, 7), "7.7"),
    ((11, 6), "7.6"),
    ((11, 5), "7.5"),
    ((11, 4), "7.4"),
    ((11, 3), "7.3"),
    ((11, 2), "7.2"),
    ((11, 1), "7.1"),
    ((11, 0), "7.0"),
)


def newest_ptx_isa(cuda_version: str) -> str | None:
    """The newest PTX ISA a driver supporting CUDA `cuda_version` (e.g. "13.0") accepts."""
    try:
        major, minor = (int(x) for x in cuda_version.split(".")[:2])
    except ValueError:
        return None
    return next((isa for (cu, isa) in PTX_ISA_BY_CUDA if (major, minor) >= cu), None)


@dataclass(frozen=True)
class Driver:
    version: str
    cuda: str  # the newest CUDA version the driver supports, as nvidia-smi prints it
    gpus: tuple[str, ...]


def nvidia_driver(env: Mapping[str, str]) -> Driver | None:
    query = run_quiet(
        ["nvidia-smi", "--query-gpu=driver_version,name", "--format=csv,noheader"], env
    )
    if query is None or query.returncode != 0:
        return None
    header = run_quiet(["nvidia-smi"], env)
    return parse_nvidia_smi(query.stdout, header.stdout if header else "")


def parse_nvidia_smi(query: str, header: str) -> Driver:
    """`nvidia-smi --query-gpu=driver_version,name --format=csv,noheader` rows, and the
    plain `nvidia-smi` banner, which alone says the newest CUDA the driver supports."""
    rows = [line.split(",", 1) for line in query.splitlines() if "," in line]
    cuda = ""
    for line in header.splitlines():
        if "CUDA Version:" in line:
            cuda = line.split("CUDA Version:", 1)[1].split()[0]
    return Driver(
        version=rows[0][0].strip() if rows else "?",
        cuda=cuda,
        gpus=tuple(r[1].strip() for r in rows),
    )


# --- Vulkan ------------------------------------------------------------------------------

ICD_DIRS = (
    "/etc/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/usr/share/vulkan/icd.d",
)


def vulkan_loader() -> str | None:
    """Load libvulkan.so.1 the way wgpu and ash do (dlopen); its name when it loads."""
    try:
        ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return None
    return "libvulkan.so.1"


# The names the runtime's NCCL loader (cudarc) tries, in its order.
NCCL_LIBRARIES = ("libnccl.so", "libnccl.so.2")


def nccl_version() -> tuple[str, str] | None:
    """NCCL as the runtime's `Collective` loads it (dlopen by name): the library's name and
    its version ("2.28.3", from ncclGetVersion), or None when none loads."""
    for name in NCCL_LIBRARIES:
        try:
            nccl = ctypes.CDLL(name)
        except OSError:
            continue
        code = ctypes.c_int(0)
        if nccl.ncclGetVersion(ctypes.byref(code)) != 0:
            return name, "?"
        v = code.value
        return name, f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return None


def vulkan_icds(env: Mapping[str, str]) -> tuple[list[Path], bool]:
    """The ICD manifests the loader will read, and whether an env variable chose them."""
    chosen = env.get("VK_DRIVER_FILES") or env.get("VK_ICD_FILENAMES")
    if chosen:
        return [Path(p) for p in chosen.split(":") if p], True
    found = [p for d in ICD_DIRS for p in sorted(Path(d).glob("*.json"))]
    return found, False


def icd_library(manifest: Path) -> str | None:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
        return str(data["ICD"]["library_path"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def vulkan_devices(env: Mapping[str, str]) -> tuple[list[str], str] | None:
    """Devices that `vulkaninfo --summary` enumerates, and its last error line if none.

    None when vulkaninfo (vulkan-tools) is not installed."""
    result = run_quiet(["vulkaninfo", "--summary"], env, timeout=30)
    if result is None:
        return None
    names: list[str] = []
    kinds: list[str] = []
    for line in result.stdout.splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "deviceName":
            names.append(value.strip())
        elif key.strip() == "deviceType":
            kinds.append(value.strip().removeprefix("PHYSICAL_DEVICE_TYPE_").lower())
    devices = [
        f"{n} ({k})" if k else n for n, k in zip(names, kinds + [""] * len(names), strict=False)
    ]
    errors = [ln.strip() for ln in (result.stderr + result.stdout).splitlines() if "ERROR" in ln]
    why = errors[-1] if errors else f"vulkaninfo exited {result.returncode}"
    return devices, ("" if devices else why)


# --- disk --------------------------------------------------------------------------------


def free_bytes(path: Path) -> tuple[Path, int]:
    """Free space where `path` is (or would be created)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe, shutil.disk_usage(probe).free
