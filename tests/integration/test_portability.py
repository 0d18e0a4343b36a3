"""Capabilities that follow the kernel and the build-time portability check, for real.

- A fresh minimal workspace (SAXPY) built with `rgpu build --backend wgpu --yes`: rust-gpu's
  SPIR-V, then rgpu-naga (installed by the build into rgpu's cache, from crates/rgpu-naga)
  translates the kernel into WGSL, MSL and HLSL; the manifest lists each, validated by naga at
  that platform's capabilities, with the WGSL contract's bindings.
- A kernel naga 30.0.1's SPIR-V reader panics on (a branch between two unrolled blocks, one
  with loops and barriers; found with issue 19's radix variants): the build goes on, and the
  report names the crash and the naga bug for every platform instead of failing the build.
- The same template with a user's kernel that computes in `f64` and counts in `u8`: it builds
  for wgpu and ash with no manual step (rgpu derives Float64 and Int8 from the source, and
  computes the u8 values in 32 bits: artifacts/spirv_narrow_ints.py), runs on lavapipe
  through both with results identical to the cpu backend, and the report names the
  platforms it cannot reach.

Like tests/integration/test_rust_gpu.py this installs what it needs with --yes (the pinned
nightly, cargo-gpu, rustc_codegen_spirv, rgpu-naga) and never skips. MSL and HLSL are only
validated by naga here: no Metal or DirectX compiler runs on Linux (docs/reference.md).
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
from tests.conftest import TARGET_DIR, run_rgpu
from tests.integration.conftest import LAVAPIPE, kernels_dir

COLD_BUILD_TIMEOUT = 3600
KINDS = {"wgsl": ("webgpu", ".wgsl"), "msl": ("metal", ".metal"), "hlsl": ("dx12", ".hlsl")}

# A user's kernel in the style of the Mandelbrot program of issue 18: the map z -> z^2 + c
# computed in f64, the escape count kept in a u8. c runs over an integer grid and a point
# stops once |z|^2 > 2^24, so every value stays an integer below 2^53 and every operation is
# exact: cpu and lavapipe must agree bit for bit (a fused multiply-add cannot change an exact
# result). `escape_wide` is the same map with a u32 count. `bytes_mix` exercises most of what
# rgpu's 8-bit pass rewrites in rust-gpu's output (phis, add, sub, mul, xor, the three
# shifts, unsigned remainder, signed comparison, bitcasts, sign- and zero-extension).
ESCAPE_KERNEL = """
use rgpu::Item;

/// Escape counts of z -> z^2 + c over a `width`-wide integer grid, computed in f64 with the
/// count kept in a u8 (a byte a pixel), stored widened to u32.
#[rgpu::kernel]
pub fn escape(item: Item, width: u32, limit: u32, #[item] out: &mut u32) {
    let i = item.index();
    let cx = (i % width) as f64 - 40.0;
    let cy = (i / width) as f64 - 24.0;
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut n: u8 = 0;
    while (n as u32) < limit && x * x + y * y <= 16777216.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        n = n.wrapping_add(1);
    }
    *out = n as u32;
}

/// The same map with a u32 count: f64 alone.
#[rgpu::kernel]
pub fn escape_wide(item: Item, width: u32, limit: u32, #[item] out: &mut u32) {
    let i = item.index();
    let cx = (i % width) as f64 - 40.0;
    let cy = (i / width) as f64 - 24.0;
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut n: u32 = 0;
    while n < limit && x * x + y * y <= 16777216.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        n += 1;
    }
    *out = n;
}

