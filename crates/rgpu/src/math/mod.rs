//! Float math in kernels, the same methods on every codegen: `use rgpu::prelude::*;` then
//! `x.sqrt()`, `x.exp()`, `x.mul_add(y, z)`, ... on `f32` and `f64`.
//!
//! A `#![no_std]` kernel crate has no `f32::sqrt` on the GPU targets (those methods are std's,
//! and std does not exist there), and `libm`'s software routines are slow on a GPU. The
//! traits here give the methods std gives, lowered to each target's hardware:
//!
//! - **cuda (rustc's nvptx target)**: PTX instructions where PTX has them (`sqrt.rn`,
//!   `rsqrt.approx`, `ex2.approx`, `cvt.rmi`/`rpi`/`rzi`, `abs`, `fma.rn`), `libm`'s
//!   correctly tested software routines for the rest (logarithms, trigonometry, `powf`,
//!   `tanh`, and every f64 transcendental: PTX has no f64 ones either);
//! - **cuda (Rust-CUDA's nvvm)**: libdevice (`__nv_sqrtf`, `__nv_expf`, ...) through
//!   cuda_std's `GpuFloat`;
//! - **Vulkan (rust-gpu)**: GLSL.std.450 instructions (`Sqrt`, `InverseSqrt`, `Exp`, `Log`,
//!   `Sin`, ...), whose precision is the Vulkan driver's (the Vulkan specification bounds it);
//! - **cpu**: std's own methods (on the host, std's inherent methods are found before these
//!   traits', so a kernel computes exactly what the same Rust computes on the CPU).
//!
//! Each target's implementation is one file beside this one (`host.rs`, `nvptx.rs`,
//! `nvvm.rs`, `spirv.rs`); the methods and their contract are written once, here. A new
//! function is one trait method here and one function in each of those files.
//! docs/kernel-api.md lists each function's lowering and its measured precision per
//! backend.

#[cfg(rgpu_codegen = "host")]
mod host;
#[cfg(rgpu_codegen = "nvptx")]
mod nvptx;
#[cfg(rgpu_codegen = "nvvm")]
mod nvvm;
#[cfg(rgpu_codegen = "spirv")]
mod spirv;

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
/// It lowers to PTX `fma.rn.f32`/`.f64` on nvptx, to GLSL.std.450 `Fma` on rust-gpu, and
/// on the host (the cpu backend) to std's own `mul_add`, correctly rounded. Floats stay
/// bit-identical across the cpu, cuda, wgpu and ash backends: a kernel gets a fused
/// multiply-add where it writes `mul_add`, and nowhere else (`a * b + c` rounds twice on
/// every backend; docs/backends.md, "Vulkan backends", says how on Vulkan).
pub trait MulAdd: Copy {
    /// `self * a + b`, rounded once.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

/// The float functions std gives `f32` and `f64`, in kernels (`use rgpu::prelude::*;`).
///
/// ```ignore
/// use rgpu::prelude::*;
///
/// #[rgpu::kernel]
/// pub fn softplus(#[item] x: &f32, #[item] y: &mut f32) {
///     *y = (1.0 + x.exp()).ln();
/// }
/// ```
///
/// `abs`, `min`, `max`, `clamp`, `copysign`, `recip` and `signum` are core's own methods,
/// the same on every codegen. The names and meanings are std's; what is not std's is the
/// precision on the GPUs, which docs/kernel-api.md states per function and backend:
/// - exact (correctly rounded, bit-identical on every backend): `floor`, `ceil`, `round`,
///   `trunc`, `fract`, `abs`, and `sqrt` on cuda and the cpu (Vulkan bounds `Sqrt` to a few
///   ulp; NVIDIA's Vulkan driver and Mesa's lavapipe round it correctly in the precision
///   test);
/// - within a few ulp of the true value: `exp`, `exp2`, `ln`, `log2`, `log10`, `powf`,
///   `tanh`, and `sin`, `cos`, `tan` for arguments in the range the backend's table gives;
/// - `rsqrt`: an approximation (PTX `rsqrt.approx`, GLSL `InverseSqrt`; on the cpu
///   `1 / sqrt`), within 2 ulp on the hardware measured.
///
/// On the cpu backend each method is std's: results there equal plain Rust's on the host.
pub trait Float: MulAdd + sealed::Bits {
    /// The square root (NaN below zero).
    fn sqrt(self) -> Self;
    /// `1 / sqrt(self)`, approximate (one hardware instruction on the GPUs).
    fn rsqrt(self) -> Self;
    /// `e^self`.
    fn exp(self) -> Self;
    /// `2^self`.
    fn exp2(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// The base-2 logarithm.
    fn log2(self) -> Self;
    /// The base-10 logarithm.
    fn log10(self) -> Self;
    /// The sine (radians).
    fn sin(self) -> Self;
    /// The cosine (radians).
    fn cos(self) -> Self;
    /// The tangent (radians).
    fn tan(self) -> Self;
    /// The hyperbolic tangent.
    fn tanh(self) -> Self;
    /// The angle of the point `(other, self)` from the x axis, in `(-pi, pi]` (std's
    /// `y.atan2(x)`).
    fn atan2(self, other: Self) -> Self;
    /// `self^n`.
    fn powf(self, n: Self) -> Self;
    /// The largest integer not above `self`.
    fn floor(self) -> Self;
    /// The smallest integer not below `self`.
    fn ceil(self) -> Self;
    /// The integer part (rounded towards zero).
    fn trunc(self) -> Self;

    /// The nearest integer, halfway cases away from zero (std's `round`).
    #[inline(always)]
    fn round(self) -> Self {
        round_from_trunc(self)
    }

    /// `self - self.trunc()`.
    #[inline(always)]
    fn fract(self) -> Self {
        fract_from_trunc(self)
    }

    /// `(self.sin(), self.cos())`.
    #[inline(always)]
    fn sin_cos(self) -> (Self, Self) {
        (self.sin(), self.cos())
    }

    /// `self^n` by repeated multiplication (the rounding of std's `powi` on the cpu: the same
    /// bits on every backend).
    #[inline(always)]
    fn powi(self, n: i32) -> Self {
        powi_by_squaring(self, n)
    }
}

mod sealed {
    /// What the provided methods need of a float type; sealed: `f32` and `f64` only.
    pub trait Bits:
        Copy
        + PartialOrd
        + core::ops::Add<Output = Self>
        + core::ops::Sub<Output = Self>
        + core::ops::Mul<Output = Self>
        + core::ops::Div<Output = Self>
    {
        const ONE: Self;
        const HALF: Self;
        const MINUS_HALF: Self;
    }

