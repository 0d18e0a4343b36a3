//! Rust-CUDA's rustc_codegen_nvvm: libdevice (`__nv_sqrtf`, `__nv_expf`, ...) through
//! cuda_std's `GpuFloat` and `intrinsics::rsqrtf`/`rsqrt`; `mul_add` is `llvm.fma`
//! (`core::intrinsics::fmaf32`/`fmaf64` on Rust-CUDA's pinned nightly). libdevice's
//! precision is CUDA's (the CUDA C++ Programming Guide, "Mathematical Functions").
//!
//! NOT COMPILED TO PTX on rgpu's machines (no rustc-dev, LLVM 7 or libNVVM there): with
//! the `check-nvvm` feature this is type-checked on the host against cuda_std's source.

use cuda_std::GpuFloat as Libdevice;

use super::{Float, MulAdd};

macro_rules! nvvm {
    ($t:ident, $fma:ident, $rsqrt:ident) => {
        impl MulAdd for $t {
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: a float operation; no memory is touched.
                unsafe {
                    core::intrinsics::$fma(self, a, b)
                }
                // `check-nvvm`: type-checked on the host, never run.
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    Libdevice::mul_add(self, a, b)
                }
            }
        }

        impl Float for $t {
            #[inline(always)]
            fn sqrt(self) -> Self {
                Libdevice::sqrt(self)
            }
            #[inline(always)]
            fn rsqrt(self) -> Self {
                // SAFETY: libdevice's reciprocal square root; no memory is touched.
                unsafe { cuda_std::intrinsics::$rsqrt(self) }
            }
            #[inline(always)]
            fn exp(self) -> Self {
                Libdevice::exp(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                Libdevice::exp2(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                Libdevice::ln(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                Libdevice::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                Libdevice::log10(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                Libdevice::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                Libdevice::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                Libdevice::tan(self)
            }
            #[inline(always)]
            fn sin_cos(self) -> (Self, Self) {
                Libdevice::sin_cos(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                Libdevice::tanh(self)
            }
            #[inline(always)]
            fn atan2(self, other: Self) -> Self {
                Libdevice::atan2(self, other)
            }
            #[inline(always)]
            fn powf(self, n: Self) -> Self {
                Libdevice::powf(self, n)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                Libdevice::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                Libdevice::ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                Libdevice::trunc(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                Libdevice::round(self)
            }
        }
    };
}

nvvm!(f32, fmaf32, rsqrtf);
nvvm!(f64, fmaf64, rsqrt);
