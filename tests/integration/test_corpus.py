"""The portability corpus (tests/corpus/) built once and run on every path this machine has.

One workspace: a fresh sort demo (its kernels and rgpu-primitives') with the corpus's
kernels as modules of its kernel crate (tests/corpus/kernels.rs as `corpus`, and the real
files it includes, each as it is) and the program `corpus` that runs each one
(tests/corpus_table.py). Built for wgpu and ash with the real rust-gpu (and rgpu-naga), then:

- every kernel gives the cpu backend's result on Mesa lavapipe through wgpu's SPIR-V
  passthrough, through naga (`RGPU_WGPU_SHADER=naga`, the path Metal and DX12 take) and
  through ash, except where ROUNDING says why a float result may differ on a path (there
  it must still be a result, not an error);
- the build's portability report: each kernel reaches WGSL, MSL and HLSL except where the
  platform lacks what the kernel uses (f64 on Metal and WebGPU, 64-bit integers on WebGPU,
  acquire/release atomics on all three: naga would translate them relaxed),
  and then it names the construct and where the source uses it; the table in
  docs/portability.md is the build's (RGPU_UPDATE_DOCS=1 rewrites it);
- a platform the project requires and a kernel cannot reach stops the build, naming both;
- the kernels that fit WebGPU run in headless Chromium (`--backend webgpu`) like the cpu;
- rgpu's rewrite of the shapes naga's reader gets wrong changes nothing a kernel computes:
  the module without it, embedded with --kernel-artifact, gives the same results through
  passthrough (naga cannot read it: on the naga path its kernels are errors, not a crash).

MSL and HLSL are validated by naga only: no Metal or DirectX compiler runs on Linux.
Installs what it needs with --yes and never skips.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rgpu.artifacts.manifest import read_manifest
from rgpu.codegens import spirv_post
from rgpu.spirv import narrow_ints, narrow_memory, pointer_values
from tests.conftest import TARGET_DIR, run_rgpu
from tests.corpus_table import (
    KERNEL,
    corpus_kernels,
    documented,
    make_workspace,
    modules,
    table,
    workspace_kernels,
    write_documented,
)
from tests.integration.conftest import COLD_BUILD_TIMEOUT, LAVAPIPE, build_json, kernels_dir

# Kernel, platform -> what the platform lacks, where the corpus uses it (its module's line).
LOST = {
    ("escape", "webgpu"): "f64",
    ("escape", "metal"): "f64",
    ("escape_wide", "webgpu"): "f64",
    ("escape_wide", "metal"): "f64",
    ("mandelbrot_u8", "webgpu"): "f64",
    ("mandelbrot_u8", "metal"): "f64",
    ("u64_math", "webgpu"): "64-bit integers (u64/i64)",
    ("subgroup_wide", "webgpu"): "f64",
    ("subgroup_wide", "metal"): "f64",
    ("math64", "webgpu"): "f64",
    ("math64", "metal"): "f64",
    # naga drops atomics' memory orderings (WGSL, MSL and HLSL atomics are relaxed): the
    # report refuses these rather than translate them weakened.
    **{
        (kernel, platform): "atomics with acquire/release orderings"
        for kernel in ("atomic_ops", "message_passing")
        for platform in ("webgpu", "metal", "dx12")
    },
}
# Kernel, path -> why its float result there may differ from the cpu's. naga 30 neither
# reads nor writes SPIR-V's NoContraction, so on the naga path (Metal's and DX12's at run
# time) the driver may fuse or reorder float operations that rgpu's decorations keep apart
# on the passthrough: lavapipe (Mesa 25.0.7) does, and 10 of the 4096 escape counts of the
# 64x64 Mandelbrot (the start-up benchmark's launch) change, the same 10 as through the
# passthrough of the module built with RGPU_FLOAT_CONTRACTION=1 (no decorations).
ROUNDING = {
    ("mandelbrot", "wgpu through naga"): "no NoContraction through naga: the driver reorders",
}
PATHS = {
    "wgpu (SPIR-V passthrough)": {"RGPU_BACKEND": "wgpu"},
    "wgpu through naga": {"RGPU_BACKEND": "wgpu", "RGPU_WGPU_SHADER": "naga"},
    "ash": {"RGPU_BACKEND": "ash"},
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    parent = tmp_path_factory.mktemp("corpus")
    run_rgpu("new", "portcorpus", "--dir", str(parent))
    ws = parent / "portcorpus"
    make_workspace(ws)
    first = build_json(ws, "--backend", "wgpu", "--yes")
    both = build_json(ws, "--backend", "ash", "--yes")
    assert sorted(both["backends"]) == ["ash", "wgpu"], both
    return ws, first


def run_corpus(env: dict[str, str], *kernels: str) -> dict[str, str]:
    """{kernel: checksum or `error: ...`} from the corpus program."""
    proc = subprocess.run(
        [str(TARGET_DIR / "release" / "corpus"), *kernels],
        env={**os.environ, **LAVAPIPE, **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "panicked" not in proc.stderr, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == f"backend: {env['RGPU_BACKEND']}", lines[0]
    return dict(line.split(": ", 1) for line in lines[1:])


def differences(got: dict[str, str], want: dict[str, str], path: str = "") -> list[str]:
    """The kernels whose line differs from the cpu's; one ROUNDING names for `path` only
    when it is missing or an error."""

    def wrong(kernel: str, line: str | None, cpu: str) -> bool:
        if (kernel, path) in ROUNDING:
            return line is None or line.startswith("error:")
        return line != cpu

    return [f"{k}: {got.get(k)} (cpu: {v})" for k, v in want.items() if wrong(k, got.get(k), v)]


def test_lavapipe_is_mesa_25() -> None:
    """Debian 12's own lavapipe (Mesa 22.3.6) computes user kernels wrong; the tests run on
    Mesa 25 from bookworm-backports (scripts/setup-test-env.sh installs it)."""
    proc = subprocess.run(
        ["vulkaninfo", "--summary"],
        env={**os.environ, **LAVAPIPE},
        capture_output=True,
        text=True,
        check=False,
    )
    found = re.search(r"driverInfo\s*=\s*Mesa (\d+)\.", proc.stdout)
    assert found and int(found[1]) >= 25, (
        "lavapipe is not Mesa 25 or newer: run scripts/setup-test-env.sh\n" + proc.stdout[-2000:]
    )


def test_every_kernel_computes_what_the_cpu_does_on_every_vulkan_path(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    cpu = run_corpus({"RGPU_BACKEND": "cpu"})
    assert sorted(cpu) == sorted(corpus_kernels())
    assert not [k for k, v in cpu.items() if v.startswith("error:")], cpu
    wrong = {name: differences(run_corpus(env), cpu, name) for name, env in PATHS.items()}
    assert wrong == {name: [] for name in PATHS}, json.dumps(wrong, indent=1)


def spirv_entry(ws: Path) -> Any:
    (spv,) = [a for a in read_manifest(kernels_dir(ws)) if a.kind == "spirv"]
    return spv


def test_every_kernel_reaches_every_platform_that_has_what_it_uses(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    ws, result = corpus
    # rust-gpu compiled the narrow and wide types because rgpu derived their capabilities
    # from the source (no manual step).
    argv = next(s["argv"] for s in result["plan"]["steps"] if s["name"] == "spirv-kernel")
    caps = {argv[i + 1] for i, a in enumerate(argv) if a == "--capabilities"}
    assert {"Float64", "Int8", "Int16", "Int64"} <= caps, caps
    lost = {(f["kernel"], f["platform"]): f for f in result["portability"]}
    assert set(lost) == set(LOST), sorted(lost)
    # Each kernel's module in the kernel crate: kernels.rs's `corpus`, or an included file's.
    module = {k: m for m, path in modules().items() for k in KERNEL.findall(path.read_text())}
    for key, construct in LOST.items():
        finding = lost[key]
        assert finding["construct"] == construct, finding
        file = f"kernel/src/{module[key[0]]}\\.rs"
        assert re.fullmatch(file + r":\d+(:\d+)?", finding["source"]), finding
        assert re.fullmatch(file + r":\d+", finding["at"]), finding
    # The kernel's own line is where kernels.rs declares it (its attribute or signature).
    lines = (ws / "kernel" / "src" / "corpus.rs").read_text().splitlines()
    at = int(lost[("escape", "metal")]["at"].split(":")[1])
    assert "escape" in lines[at - 1] or "escape" in lines[at], lines[at - 1 : at + 1]
    source = int(lost[("escape", "metal")]["source"].split(":")[1])
    assert "as f64" in lines[source - 1], lines[source - 1]
    assert "warning: `escape` (kernel/src/corpus.rs:" in result["stderr"]
    # Nothing 8- or 16-bit is left in the module (narrow memory moved into 32-bit words),
    # and naga's reader no longer crashes on it (the operands it lost were copied).
    spv = spirv_entry(ws)
    dis = subprocess.run(
        ["spirv-dis", str(kernels_dir(ws) / spv.path)], capture_output=True, text=True, check=True
    ).stdout
    assert "OpTypeInt 8" not in dis and "OpTypeInt 16" not in dis
    assert "Int8" not in dis and "StorageBuffer8BitAccess" not in dis
    assert spv.extra["narrow_memory"]["kept"] is None, spv.extra["narrow_memory"]
    assert spv.extra["narrow_memory"]["variables"] > 0
    assert spv.extra["naga_scopes"]["copied"] > 0, spv.extra["naga_scopes"]
    assert sorted(spv.entry_points) == sorted(workspace_kernels())
    # Where each kernel first does float arithmetic (its results may round differently on
    # the naga platforms); integer kernels have no such entry.
    sources = spv.extra["sources"]
    assert re.fullmatch(r"kernel/src/mad_chain\.rs:\d+:\d+", sources["mad_chain"]["rounding"])
    assert "rounding" not in sources.get("u64_math", {}), sources.get("u64_math")
    assert "rounding" not in sources.get("ballot_count", {}), sources.get("ballot_count")


def test_the_portability_table_in_the_docs_is_the_builds(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    ws, _ = corpus
    new = table(spirv_entry(ws).extra, workspace_kernels())
    if os.environ.get("RGPU_UPDATE_DOCS") == "1":
        write_documented(new)
    assert documented() == new, (
        "docs/portability.md's table differs from what the build reports: look at the "
        "difference, then rerun with RGPU_UPDATE_DOCS=1 to write it\n" + new
    )


def test_a_required_platform_a_kernel_cannot_reach_fails_the_build(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    ws, _ = corpus
    proc = run_rgpu(
        "build", "--backend", "wgpu", "--require-platform", "metal", cwd=ws, check=False
    )
    assert proc.returncode == 10, proc.stderr
    assert "`escape` (kernel/src/corpus.rs:" in proc.stderr
    assert "will not run on Metal: it uses f64 at kernel/src/corpus.rs:" in proc.stderr
    assert "fix: " in proc.stderr and "require-platforms" in proc.stderr
    assert "Traceback" not in proc.stderr
    # A project that names Metal is told which kernels do float arithmetic there.
    assert "note: on Metal, " in proc.stderr, proc.stderr
    assert re.search(r"\d+ kernel\(s\) do float arithmetic \(`\w+", proc.stderr), proc.stderr
    # WebGPU is not required: u64_math, which only WebGPU lacks, does not stop it.
    assert "`u64_math` (" not in proc.stderr.split("error:", 1)[1]


def test_the_webgpu_kernels_run_in_headless_chromium_like_the_cpu(
    corpus: tuple[Path, dict[str, Any]],
) -> None:
    ws, _ = corpus
    run_rgpu("build", "--backend", "webgpu", "--yes", cwd=ws, timeout=COLD_BUILD_TIMEOUT)
    web_ok = [k for k in corpus_kernels() if (k, "webgpu") not in LOST]
    proc = run_rgpu("run", "--backend", "webgpu", "--bin", "corpus", "--", *web_ok, cwd=ws)
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == "backend: webgpu", proc.stdout
    web = dict(line.split(": ", 1) for line in lines[1:])
    cpu = run_corpus({"RGPU_BACKEND": "cpu"}, *web_ok)
    assert differences(web, cpu, "webgpu") == [], proc.stderr[-3000:]


def test_the_naga_rewrites_change_nothing_a_kernel_computes(
    corpus: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """The module as the build makes it but without spirv.naga_scopes' copies (the shape
    naga 30's reader crashes on), embedded instead of the built one: passthrough computes
    the same as with them, and the naga path reports each kernel as an error. Last in this
    file: the workspace keeps the embedded module."""
    ws, _ = corpus
    raw = ws / "target" / "rgpu" / "spirv" / "out" / "portcorpus_kernel.spv"
    target = "spirv-unknown-vulkan1.2"
    data, _ = spirv_post.process(raw, tmp_path / "o.spv", target, opt=True, contraction=False)
    data = pointer_values.drop_dead_pointer_values(data).data
    data = narrow_memory.lower_narrow_memory(data).data
    before = tmp_path / "before.spv"
    before.write_bytes(narrow_ints.promote_narrow_ints(data).data)
    subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(before)], check=True)
    cpu = run_corpus({"RGPU_BACKEND": "cpu"})
    run_rgpu("build", "--backend", "ash", "--kernel-artifact", str(before), cwd=ws)
    for name in ("wgpu (SPIR-V passthrough)", "ash"):
        assert differences(run_corpus(PATHS[name]), cpu, name) == [], name
    naga = run_corpus(PATHS["wgpu through naga"], "saxpy", "two_level_sum")
    for kernel, line in naga.items():
        assert line.startswith(f"error: kernel `{kernel}` failed to launch on wgpu: naga"), line
        assert "naga's SPIR-V reader crashed" in line and "runs on the ash" in line, line