    impl Bits for f32 {
        const ONE: Self = 1.0;
        const HALF: Self = 0.5;
        const MINUS_HALF: Self = -0.5;
    }

    impl Bits for f64 {
        const ONE: Self = 1.0;
        const HALF: Self = 0.5;
        const MINUS_HALF: Self = -0.5;
    }
}

use sealed::Bits;

/// std's `round` from `trunc`: `x - trunc(x)` is exact (and has `x`'s sign), so comparing
/// it with one half decides the halfway cases exactly, away from zero. NaN and infinities
/// pass through (every comparison with NaN is false; `inf - inf` is NaN).
#[inline(always)]
fn round_from_trunc<T: Float>(x: T) -> T {
    let t = x.trunc();
    let d = x - t;
    if d >= T::HALF {
        t + T::ONE
    } else if d <= T::MINUS_HALF {
        t - T::ONE
    } else {
        t
    }
}

#[inline(always)]
fn fract_from_trunc<T: Float>(x: T) -> T {
    x - x.trunc()
}

/// log2(e) as the sum of two f32: `LOG2E_HI + LOG2E_LO` to about 48 bits.
#[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "spirv"))]
const LOG2E_HI: f32 = core::f32::consts::LOG2_E;
#[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "spirv"))]
const LOG2E_LO: f32 = 1.925_963e-8;

/// `e^x` from the target's `exp2` (PTX `ex2.approx`, GLSL `Exp2`: within 2 ulp on the
/// hardware measured), with `x * log2 e` carried as `hi + lo`: `2^hi * (1 + lo * ln 2)`.
/// Rounding the product once would add an error that grows with `|x|` (60 ulp near 88).
/// The clamp keeps `lo` finite (past it the result is 0 or infinity anyway); NaN passes
/// through it (comparisons with NaN are false). The fused multiply-add that recovers `lo`
/// needs a real `Fma`: where a driver splits it (Mesa's lavapipe), `lo` is 0 and the result
/// is `exp2(x * log2 e)`.
#[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "spirv"))]
#[inline(always)]
fn exp_from_exp2(x: f32) -> f32 {
    let x = x.clamp(-104.0, 89.0);
    let hi = x * LOG2E_HI;
    let lo = MulAdd::mul_add(x, LOG2E_HI, -hi) + x * LOG2E_LO;
    let r = Float::exp2(hi);
    MulAdd::mul_add(r, lo * core::f32::consts::LN_2, r)
}

/// compiler-rt's `__powisf2`/`__powidf2` (what std's `powi` calls on the host): square and
/// multiply over the bits of `|n|`, then one reciprocal for a negative `n`.
#[inline(always)]
fn powi_by_squaring<T: Float>(x: T, n: i32) -> T {
    let mut base = x;
    let mut bits = n.unsigned_abs();
    let mut result = T::ONE;
    loop {
        if bits & 1 != 0 {
            result = result * base;
        }
        bits /= 2;
        if bits == 0 {
            break;
        }
        base = base * base;
    }
    if n < 0 {
        recip(result)
    } else {
        result
    }
}

#[inline(always)]
fn recip<T: Bits>(x: T) -> T {
    T::ONE / x
}
