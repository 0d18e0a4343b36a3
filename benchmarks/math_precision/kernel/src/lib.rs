//! Each float function of the kernel API, on `f32` and `f64`: `y[i] = f(x[i], z[i])` with
//! `f` chosen by `which` (the host program's FUNCTIONS table gives the numbers).
#![no_std]

rgpu::embed_kernels!();

use rgpu::prelude::*;

/// The functions, in the order of the host's table.
macro_rules! apply {
    ($which:expr, $x:expr, $z:expr) => {
        match $which {
            0 => $x.sqrt(),
            1 => $x.rsqrt(),
            2 => $x.exp(),
            3 => $x.exp2(),
            4 => $x.ln(),
            5 => $x.log2(),
            6 => $x.log10(),
            7 => $x.sin(),
            8 => $x.cos(),
            9 => $x.tan(),
            10 => $x.tanh(),
            11 => $x.powf($z),
            12 => $x.floor(),
            13 => $x.ceil(),
            14 => $x.round(),
            15 => $x.trunc(),
            16 => $x.fract(),
            // Through f32: rust-gpu compiles `f64 as i32` with 64-bit integers (Int64).
            17 => $x.powi(($z as f32) as i32),
            18 => $x.mul_add($z, 0.25),
            19 => $x.atan2($z),
            _ => $x,
        }
    };
}

/// `y = f(x, z)` in f32.
#[rgpu::kernel]
pub fn math32(which: u32, #[item] x: &f32, #[item] z: &f32, #[item] y: &mut f32) {
    *y = apply!(which, *x, *z);
}

/// `y = f(x, z)` in f64.
#[rgpu::kernel]
pub fn math64(which: u32, #[item] x: &f64, #[item] z: &f64, #[item] y: &mut f64) {
    // GLSL.std.450 has no f64 exp, log, sin, cos, tan, tanh or pow (their Result Type is a
    // 16- or 32-bit float), and spirv-std's own `f64::powi` is `Pow`: on Vulkan an f64
    // kernel has only these.
    let (x, z) = (*x, *z);
    *y = match which {
        0 => x.sqrt(),
        1 => x.rsqrt(),
        12 => x.floor(),
        13 => x.ceil(),
        14 => x.round(),
        15 => x.trunc(),
        16 => x.fract(),
        18 => x.mul_add(z, 0.25),
        _ => x,
    };
}
