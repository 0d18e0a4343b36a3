//! The element types of workgroup memory: 32-bit words (what every codegen can load, store
//! and exchange the same way).

mod sealed {
    pub trait Sealed {}
}

/// A 32-bit element of workgroup memory: `u32`, `i32` or `f32`.
pub trait Word: Copy + 'static + sealed::Sealed {
    /// The value's bits.
    fn to_bits(self) -> u32;
    /// The value of these bits.
    fn from_bits(bits: u32) -> Self;
}

impl sealed::Sealed for u32 {}
impl Word for u32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits
    }
}

impl sealed::Sealed for i32 {}
impl Word for i32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
}

impl sealed::Sealed for f32 {}
impl Word for f32 {
    #[inline(always)]
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

/// A value a subgroup shuffle or broadcast moves: a [`Word`] (`u32`, `i32`, `f32`, one
/// 32-bit shuffle) or a 64-bit `u64`, `i64`, `f64` (two: its low and high words).
pub trait LaneValue: Copy + 'static + lane_sealed::Sealed {
    /// The value with `f` applied to each of its 32-bit words (low first).
    #[doc(hidden)]
    fn map_words(self, f: impl FnMut(u32) -> u32) -> Self;
}

mod lane_sealed {
    pub trait Sealed {}
}

impl<T: Word> lane_sealed::Sealed for T {}
impl<T: Word> LaneValue for T {
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        T::from_bits(f(self.to_bits()))
    }
}

macro_rules! wide_lane {
    ($($t:ty => $to:expr, $from:expr;)*) => {$(
        impl lane_sealed::Sealed for $t {}
        impl LaneValue for $t {
            #[inline(always)]
            fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
                let bits: u64 = $to(self);
                let low = f(bits as u32) as u64;
                let high = f((bits >> 32) as u32) as u64;
                $from(low | (high << 32))
            }
        }
    )*};
}

wide_lane! {
    u64 => |v: u64| v, |b: u64| b;
    i64 => |v: i64| v as u64, |b: u64| b as i64;
    f64 => f64::to_bits, f64::from_bits;
}
