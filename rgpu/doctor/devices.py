"""The devices each backend would count here, as `rgpu doctor` lists them: the same order and
indices as the runtime's `Device::list`, so device N here is what `RGPU_DEVICE=N` (or a
program's `--device N`) opens.

- cuda: the CUDA driver API itself (libcuda through ctypes, the library and calls the runtime's
  cudarc makes): `cuDeviceGet` ordinals, so `CUDA_VISIBLE_DEVICES` and `CUDA_DEVICE_ORDER`
  apply here as they do to a program. nvidia-smi numbers GPUs in PCI bus order, which may
  differ: each device's PCI address is shown to match them up (docs/reference.md).
- ash: the Vulkan loader's order (`vkEnumeratePhysicalDevices`: vulkaninfo's GPU0, GPU1, ...),
  devices older than Vulkan 1.2 marked unusable as the runtime marks them. wgpu: the same list
  (wgpu counts the loader's devices in its order, unless it leaves one out).
- cpu: one device.

Never raises: a backend without devices here says why.
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.backends import BACKENDS
from rgpu.util.cmd import run_quiet

GIB = 1024**3

# cuDeviceGetAttribute attributes (CUDA's cuda.h CUdevice_attribute).
_INTEGRATED = 18
_PCI_BUS_ID = 33
_PCI_DEVICE_ID = 34
_PCI_DOMAIN_ID = 50


@dataclass(frozen=True)
class Device:
    index: int
    name: str
    kind: str  # "discrete GPU", "integrated GPU", "virtual GPU", "other device", "CPU"
    memory: int | None = None  # bytes
    bus: str | None = None  # PCI domain:bus:device.function, as CUDA and wgpu write it
    unusable: str | None = None  # why the backend cannot run kernels on it

    def line(self) -> str:
        """The runtime's `DeviceInfo` Display: "1: NAME (discrete GPU, 79.2 GiB, PCI ...)"."""
        parts = [self.kind]
        if self.memory is not None:
            parts.append(f"{self.memory / GIB:.1f} GiB")
        if self.bus:
            parts.append(f"PCI {self.bus}")
        if self.unusable:
            parts.append(f"unusable: {self.unusable}")
        return f"{self.index}: {self.name} ({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "kind": self.kind,
            "memory": self.memory,
            "bus": self.bus,
            "unusable": self.unusable,
        }


@dataclass(frozen=True)
class Listing:
    backend: str
    devices: tuple[Device, ...]
    why: str | None  # why there are none, when there are none

    def to_dict(self) -> dict[str, Any]:
        return {"devices": [d.to_dict() for d in self.devices], "why": self.why}


# --- cuda ----------------------------------------------------------------------------------


def _cuda_driver() -> tuple[ctypes.CDLL, list[ctypes.c_int]] | str:
    """libcuda as the runtime reaches it, initialized, and a handle per device ordinal; or
    why there is none."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "no CUDA driver (libcuda.so.1 does not load)"
    status = cuda.cuInit(0)
    if status != 0:
        return f"the CUDA driver found no usable GPU (cuInit: error {status})"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return "the CUDA driver reports no GPU (check nvidia-smi and CUDA_VISIBLE_DEVICES)"
    handles = []
    for ordinal in range(count.value):
        handle = ctypes.c_int(0)
        # A device the driver cannot give is left out (its ordinal is not listed).
        if cuda.cuDeviceGet(ctypes.byref(handle), ordinal) != 0:
            handle = ctypes.c_int(-1)
        handles.append(handle)
    return cuda, handles


def cuda_peers() -> list[tuple[int, int]] | None:
    """The ordered pairs of CUDA device ordinals with peer access (`cuDeviceCanAccessPeer`,
    as the runtime's `Device::copy_from` asks), or None without a driver or with fewer than
    two devices."""
    driver = _cuda_driver()
    if isinstance(driver, str) or len(driver[1]) < 2:
        return None
    cuda, handles = driver
    pairs = []
    for a, to in enumerate(handles):
        for b, peer in enumerate(handles):
            can = ctypes.c_int(0)
            if a == b or to.value < 0 or peer.value < 0:
                continue
            if cuda.cuDeviceCanAccessPeer(ctypes.byref(can), to, peer) == 0 and can.value:
                pairs.append((a, b))
    return pairs


def cuda_devices() -> tuple[tuple[Device, ...], str | None]:
    """CUDA's devices by ordinal, through libcuda as the runtime reaches it."""
    driver = _cuda_driver()
    if isinstance(driver, str):
        return (), driver
    cuda, handles = driver
    devices = []
    for ordinal, handle in enumerate(handles):
        if handle.value < 0:
            continue
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, handle)
        total = ctypes.c_size_t(0)
        memory = total.value if cuda.cuDeviceTotalMem_v2(ctypes.byref(total), handle) == 0 else None

        def attribute(which: int, handle: ctypes.c_int = handle) -> int | None:
            value = ctypes.c_int(0)
            ok = cuda.cuDeviceGetAttribute(ctypes.byref(value), which, handle) == 0
            return value.value if ok else None

        domain, bus, dev = (attribute(a) for a in (_PCI_DOMAIN_ID, _PCI_BUS_ID, _PCI_DEVICE_ID))
        address = (
            f"{domain:04x}:{bus:02x}:{dev:02x}.0"
            if domain is not None and bus is not None and dev is not None
            else None
        )
        kind = "integrated GPU" if attribute(_INTEGRATED) == 1 else "discrete GPU"
        devices.append(
            Device(ordinal, name.value.decode(errors="replace"), kind, memory or None, address)
        )
    return tuple(devices), None


