"""rgpu-naga, the portability check's translator, built and run for real (no rust-gpu needed).

rgpu-naga is installed exactly as the spirv codegen's plan installs it (toolchains/naga.py:
`cargo install --locked --path crates/rgpu-naga --root <rgpu cache>/rgpu-naga/...`), into
rgpu's cache, where the rust-gpu builds of tests/integration/test_portability.py reuse it.
Its input here is the GLSL **FIXTURE** module (tests/spirv_fixture.py: the demo's kernels and
SAXPY with rust-gpu's interface, several entry points in one module), two small GLSL kernels
made here, and the three SPIR-V shapes naga's reader gets wrong (before and after rgpu's
rewrite); rust-gpu's own output goes through it in test_portability.py and test_corpus.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rgpu.spirv.naga_scopes import rescope_for_naga
from rgpu.toolchains import naga, pins
from tests.spirv_fixture import ALL_ENTRY_POINTS, compile_bitonic_and_saxpy

ROOT = Path(__file__).resolve().parents[2]

F64_KERNEL = """#version 450
#extension GL_ARB_gpu_shader_int64 : enable
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; } out_;
layout(push_constant) uniform P { uint count; uint len0; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    double x = double(i) * 0.5;
    if (i < p.count) out_.v[i] = uint(x * x);
}
"""


@pytest.fixture(scope="module")
def translator() -> Path:
    tool = naga.find(pins.load("spirv", os.environ), os.environ)
    if not tool.installed:
        subprocess.run(tool.install_argv(), check=True, timeout=1800)
    assert tool.installed
    return tool.binary


def translate(translator: Path, spv: Path, out: Path, *kernels: str) -> dict[str, Any]:
    argv = [str(translator), "--spv", str(spv), "--out-dir", str(out)]
    for kernel in kernels:
        argv += ["--kernel", kernel]
    proc = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=300)
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def test_one_file_per_kernel_and_platform_with_the_wgsl_contract(
    translator: Path, tmp_path: Path
) -> None:
    spv = compile_bitonic_and_saxpy(tmp_path / "fixture")
    out = tmp_path / "out"
    report = translate(translator, spv, out)
    assert report["naga"] == "30.0.1"
    by_name = {k["name"]: k for k in report["kernels"]}
    assert sorted(by_name) == sorted([*ALL_ENTRY_POINTS, "saxpy"])
    for name, kernel in by_name.items():
        for platform, suffix in (("webgpu", "wgsl"), ("metal", "metal"), ("dx12", "hlsl")):
            result = kernel["platforms"][platform]
            assert result["ok"], (name, platform, result)
            assert result["file"] == f"{spv.stem}.{name}.{suffix}"
            assert (out / result["file"]).is_file()
        wgsl = (out / f"{spv.stem}.{name}.wgsl").read_text()
        # Only this kernel's entry point is left.
        assert re.findall(r"@compute[^\n]*\n\s*fn (\w+)", wgsl) == [name], wgsl
        # Buffers keep their bindings; the params block is a read-only storage buffer right
        # after them.
        n = kernel["buffers"]
        bindings = sorted(int(b) for b in re.findall(r"@binding\((\d+)\)\s*var<storage", wgsl))
        assert bindings and set(bindings) <= set(range(n + 1)) and n in bindings, (name, wgsl)
        assert re.search(rf"@group\(0\) @binding\({n}\)\s*var<storage(, read)?>", wgsl), (
            name,
            wgsl,
        )
        assert "var<push_constant>" not in wgsl and "var<immediate>" not in wgsl
    assert by_name["prim_radix_downsweep"]["buffers"] == 4
    assert by_name["saxpy"]["buffers"] == 2


def test_f64_is_refused_for_metal_and_webgpu_and_kept_for_dx12(
    translator: Path, tmp_path: Path
) -> None:
    glsl = tmp_path / "f64.comp"
    glsl.write_text(F64_KERNEL)
    spv = tmp_path / "f64mod.spv"
    subprocess.run(
        ["glslangValidator", "-V", "--target-env", "vulkan1.2", "-e", "squares",
         "--source-entrypoint", "main", str(glsl), "-o", str(spv)],
        check=True, capture_output=True,
    )  # fmt: skip
    report = translate(translator, spv, tmp_path / "out")
    (kernel,) = report["kernels"]
    assert kernel["name"] == "squares"
    platforms = kernel["platforms"]
    assert platforms["dx12"]["ok"]
    for platform in ("metal", "webgpu"):
        assert not platforms[platform]["ok"]
        assert "FLOAT64" in platforms[platform]["message"], platforms[platform]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["f64mod.squares.hlsl"]


def test_a_module_naga_cannot_read_fails_every_platform_with_nagas_message(
    translator: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.spv"
    bad.write_bytes(bytes.fromhex("03022307") + bytes(16) + bytes.fromhex("0100ffff"))
    report = translate(translator, bad, tmp_path / "out", "k")
    (kernel,) = report["kernels"]
    for result in kernel["platforms"].values():
        assert not result["ok"]
        assert result["message"].startswith("naga cannot read the SPIR-V module: ")


# naga's SPIR-V reader writes each OpPhi as a `var phi_*` stored in every predecessor;
# rgpu-naga's WGSL turns the ones that only move side-effect-free values into `select`
# (crates/rgpu-naga/src/flatten.rs) and leaves a branch that reads read-write memory alone.
PHI_KERNEL = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; } out_;
layout(push_constant) uniform P { uint count; uint len0; uint len1; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x;
    if (i < p.count) { x = i * 3u + p.len0; } else { x = (i ^ p.len1) >> 1u; }
    bool big = (i < p.count) && (p.len0 > i * 2u);
    bool odd = (i < p.count) && ((out_.v[i] & 1u) != 0u);
    if (i < p.count) {
        out_.v[i] = x + (odd ? 2u : 0u) + (big ? 4u : 0u);
    }
}
"""


