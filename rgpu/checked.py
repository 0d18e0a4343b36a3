"""Checked launches (`rgpu build --checked`, `checked = true`): kernels built so that an
out-of-range buffer access is recorded and returned as `rgpu::Error` after the launch, not a
trap (cuda), silence (Vulkan's robust access) or a panic (cpu).

How each backend does it:
- cuda (codegen nvptx): every crate of the kernel build gets `--cfg rgpu_checked`;
  under it the `rgpu` crate's panic handler records the first fault of a launch (file, line,
  column, message with the index and the length) in the module's global `RGPU_FAULT` and
  ends only its own thread (PTX `exit`, not `trap`: the CUDA context stays usable). The
  runtime reads and clears that global when it waits for the GPU
  (crates/rgpu-runtime/src/cuda/fault.rs).
- cpu: the kernel is Rust on the host's threads: the manifest says `"checked": true`,
  `embed_kernels!()` passes that on to the launchers, and the runtime turns the kernel's
  panic into the error (crates/rgpu-runtime/src/cpu/watch.rs).
- codegen nvvm: cuda_std (Rust-CUDA) brings its own panic handler, and nvvm cannot be
  built here to test one of rgpu's: refused (`require_codegen`).
- wgpu, ash (codegen spirv): rust-gpu builds the kernels with
  `--abort-strategy=debug-printf+backtrace` and the checked cfg (codegens/spirv.py), so each
  panic becomes a DebugPrintf of its place and message before the invocation returns; rgpu's
  SPIR-V pass (spirv/faults.py) turns each into stores to a fault record the runtime binds at
  binding 64 and reads after each wait (crates/rgpu-runtime/src/common/fault.rs). The same
  module runs through wgpu's passthrough and through naga.
- webgpu: not yet (its WGSL is written from the module, but the page's runtime binds no fault
  record): refused (`require_supported`), never built unchecked in silence.

A build without the setting passes nothing: its PTX and SPIR-V are byte-identical to those
of an rgpu without this module.
"""

from __future__ import annotations

from collections.abc import Sequence

from rgpu.backends import Backend
from rgpu.errors import ConfigError

# The cfg the kernel crates (and the `rgpu` crate) are compiled with.
CFG = "rgpu_checked"
# The backends whose launches a checked build checks, and the codegens that build them so.
BACKENDS = ("cpu", "cuda", "wgpu", "ash")
CODEGENS = ("nvptx", "spirv")


def rustc_args(checked: bool) -> tuple[str, ...]:
    """rustc's arguments for every crate of a kernel build: the cfg, or nothing."""
    return ("--cfg", CFG) if checked else ()


def require_supported(checked: bool, backends: Sequence[Backend]) -> None:
    """A checked build of backends it cannot check (those built before stay built in) is
    refused: what, why and the fix."""
    if not checked:
        return
    unchecked = [b.name for b in backends if b.name not in BACKENDS]
    if not unchecked:
        return
    names = ", ".join(unchecked)
    raise ConfigError(
        f"checked launches (--checked, `checked = true`) are not available for {names}: "
        f"the browser's runtime does not read the fault record yet, and a build that embeds "
        f"unchecked kernels there would hide the faults the setting is for "
        f"(checked backends: {', '.join(BACKENDS)})",
        f"build without --checked, or build only {', '.join(BACKENDS)} checked: "
        f"`rgpu build --checked --backend wgpu` (a build keeps the backends built before: "
        f"remove target/rgpu/build.json first if it built {names})",
    )


def require_codegen(checked: bool, codegen: str) -> None:
    """A checked build through a codegen that cannot build checked kernels is refused."""
    if checked and codegen not in CODEGENS:
        raise ConfigError(
            f"checked launches (--checked, `checked = true`) are not available with codegen "
            f"{codegen}: its kernels keep their own panic handler, which ends the launch "
            f"without recording the fault (checked codegens: {', '.join(CODEGENS)})",
            f"build the cuda kernels with --codegen {CODEGENS[0]} for a checked build, or "
            "build without --checked",
        )
