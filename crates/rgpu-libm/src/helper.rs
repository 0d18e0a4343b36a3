//! `Libm<T>`: libm's functions named once for f32 and f64 (`Libm::<f32>::sqrt`).

use core::marker::PhantomData;

/// libm's functions as associated functions of `Libm<f32>` and `Libm<f64>`.
pub struct Libm<T>(PhantomData<T>);

macro_rules! methods {
    ($t:ty; $(fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty => $f:path;)*) => {
        impl Libm<$t> {
            $(
                #[inline(always)]
                #[must_use]
                pub fn $name($($arg: $ty),*) -> $ret {
                    $f($($arg),*)
                }
            )*
        }
    };
}

macro_rules! both {
    ($(fn $name:ident($($arg:ident: $kind:tt),*) -> $ret:tt => $f64:ident, $f32:ident;)*) => {
        methods!(f64; $(fn $name($($arg: both!(@ty f64, $kind)),*) -> both!(@ty f64, $ret) => crate::$f64;)*);
        methods!(f32; $(fn $name($($arg: both!(@ty f32, $kind)),*) -> both!(@ty f32, $ret) => crate::$f32;)*);
    };
    (@ty $t:ty, F) => { $t };
    (@ty $t:ty, I) => { i32 };
    (@ty $t:ty, FF) => { ($t, $t) };
    (@ty $t:ty, FI) => { ($t, i32) };
}

both! {
    fn acos(x: F) -> F => acos, acosf;
    fn acosh(x: F) -> F => acosh, acoshf;
    fn asin(x: F) -> F => asin, asinf;
    fn asinh(x: F) -> F => asinh, asinhf;
    fn atan(x: F) -> F => atan, atanf;
    fn atan2(y: F, x: F) -> F => atan2, atan2f;
    fn atanh(x: F) -> F => atanh, atanhf;
    fn cbrt(x: F) -> F => cbrt, cbrtf;
    fn ceil(x: F) -> F => ceil, ceilf;
    fn copysign(x: F, y: F) -> F => copysign, copysignf;
    fn cos(x: F) -> F => cos, cosf;
    fn cosh(x: F) -> F => cosh, coshf;
    fn erf(x: F) -> F => erf, erff;
    fn erfc(x: F) -> F => erfc, erfcf;
    fn exp(x: F) -> F => exp, expf;
    fn exp10(x: F) -> F => exp10, exp10f;
    fn exp2(x: F) -> F => exp2, exp2f;
    fn expm1(x: F) -> F => expm1, expm1f;
    fn fabs(x: F) -> F => fabs, fabsf;
    fn fdim(x: F, y: F) -> F => fdim, fdimf;
    fn floor(x: F) -> F => floor, floorf;
    fn fma(x: F, y: F, z: F) -> F => fma, fmaf;
    fn fmax(x: F, y: F) -> F => fmax, fmaxf;
    fn fmaximum(x: F, y: F) -> F => fmaximum, fmaximumf;
    fn fmaximum_num(x: F, y: F) -> F => fmaximum_num, fmaximum_numf;
    fn fmin(x: F, y: F) -> F => fmin, fminf;
    fn fminimum(x: F, y: F) -> F => fminimum, fminimumf;
    fn fminimum_num(x: F, y: F) -> F => fminimum_num, fminimum_numf;
    fn fmod(x: F, y: F) -> F => fmod, fmodf;
    fn frexp(x: F) -> FI => frexp, frexpf;
    fn hypot(x: F, y: F) -> F => hypot, hypotf;
    fn ilogb(x: F) -> I => ilogb, ilogbf;
    fn ldexp(x: F, n: I) -> F => ldexp, ldexpf;
    fn lgamma(x: F) -> F => lgamma, lgammaf;
    fn lgamma_r(x: F) -> FI => lgamma_r, lgammaf_r;
    fn log(x: F) -> F => log, logf;
    fn log10(x: F) -> F => log10, log10f;
    fn log1p(x: F) -> F => log1p, log1pf;
    fn log2(x: F) -> F => log2, log2f;
    fn modf(x: F) -> FF => modf, modff;
    fn nextafter(x: F, y: F) -> F => nextafter, nextafterf;
    fn pow(x: F, y: F) -> F => pow, powf;
    fn remainder(x: F, y: F) -> F => remainder, remainderf;
    fn remquo(x: F, y: F) -> FI => remquo, remquof;
    fn rint(x: F) -> F => rint, rintf;
    fn round(x: F) -> F => round, roundf;
    fn roundeven(x: F) -> F => roundeven, roundevenf;
    fn scalbn(x: F, n: I) -> F => scalbn, scalbnf;
    fn sin(x: F) -> F => sin, sinf;
    fn sincos(x: F) -> FF => sincos, sincosf;
    fn sinh(x: F) -> F => sinh, sinhf;
    fn sqrt(x: F) -> F => sqrt, sqrtf;
    fn tan(x: F) -> F => tan, tanf;
    fn tanh(x: F) -> F => tanh, tanhf;
    fn tgamma(x: F) -> F => tgamma, tgammaf;
    fn trunc(x: F) -> F => trunc, truncf;
}
