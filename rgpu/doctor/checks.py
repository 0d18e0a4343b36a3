"""doctor's checks of the machine itself (Python, cargo, rustup, ptxas, the NVIDIA driver,
Vulkan, the container engine, disk), one function per area; each returns Check lines. The
codegens report their own toolchains (Codegen.checks).

Every failing or warning line carries the command or setting that fixes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rgpu.check import Check, CheckStatus
from rgpu.config import cache_dir
from rgpu.containers import engine as engines
from rgpu.doctor import devices as device_lists
from rgpu.doctor import probes
from rgpu.errors import ContainerError
from rgpu.toolchains import tools
from rgpu.toolchains.pins import Pin
from rgpu.util import cmd

GIB = 1024**3


def check_tool(name: str, argv: Sequence[str], env: Mapping[str, str], site: str) -> list[Check]:
    # Without rustup the pinned nightlies cannot be installed, but nvptx can still use a
    # system toolchain: only cargo itself is a hard requirement.
    level: CheckStatus = "fail" if name == "cargo" else "warn"
    need = ("cargo",) if name == "cargo" else ()
    result = cmd.run_quiet(argv, env)
    if result is None:
        return [Check(name, level, f"`{name}` is not on PATH", f"install Rust from {site}", need)]
    if result.returncode != 0:
        why = cmd.error_line(result.stderr or result.stdout, result.returncode)
        command = " ".join(argv)
        return [
            Check(
                name,
                level,
                f"`{command}` failed: {why}",
                f"run `{command}` to see the whole message and fix what it reports",
                need,
            )
        ]
    return [Check(name, "ok", result.stdout.strip().splitlines()[0], None, need)]


def survey_tools(env: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each build tool (toolchains.tools.BUILD_TOOLS) as a build would find it: where, its
    version, which codegens run it, what a build lacks without it and the fix (doctor's
    JSON `tools`; its lines are `tool_checks`)."""
    survey = []
    for tool in tools.BUILD_TOOLS:
        path = tools.find_tool(tool.name, env)
        version = tools.tool_version(tool.name, path, env) if path else None
        ours = path is not None and Path(path).is_relative_to(tools.tools_dir(env))
        survey.append(
            {
                "name": tool.name,
                "path": path,
                "version": version,
                "source": None if path is None else ("rgpu's cache" if ours else "this system"),
                "needed_for": list(tool.codegens),
                "required": tool.required,
                "lacking": tool.lacking,
                "package": tool.package.label,
                "fix": None if path and version else tools.obtain_fix(tool, env),
            }
        )
    return survey


def tool_checks(survey: Sequence[Mapping[str, Any]]) -> list[Check]:
    """One line per build tool: found (where, version), or what a build lacks and the fix.
    A missing required tool fails its codegens (a build stops, exit 6, unless --yes)."""
    checks = []
    for t in survey:
        need = tuple(t["needed_for"])
        if t["path"] is None:
            status: CheckStatus = "fail" if t["required"] else "warn"
            detail = f"not found: {t['lacking']}"
            checks.append(Check(t["name"], status, detail, t["fix"], need if t["required"] else ()))
        elif t["version"] is None:
            # Builds use this one too (tools.find_tool): every run of it would fail.
            checks.append(
                Check(
                    t["name"],
                    "fail",
                    f"{t['path']} does not run (`{t['path']} --version` failed): every build "
                    "that runs it would fail",
                    f"reinstall it, or take it off PATH; {t['fix']}",
                    need,
                )
            )
        else:
            where = " (rgpu's cache)" if t["source"] == "rgpu's cache" else ""
            checks.append(Check(t["name"], "ok", f"{t['path']} ({t['version']}){where}"))
    return checks


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
        ),
        *check_several_gpus(),
    ]


