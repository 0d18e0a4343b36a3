//! rustc's nvptx64 target: PTX instructions through inline assembly where PTX has the
//! function, `libm` (plain Rust, compiled to PTX) where it has not.
//!
//! Inline assembly, not `core::intrinsics` or LLVM's float intrinsics: those change between
//! nightlies (rustc 1.96 has `core::intrinsics::fmaf32`, nightly-2026-10-30 has not: E0425),
//! and LLVM's NVPTX backend turns `llvm.sin.f32` and friends into calls to functions that do
//! not exist on the GPU; PTX does not change. Every instruction here reads and writes
//! registers only (`pure, nomem`), so LLVM may still hoist, merge and drop them.
//!
//! Precision (PTX ISA 8, "Floating-Point Instructions"; measured: docs/kernel-api.md):
//! `sqrt.rn` and `fma.rn` are correctly rounded; `cvt.rmi/rpi/rzi` exact; `rsqrt.approx.f32`
//! and `ex2.approx.f32` within 2 ulp. `exp` is `ex2.approx` of `x * log2(e)` carried in two
//! floats (`exp_from_exp2`, mod.rs). The logarithms,
//! trigonometry, `tanh` and `powf` are libm's software routines (within 1 ulp; no lookup
//! tables except sin/cos/tan's for arguments past 2^28 or so), as CUDA's own `logf`, `sinf`,
//! `powf` are software.

use core::arch::asm;

use super::{Float, MulAdd};

/// One PTX instruction `$op` of one operand (`{0}` out, `{1}` in).
macro_rules! unary {
    ($op:literal, $reg:ident, $x:expr) => {{
        let out;
        // SAFETY: one register-to-register float instruction; no memory is touched.
        unsafe {
            asm!(
                concat!($op, " {0}, {1};"),
                out($reg) out,
                in($reg) $x,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        out
    }};
}

impl MulAdd for f32 {
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        let fused: f32;
        // SAFETY: one register-to-register float instruction; no memory is touched.
        unsafe {
            asm!(
                "fma.rn.f32 {0}, {1}, {2}, {3};",
                out(reg32) fused,
                in(reg32) self,
                in(reg32) a,
                in(reg32) b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        fused
    }
}

impl MulAdd for f64 {
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        let fused: f64;
        // SAFETY: one register-to-register float instruction; no memory is touched.
        unsafe {
            asm!(
                "fma.rn.f64 {0}, {1}, {2}, {3};",
                out(reg64) fused,
                in(reg64) self,
                in(reg64) a,
                in(reg64) b,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        fused
    }
}

impl Float for f32 {
    #[inline(always)]
    fn sqrt(self) -> Self {
        unary!("sqrt.rn.f32", reg32, self)
    }
    #[inline(always)]
    fn rsqrt(self) -> Self {
        unary!("rsqrt.approx.f32", reg32, self)
    }
    #[inline(always)]
    fn exp2(self) -> Self {
        unary!("ex2.approx.f32", reg32, self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        super::exp_from_exp2(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        libm::logf(self)
    }
    #[inline(always)]
    fn log2(self) -> Self {
        libm::log2f(self)
    }
    #[inline(always)]
    fn log10(self) -> Self {
        libm::log10f(self)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        libm::sinf(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        libm::cosf(self)
    }
    #[inline(always)]
    fn tan(self) -> Self {
        libm::tanf(self)
    }
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        libm::sincosf(self)
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        libm::tanhf(self)
    }
    #[inline(always)]
    fn atan2(self, other: Self) -> Self {
        libm::atan2f(self, other)
    }
    #[inline(always)]
    fn powf(self, n: Self) -> Self {
        libm::powf(self, n)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        unary!("cvt.rmi.f32.f32", reg32, self)
    }
    #[inline(always)]
    fn ceil(self) -> Self {
        unary!("cvt.rpi.f32.f32", reg32, self)
    }
    #[inline(always)]
    fn trunc(self) -> Self {
        unary!("cvt.rzi.f32.f32", reg32, self)
    }
}

impl Float for f64 {
    #[inline(always)]
    fn sqrt(self) -> Self {
        unary!("sqrt.rn.f64", reg64, self)
    }
    #[inline(always)]
    fn rsqrt(self) -> Self {
        unary!("rsqrt.approx.f64", reg64, self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::exp(self)
    }
    #[inline(always)]
    fn exp2(self) -> Self {
        libm::exp2(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        libm::log(self)
    }
    #[inline(always)]
    fn log2(self) -> Self {
        libm::log2(self)
    }
    #[inline(always)]
    fn log10(self) -> Self {
        libm::log10(self)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        libm::sin(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        libm::cos(self)
    }
    #[inline(always)]
    fn tan(self) -> Self {
        libm::tan(self)
    }
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        libm::sincos(self)
    }
    #[inline(always)]
    fn tanh(self) -> Self {
        libm::tanh(self)
    }
    #[inline(always)]
    fn atan2(self, other: Self) -> Self {
        libm::atan2(self, other)
    }
    #[inline(always)]
    fn powf(self, n: Self) -> Self {
        libm::pow(self, n)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        unary!("cvt.rmi.f64.f64", reg64, self)
    }
    #[inline(always)]
    fn ceil(self) -> Self {
        unary!("cvt.rpi.f64.f64", reg64, self)
    }
    #[inline(always)]
    fn trunc(self) -> Self {
        unary!("cvt.rzi.f64.f64", reg64, self)
    }
}
