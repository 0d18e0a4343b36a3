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
- wgpu, ash, webgpu (codegen spirv): rust-gpu builds the kernels with
  `--abort-strategy=debug-printf+backtrace` and the checked cfg (codegens/spirv.py), so each
  panic becomes a DebugPrintf of its place and message before the invocation returns; rgpu's
  SPIR-V pass (spirv/faults.py) turns each into stores to a fault record the runtime binds
  (descriptor set 1, binding 0) and reads after each wait
  (crates/rgpu-runtime/src/common/fault.rs). The same module runs through wgpu's
  passthrough, through naga, and as WGSL in the browser.

A build without the setting passes nothing: its PTX and SPIR-V are byte-identical to those
of an rgpu without this module.
"""

from __future__ import annotations

from rgpu.errors import ConfigError

# The cfg the kernel crates (and the `rgpu` crate) are compiled with.
CFG = "rgpu_checked"
# The codegens that build checked kernels (every backend's launches are checked).
CODEGENS = ("nvptx", "spirv")


def rustc_args(checked: bool) -> tuple[str, ...]:
    """rustc's arguments for every crate of a kernel build: the cfg, or nothing."""
    return ("--cfg", CFG) if checked else ()


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
