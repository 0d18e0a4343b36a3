//! libm's functions that `core`'s compiler-builtins exports on nvptx64 (`extern "C"`
//! symbols holding libm's own code; weak, linked into the kernel's PTX with `core`).

macro_rules! forward {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {
        mod symbols {
            extern "C" {
                $(pub fn $name($($arg: $ty),*) -> $ret;)*
            }
        }
        $(
            #[inline]
            #[must_use]
            pub fn $name($($arg: $ty),*) -> $ret {
                // SAFETY: each symbol is libm's function of this signature, a pure function
                // of its arguments.
                unsafe { symbols::$name($($arg),*) }
            }
        )*
    };
}

forward! {
    acos(x: f64) -> f64;
    acosf(x: f32) -> f32;
    acosh(x: f64) -> f64;
    acoshf(x: f32) -> f32;
    asin(x: f64) -> f64;
    asinf(x: f32) -> f32;
    asinh(x: f64) -> f64;
    asinhf(x: f32) -> f32;
    atan(x: f64) -> f64;
    atanf(x: f32) -> f32;
    atan2(y: f64, x: f64) -> f64;
    atan2f(y: f32, x: f32) -> f32;
    cbrt(x: f64) -> f64;
    cbrtf(x: f32) -> f32;
    cos(x: f64) -> f64;
    cosf(x: f32) -> f32;
    cosh(x: f64) -> f64;
    coshf(x: f32) -> f32;
    erf(x: f64) -> f64;
    erff(x: f32) -> f32;
    erfc(x: f64) -> f64;
    erfcf(x: f32) -> f32;
    exp(x: f64) -> f64;
    expf(x: f32) -> f32;
    exp2(x: f64) -> f64;
    exp2f(x: f32) -> f32;
    expm1(x: f64) -> f64;
    expm1f(x: f32) -> f32;
    fdim(x: f64, y: f64) -> f64;
    fdimf(x: f32, y: f32) -> f32;
    fmax(x: f64, y: f64) -> f64;
    fmaxf(x: f32, y: f32) -> f32;
    fmin(x: f64, y: f64) -> f64;
    fminf(x: f32, y: f32) -> f32;
    fmaximum(x: f64, y: f64) -> f64;
    fmaximumf(x: f32, y: f32) -> f32;
    fminimum(x: f64, y: f64) -> f64;
    fminimumf(x: f32, y: f32) -> f32;
    fmaximum_num(x: f64, y: f64) -> f64;
    fmaximum_numf(x: f32, y: f32) -> f32;
    fminimum_num(x: f64, y: f64) -> f64;
    fminimum_numf(x: f32, y: f32) -> f32;
    fmod(x: f64, y: f64) -> f64;
    fmodf(x: f32, y: f32) -> f32;
    hypot(x: f64, y: f64) -> f64;
    hypotf(x: f32, y: f32) -> f32;
    ldexp(x: f64, n: i32) -> f64;
    ldexpf(x: f32, n: i32) -> f32;
    log(x: f64) -> f64;
    logf(x: f32) -> f32;
    log10(x: f64) -> f64;
    log10f(x: f32) -> f32;
    log1p(x: f64) -> f64;
    log1pf(x: f32) -> f32;
    log2(x: f64) -> f64;
    log2f(x: f32) -> f32;
    pow(x: f64, y: f64) -> f64;
    powf(x: f32, y: f32) -> f32;
    round(x: f64) -> f64;
    roundf(x: f32) -> f32;
    sin(x: f64) -> f64;
    sinf(x: f32) -> f32;
    sinh(x: f64) -> f64;
    sinhf(x: f32) -> f32;
    tan(x: f64) -> f64;
    tanf(x: f32) -> f32;
    tanh(x: f64) -> f64;
    tanhf(x: f32) -> f32;
    tgamma(x: f64) -> f64;
    tgammaf(x: f32) -> f32;
}

mod lgamma_symbols {
    extern "C" {
        pub fn lgamma_r(x: f64, sign: &mut i32) -> f64;
        pub fn lgammaf_r(x: f32, sign: &mut i32) -> f32;
    }
}

/// `ln|Γ(x)|` and the sign of `Γ(x)`.
#[inline]
#[must_use]
pub fn lgamma_r(x: f64) -> (f64, i32) {
    let mut sign = 0;
    // SAFETY: libm's lgamma_r, writing the sign through the reference.
    let value = unsafe { lgamma_symbols::lgamma_r(x, &mut sign) };
    (value, sign)
}

/// `ln|Γ(x)|` and the sign of `Γ(x)`.
#[inline]
#[must_use]
pub fn lgammaf_r(x: f32) -> (f32, i32) {
    let mut sign = 0;
    // SAFETY: libm's lgammaf_r, writing the sign through the reference.
    let value = unsafe { lgamma_symbols::lgammaf_r(x, &mut sign) };
    (value, sign)
}
