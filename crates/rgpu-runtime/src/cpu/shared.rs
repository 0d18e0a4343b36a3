//! `Shared`: workgroup memory on the cpu, a window into the executor's per-workgroup
//! scratch. The invocations of a workgroup run on one thread, one at a time, so plain
//! loads and stores are enough.

use std::marker::PhantomData;
use std::sync::atomic::Ordering;

use super::atomic::{relaxed_methods, Atomic, AtomicWord, WorkgroupScope};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}

    pub trait Lane {}
    impl<T: super::Word> Lane for T {}
    impl Lane for u64 {}
    impl Lane for i64 {}
    impl Lane for f64 {}

    pub trait Value {}
    impl Value for u32 {}
    impl Value for i32 {}
    impl Value for f32 {}
    impl Value for u64 {}
    impl Value for i64 {}
    impl Value for f64 {}
}

/// A 32-bit element of workgroup memory: `u32`, `i32` or `f32` (the same trait as the GPU
/// codegens' `rgpu::Word`).
pub trait Word: Copy + 'static + sealed::Sealed {
    /// The value's bits.
    fn to_bits(self) -> u32;
    /// The value of these bits.
    fn from_bits(bits: u32) -> Self;
}

/// A value a subgroup shuffle or broadcast moves: a [`Word`] or a 64-bit `u64`, `i64`,
/// `f64` (the same trait as the GPU codegens' `rgpu::LaneValue`).
pub trait LaneValue: Copy + 'static + sealed::Lane {}
impl<T: Word> LaneValue for T {}
impl LaneValue for u64 {}
impl LaneValue for i64 {}
impl LaneValue for f64 {}

/// A value of subgroup arithmetic (`subgroup_add`, `subgroup_min`, `subgroup_max`, the
/// scans): `u32`, `i32`, `u64`, `i64` (wrapping), `f32` and `f64`, as on the GPU codegens.
pub trait SubgroupValue: LaneValue + sealed::Value {
    /// The sum of no value.
    const ZERO: Self;
}

/// An integer of the bitwise subgroup reductions: `u32`, `i32`, `u64` and `i64`.
pub trait SubgroupBits: SubgroupValue {}

impl SubgroupValue for u32 {
    const ZERO: Self = 0;
}
impl SubgroupValue for i32 {
    const ZERO: Self = 0;
}
impl SubgroupValue for f32 {
    const ZERO: Self = 0.0;
}
impl SubgroupValue for u64 {
    const ZERO: Self = 0;
}
impl SubgroupValue for i64 {
    const ZERO: Self = 0;
}
impl SubgroupValue for f64 {
    const ZERO: Self = 0.0;
}
impl SubgroupBits for u32 {}
impl SubgroupBits for i32 {}
impl SubgroupBits for u64 {}
impl SubgroupBits for i64 {}

impl Word for u32 {
    fn to_bits(self) -> u32 {
        self
    }
    fn from_bits(bits: u32) -> Self {
        bits
    }
}

impl Word for i32 {
    fn to_bits(self) -> u32 {
        self as u32
    }
    fn from_bits(bits: u32) -> Self {
        bits as i32
    }
}

impl Word for f32 {
    fn to_bits(self) -> u32 {
        f32::to_bits(self)
    }
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
}

/// Workgroup memory: `N` words shared by the invocations of one workgroup.
pub struct Shared<T: Word, const N: usize> {
    base: *mut T,
    _words: PhantomData<[T; N]>,
}

impl<T: Word, const N: usize> Clone for Shared<T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Word, const N: usize> Copy for Shared<T, N> {}

impl<T: Word, const N: usize> Shared<T, N> {
    pub const LEN: usize = N;

    #[track_caller]
    fn slot(&self, index: u32, what: &str) -> *mut T {
        assert!(
            (index as usize) < N,
            "Shared::{what}: index {index} is past the {N} elements of this workgroup array"
        );
        // SAFETY: index < N, and `from_cpu` promised N words at `base`.
        unsafe { self.base.add(index as usize) }
    }

    /// The word at `index`. Panics past `N`.
    #[track_caller]
    pub fn load(&self, index: u32) -> T {
        // SAFETY: `slot` checked the index; the scratch is initialised (zeroed) and only
        // this workgroup's invocations, one at a time on this thread, touch it.
        unsafe { self.slot(index, "load").read() }
    }

    /// Stores `value` at `index`. Panics past `N`.
    #[track_caller]
    pub fn store(&self, index: u32, value: T) {
        // SAFETY: as in `load`.
        unsafe { self.slot(index, "store").write(value) }
    }

    /// The word at `index`, for hot loops whose indices are known to be in bounds (the GPU
    /// codegens skip the check; the cpu backend still checks).
    ///
    /// # Safety
    /// `index < N`.
    pub unsafe fn load_unchecked(&self, index: u32) -> T {
        self.load(index)
    }

    /// Stores `value` at `index` without the GPU codegens' bounds check (see `load_unchecked`).
    ///
    /// # Safety
    /// `index < N`.
    pub unsafe fn store_unchecked(&self, index: u32, value: T) {
        self.store(index, value)
    }

    /// The array at `base` (the executor's scratch pointer plus this array's offset).
    ///
    /// # Safety
    /// `base` must be aligned for `T` and point at `N` words of the running workgroup's
    /// scratch, valid for the whole invocation.
    #[doc(hidden)]
    pub unsafe fn from_cpu(base: *mut u8) -> Self {
        Self {
            base: base.cast(),
            _words: PhantomData,
        }
    }
}

impl<T: AtomicWord, const N: usize> Shared<T, N> {
    /// Element `index` as an [`Atomic`] at workgroup scope. Panics past `N`.
    #[track_caller]
    pub fn atomic(&self, index: u32) -> Atomic<'_, T, WorkgroupScope> {
        let slot = self.slot(index, "atomic");
        // SAFETY: in bounds (`slot`), aligned (the scratch is), valid for the invocation;
        // only this workgroup's invocations, one at a time, touch it.
        unsafe { Atomic::from_ptr(slot) }
    }

    relaxed_methods!();

    /// `atomic_add` for the GPU codegens' unchecked form; here it still panics past `N`.
    ///
    /// # Safety
    /// `index < N` (what the GPU codegens rely on).
    pub unsafe fn atomic_add_unchecked(&self, index: u32, value: T) -> T {
        self.atomic_add(index, value)
    }
}
