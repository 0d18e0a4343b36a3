//! The host (the cpu backend, and plain `cargo test` of a kernel crate): std's methods. On
//! the host std's inherent methods are found before the traits' (a kernel's `x.sqrt()` is
//! std's), so these only serve `rsqrt`, which std lacks, and calls through the trait.

use super::{Float, MulAdd};

macro_rules! host {
    ($t:ident) => {
        impl MulAdd for $t {
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                $t::mul_add(self, a, b)
            }
        }

        impl Float for $t {
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn rsqrt(self) -> Self {
                1.0 / $t::sqrt(self)
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $t::exp(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                $t::ln(self)
            }
            #[inline(always)]
            fn log2(self) -> Self {
                $t::log2(self)
            }
            #[inline(always)]
            fn log10(self) -> Self {
                $t::log10(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                $t::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $t::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                $t::tan(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $t::tanh(self)
            }
            #[inline(always)]
            fn atan2(self, other: Self) -> Self {
                $t::atan2(self, other)
            }
            #[inline(always)]
            fn powf(self, n: Self) -> Self {
                $t::powf(self, n)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                $t::trunc(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                $t::round(self)
            }
            #[inline(always)]
            fn fract(self) -> Self {
                $t::fract(self)
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                $t::powi(self, n)
            }
        }
    };
}

host!(f32);
host!(f64);
