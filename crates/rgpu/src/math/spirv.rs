//! rust-gpu: spirv-std's `num_traits::Float` (libm's functions), which rustc_codegen_spirv
//! replaces with GLSL.std.450 instructions (`Sqrt`, `Exp`, `Log`, `Sin`, `Pow`, `Floor`,
//! ...); `rsqrt` is `InverseSqrt`, written here as SPIR-V assembly (spirv-std 0.11 has no
//! call for it): the instruction the function is, which naga turns into WGSL's `inverseSqrt`
//! and MSL's `rsqrt` (on NVIDIA's Vulkan driver `1 / Sqrt` measured the same: BENCHMARKS.md).
//! `round` is not GLSL's `Round`, which rounds halfway cases in a direction the driver
//! chooses: it is the trait's own, from `Trunc` (halfway away from zero, as std).
//! Their precision is the Vulkan driver's, within the bounds of the Vulkan specification
//! ("Precision and Operation of SPIR-V Instructions"). `mul_add` is `core::intrinsics`'
//! `fmaf32`/`fmaf64` (GLSL.std.450 `Fma`) on rust-gpu's pinned nightly.
//!
//! NOT COMPILED TO SPIR-V on the host: with the `check-spirv` feature this is type-checked
//! against spirv-std's source (libm's routines run there, never the GPU's).

use spirv_std::num_traits::Float as Libm;

use super::{Float, MulAdd};

macro_rules! spirv {
    ($t:ident, $fma:ident, $exp:item) => {
        impl MulAdd for $t {
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                // rust-gpu's nightly: a safe fn, GLSL.std.450 Fma.
                #[cfg(target_arch = "spirv")]
                #[allow(unused_unsafe)]
                // SAFETY: a float operation; no memory is touched.
                unsafe {
                    core::intrinsics::$fma(self, a, b)
                }
                // `check-spirv`: type-checked on the host, never run.
                #[cfg(not(target_arch = "spirv"))]
                {
                    Libm::mul_add(self, a, b)
                }
            }
        }

        impl Float for $t {
            #[inline(always)]
            fn sqrt(self) -> Self {
                Libm::sqrt(self)
            }
            #[inline(always)]
            fn rsqrt(self) -> Self {
                #[cfg(target_arch = "spirv")]
                {
                    let mut result: Self = 0.0;
                    // SAFETY: GLSL.std.450 InverseSqrt (32) of a register into a local.
                    unsafe {
                        core::arch::asm!(
                            "%glsl = OpExtInstImport \"GLSL.std.450\"",
                            "%result = OpExtInst typeof*{result} %glsl 32 {x}",
                            "OpStore {result} %result",
                            x = in(reg) self,
                            result = in(reg) &mut result,
                        );
                    }
                    result
                }
                // `check-spirv`: type-checked on the host, never run.
                #[cfg(not(target_arch = "spirv"))]
                {
                    1.0 / Libm::sqrt(self)
                }
            }
            $exp
            #[inline(always)]
            fn exp2(self) -> Self {
                Libm::exp2(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                Libm::ln(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                Libm::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                Libm::log10(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                Libm::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                Libm::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                Libm::tan(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                Libm::tanh(self)
            }
            #[inline(always)]
            fn atan2(self, other: Self) -> Self {
                Libm::atan2(self, other)
            }
            #[inline(always)]
            fn powf(self, n: Self) -> Self {
                Libm::powf(self, n)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                Libm::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                Libm::ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                Libm::trunc(self)
            }
        }
    };
}

// f32 `exp`: the driver's `Exp2` of `x * log2 e` carried in two floats (mod.rs): NVIDIA's
// Vulkan `Exp` is 61 ulp off where its `Exp2` is within 2 (benchmarks/math_precision).
spirv!(
    f32,
    fmaf32,
    #[inline(always)]
    fn exp(self) -> Self {
        super::exp_from_exp2(self)
    }
);
spirv!(
    f64,
    fmaf64,
    #[inline(always)]
    fn exp(self) -> Self {
        Libm::exp(self)
    }
);
