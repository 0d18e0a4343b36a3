//! Subgroup arithmetic on CUDA's 32-lane warp, for both CUDA codegens (nvptx, nvvm): a
//! butterfly of `shfl.sync.bfly` for the reductions (every lane gets the result) and a
//! `shfl.sync.up` ladder for the scans, over each codegen's two 32-bit shuffles
//! (`arch::shfl_xor`, `arch::shfl_up`). The order of the float additions is the butterfly's
//! (lane distance 16, 8, 4, 2, 1), the same on every CUDA GPU.

use super::{arch, LaneValue};

/// Subgroup arithmetic for one type (`u32`, `i32`, `u64`, `i64`, `f32`, `f64`): what `Group`'s methods call, the
/// same names on every codegen.
pub trait Lanes: Ops {
    fn subgroup_add(self) -> Self;
    fn subgroup_min(self) -> Self;
    fn subgroup_max(self) -> Self;
    fn subgroup_inclusive_add(self, lane: u32) -> Self;
    fn subgroup_exclusive_add(self, lane: u32) -> Self;
}

/// The bitwise reductions, for the integers.
pub trait BitLanes: Lanes + BitOps {
    fn subgroup_and(self) -> Self;
    fn subgroup_or(self) -> Self;
    fn subgroup_xor(self) -> Self;
}

impl<T: Ops> Lanes for T {
    #[inline(always)]
    fn subgroup_add(self) -> Self {
        reduce(self, T::plus)
    }
    #[inline(always)]
    fn subgroup_min(self) -> Self {
        reduce(self, T::lesser)
    }
    #[inline(always)]
    fn subgroup_max(self) -> Self {
        reduce(self, T::greater)
    }
    #[inline(always)]
    fn subgroup_inclusive_add(self, lane: u32) -> Self {
        inclusive_add(self, lane)
    }
    #[inline(always)]
    fn subgroup_exclusive_add(self, lane: u32) -> Self {
        exclusive_add(self, lane)
    }
}

impl<T: BitOps> BitLanes for T {
    #[inline(always)]
    fn subgroup_and(self) -> Self {
        reduce(self, T::and)
    }
    #[inline(always)]
    fn subgroup_or(self) -> Self {
        reduce(self, T::or)
    }
    #[inline(always)]
    fn subgroup_xor(self) -> Self {
        reduce(self, T::xor)
    }
}

/// The operations of one type, for the ladders below.
pub trait Ops: LaneValue {
    /// The identity of `plus`.
    const ZERO: Self;
    fn plus(self, other: Self) -> Self;
    fn lesser(self, other: Self) -> Self;
    fn greater(self, other: Self) -> Self;
    /// `inclusive - value`: exact for the integers; a float uses the lane below's prefix.
    const EXACT_MINUS: bool;
    fn minus(self, other: Self) -> Self;
}

/// The bitwise operations of the integers.
pub trait BitOps: Ops {
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;
}

macro_rules! int_lanes {
    ($t:ty) => {
        impl Ops for $t {
            const ZERO: Self = 0;
            const EXACT_MINUS: bool = true;
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn lesser(self, other: Self) -> Self {
                Ord::min(self, other)
            }
            #[inline(always)]
            fn greater(self, other: Self) -> Self {
                Ord::max(self, other)
            }
            #[inline(always)]
            fn minus(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
        }

        impl BitOps for $t {
            #[inline(always)]
            fn and(self, other: Self) -> Self {
                self & other
            }
            #[inline(always)]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
        }
    };
}

int_lanes!(u32);
int_lanes!(i32);
int_lanes!(u64);
int_lanes!(i64);

macro_rules! float_lanes {
    ($t:ty) => {
        impl Ops for $t {
            const ZERO: Self = 0.0;
            const EXACT_MINUS: bool = false;
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self + other
            }
            /// PTX `min.f32`/`.f64`: the number when one of the two is NaN (Rust's `min`).
            #[inline(always)]
            fn lesser(self, other: Self) -> Self {
                self.min(other)
            }
            #[inline(always)]
            fn greater(self, other: Self) -> Self {
                self.max(other)
            }
            #[inline(always)]
            fn minus(self, other: Self) -> Self {
                self - other
            }
        }
    };
}

float_lanes!(f32);
float_lanes!(f64);

/// `op` over the warp, every lane getting the result (lane distances 16, 8, 4, 2, 1).
#[inline(always)]
fn reduce<T: LaneValue>(mut value: T, op: impl Fn(T, T) -> T) -> T {
    let mut offset = 16;
    while offset > 0 {
        value = op(value, value.map_words(|w| arch::shfl_xor(w, offset)));
        offset /= 2;
    }
    value
}

/// The sum over lanes `0..=lane` (Hillis-Steele over `shfl.sync.up`).
#[inline(always)]
fn inclusive_add<T: Ops>(value: T, lane: u32) -> T {
    let mut sum = value;
    let mut delta = 1;
    while delta < 32 {
        let other = sum.map_words(|w| arch::shfl_up(w, delta));
        if lane >= delta {
            sum = sum.plus(other);
        }
        delta *= 2;
    }
    sum
}

/// The sum over lanes `0..lane` (zero on lane 0).
#[inline(always)]
fn exclusive_add<T: Ops>(value: T, lane: u32) -> T {
    let inclusive = inclusive_add(value, lane);
    if T::EXACT_MINUS {
        inclusive.minus(value)
    } else {
        let below = inclusive.map_words(|w| arch::shfl_up(w, 1));
        if lane == 0 {
            T::ZERO
        } else {
            below
        }
    }
}
