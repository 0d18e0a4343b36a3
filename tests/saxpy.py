"""The SAXPY kernel a user adds to a new workspace, shared by the tests that build it
(tests/integration/test_kernel_api.py with the GLSL FIXTURE twin for Vulkan,
tests/integration/test_rust_gpu.py with rust-gpu)."""

from __future__ import annotations

import struct
from pathlib import Path

# What the user writes: the kernel (appended to kernel/src/lib.rs) ...
SAXPY_KERNEL = """\
#[rgpu::kernel]
pub fn saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
    *y += a * *x;
}
"""
# ... and the launch, in a test of the host package (tests/saxpy.rs, below).
SAXPY_CALL = "kernel::saxpy(device, N, 2.5, &x, &mut y).map_err(|e| e.to_string())?;"

# The rest of tests/saxpy.rs: the harness around the call. `each_backend` runs it on every
# backend built in (RGPU_TEST_BACKENDS narrows, RGPU_REQUIRE_BACKENDS makes a skip fail);
# each backend's y goes to $SAXPY_OUT.<backend> for the Python test to compare. N is not a
# multiple of the 256 threads of a workgroup; every value is exact in f32 whether or not a
# device fuses the multiply-add, so all backends must agree bit for bit.
SAXPY_TEST = """\
const N: u32 = 100_003;

#[test]
fn saxpy() {
    rgpu::testing::each_backend("saxpy", |device| {
        let x: Vec<f32> = (0..N).map(|i| (i % 1024) as f32 * 0.25).collect();
        let mut y: Vec<f32> = (0..N).map(|i| (i % 91) as f32 - 45.0).collect();
        CALL
        let bytes: Vec<u8> = y.iter().flat_map(|v| v.to_le_bytes()).collect();
        let out = std::env::var("SAXPY_OUT").map_err(|e| e.to_string())?;
        std::fs::write(format!("{out}.{}", device.backend()), bytes).map_err(|e| e.to_string())
    });
}
""".replace("CALL", SAXPY_CALL)
N = 100_003


def saxpy_expected() -> list[float]:
    return [(i % 91) - 45.0 + 2.5 * ((i % 1024) * 0.25) for i in range(N)]


def floats(path: Path) -> list[float]:
    data = path.read_bytes()
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def user_lines(code: str) -> list[str]:
    """The lines a user writes: not blank, not only a comment."""
    return [ln for ln in code.splitlines() if ln.strip() and not ln.strip().startswith("//")]


def add_saxpy(ws: Path) -> None:
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n" + SAXPY_KERNEL)
    (ws / "tests" / "saxpy.rs").write_text(SAXPY_TEST)


# A kernel of `a * b + c` chains on inexact floats, whose results show whether a backend
# fuses a multiply and an add into one rounding (NVIDIA's Vulkan compiler does unless the
# SPIR-V says NoContraction; rustc's nvptx PTX and the cpu backend round each operation).
# Its source is a real file, which the portability corpus includes too (tests/corpus_table.py).
MAD_CHAIN_KERNEL = (Path(__file__).parent / "kernels" / "mad_chain.rs").read_text(encoding="utf-8")
# tests/mad_chain.rs: each backend's results equal plain Rust's bit for bit.
MAD_CHAIN_TEST = """\
const N: u32 = 100_003;

fn plain(a: f32, x: f32, y: f32) -> f32 {
    let mut v = y;
    v = v * x + a;
    v = v * x - a;
    v = a * v + x;
    v = v * v + x;
    v = x * v - v * a;
    v = v * 0.7 + x * 0.3;
    v = v * x + v;
    v = v * a + x;
    v
}

#[test]
fn mad_chain() {
    rgpu::testing::each_backend("mad_chain", |device| {
        let a = 0.3127_f32;
        let x: Vec<f32> = (0..N).map(|i| 0.5 + (i % 4099) as f32 / 4099.0).collect();
        let y: Vec<f32> = (0..N).map(|i| ((i * 7919) % 10007) as f32 / 10007.0 - 0.5).collect();
        let mut out = y.clone();
        kernel::mad_chain(device, N, a, &x, &mut out).map_err(|e| e.to_string())?;
        let differ = (0..N as usize)
            .filter(|&i| out[i].to_bits() != plain(a, x[i], y[i]).to_bits())
            .count();
        if differ > 0 {
            return Err(format!("{differ} of {N} results differ from plain Rust in their bits"));
        }
        Ok(())
    });
}
"""


def add_mad_chain(ws: Path) -> None:
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n" + MAD_CHAIN_KERNEL)
    (ws / "tests" / "mad_chain.rs").write_text(MAD_CHAIN_TEST)
