//! The libm functions compiler-builtins does not export, written over the ones it does.
//! Exact (bit-identical to libm's) unless said otherwise.

use crate::forward::{cos, cosf, sin, sinf};
use crate::forward::{fmod, fmodf, ldexp, ldexpf, lgamma_r, lgammaf_r, log1p, log1pf, pow, powf};
use crate::{trunc, truncf};

macro_rules! exact {
    (
        $t:ty, $bits:ty, mantissa: $m:expr, bias: $bias:expr,
        $frexp:ident, $ilogb:ident, $modf:ident, $nextafter:ident, $remainder:ident,
        $remquo:ident, $scalbn:ident, $sincos:ident, $lgamma:ident, $exp10:ident,
        $atanh:ident, $fmod:ident, $ldexp:ident, $lgamma_r:ident, $trunc:ident, $sin:ident,
        $cos:ident, $pow:ident, $log1p:ident
    ) => {
        const EXP_MASK: $bits = ((1 << (<$bits>::BITS - 1 - $m)) - 1) << $m;

        /// `x` as `m * 2^e` with `0.5 <= |m| < 1` (`x` itself and 0 for 0, inf, NaN).
        #[must_use]
        pub fn $frexp(x: $t) -> ($t, i32) {
            if x == 0.0 || !x.is_finite() {
                return (x, 0);
            }
            let bits = x.to_bits();
            let field = ((bits & EXP_MASK) >> $m) as i32;
            if field == 0 {
                // Subnormal: scaled into the normal range first.
                let (m, e) = $frexp(x * <$t>::from_bits(((64 + $bias) as $bits) << $m));
                return (m, e - 64);
            }
            let m = <$t>::from_bits((bits & !EXP_MASK) | ((($bias - 1) as $bits) << $m));
            (m, field - ($bias - 1))
        }

        /// The unbiased exponent of `x` (`i32::MIN` for 0 and NaN, `i32::MAX` for inf).
        #[must_use]
        pub fn $ilogb(x: $t) -> i32 {
            if x == 0.0 || x.is_nan() {
                return i32::MIN;
            }
            if x.is_infinite() {
                return i32::MAX;
            }
            let bits = x.to_bits();
            let field = ((bits & EXP_MASK) >> $m) as i32;
            if field == 0 {
                let fraction = bits & !EXP_MASK & !(1 << (<$bits>::BITS - 1));
                let top = (<$bits>::BITS - 1 - fraction.leading_zeros()) as i32;
                return top - $m + 1 - $bias;
            }
            field - $bias
        }

        /// `(fractional, integral)` parts of `x`, each with the sign of `x`.
        #[must_use]
        pub fn $modf(x: $t) -> ($t, $t) {
            if x.is_nan() {
                return (x, x);
            }
            let integral = $trunc(x);
            if x.is_infinite() {
                return ((0.0 as $t).copysign(x), x);
            }
            ((x - integral).copysign(x), integral)
        }

        /// The next representable value after `x` towards `y`.
        #[must_use]
        pub fn $nextafter(x: $t, y: $t) -> $t {
            if x.is_nan() || y.is_nan() {
                return x + y;
            }
            if x == y {
                return y;
            }
            if x == 0.0 {
                return <$t>::from_bits(1).copysign(y);
            }
            let bits = x.to_bits();
            let away = (y > x) == (x > 0.0);
            <$t>::from_bits(if away { bits + 1 } else { bits - 1 })
        }

        /// `x - n*y`, `n` the integer nearest `x/y` (ties to even), and `n`'s low 31 bits
        /// with its sign (as libm gives them). Exact: every step is `fmod` or a
        /// subtraction that Sterbenz's lemma makes exact.
        #[must_use]
        pub fn $remquo(x: $t, y: $t) -> ($t, i32) {
            if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
                return (<$t>::NAN, 0);
            }
            let ay = y.abs();
            // |x| mod 2^31|y| (an overflow to inf is harmless: fmod then returns x, which
            // is below every multiple that overflowed), then the quotient's bits.
            let mut r = $fmod(x, ay * 2147483648.0).abs();
            let mut q = 0u32;
            for bit in (0..31).rev() {
                let step = ay * (1u32 << bit) as $t;
                if r >= step {
                    r -= step;
                    q |= 1 << bit;
                }
            }
            // r = |x| mod |y| now; round the quotient to nearest, ties to even.
            if 2.0 * r > ay || (2.0 * r == ay && q & 1 == 1) {
                r -= ay;
                q = q.wrapping_add(1);
            }
            let value = if x < 0.0 { -r } else { r };
            let value = if value == 0.0 {
                value.copysign(x)
            } else {
                value
            };
            let q = (q & 0x7fff_ffff) as i32;
            (value, if (x < 0.0) != (y < 0.0) { -q } else { q })
        }

        /// `x - n*y`, `n` the integer nearest `x/y` (ties to even).
        #[must_use]
        pub fn $remainder(x: $t, y: $t) -> $t {
            $remquo(x, y).0
        }

        /// `x * 2^n`.
        #[must_use]
        pub fn $scalbn(x: $t, n: i32) -> $t {
            $ldexp(x, n)
        }

        /// `(sin x, cos x)`.
        #[must_use]
        pub fn $sincos(x: $t) -> ($t, $t) {
            ($sin(x), $cos(x))
        }

        /// `ln|Γ(x)|`.
        #[must_use]
        pub fn $lgamma(x: $t) -> $t {
            $lgamma_r(x).0
        }

        /// `10^x`, as libm's `pow(10, x)` (within an ulp of libm's `exp10`; not
        /// bit-identical to it).
        #[must_use]
        pub fn $exp10(x: $t) -> $t {
            $pow(10.0, x)
        }

        /// The inverse hyperbolic tangent, `log1p(2x/(1-x))/2` (within two ulp of libm's
        /// `atanh`; not bit-identical to it).
        #[must_use]
        pub fn $atanh(x: $t) -> $t {
            let a = x.abs();
            let half = if a < 0.5 {
                0.5 * $log1p(2.0 * a + 2.0 * a * a / (1.0 - a))
            } else {
                0.5 * $log1p(2.0 * (a / (1.0 - a)))
            };
            half.copysign(x)
        }
    };
}

mod single {
    use super::*;
    exact!(
        f32, u32, mantissa: 23, bias: 127,
        frexpf, ilogbf, modff, nextafterf, remainderf, remquof, scalbnf, sincosf, lgammaf,
        exp10f, atanhf, fmodf, ldexpf, lgammaf_r, truncf, sinf, cosf, powf, log1pf
    );
}

mod double {
    use super::*;
    exact!(
        f64, u64, mantissa: 52, bias: 1023,
        frexp, ilogb, modf, nextafter, remainder, remquo, scalbn, sincos, lgamma,
        exp10, atanh, fmod, ldexp, lgamma_r, trunc, sin, cos, pow, log1p
    );
}

pub use double::{
    atanh, exp10, frexp, ilogb, lgamma, modf, nextafter, remainder, remquo, scalbn, sincos,
};
pub use single::{
    atanhf, exp10f, frexpf, ilogbf, lgammaf, modff, nextafterf, remainderf, remquof, scalbnf,
    sincosf,
};