/// 8-bit integer work of the kind byte-oriented kernels do: a loop-carried u8 hash, wrapping
/// u8/i8 arithmetic, logical and arithmetic shifts, signed and unsigned comparisons and
/// widening conversions, packed into one u32 per item.
#[rgpu::kernel]
pub fn bytes_mix(item: Item, seed: u32, #[item] out: &mut u32) {
    let i = item.index().wrapping_mul(2654435761) ^ seed;
    let a = i as u8;
    let b = (i >> 8) as u8;
    let s = (i >> 16) as i8;
    let mut acc: u8 = a;
    let mut k: u8 = 0;
    while k < b % 13 {
        acc = acc.wrapping_mul(31).wrapping_add(b ^ k);
        k = k.wrapping_add(1);
    }
    let sa = (a as i8).wrapping_sub(s);
    let shifted = (sa >> 2) as u8 ^ (b << 3) ^ (a >> 5);
    let less = if (a as i8) < s { 1u32 } else { 0 };
    let below = if sa < -5 { 1u32 } else { 0 };
    let wide = (sa as i32).wrapping_mul(3) as u32;
    *out = u32::from(acc)
        | (u32::from(shifted) << 8)
        | (u32::from(k) << 16)
        | (less << 24)
        | (below << 25)
        | ((wide & 0x1f) << 26);
}
"""

ESCAPE_BIN = """//! Each kernel of the crate but SAXPY on RGPU_BACKEND: the backend and a checksum.
fn checksum(out: &[u32]) -> String {
    let sum: u64 = out.iter().map(|&v| u64::from(v)).sum();
    let hash = out.iter().fold(0xcbf29ce484222325u64, |h, &v| {
        (h ^ u64::from(v)).wrapping_mul(0x100000001b3)
    });
    format!("sum {sum} hash {hash:016x}")
}

