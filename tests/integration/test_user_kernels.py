"""The user-style kernels of benchmarks/user_kernels (saxpy, a sum, an exclusive scan, a byte
histogram, a tiled SGEMM on a 2-D grid, a 2-D blur, a gather and a scatter, an n-body step, a
row softmax and a looped two-level sum, written with the public kernel API) built for real
and checked: every backend's result equals the plain-Rust reference bit for bit (which the
cpu backend also matches), so every backend equals the cpu backend; except that Mesa's
llvmpipe rounds `mul_add` twice (it lowers GLSL.std.450 Fma), which the program reports as
`unfused` and this test expects exactly there, and that the n-body step and the softmax
(`rsqrt`, `exp`, f32 subgroup sums: the backend's rounding) are checked within a normwise
relative error against an f64 reference.

- `rgpu build --backend cuda --arch sm_90`: PTX from rustc's nvptx target, every kernel in
  it, ptxas accepting it; `mul_add` is `fma.rn`, item buffers carry no bounds check.
- `rgpu build --backend wgpu,ash --yes`: rust-gpu's SPIR-V, run on Mesa lavapipe through wgpu
  (passthrough and RGPU_WGPU_SHADER=naga) and ash, beside the cpu backend.
- The kernel API's own checks, in a copy of the workspace (tests/api.rs there): `mul_add` in
  f32 and f64 rounds once on every backend (inputs where fused and unfused differ), 1-D, 2-D
  and 3-D item and group launches past the hardware's 65,535 workgroups, and a shape whose
  product overflows is an error naming it.

The workspace is copied out of the repository (its target/ stays out of the checkout),
pointed at this checkout's crates, and built once for the module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rgpu.artifacts.manifest import read_manifest
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import REPO, TARGET_DIR, run_rgpu
from tests.integration.conftest import LAVAPIPE, assemble
from tests.user_kernels_api import API_KERNELS, API_TEST

SUITE = REPO / "benchmarks" / "user_kernels"
KERNELS = (
    "saxpy reduce_sum reduce_sum_plain scan_tile_sums scan_tile_offsets scan_tiles histogram "
    "sgemm blur gather scatter nbody nbody_tuned softmax reduce_sum_looped "
    "reduce_sum_looped_len".split()
)
CASES = (
    "saxpy reduce_sum reduce_sum_plain exclusive_scan histogram sgemm blur gather scatter "
    "nbody nbody_tuned softmax reduce_sum_looped reduce_sum_looped_len".split()
)
# The cases whose float functions round as the backend does (rsqrt, exp, an f32 subgroup
# sum): checked within a normwise relative error against an f64 reference.
TOLERANCE = {"nbody": 1e-4, "nbody_tuned": 1e-4, "softmax": 1e-5}
MUL_ADD = {"saxpy", "sgemm"}
UNFUSED = "unfused: each mul_add rounded twice (the driver splits Fma)"
API_ENTRY_POINTS = "fma32 fma64 items1 items2 items3 groups1 groups3 global_atomics spin".split()
COLD_BUILD_TIMEOUT = 3600


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("user-kernels") / "user_kernels"
    shutil.copytree(SUITE, ws, ignore=shutil.ignore_patterns("target"))
    manifest = ws / "Cargo.toml"
    text = manifest.read_text(encoding="utf-8")
    assert text.count('path = "../../crates/rgpu"') == 1
    manifest.write_text(text.replace("../../crates/rgpu", str(REPO / "crates" / "rgpu")))
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text(encoding="utf-8") + "\n" + API_KERNELS, encoding="utf-8")
    (ws / "tests").mkdir()
    (ws / "tests" / "api.rs").write_text(API_TEST, encoding="utf-8")
    # One arch: ptxas checks the PTX per arch, and each arch compiles `core` again.
    run_rgpu("build", "--backend", "cuda", "--arch", "sm_90", cwd=ws, timeout=COLD_BUILD_TIMEOUT)
    run_rgpu("build", "--backend", "wgpu,ash", "--yes", cwd=ws, timeout=COLD_BUILD_TIMEOUT)
    return ws


def suite(*args: str, env: dict[str, str]) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run(
        [str(TARGET_DIR / "release" / "user-kernels"), "--sizes", "small", "--check-only", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def assert_all_equal(rows: list[dict[str, Any]], backends: list[str]) -> None:
    """Every case equals the reference on every backend; on llvmpipe the kernels with
    `mul_add` equal the reference with each `mul_add` rounded twice instead (Mesa 22.3's
    llvmpipe lowers GLSL.std.450 Fma to a multiply and an add: docs/reference.md)."""
    found = {(r["kernel"], r["backend"]): r for r in rows if "kernel" in r}
    for case in CASES:
        reference = found[(case, "reference")]
        assert reference["tolerance"] == TOLERANCE.get(case), reference
        if case in TOLERANCE:
            for backend in backends:
                row = found[(case, backend)]
                assert row.get("check", "").startswith("within"), (case, backend, row)
            continue
        # The inputs tell a fused multiply-add from an unfused one.
        assert (reference["unfused_sha256"] is not None) == (case in MUL_ADD), reference
        assert reference["unfused_sha256"] != reference["sha256"], reference
        for backend in backends:
            row = found[(case, backend)]
            split = case in MUL_ADD and "llvmpipe" in row.get("device", "")
            assert row.get("check") == (UNFUSED if split else "equal"), (case, backend, row)


def test_every_backend_equals_the_cpu_backend_on_lavapipe(ws: Path) -> None:
    code, rows, stderr = suite("--backends", "cpu,wgpu,ash", env=LAVAPIPE)
    assert code == 0, stderr + json.dumps(rows, indent=1)
    assert_all_equal(rows, ["cpu", "wgpu", "ash"])
    devices = {r["backend"]: r["device"] for r in rows if "device" in r}
    assert "llvmpipe" in devices["wgpu"] and "llvmpipe" in devices["ash"], devices


def test_wgpu_through_naga_equals_the_cpu_backend(ws: Path) -> None:
    code, rows, stderr = suite(
        "--backends", "cpu,wgpu", env={**LAVAPIPE, "RGPU_WGPU_SHADER": "naga"}
    )
    assert code == 0, stderr + json.dumps(rows, indent=1)
    assert_all_equal(rows, ["cpu", "wgpu"])


def test_the_kernel_api_on_every_backend(ws: Path) -> None:
    argv = "cargo test --release --features cuda,wgpu,ash --test api -- --nocapture".split()
    proc = subprocess.run(
        argv,
        cwd=ws,
        env={
            **os.environ,
            **LAVAPIPE,
            "CARGO_TARGET_DIR": str(TARGET_DIR),
            "RGPU_TEST_BACKENDS": "cpu,wgpu,ash",
            "RGPU_REQUIRE_BACKENDS": "cpu,wgpu,ash",
        },
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for test in ("fma", "grid", "timeout"):
        for backend in ("cpu", "wgpu", "ash"):
            assert re.search(rf"PASSED {backend} \({test}\)", proc.stderr), proc.stderr


def test_the_cuda_build_has_every_kernel_through_ptxas(ws: Path) -> None:
    kernels = ws / "target" / "rgpu" / "kernels"
    ptx = [a for a in read_manifest(kernels) if a.kind == "ptx"]
    assert [a.target for a in ptx] == ["sm_90"]
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    for artifact in ptx:
        assert artifact.extra["ptxas"] == "accepted"
        assert sorted(artifact.entry_points) == sorted(KERNELS + API_ENTRY_POINTS)
        assemble(ptxas, kernels / artifact.path, artifact.target)


def entry(ptx: str, name: str) -> str:
    """The body of `.entry name` in a PTX file."""
    found = re.search(rf"\.entry {name}\(.*?\n}}\n", ptx, re.S)
    assert found is not None, f"no .entry {name}"
    return found.group(0)


def test_the_ptx_fuses_where_the_kernel_says_and_checks_no_item_index(ws: Path) -> None:
    kernels = ws / "target" / "rgpu" / "kernels"
    (sm90,) = [a for a in read_manifest(kernels) if a.kind == "ptx" and a.target == "sm_90"]
    ptx = (kernels / sm90.path).read_text(encoding="utf-8")
    assert "fma.rn.f32" in entry(ptx, "saxpy") and "fma.rn.f64" in entry(ptx, "fma64")
    assert entry(ptx, "sgemm").count("fma.rn.f32") == 16
    # a * b + c written out stays two roundings: no fma in the blur.
    assert "fma" not in entry(ptx, "blur")
    # No index check left: item buffers and load_unchecked (a check would call a panic
    # function that traps).
    for name in ("saxpy", "gather", "scatter", "fma32"):
        assert "call" not in entry(ptx, name) and "trap" not in entry(ptx, name), name
    # The float functions are PTX's instructions, not libm's software: rsqrt in the n-body
    # step, ex2 in the softmax's exp, with f32 warp shuffles for its max and sum.
    assert "rsqrt.approx.f32" in entry(ptx, "nbody") and "libm" not in entry(ptx, "nbody")
    # Workgroup memory through LLVM's own loads: the tile's four floats are one vector load.
    assert "ld.shared.v4.b32" in entry(ptx, "nbody")
    # `registers = 64` is the entry's `.maxnreg 64`; the plain kernel has none.
    assert ".maxnreg 64" in entry(ptx, "nbody_tuned") and ".maxnreg" not in entry(ptx, "nbody")
    softmax = entry(ptx, "softmax")
    assert "ex2.approx.f32" in softmax and "shfl.sync.bfly" in softmax and "libm" not in softmax
    # Guarded by `i < x.len()`, no trap path is left in the loop: it is unrolled, several
    # loads in flight.
    assert entry(ptx, "reduce_sum_looped").count("ld.global") == 1
    assert entry(ptx, "reduce_sum_looped_len").count("ld.global") >= 4


def test_the_spirv_has_one_fma_per_mul_add(ws: Path) -> None:
    kernels = ws / "target" / "rgpu" / "kernels"
    (spv,) = [a for a in read_manifest(kernels) if a.kind == "spirv"]
    assert spv.codegen == "spirv" and sorted(spv.entry_points) == sorted(KERNELS + API_ENTRY_POINTS)
    dis = subprocess.run(
        ["spirv-dis", str(kernels / spv.path)], capture_output=True, text=True, check=True
    ).stdout
    fmas = re.findall(r"(%\w+) = OpExtInst %\w+ %\w+ Fma ", dis)
    # saxpy, sgemm's 16 (unrolled), fma32, fma64; nbody's 6 (its loop not unrolled: rust-gpu
    # unrolls no loop) and nbody_tuned's 24 (unrolled 4x in the source); softmax's two
    # `exp`s, 2 each (x * log2 e carried in two floats).
    assert len(fmas) == 53, dis
    # rsqrt is GLSL.std.450 InverseSqrt: one in nbody, four in nbody_tuned.
    assert dis.count(" InverseSqrt ") == 5, dis
