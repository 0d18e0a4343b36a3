//! `Shared`: workgroup memory on the cpu, a window into the executor's per-workgroup
//! scratch. The invocations of a workgroup run on one thread, one at a time, so plain
//! loads and stores are enough.

use std::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
}

/// A 4-byte word that workgroup memory holds: `u32`, `i32` or `f32`.
///
/// # Safety
/// Sealed: implemented only for 4-byte plain-old-data types, for which every bit pattern
/// is a value.
pub unsafe trait Word: Copy + 'static + sealed::Sealed {}

// SAFETY: 4 bytes, every bit pattern valid.
unsafe impl Word for u32 {}
// SAFETY: 4 bytes, every bit pattern valid.
unsafe impl Word for i32 {}
// SAFETY: 4 bytes, every bit pattern valid.
unsafe impl Word for f32 {}

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

    fn slot(&self, index: u32, what: &str) -> *mut T {
        assert!(
            (index as usize) < N,
            "Shared::{what}: index {index} is past the {N} elements of this workgroup array"
        );
        // SAFETY: index < N, and `from_cpu` promised N words at `base`.
        unsafe { self.base.add(index as usize) }
    }

    /// The word at `index`. Panics past `N`.
    pub fn load(&self, index: u32) -> T {
        // SAFETY: `slot` checked the index; the scratch is initialised (zeroed) and only
        // this workgroup's invocations, one at a time on this thread, touch it.
        unsafe { self.slot(index, "load").read() }
    }

    /// Stores `value` at `index`. Panics past `N`.
    pub fn store(&self, index: u32, value: T) {
        // SAFETY: as in `load`.
        unsafe { self.slot(index, "store").write(value) }
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

impl<const N: usize> Shared<u32, N> {
    /// Adds `value` (wrapping) to the word at `index` and returns what it held before.
    /// Panics past `N`.
    pub fn atomic_add(&self, index: u32, value: u32) -> u32 {
        let old = self.load(index);
        self.store(index, old.wrapping_add(value));
        old
    }
}
