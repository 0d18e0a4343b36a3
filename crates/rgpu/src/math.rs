//! Float operations a kernel crate cannot reach in `no_std`: `mul_add`, one fused
//! multiply-add (one rounding) on every codegen.
//!
//! `f32::mul_add` is a method of std, which a `#![no_std]` kernel crate does not have on the
//! GPU targets (rustc: "no method named `mul_add` found for type `f32`"). [`MulAdd`] gives
//! the same method to kernels: `use rgpu::prelude::*;` then `x.mul_add(y, z)`. It lowers to
//! PTX `fma.rn.f32`/`.f64` on nvptx, to GLSL.std.450 `Fma` on rust-gpu,
//! and on the host (the cpu backend) std's own `mul_add`, correctly rounded. On the host
//! std's method is found first; it computes the same thing.

/// `self * a + b` with one rounding (a fused multiply-add), on every codegen.
///
/// ```ignore
/// use rgpu::prelude::*;
///
/// #[rgpu::kernel]
/// pub fn saxpy_fma(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
///     *y = a.mul_add(*x, *y);
/// }
/// ```
///
/// Floats stay bit-identical across the cpu, cuda, wgpu and ash backends: a kernel gets a
/// fused multiply-add where it writes `mul_add`, and nowhere else (`a * b + c` rounds twice
/// on every backend; see the README on float contraction).
pub trait MulAdd: Copy {
    /// `self * a + b`, rounded once.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! mul_add {
    ($t:ty, $intrinsic:ident, $ptx:literal, $reg:ident) => {
        impl MulAdd for $t {
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                #[cfg(rgpu_codegen = "host")]
                {
                    <$t>::mul_add(self, a, b)
                }
                // rustc's nvptx target: PTX's own `fma.rn` through inline assembly. The
                // float intrinsics of `core::intrinsics` change between nightlies (rustc
                // 1.96 has `fmaf32`, nightly-2026-10-30 has not: E0425); PTX does not.
                #[cfg(rgpu_codegen = "nvptx")]
                {
                    let fused: $t;
                    // SAFETY: one register-to-register float instruction; no memory is touched.
                    unsafe {
                        core::arch::asm!(
                            concat!("fma.rn.", $ptx, " {0}, {1}, {2}, {3};"),
                            out($reg) fused,
                            in($reg) self,
                            in($reg) a,
                            in($reg) b,
                            options(pure, nomem, nostack),
                        );
                    }
                    fused
                }
                // rust-gpu: GLSL.std.450 Fma; nvvm: llvm.fma. Both pin a nightly that has the
                // intrinsic (a safe fn on rust-gpu's nightly, an unsafe one on nvvm's).
                #[cfg(all(
                    any(rgpu_codegen = "nvvm", rgpu_codegen = "spirv"),
                    any(target_arch = "nvptx64", target_arch = "spirv")
                ))]
                #[allow(unused_unsafe)]
                // SAFETY: a float operation; no memory is touched.
                unsafe {
                    core::intrinsics::$intrinsic(self, a, b)
                }
                // `check-spirv`/`check-nvvm`: the GPU code type-checked on the host with a
                // stable compiler, never run.
                #[cfg(all(
                    any(rgpu_codegen = "nvvm", rgpu_codegen = "spirv"),
                    not(any(target_arch = "nvptx64", target_arch = "spirv"))
                ))]
                {
                    self * a + b
                }
            }
        }
    };
}

mul_add!(f32, fmaf32, "f32", reg32);
mul_add!(f64, fmaf64, "f64", reg64);
