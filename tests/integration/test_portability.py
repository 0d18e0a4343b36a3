"""The build-time portability check on the minimal template, for real.

A fresh minimal workspace (SAXPY) built with `rgpu build --backend wgpu --yes`: rust-gpu's
SPIR-V, then rgpu-naga (installed by the build into rgpu's cache, from crates/rgpu-naga)
translates the kernel into WGSL, MSL and HLSL; the manifest lists each, validated by naga at
that platform's capabilities, with the WGSL contract's bindings. Kernels that use what a
platform lacks, the required-platform failure and runs on every Vulkan path are
tests/integration/test_corpus.py's (the portability corpus).

Like tests/integration/test_rust_gpu.py this installs what it needs with --yes (the pinned
nightly, cargo-gpu, rustc_codegen_spirv, rgpu-naga) and never skips. MSL and HLSL are only
validated by naga here: no Metal or DirectX compiler runs on Linux (docs/reference.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from rgpu.artifacts.manifest import read_manifest
from tests.conftest import run_rgpu
from tests.integration.conftest import build_json, kernels_dir

KINDS = {"wgsl": ("webgpu", ".wgsl"), "msl": ("metal", ".metal"), "hlsl": ("dx12", ".hlsl")}


@pytest.fixture(scope="module")
def saxpy_ws(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    parent = tmp_path_factory.mktemp("portable")
    run_rgpu("new", "portsaxpy", "--template", "minimal", "--dir", str(parent))
    ws = parent / "portsaxpy"
    return ws, build_json(ws, "--backend", "wgpu", "--yes")


def test_every_kernel_has_wgsl_msl_and_hlsl_each_validated(
    saxpy_ws: tuple[Path, dict[str, Any]],
) -> None:
    ws, result = saxpy_ws
    assert result["ok"] and result["portability"] == [], result["portability"]
    artifacts = read_manifest(kernels_dir(ws))
    (spv,) = [a for a in artifacts if a.kind == "spirv"]
    assert spv.codegen == "spirv" and spv.source == "built"  # rust-gpu's, not a fixture
    assert spv.extra["naga"] == "30.0.1"
    kernels = sorted(spv.entry_points)
    assert kernels == ["saxpy"]
    everywhere = {"webgpu": "ok", "metal": "ok", "dx12": "ok"}
    assert spv.extra["portability"] == {k: everywhere for k in kernels}
    stem = Path(spv.path).stem
    for kernel in kernels:
        for kind, (platform, suffix) in KINDS.items():
            (one,) = [a for a in artifacts if a.kind == kind and a.entry_points == (kernel,)]
            assert one.path == f"{stem}.{kernel}{suffix}"
            assert one.target == platform and one.codegen == "spirv"
            assert one.extra["naga"] == "30.0.1" and one.extra["module"] == spv.path
            assert one.extra["validated"].startswith("naga's validator")
            assert (kernels_dir(ws) / one.path).stat().st_size == one.size
    # The WGSL contract: buffers at their index, the params block a read-only storage
    # buffer after them.
    wgsl = (kernels_dir(ws) / f"{stem}.saxpy.wgsl").read_text()
    assert re.search(r"@group\(0\) @binding\(2\)\s*var<storage(, read)?>", wgsl), wgsl
    # read-only as rust-gpu declares it: WGSL's `var<storage>` is `read`
    assert re.search(r"@group\(0\) @binding\(0\)\s*var<storage(, read)?>", wgsl), wgsl
    assert re.search(r"@group\(0\) @binding\(1\)\s*var<storage, read_write>", wgsl), wgsl
    assert "@compute" in wgsl and "fn saxpy(" in wgsl
    assert len(re.findall(r"@compute", wgsl)) == 1
    metal = (kernels_dir(ws) / f"{stem}.saxpy.metal").read_text()
    assert "kernel void saxpy(" in metal and "[[buffer(2)]]" in metal
    hlsl = (kernels_dir(ws) / f"{stem}.saxpy.hlsl").read_text()
    assert "[numthreads(256, 1, 1)]" in hlsl and "register(b0)" in hlsl