def test_webgpu_phi_diamonds_become_select_unless_a_branch_reads_read_write_memory(
    translator: Path, tmp_path: Path
) -> None:
    glsl = tmp_path / "phis.comp"
    glsl.write_text(PHI_KERNEL)
    raw, spv = tmp_path / "raw.spv", tmp_path / "phis.spv"
    subprocess.run(
        ["glslangValidator", "-V", "--target-env", "vulkan1.2", "-e", "phis",
         "--source-entrypoint", "main", str(glsl), "-o", str(raw)],
        check=True, capture_output=True,
    )  # fmt: skip
    # spirv-opt turns the function variables into SSA: the phis rust-gpu's output has.
    subprocess.run(["spirv-opt", "-O", str(raw), "-o", str(spv)], check=True)
    report = translate(translator, spv, tmp_path / "out")
    (kernel,) = report["kernels"]
    assert all(p["ok"] for p in kernel["platforms"].values()), kernel
    wgsl = (tmp_path / "out" / "phis.phis.wgsl").read_text()
    assert "// rgpu-naga: 2 if/else as select," in wgsl, wgsl
    # The if/else of `x` and the `&&` on the params block (read-only storage in WGSL) are
    # selects; the `&&` that loads the read-write buffer keeps its branch around the load.
    assert re.search(r"phi_\w+ = select\(\(\(_e\d+ \^ _e\d+\) >>", wgsl), wgsl
    assert re.search(r"if _e\d+ \{\s*let _e\d+ = out\.v\[_e\d+\];", wgsl), wgsl
    # MSL and HLSL are written from the IR as naga read it.
    metal = (tmp_path / "out" / "phis.phis.metal").read_text()
    assert "phi_" in metal and metal.count("if (") >= 3, metal


# The shapes naga 30's SPIR-V reader gets wrong (tests/fixtures/spirv/naga_scopes/, each
# file says how), and what naga says of each before rgpu's rewrite.
SHAPES = {
    "subgroup_operand": "naga's SPIR-V reader panicked on the module: called `Option::unwrap()`",
    "atomic_value": "introduced into the scope",
    "pointer_across_blocks": "can't be stored in a local variable",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_naga_takes_each_shape_its_reader_gets_wrong_once_rgpu_rewrote_it(
    translator: Path, tmp_path: Path, shape: str
) -> None:
    source = ROOT / "tests" / "fixtures" / "spirv" / "naga_scopes" / f"{shape}.spvasm"
    before = tmp_path / f"{shape}.spv"
    subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(source), "-o", str(before)], check=True
    )
    (kernel,) = translate(translator, before, tmp_path / "before")["kernels"]
    for result in kernel["platforms"].values():
        assert not result["ok"] and SHAPES[shape] in result["message"], result
    after = tmp_path / "after" / f"{shape}.spv"
    after.parent.mkdir()
    after.write_bytes(rescope_for_naga(before.read_bytes()).data)
    subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(after)], check=True)
    (kernel,) = translate(translator, after, tmp_path / "out")["kernels"]
    assert {p: r["ok"] for p, r in kernel["platforms"].items()} == dict.fromkeys(
        ("webgpu", "metal", "dx12"), True
    ), kernel
