"""The checks behind `rgpu doctor`, one function per area; each returns Check lines.

Every failing or warning line carries the command or setting that fixes it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from rgpu import probes
from rgpu.config import cache_dir
from rgpu.toolchains import Pin, Status, status
from rgpu.util import cmd

CheckStatus = Literal["ok", "warn", "fail"]
GIB = 1024**3


@dataclass(frozen=True)
class Check:
    name: str
    status: CheckStatus
    detail: str
    fix: str | None = None
    # Requirement keys this check is part of: "cargo", a codegen name ("nvptx", "nvvm",
    # "spirv"), or "cuda-run" / "vulkan-run" for what running (not building) needs.
    needed_for: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["needed_for"] = list(self.needed_for)
        return data


def check_tool(name: str, argv: Sequence[str], env: Mapping[str, str], site: str) -> list[Check]:
    result = probes.run_quiet(argv, env)
    if result is None or result.returncode != 0:
        # Without rustup the pinned nightlies cannot be installed, but nvptx can still use
        # a system toolchain: only cargo itself is a hard requirement.
        return [
            Check(
                name,
                "fail" if name == "cargo" else "warn",
                f"`{name}` is not on PATH",
                f"install Rust from {site}",
                ("cargo",) if name == "cargo" else (),
            )
        ]
    need = ("cargo",) if name == "cargo" else ()
    return [Check(name, "ok", result.stdout.strip().splitlines()[0], None, need)]


# --- pinned toolchains (spirv, nvvm) ------------------------------------------------------


def check_pin(pin: Pin, env: Mapping[str, str]) -> list[Check]:
    """Toolchain installed, its components, its commit hash: three lines for one pin."""
    found = status(pin, env)
    fix = f"rgpu toolchain install {pin.name}"
    if found.rustup_missing:
        fix = f"install rustup from https://rustup.rs, then run `{fix}`"
    where = "" if pin.exercised_in_ci else " (not exercised in rgpu's CI)"
    need = (pin.name,)
    if found.toolchain is None:
        why = found.summary()
        return [
            Check(f"{pin.name} toolchain", "fail", f"{why}{where}", fix, need),
            Check(
                f"{pin.name} components",
                "fail",
                f"needs {', '.join(pin.components)}; toolchain not installed",
                fix,
                need,
            ),
            Check(
                f"{pin.name} commit hash",
                "fail",
                f"needs {pin.commit_hash or 'channel ' + pin.channel}; toolchain not installed",
                fix,
                need,
            ),
        ]
    release = found.rustc.get("release", "?")
    checks = [
        Check(f"{pin.name} toolchain", "ok", f"{found.toolchain} ({release}){where}", None, need)
    ]
    if found.missing:
        add = found.install_argv() or []
        checks.append(
            Check(
                f"{pin.name} components",
                "fail",
                f"missing {', '.join(found.missing)}",
                " ".join(add),
                need,
            )
        )
    else:
        checks.append(Check(f"{pin.name} components", "ok", ", ".join(pin.components), None, need))
    checks.append(_hash_check(found))
    return checks


def _hash_check(found: Status) -> Check:
    pin = found.pin
    actual = found.rustc.get("commit-hash", "?")
    name, need = f"{pin.name} commit hash", (pin.name,)
    if found.hash_ok is None:
        return Check(name, "ok", f"{actual} (upstream pins the channel only)", None, need)
    if found.hash_ok:
        return Check(name, "ok", actual, None, need)
    return Check(
        name,
        "fail",
        f"{found.toolchain} reports {actual}, the pin needs {pin.commit_hash}",
        f"rustup toolchain uninstall {pin.channel} && rgpu toolchain install {pin.name} --yes",
        need,
    )


# --- nvptx: any nightly with the components, else the system toolchain --------------------


def check_nvptx(pin: Pin, env: Mapping[str, str]) -> list[Check]:
    found = status(pin, env)
    need = ("nvptx",)
    if found.ok:
        comps = ", ".join(pin.components)
        return [
            Check(
                "nvptx toolchain",
                "ok",
                f"rustup {found.toolchain} ({found.rustc.get('release', '?')})",
                None,
                need,
            ),
            Check("nvptx rust-src", "ok", "rust-src component (for -Zbuild-std=core)", None, need),
            Check(
                "nvptx llvm tools",
                "ok",
                f"components {comps}, LLVM "
                f"{found.rustc.get('LLVM version', '?')} of the toolchain itself",
                None,
                need,
            ),
        ]
    system = pin.tables.get("system", {})
    rust = probes.system_rust(str(system.get("rustc", "/usr/bin/rustc")), env)
    nightly_fix = " ".join(found.install_argv() or ["rustup", "toolchain", "install", "nightly"])
    apt_fix = f"apt-get install {' '.join(system.get('packages', ['rustc-web']))}"
    fix = f"{nightly_fix}, or on Debian `{apt_fix}`"
    no_nightly = (
        "no rustup nightly with " + ", ".join(pin.components)
        if found.toolchain is None
        else f"rustup {found.toolchain} lacks {', '.join(found.missing)}"
    )
    if rust is None:
        return [Check("nvptx toolchain", "fail", f"{no_nightly}; no system rustc", fix, need)]
    checks = [
        Check(
            "nvptx toolchain",
            "ok",
            f"system rustc {rust.release} at {rust.rustc}, used with RUSTC_BOOTSTRAP=1 "
            f"({no_nightly})",
            None,
            need,
        ),
        Check(
            "nvptx rust-src",
            "ok" if rust.rust_src else "fail",
            f"library sources at {rust.rust_src} (for -Zbuild-std=core)"
            if rust.rust_src
            else f"{rust.rustc} has no library sources under {rust.sysroot}/lib/rustlib/src",
            None if rust.rust_src else fix,
            need,
        ),
    ]
    checks.append(_system_llvm(rust, system, fix))
    checks.append(_bitcode_linker(rust, system, env, fix))
    return checks


def _system_llvm(rust: probes.SystemRust, system: Mapping[str, Any], fix: str) -> Check:
    major = rust.llvm_major
    tools = list(system.get("llvm_tools", ["llc", "opt", "llvm-link"]))
    directory = Path(str(system.get("llvm_bin", "/usr/lib/llvm-{major}/bin")).format(major=major))
    missing = probes.llvm_tools_in(directory, tools)
    if major is None or missing:
        return Check(
            "nvptx llvm tools",
            "fail",
            f"rustc's LLVM is {major}; {directory} lacks {', '.join(missing)}",
            f"apt-get install llvm-{major}",
            ("nvptx",),
        )
    return Check(
        "nvptx llvm tools",
        "ok",
        f"{', '.join(tools)} in {directory}: LLVM {major}, the same major as rustc's",
        None,
        ("nvptx",),
    )


def _bitcode_linker(
    rust: probes.SystemRust, system: Mapping[str, Any], env: Mapping[str, str], fix: str
) -> Check:
    name, need = "nvptx bitcode linker", ("nvptx",)
    on_path = cmd.which("llvm-bitcode-linker", env)
    cached = cache_dir(env) / f"llvm-bitcode-linker-{rust.release}" / "bin/llvm-bitcode-linker"
    if on_path or cached.is_file():
        return Check(name, "ok", f"llvm-bitcode-linker at {on_path or cached}", None, need)
    source = Path(str(system.get("bitcode_linker_source", "")).format(version=rust.release))
    if source.is_dir():
        return Check(
            name,
            "ok",
            f"not built yet: rgpu builds it once from {source} into {cached.parent.parent}",
            None,
            need,
        )
    return Check(
        name, "fail", f"no llvm-bitcode-linker on PATH and no source at {source}", fix, need
    )


# --- nvvm outside the toolchain: LLVM 7, CUDA toolkit, libNVVM ----------------------------


def check_nvvm_native(pin: Pin, env: Mapping[str, str]) -> list[Check]:
    need = (pin.name,)
    llvm = pin.tables.get("llvm", {})
    cuda = pin.tables.get("cuda", {})
    images = pin.tables.get("images", {})
    container_fix = (
        f"or build in a Rust-CUDA container image (`rgpu toolchain show {pin.name}`)"
        if images
        else "or build in a container with LLVM 7 and CUDA"
    )
    major = int(llvm.get("major", 7))
    found = probes.llvm_config_version(env)
    if found and found[1].split(".")[0] == str(major):
        llvm_check = Check(f"{pin.name} llvm", "ok", f"{found[0]} reports {found[1]}", None, need)
    else:
        seen = f"{found[0]} reports {found[1]}" if found else "no llvm-config on PATH"
        llvm_check = Check(
            f"{pin.name} llvm",
            "fail",
            f"needs LLVM {major}.x via LLVM_CONFIG or llvm-config; {seen}",
            f"set LLVM_CONFIG to an LLVM {major} llvm-config, {container_fix}",
            need,
        )
    checks = [llvm_check]
    root = probes.cuda_root(env, cuda.get("root_env", []), cuda.get("default_roots", []))
    vars_ = "/".join(cuda.get("root_env", ["CUDA_PATH"]))
    if root is None:
        min_cuda = cuda.get("min_version", "12.0")
        checks.append(
            Check(
                "cuda toolkit",
                "fail",
                f"no CUDA toolkit (>= {min_cuda}): {vars_} unset and none in "
                f"{', '.join(cuda.get('default_roots', []))}",
                f"install CUDA >= {min_cuda} and set CUDA_PATH, {container_fix}",
                need,
            )
        )
        checks.append(
            Check(
                "libnvvm",
                "fail",
                "no CUDA toolkit, so no libNVVM",
                f"install CUDA, {container_fix}",
                need,
            )
        )
        return checks
    checks.append(Check("cuda toolkit", "ok", str(root), None, need))
    checks.append(_libnvvm(root, str(cuda.get("libnvvm", "libnvvm.so.4")), env, need))
    return checks


def _libnvvm(root: Path, soname: str, env: Mapping[str, str], need: tuple[str, ...]) -> Check:
    lib_dir = root / "nvvm" / "lib64"
    if not (lib_dir / soname).exists():
        return Check(
            "libnvvm",
            "fail",
            f"{lib_dir / soname} not found (CUDA 12+ ships it)",
            "install a CUDA toolkit >= 12.0 that includes nvvm",
            need,
        )
    paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    if str(lib_dir) not in paths:
        return Check(
            "libnvvm",
            "fail",
            f"{soname} is in {lib_dir}, which is not on LD_LIBRARY_PATH "
            "(rustc loads the codegen, which needs it)",
            f'export LD_LIBRARY_PATH="{lib_dir}:$LD_LIBRARY_PATH"',
            need,
        )
    return Check("libnvvm", "ok", f"{lib_dir / soname}, on LD_LIBRARY_PATH", None, need)


# --- PTX, driver ---------------------------------------------------------------------------


def check_ptxas(env: Mapping[str, str]) -> list[Check]:
    ptxas = probes.find_ptxas(env)
    if ptxas is None:
        return [
            Check(
                "ptxas",
                "warn",
                "not found: rgpu cannot check the PTX it emits",
                "pip install nvidia-cuda-nvcc (ships ptxas; no GPU or CUDA install needed)",
            )
        ]
    version = probes.ptxas_version(ptxas, env) or "version unknown"
    return [Check("ptxas", "ok", f"{ptxas} ({version})")]


def check_driver(env: Mapping[str, str]) -> list[Check]:
    driver = probes.nvidia_driver(env)
    if driver is None:
        return [
            Check(
                "nvidia driver",
                "warn",
                "no NVIDIA driver (nvidia-smi): CUDA kernels build here but do not run",
                "run on a machine with an NVIDIA GPU and driver",
                ("cuda-run",),
            )
        ]
    isa = probes.newest_ptx_isa(driver.cuda) if driver.cuda else None
    detail = (
        f"driver {driver.version}, CUDA {driver.cuda or '?'}, newest PTX ISA "
        f"{isa or '?'}; GPUs: {', '.join(driver.gpus) or 'none'}"
    )
    ok = bool(driver.gpus)
    return [
        Check(
            "nvidia driver",
            "ok" if ok else "warn",
            detail,
            None if ok else "check `nvidia-smi -L`",
            ("cuda-run",),
        )
    ]


# --- Vulkan --------------------------------------------------------------------------------


def check_vulkan(env: Mapping[str, str]) -> list[Check]:
    need = ("vulkan-run",)
    loader = probes.vulkan_loader()
    checks = [
        Check("vulkan loader", "ok", "libvulkan.so.1 loads", None, need)
        if loader
        else Check(
            "vulkan loader",
            "fail",
            "libvulkan.so.1 does not load",
            "apt-get install libvulkan1",
            need,
        )
    ]
    icds, chosen = probes.vulkan_icds(env)
    present = [p for p in icds if p.is_file()]
    via = " (from VK_ICD_FILENAMES/VK_DRIVER_FILES)" if chosen else ""
    if present:
        names = ", ".join(f"{p.name} -> {probes.icd_library(p) or '?'}" for p in present)
        checks.append(Check("vulkan drivers", "ok", f"{names}{via}", None, need))
    else:
        listed = ", ".join(str(p) for p in icds) or "none in " + ", ".join(probes.ICD_DIRS)
        fix = (
            "unset VK_ICD_FILENAMES / VK_DRIVER_FILES, or point them at an existing ICD json"
            if chosen
            else "apt-get install mesa-vulkan-drivers (lavapipe, Vulkan on the CPU)"
        )
        checks.append(Check("vulkan drivers", "fail", f"no ICD manifest: {listed}{via}", fix, need))
    checks.append(_vulkan_device(env, need))
    return checks


def _vulkan_device(env: Mapping[str, str], need: tuple[str, ...]) -> Check:
    found = probes.vulkan_devices(env)
    if found is None:
        return Check(
            "vulkan device",
            "warn",
            "vulkaninfo is not installed, so not probed",
            "apt-get install vulkan-tools",
            need,
        )
    devices, why = found
    if devices:
        return Check("vulkan device", "ok", ", ".join(devices), None, need)
    return Check(
        "vulkan device",
        "fail",
        f"no Vulkan device enumerates: {why}",
        "apt-get install mesa-vulkan-drivers, and unset VK_ICD_FILENAMES if it points at nothing",
        need,
    )


# --- containers, disk ----------------------------------------------------------------------


def check_containers(env: Mapping[str, str], pins: Mapping[str, Pin]) -> list[Check]:
    engine = probes.container_engine(env)
    if engine is None and env.get("RGPU_CONTAINER_ENGINE"):
        return [
            Check(
                "container engine",
                "warn",
                f"RGPU_CONTAINER_ENGINE={env['RGPU_CONTAINER_ENGINE']} was not found "
                "(needed only for container builds)",
                "point RGPU_CONTAINER_ENGINE at docker or podman, or unset it",
            )
        ]
    if engine is None:
        return [
            Check(
                "container engine",
                "warn",
                "neither docker nor podman is installed (needed only for container builds)",
                "apt-get install docker.io (or podman)",
            )
        ]
    if not engine.running:
        return [
            Check(
                "container engine",
                "warn",
                f"{engine.program} is installed, but its daemon does not answer: {engine.error}",
                "start it: `sudo systemctl start docker` (or `sudo dockerd &`)",
            )
        ]
    checks = [Check("container engine", "ok", f"{engine.program} {engine.version}, running")]
    for pin in pins.values():
        for major, image in pin.tables.get("images", {}).items():
            if probes.image_present(engine, str(image), env):
                checks.append(Check(f"image {pin.name} cuda{major}", "ok", f"{image} present"))
            else:
                checks.append(
                    Check(
                        f"image {pin.name} cuda{major}",
                        "warn",
                        f"{image} is not pulled (used by container {pin.name} builds)",
                        f"{engine.program} pull {image}",
                    )
                )
    return checks


def check_disk(env: Mapping[str, str]) -> list[Check]:
    where, free = probes.free_bytes(cache_dir(env))
    gib = free / GIB
    detail = f"{gib:.1f} GiB free at {where} (rgpu's cache: toolchains, codegens, builds)"
    if gib < 1:
        return [Check("disk", "fail", detail, "free disk space or set RGPU_CACHE_DIR elsewhere")]
    if gib < 10:
        return [
            Check(
                "disk",
                "warn",
                detail + "; a pinned nightly with rustc-dev needs ~2 GiB",
                "free disk space or set RGPU_CACHE_DIR elsewhere",
            )
        ]
    return [Check("disk", "ok", detail)]
