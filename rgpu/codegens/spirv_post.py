"""What the spirv codegen does to rust-gpu's modules before embedding them.

1. `spirv-opt` (SPIRV-Tools) with PASSES, unless `spirv-opt = false` in
   [workspace.metadata.rgpu] (or RGPU_SPIRV_OPT=0). rust-gpu's linker would run its own
   bundled spirv-opt with the same performance passes on a release build
   (rustc_codegen_spirv's link.rs, `do_spirv_opt`), before anything could mark float results
   NoContraction, and -O folds a*b+c into one Fma; so rgpu turns that off
   (RUSTGPU_CODEGEN_ARGS=--no-spirv-opt, codegens/spirv.py) and runs the optimizer here.
2. `NoContraction` on every float arithmetic result (spirv/contraction.py), before
   spirv-opt (whose -O otherwise folds a*b+c into one Fma) and again after it, unless
   `float-contraction = true` (or RGPU_FLOAT_CONTRACTION=1): float results then equal the
   cpu backend's on every Vulkan driver that honours the decoration.
3. spirv-val on the result (the codegen validates rust-gpu's own module before this too).

Before all of them, in a checked build, each panic's DebugPrintf becomes stores to the fault
record the runtime reads (spirv/faults.py); then index checks a guard of the kernel's own
already proves get `true` as their branch condition (spirv/range_checks.py), for spirv-opt
to remove. The passes before
and after spirv-opt, in order, are spirv/passes.py's BEFORE_OPT and AFTER_OPT.

The manifest records each step: SPIRV-Tools' version, the passes, and how many float
arithmetic results the embedded module has (all of them decorated NoContraction).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.errors import ArtifactError, ToolMissingError
from rgpu.spirv import module as spirv_module
from rgpu.spirv import passes
from rgpu.toolchains import tools
from rgpu.util import cmd

# What rust-gpu's linker itself runs on a release build without debug info (rustc_codegen_spirv
# link.rs, `do_spirv_opt`): the performance passes (`spirv-opt --help`: "-O Optimize for
# performance"), then EliminateDeadConstant and StripDebugInfo. Without the last, the module
# keeps rust-gpu's OpLine/OpString debug lines (4x the size; the code is the same).
PASSES: tuple[str, ...] = ("-O", "--eliminate-dead-const", "--strip-debug")
# The SPIRV-Tools release rgpu is tested with: Debian bookworm's spirv-tools 2023.1-2
# (`spirv-opt --version`: "SPIRV-Tools v2023.1 unknown hash, 2023-02-15T14:03:51"),
# installed by scripts/setup-test-env.sh.
PINNED_SPIRV_TOOLS = "v2023.1"


@dataclass(frozen=True)
class SpirvOpt:
    tool: str
    version: str  # the first line of `spirv-opt --version`


def find_spirv_opt() -> SpirvOpt | None:
    """spirv-opt and its version, as `tools.find_tool` finds it for build and doctor alike
    (PATH, else the copy `--yes` put in rgpu's cache)."""
    env = os.environ
    tool = tools.find_tool("spirv-opt", env)
    if tool is None:
        return None
    return SpirvOpt(tool, tools.tool_version("spirv-opt", tool, env) or "unknown")


def spirv_opt_argv(tool: SpirvOpt, source: Path, dest: Path, target: str) -> list[str]:
    env = spirv_module.TARGET_ENVS.get(target, "vulkan1.2")
    return [tool.tool, f"--target-env={env}", *PASSES, str(source), "-o", str(dest)]


def optimize(source: Path, work: Path, target: str, tool: SpirvOpt) -> bytes:
    """spirv-opt's output for ``source`` (written to ``work`` on the way)."""
    argv = spirv_opt_argv(tool, source, work, target)
    result = cmd.run(argv, capture=True, check=False, echo=False)
    if result.returncode != 0 or not work.is_file():
        detail = (result.stderr or result.stdout).strip() or f"exit {result.returncode}"
        raise ArtifactError(
            f"spirv-opt failed on {source}: {detail}",
            "build without the optimizer (`spirv-opt = false` in [workspace.metadata.rgpu] "
            f"or RGPU_SPIRV_OPT=0) and report it; rerun by hand: `{cmd.format_argv(argv)}`",
        )
    return work.read_bytes()


def process(
    source: Path, work: Path, target: str, *, opt: bool, contraction: bool, checked: bool = False
) -> tuple[bytes, dict[str, Any]]:
    """The module to embed for rust-gpu's ``source`` and what the manifest says about it."""
    off = frozenset(
        ({passes.FLOAT_CONTRACTION} if contraction else set())
        | (set() if checked else {passes.UNCHECKED})
    )
    data, extra = _run(passes.BEFORE_OPT, source.read_bytes(), source, off)
    if opt:
        tool = find_spirv_opt()
        if tool is None:
            raise ToolMissingError(
                "spirv-opt (SPIRV-Tools) is not installed: rgpu optimizes rust-gpu's SPIR-V "
                "with it before embedding it",
                tools.obtain_fix(tools.build_tool("spirv-opt"), os.environ),
            )
        decorated = work.with_name(work.stem + ".in.spv")
        decorated.write_bytes(data)
        data = optimize(decorated, work, target, tool)
        extra["spirv_opt"] = {"tools": tool.version, "passes": list(PASSES)}
    else:
        extra["spirv_opt"] = "off (spirv-opt = false)"
    data, after = _run(passes.AFTER_OPT, data, source, off)
    extra.update(after)
    if contraction:
        extra["no_contraction"] = "off (float-contraction = true)"
    return data, extra


def _run(
    stage: tuple[passes.Pass, ...], data: bytes, source: Path, off: frozenset[str]
) -> tuple[bytes, dict[str, Any]]:
    try:
        return passes.run(stage, data, off)
    except ValueError as exc:
        raise ArtifactError(f"{source}: {exc}", "rebuild it") from exc