fn main() {
    let (device, _) = rgpu::Device::select().expect("a device");
    let (width, height, limit) = (80u32, 48u32, 200u32);
    let n = width * height;
    let mut out = vec![0u32; n as usize];
    kernel::escape(&device, n, width, limit, &mut out).expect("launch");
    println!("escape on {}: {}", device.backend(), checksum(&out));
    kernel::escape_wide(&device, n, width, limit, &mut out).expect("launch");
    println!("escape_wide on {}: {}", device.backend(), checksum(&out));
    kernel::bytes_mix(&device, n, 0x9e37_79b9, &mut out).expect("launch");
    println!("bytes_mix on {}: {}", device.backend(), checksum(&out));
}
"""


def build(ws: Path, *args: str) -> dict[str, Any]:
    proc = run_rgpu("build", *args, "--json", cwd=ws, check=False, timeout=COLD_BUILD_TIMEOUT)
    if proc.returncode != 0:
        pytest.fail(
            f"rgpu build {' '.join(args)} failed (exit {proc.returncode}); this test installs "
            f"what it needs and must not skip:\n{proc.stderr[-6000:]}",
            pytrace=False,
        )
    result: dict[str, Any] = json.loads(proc.stdout)
    result["stderr"] = proc.stderr
    return result


@pytest.fixture(scope="module")
def saxpy_ws(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    parent = tmp_path_factory.mktemp("portable")
    run_rgpu("new", "portsaxpy", "--template", "minimal", "--dir", str(parent))
    ws = parent / "portsaxpy"
    return ws, build(ws, "--backend", "wgpu", "--yes")


@pytest.fixture(scope="module")
def escape_ws(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    parent = tmp_path_factory.mktemp("escape")
    run_rgpu("new", "portescape", "--template", "minimal", "--dir", str(parent))
    ws = parent / "portescape"
    with (ws / "kernel" / "src" / "lib.rs").open("a", encoding="utf-8") as f:
        f.write(ESCAPE_KERNEL)
    (ws / "src" / "bin").mkdir(parents=True)
    (ws / "src" / "bin" / "escape.rs").write_text(ESCAPE_BIN, encoding="utf-8")
    result = build(ws, "--backend", "wgpu", "--yes")
    # The second build keeps the first one's backend: the host then has wgpu and ash.
    ash = build(ws, "--backend", "ash", "--yes")
    assert sorted(ash["backends"]) == ["ash", "wgpu"], ash
    return ws, result


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


def test_a_kernel_with_f64_and_u8_builds_with_no_manual_step(
    escape_ws: tuple[Path, dict[str, Any]],
) -> None:
    ws, result = escape_ws
    argv = next(s["argv"] for s in result["plan"]["steps"] if s["name"] == "spirv-kernel")
    caps = [argv[i + 1] for i, a in enumerate(argv) if a == "--capabilities"]
    assert "Float64" in caps and "Int8" in caps  # what rust-gpu needs to compile the source
    (spv,) = [a for a in read_manifest(kernels_dir(ws)) if a.kind == "spirv"]
    assert sorted(spv.entry_points) == ["bytes_mix", "escape", "escape_wide", "saxpy"]
    dis = subprocess.run(
        ["spirv-dis", str(kernels_dir(ws) / spv.path)], capture_output=True, text=True, check=True
    ).stdout
    # rgpu computed the u8 count in 32 bits (its phis, its increment with `& 255`): no 8-bit
    # type is left in the embedded module, so its Int8 capability went too.
    narrow = spv.extra["narrow_ints"]
    assert narrow["promoted"] > 0 and narrow["capabilities_removed"] == ["Int8"], narrow
    assert "OpCapability Float64" in dis and "Int8" not in dis
    assert "OpTypeInt 8" not in dis and "OpBitwiseAnd %uint" in dis


def escape_runs() -> dict[str, dict[str, str]]:
    """{kernel: {backend: checksum}} from the escape program on cpu and on wgpu and ash
    (lavapipe)."""
    runs: dict[str, dict[str, str]] = {}
    for backend in ("cpu", "wgpu", "ash"):
        proc = subprocess.run(
            [str(TARGET_DIR / "release" / "escape")],
            env={**os.environ, **LAVAPIPE, "RGPU_BACKEND": backend},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        for line in proc.stdout.strip().splitlines():
            name, rest = line.split(" on ", 1)
            ran_on, checksum = rest.split(": ", 1)
            assert ran_on == backend, line
            runs.setdefault(name, {})[backend] = checksum
    return runs


def test_the_f64_and_u8_kernels_run_identically_on_lavapipe_and_cpu(
    escape_ws: tuple[Path, dict[str, Any]],
) -> None:
    """f64 arithmetic with a u8 count (escape) and with a u32 count (escape_wide) on lavapipe
    through wgpu and ash: bit-identical to the cpu backend. Before rgpu computed 8-bit values
    in 32 bits, lavapipe (Mesa 22.3.6) gave `escape` 109 of its 3840 counts one higher (sum
    12829 vs 12720: docs/reference.md, lavapipe's 8-bit loops)."""
    runs = escape_runs()
    for kernel in ("escape", "escape_wide", "bytes_mix"):
        assert runs[kernel]["wgpu"] == runs[kernel]["cpu"], (kernel, runs[kernel])
        assert runs[kernel]["ash"] == runs[kernel]["cpu"], (kernel, runs[kernel])
    assert runs["escape"]["cpu"].startswith("sum 12720 "), runs
    assert runs["escape_wide"]["cpu"] == runs["escape"]["cpu"]  # the limit (200) fits a u8
    assert runs["bytes_mix"]["cpu"].startswith("sum 4079287280148 "), runs


# naga 30.0.1's SPIR-V reader unwraps `None` in `proc/emitter.rs` (from `get_expr_handle`) on
# rust-gpu's code for this kernel: the smallest form found of the shape that hit it.
NAGA_PANIC_KERNEL = """
/// One subgroup: ballots in one unrolled block, barrier loops in the other.
#[rgpu::kernel(threads = 32)]
pub fn branchy(group: rgpu::Group, n: u32, out: rgpu::Global<u32>) {
    let mut acc = [0u32; 4];
    if n == 1 {
        rgpu::unroll!(J in 0..4 => {
            let v = group.subgroup_ballot(J as u32 == group.subgroup_lane());
            if v & 1 == 0 {
                acc[J] = group.subgroup_shuffle(v, 0);
            }
        });
    } else {
        rgpu::unroll!(J in 0..4 => {
            let mut old = 0;
            for t in 0..n {
                if t == group.subgroup_lane() {
                    old = t;
                }
                group.barrier();
            }
            acc[J] = group.subgroup_shuffle(old, 0);
        });
    }
    // SAFETY: lane < 32 <= out.len(), the host's promise.
    unsafe { out.write(group.subgroup_lane(), acc[0] + acc[1] + acc[2] + acc[3]) };
}
"""


def test_a_module_nagas_reader_crashes_on_is_a_finding_not_a_failed_build(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    parent = tmp_path_factory.mktemp("nagapanic")
    run_rgpu("new", "portpanic", "--template", "minimal", "--dir", str(parent))
    ws = parent / "portpanic"
    with (ws / "kernel" / "src" / "lib.rs").open("a", encoding="utf-8") as f:
        f.write(NAGA_PANIC_KERNEL)
    result = build(ws, "--backend", "wgpu", "--yes")
    lost = {(f["kernel"], f["platform"]): f for f in result["portability"]}
    platforms = [platform for platform, _ in KINDS.values()]
    assert set(lost) == {(k, p) for k in ("saxpy", "branchy") for p in platforms}, lost
    for finding in lost.values():
        assert finding["message"].startswith("naga's SPIR-V reader panicked on the module: ")
        assert "naga-30.0.1/src/proc/emitter.rs" in finding["message"], finding
        assert "a naga bug" in finding["change"], finding
    assert (
        "warning: `branchy` will not run on Metal: naga's SPIR-V reader panicked"
        in (result["stderr"])
    )
    # The SPIR-V itself is rgpu's to embed: the Vulkan build is not held back.
    (spv,) = [a for a in read_manifest(kernels_dir(ws)) if a.kind == "spirv"]
    assert "branchy" in spv.entry_points


def test_the_report_names_the_platforms_the_f64_kernel_cannot_reach(
    escape_ws: tuple[Path, dict[str, Any]],
) -> None:
    ws, result = escape_ws
    lost = {(f["kernel"], f["platform"]): f["message"] for f in result["portability"]}
    # naga reads the module (rgpu left no 8-bit type in it): f64 is what keeps the f64
    # kernels off Metal and WebGPU, and, since wgpu on Metal validates the whole module,
    # SAXPY and bytes_mix off Metal too. DX12 (naga's HLSL, validated by naga only) takes
    # all four, and WebGPU takes the WGSL of the two without f64.
    assert set(lost) == {
        ("escape", "webgpu"),
        ("escape", "metal"),
        ("escape_wide", "webgpu"),
        ("escape_wide", "metal"),
        ("saxpy", "metal"),
        ("bytes_mix", "metal"),
    }, lost
    for message in lost.values():
        assert "requires the `naga::valid::Capabilities::FLOAT64` flag" in message, message
    for kernel in ("saxpy", "bytes_mix"):
        assert lost[(kernel, "metal")].startswith("wgpu validates the whole SPIR-V module")
    assert "warning: `escape` will not run on Metal: " in result["stderr"]
    assert "warning: `escape` will not run on WebGPU: " in result["stderr"]
    change = {f["change"] for f in result["portability"]}
    assert change == {
        "Metal has no f64: use f32 in kernels that must run there",
        "WebGPU has no f64: use f32 in kernels that must run there",
    }, change
    artifacts = read_manifest(kernels_dir(ws))
    (spv,) = [a for a in artifacts if a.kind == "spirv"]
    assert spv.extra["portability"]["escape"]["dx12"] == "ok"
    written = {(a.entry_points[0], a.kind) for a in artifacts if a.kind != "spirv"}
    assert written == {
        ("escape", "hlsl"),
        ("escape_wide", "hlsl"),
        ("saxpy", "hlsl"),
        ("saxpy", "wgsl"),
        ("bytes_mix", "hlsl"),
        ("bytes_mix", "wgsl"),
    }


def test_a_required_platform_the_kernel_cannot_reach_fails_the_build(
    escape_ws: tuple[Path, dict[str, Any]],
) -> None:
    ws, _ = escape_ws
    proc = run_rgpu(
        "build", "--backend", "wgpu", "--require-platform", "metal", cwd=ws, check=False
    )
    assert proc.returncode == 10, proc.stderr
    assert "`escape` will not run on Metal" in proc.stderr
    assert "fix: " in proc.stderr and "require-platforms" in proc.stderr
    assert "Traceback" not in proc.stderr
