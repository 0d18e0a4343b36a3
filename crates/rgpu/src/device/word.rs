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