# --- Vulkan --------------------------------------------------------------------------------

_KINDS = {
    "DISCRETE_GPU": "discrete GPU",
    "INTEGRATED_GPU": "integrated GPU",
    "VIRTUAL_GPU": "virtual GPU",
    "CPU": "CPU",
}


def parse_vulkaninfo(summary: str) -> tuple[Device, ...]:
    """The devices of `vulkaninfo --summary`, in its order (GPU0, GPU1, ...)."""
    devices: list[Device] = []
    for block in re.split(r"^GPU(?=\d+:)", summary, flags=re.MULTILINE)[1:]:
        index, _, body = block.partition(":")
        fields = {}
        for line in body.splitlines():
            key, sep, value = line.strip().partition("=")
            if sep:
                fields[key.strip()] = value.strip()
        kind = fields.get("deviceType", "").removeprefix("PHYSICAL_DEVICE_TYPE_")
        api = tuple(int(p) for p in re.findall(r"\d+", fields.get("apiVersion", ""))[:2])
        unusable = (
            f"Vulkan {api[0]}.{api[1]}: the ash backend needs 1.2"
            if len(api) == 2 and api < (1, 2)
            else None
        )
        devices.append(
            Device(
                int(index),
                fields.get("deviceName", "?"),
                _KINDS.get(kind, "other device"),
                unusable=unusable,
            )
        )
    return tuple(devices)


def vulkan_devices(env: Mapping[str, str]) -> tuple[tuple[Device, ...], str | None]:
    result = run_quiet(["vulkaninfo", "--summary"], env, timeout=30)
    if result is None:
        return (), "vulkaninfo is not installed, so not listed (apt-get install vulkan-tools)"
    devices = parse_vulkaninfo(result.stdout)
    if devices:
        return devices, None
    errors = [ln.strip() for ln in (result.stderr + result.stdout).splitlines() if "ERROR" in ln]
    return (), errors[-1] if errors else f"no Vulkan device (vulkaninfo exited {result.returncode})"


# --- cpu -----------------------------------------------------------------------------------


def _field(text: str, key: str) -> str | None:
    for line in text.splitlines():
        if line.startswith(key):
            name, sep, value = line.partition(":")
            if sep and name.strip() == key:
                return value.strip()
    return None


def cpu_device(proc: Path = Path("/proc")) -> Device:
    """The cpu backend's one device, named as the runtime names it (Linux's /proc)."""

    def read(name: str) -> str:
        try:
            return (proc / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    name = _field(read("cpuinfo"), "model name") or "CPU"
    total = _field(read("meminfo"), "MemTotal")
    memory = None
    if total and total.removesuffix("kB").strip().isdigit():
        memory = int(total.removesuffix("kB").strip()) * 1024
    return Device(0, name, "CPU", memory)


def list_all(env: Mapping[str, str]) -> tuple[Listing, ...]:
    """Each backend's devices (`Backend.devices`: webgpu's is the browser's one adapter, not
    listed here), the GPUs' first; each kind of device listed once (wgpu and ash share
    Vulkan's)."""
    listers: dict[str, Callable[[], tuple[tuple[Device, ...], str | None]]] = {
        "cuda": cuda_devices,
        "vulkan": lambda: vulkan_devices(env),
        "cpu": lambda: ((cpu_device(),), None),
    }
    found: dict[str, tuple[tuple[Device, ...], str | None]] = {}
    listings = []
    for backend in sorted(
        (b for b in BACKENDS.values() if b.devices), key=lambda b: b.devices == "cpu"
    ):
        kind = backend.devices or ""
        if kind not in found:
            found[kind] = listers[kind]()
        devices, why = found[kind]
        listings.append(Listing(backend.name, devices, why))
    return tuple(listings)
