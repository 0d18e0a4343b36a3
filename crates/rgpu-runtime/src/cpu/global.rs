//! `Global`: a read-write buffer parameter as every invocation of a cpu launch sees it: a
//! raw pointer and a length. Reads and writes are raw accesses whose safety is the kernel
//! author's (as on a GPU); atomics go through `AtomicU32`.

use std::sync::atomic::{AtomicU32, Ordering};

use bytemuck::Pod;

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
            "Global::read: index {index} >= {}",
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
            "Global::write: index {index} >= {}",
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

impl Global<u32> {
    fn atomic(&self, index: u32, what: &str) -> &AtomicU32 {
        assert!(
            index < self.len,
            "Global::{what}: index {index} is past the {} elements of the buffer",
            self.len
        );
        // SAFETY: in bounds (checked), `u32` is aligned like `AtomicU32`, the buffer lives
        // for the launch, and every concurrent access to a word used atomically is atomic
        // (the kernel's contract, as on a GPU).
        unsafe { AtomicU32::from_ptr(self.ptr.add(index as usize)) }
    }

    /// Adds `value` (wrapping) at `index`; returns the previous value. Panics past `len()`.
    pub fn atomic_add(&self, index: u32, value: u32) -> u32 {
        self.atomic(index, "atomic_add")
            .fetch_add(value, Ordering::AcqRel)
    }

    /// Stores the larger of the two at `index`; returns the previous value.
    pub fn atomic_max(&self, index: u32, value: u32) -> u32 {
        self.atomic(index, "atomic_max")
            .fetch_max(value, Ordering::AcqRel)
    }

    /// Stores the smaller of the two at `index`; returns the previous value.
    pub fn atomic_min(&self, index: u32, value: u32) -> u32 {
        self.atomic(index, "atomic_min")
            .fetch_min(value, Ordering::AcqRel)
    }
}
