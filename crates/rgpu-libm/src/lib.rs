//! libm's functions for rustc's `nvptx64-nvidia-cuda` target, on the GPU's instructions.
//!
//! `rgpu build --codegen nvptx` builds kernels with this crate in place of crates.io's
//! `libm` (a `[patch]` given to the kernel build only), so a kernel's dependencies that call
//! libm (glam with `features = ["libm"]`, num-traits' `Float`, nalgebra, the user's own
//! helpers) get the same code as `rgpu::prelude`'s math:
//!
//! - one instruction where PTX has a correctly rounded or exact one: `sqrt`/`sqrtf`
//!   (`sqrt.rn`), `floor`, `ceil`, `trunc`, `rint`, `roundeven` (`cvt.rmi/rpi/rzi/rni`),
//!   `fabs`, `copysign` (bit operations), `fma` (`fma.rn`): bit-identical to libm's;
//! - every other function libm has: libm's own code, as the `core` build's
//!   compiler-builtins exports it for targets without a C library (`sinf`, `expf`, `pow`,
//!   ...): the same algorithms, the same results;
//! - the few it does not export, written here over those: `frexp`, `ilogb`, `modf`,
//!   `nextafter`, `scalbn` (= `ldexp`), `remainder`, `remquo` (exact, through `fmod`),
//!   `lgamma` (= `lgamma_r`), `sincos` (= `sin`, `cos`), and, within one ulp or two of
//!   libm's, `exp10` (`pow(10, x)`) and `atanh` (`log1p`).
//!
//! libm's Bessel functions (`j0`, `j1`, `jn`, `y0`, `y1`, `yn` and their `f` forms) are not
//! here: a kernel dependency that calls one does not compile for nvptx (build with
//! `--codegen nvvm`, whose libdevice has them, or leave them on the host).
#![no_std]
#![feature(core_float_math)]
#![allow(clippy::excessive_precision, clippy::float_cmp)]

mod exact;
mod forward;
mod helper;

pub use exact::*;
pub use forward::*;
pub use helper::Libm;

use core::{f32::math as m32, f64::math as m64};

macro_rules! unary {
    ($($name:ident: $t:ty => $body:path;)*) => {$(
        #[inline]
        #[must_use]
        pub fn $name(x: $t) -> $t {
            $body(x)
        }
    )*};
}

unary! {
    sqrt: f64 => m64::sqrt;
    sqrtf: f32 => m32::sqrt;
    floor: f64 => m64::floor;
    floorf: f32 => m32::floor;
    ceil: f64 => m64::ceil;
    ceilf: f32 => m32::ceil;
    trunc: f64 => m64::trunc;
    truncf: f32 => m32::trunc;
    rint: f64 => m64::round_ties_even;
    rintf: f32 => m32::round_ties_even;
    roundeven: f64 => m64::round_ties_even;
    roundevenf: f32 => m32::round_ties_even;
    fabs: f64 => f64::abs;
    fabsf: f32 => f32::abs;
}

#[inline]
#[must_use]
pub fn copysign(x: f64, y: f64) -> f64 {
    x.copysign(y)
}

#[inline]
#[must_use]
pub fn copysignf(x: f32, y: f32) -> f32 {
    x.copysign(y)
}

#[inline]
#[must_use]
pub fn fma(x: f64, y: f64, z: f64) -> f64 {
    m64::mul_add(x, y, z)
}

#[inline]
#[must_use]
pub fn fmaf(x: f32, y: f32, z: f32) -> f32 {
    m32::mul_add(x, y, z)
}
