//! `Global`: a read-write buffer parameter as every invocation of a cpu launch sees it: a
//! raw pointer and a length. Reads and writes are raw accesses whose safety is the kernel
//! author's (as on a GPU); atomics go through std's atomics (atomic.rs).

use std::sync::atomic::{AtomicU32, Ordering};

use bytemuck::Pod;

use super::atomic::{relaxed_methods, Atomic, AtomicWord, DeviceScope};

/// A read-write buffer seen by every invocation of a launch.
pub struct Global<T: Pod> {
    ptr: *mut T,
    len: u32,
}

impl<T: Pod> Clone for Global<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Pod> Copy for Global<T> {}

// SAFETY: a `Global` is a view of a buffer that outlives the launch; plain accesses are
// `unsafe fn`s whose contracts exclude data races, and the atomics are atomic.
unsafe impl<T: Pod + Send> Send for Global<T> {}
// SAFETY: as above.
unsafe impl<T: Pod + Sync> Sync for Global<T> {}

impl<T: Pod> Global<T> {
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The element at `index`.
    ///
    /// # Safety
    /// `index < len()`, and no other invocation of this launch writes `index` concurrently.
    pub unsafe fn read(&self, index: u32) -> T {
        debug_assert!(
            index < self.len,
            "Global: index {index} is past the {} elements of the buffer",
            self.len
        );
        // SAFETY: the caller guarantees the index is in bounds and that nobody writes it
        // at the same time.
        unsafe { self.ptr.add(index as usize).read() }
    }

    /// Stores `value` at `index`.
    ///
    /// # Safety
    /// `index < len()`, and no other invocation reads or writes `index` concurrently.
    pub unsafe fn write(&self, index: u32, value: T) {
        debug_assert!(
            index < self.len,
            "Global: index {index} is past the {} elements of the buffer",
            self.len
        );
        // SAFETY: the caller guarantees the index is in bounds and exclusive access.
        unsafe { self.ptr.add(index as usize).write(value) }
    }

    /// The buffer at `ptr`.
    ///
    /// # Safety
    /// `ptr` must point at `len` elements, aligned, valid for reads and writes for the
    /// whole launch, and accessed only through this launch's `Global`s meanwhile.
    #[doc(hidden)]
    pub unsafe fn from_raw(ptr: *mut T, len: u32) -> Self {
        Self { ptr, len }
    }
}

impl<T: Pod + AtomicWord> Global<T> {
    /// Element `index` as an [`Atomic`] at device scope. Panics past `len()`.
    #[track_caller]
    pub fn atomic(&self, index: u32) -> Atomic<'_, T, DeviceScope> {
        assert!(
            index < self.len,
            "Global: index {index} is past the {} elements of the buffer",
            self.len
        );
        // SAFETY: in bounds (checked), `T` is aligned like its std atomic, the buffer lives
        // for the launch, and every concurrent access to a word used atomically is atomic
        // (the kernel's contract, as on a GPU).
        unsafe { Atomic::from_ptr(self.ptr.add(index as usize)) }
    }

    relaxed_methods!();
}

impl Global<f32> {
    /// Adds `value` to element `index` atomically (relaxed; a compare-exchange loop on the
    /// bits); the old value. Panics past `len()`.
    #[track_caller]
    pub fn atomic_add(&self, index: u32, value: f32) -> f32 {
        assert!(
            index < self.len,
            "Global: index {index} is past the {} elements of the buffer",
            self.len
        );
        // SAFETY: as in `atomic`; `f32` and `AtomicU32` have the same size and alignment.
        let bits = unsafe { AtomicU32::from_ptr(self.ptr.add(index as usize).cast::<u32>()) };
        let old = bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((f32::from_bits(old) + value).to_bits())
            })
            .unwrap_or_else(|old| old);
        f32::from_bits(old)
    }
}