def check_several_gpus() -> list[Check]:
    """NCCL for `Collective` over CUDA GPUs, and which GPUs reach each other directly
    (`Device::copy_from`'s `CopyPath::Peer`)."""
    nccl = probes.nccl_version()
    checks = [
        Check("nccl", "ok", f"NCCL {nccl[1]} ({nccl[0]}): collectives over the CUDA GPUs")
        if nccl
        else Check(
            "nccl",
            "warn",
            "NCCL's library (libnccl.so.2) does not load: Collective over CUDA GPUs needs it",
            "pip install nvidia-nccl-cu12 and add its nvidia/nccl/lib folder to "
            "LD_LIBRARY_PATH, or install NVIDIA's libnccl2 package",
        )
    ]
    peers = device_lists.cuda_peers()
    if peers is not None:
        shown = ", ".join(f"{a}->{b}" for a, b in peers) or "none (copies staged by the driver)"
        checks.append(Check("gpu peers", "ok", f"peer access between CUDA devices: {shown}"))
    return checks


# --- WebGPU in a browser ---------------------------------------------------------------------


def check_web(env: Mapping[str, str]) -> list[Check]:
    """The webgpu backend: the host toolchain's wasm target (to build), a Chromium (to run
    the page). wasm-bindgen-cli is per workspace (its Cargo.lock's version): `rgpu build
    --backend webgpu --yes` installs it."""
    from pathlib import Path

    # start-up: ~28 ms to import web.browser, web.build; only this path pays it
    from rgpu.web import browser
    from rgpu.web import build as web_build

    target = web_build.WASM_TARGET
    checks = [
        Check("wasm target", "ok", f"rustup target {target} installed", None, ("wasm",))
        if web_build.has_wasm_target(env, Path.cwd())
        else Check(
            "wasm target",
            "fail",
            f"the host toolchain has no {target}",
            f"rustup target add {target} (or rgpu build --backend webgpu --yes)",
            ("wasm",),
        )
    ]
    found = browser.find_chromium(dict(env))
    checks.append(
        Check("browser", "ok", f"{found} (headless, WebGPU on)", None, ("browser-run",))
        if found
        else Check(
            "browser",
            "warn",
            "no Chromium to run the webgpu page in",
            browser.INSTALL_HINT,
            ("browser-run",),
        )
    )
    return [*checks, check_dawn(env)]


def check_dawn(env: Mapping[str, str]) -> Check:
    """Dawn under Node (`rgpu run --backend webgpu --engine dawn`): rgpu's own copies, as
    the run finds them (web/dawn.py)."""
    from rgpu.web import dawn

    found = dawn.find(env)
    if found:
        labels = " and ".join(p.label for p in dawn.PACKAGES)
        return Check("dawn", "ok", f"{labels} in {found.node.parent.parent.parent}", None, ())
    return Check(
        "dawn",
        "fail",
        "Dawn and a Node with JSPI are not downloaded",
        "`rgpu run --backend webgpu --engine dawn --yes` downloads them",
        ("dawn-run",),
    )


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


def check_containers(env: Mapping[str, str], pins: Sequence[Pin]) -> list[Check]:
    """The engine builds would use (containers.engine), whether its daemon answers, and the
    images of the pins."""
    try:
        program = engines.find_engine(env)
    except ContainerError as error:
        return [
            Check(
                "container engine",
                "warn",
                f"{error.message} (needed only for container builds)",
                error.hint,
            )
        ]
    try:
        engine = engines.probe(program, env)
    except ContainerError as error:
        return [Check("container engine", "warn", error.message, error.hint)]
    checks = [Check("container engine", "ok", f"{engine.name} {engine.version}, running")]
    for pin in pins:
        for major, image in pin.table("images").items():
            if engines.image_present(engine, str(image), env):
                checks.append(Check(f"image {pin.name} cuda{major}", "ok", f"{image} present"))
            else:
                checks.append(
                    Check(
                        f"image {pin.name} cuda{major}",
                        "warn",
                        f"{image} is not pulled (used by container {pin.name} builds)",
                        f"{engine.name} pull {image}",
                    )
                )
    # The image a container nvptx build uses: RGPU_IMAGE when set, as builds read it.
    image = env.get("RGPU_IMAGE", "").strip() or engines.DEFAULT_IMAGE
    via = " (from RGPU_IMAGE)" if image != engines.DEFAULT_IMAGE else ""
    if engines.image_present(engine, image, env):
        checks.append(Check("image rgpu", "ok", f"{image}{via} present (container nvptx builds)"))
    else:
        checks.append(
            Check(
                "image rgpu",
                "warn",
                f"{image}{via} is not available (used by `rgpu build --docker` for nvptx)",
                engines.image_hint(engine, image),
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
