//! Atomics with memory orderings on the cpu backend: the same API as the GPU codegens'
//! (`rgpu::Atomic`, `Global::atomic`, `Shared::atomic`, the relaxed `atomic_*` methods),
//! on std's `AtomicU32`/`AtomicI32` with the ordering the kernel gives (std's own panics for
//! the orderings it forbids). `Shared` memory is only ever touched by one thread at a time
//! (a workgroup's invocations are coroutines on one worker), so its atomics are atomic a
//! fortiori; the scope parameter is a marker here.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use super::shared::Word;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for super::DeviceScope {}
    impl Sealed for super::WorkgroupScope {}
}

/// The element types with atomics: `u32` and `i32` (`min`/`max` compare as the type does).
pub trait AtomicWord: Word + sealed::Sealed {
    /// std's atomic of this type.
    #[doc(hidden)]
    type Std: 'static;
    /// The std atomic at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned, valid for the lifetime `'a`, and only accessed atomically meanwhile.
    #[doc(hidden)]
    unsafe fn at<'a>(ptr: *mut Self) -> &'a Self::Std;
    #[doc(hidden)]
    fn load(a: &Self::Std, order: Ordering) -> Self;
    #[doc(hidden)]
    fn store(a: &Self::Std, value: Self, order: Ordering);
    #[doc(hidden)]
    fn fetch_add(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn fetch_sub(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn fetch_min(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn fetch_max(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn fetch_and(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn fetch_or(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn fetch_xor(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn swap(a: &Self::Std, value: Self, order: Ordering) -> Self;
    #[doc(hidden)]
    fn compare_exchange(
        a: &Self::Std,
        current: Self,
        new: Self,
        success: Ordering,
        failure: Ordering,
    ) -> Result<Self, Self>;
}

macro_rules! atomic_word {
    ($ty:ty, $std:ty) => {
        impl AtomicWord for $ty {
            type Std = $std;
            unsafe fn at<'a>(ptr: *mut Self) -> &'a $std {
                // SAFETY: the caller's contract; `$ty` and `$std` have the same size and
                // alignment.
                unsafe { <$std>::from_ptr(ptr) }
            }
            fn load(a: &$std, order: Ordering) -> Self {
                a.load(order)
            }
            fn store(a: &$std, value: Self, order: Ordering) {
                a.store(value, order)
            }
            fn fetch_add(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_add(value, order)
            }
            fn fetch_sub(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_sub(value, order)
            }
            fn fetch_min(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_min(value, order)
            }
            fn fetch_max(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_max(value, order)
            }
            fn fetch_and(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_and(value, order)
            }
            fn fetch_or(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_or(value, order)
            }
            fn fetch_xor(a: &$std, value: Self, order: Ordering) -> Self {
                a.fetch_xor(value, order)
            }
            fn swap(a: &$std, value: Self, order: Ordering) -> Self {
                a.swap(value, order)
            }
            fn compare_exchange(
                a: &$std,
                current: Self,
                new: Self,
                success: Ordering,
                failure: Ordering,
            ) -> Result<Self, Self> {
                a.compare_exchange(current, new, success, failure)
            }
        }
    };
}

atomic_word!(u32, AtomicU32);
atomic_word!(i32, AtomicI32);

/// Which invocations an [`Atomic`]'s operations are atomic and ordered with: every
/// invocation of the launch ([`DeviceScope`], `Global`) or of the workgroup
/// ([`WorkgroupScope`], `Shared`). On the cpu both are std's atomics.
pub trait AtomicScope: Copy + sealed::Sealed {}

/// Device scope: `Global`'s atomics (every invocation of the launch).
#[derive(Clone, Copy, Debug)]
pub struct DeviceScope;
impl AtomicScope for DeviceScope {}

/// Workgroup scope: `Shared`'s atomics (the invocations of one workgroup).
#[derive(Clone, Copy, Debug)]
pub struct WorkgroupScope;
impl AtomicScope for WorkgroupScope {}

/// One element of `Global` or `Shared` memory, accessed atomically with an ordering, like
/// std's `AtomicU32`/`AtomicI32` (the same methods, orderings and panics); `S` is the scope.
pub struct Atomic<'a, T: AtomicWord, S: AtomicScope = DeviceScope> {
    at: &'a T::Std,
    _scope: PhantomData<S>,
}

impl<T: AtomicWord, S: AtomicScope> Clone for Atomic<'_, T, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: AtomicWord, S: AtomicScope> Copy for Atomic<'_, T, S> {}

impl<'a, T: AtomicWord, S: AtomicScope> Atomic<'a, T, S> {
    /// The element at `ptr`.
    ///
    /// # Safety
    /// As for `AtomicWord::at`.
    pub(crate) unsafe fn from_ptr(ptr: *mut T) -> Self {
        Self {
            // SAFETY: the caller's contract.
            at: unsafe { T::at(ptr) },
            _scope: PhantomData,
        }
    }

    /// The value. `order`: `Relaxed`, `Acquire` or `SeqCst` (`Release`/`AcqRel` panic).
    pub fn load(&self, order: Ordering) -> T {
        T::load(self.at, order)
    }

    /// Stores `value`. `order`: `Relaxed`, `Release` or `SeqCst` (`Acquire`/`AcqRel` panic).
    pub fn store(&self, value: T, order: Ordering) {
        T::store(self.at, value, order)
    }

    /// Adds `value` (wrapping); the previous value.
    pub fn fetch_add(&self, value: T, order: Ordering) -> T {
        T::fetch_add(self.at, value, order)
    }

    /// Subtracts `value` (wrapping); the previous value.
    pub fn fetch_sub(&self, value: T, order: Ordering) -> T {
        T::fetch_sub(self.at, value, order)
    }

    /// Stores the smaller of the element and `value`; the previous value.
    pub fn fetch_min(&self, value: T, order: Ordering) -> T {
        T::fetch_min(self.at, value, order)
    }

    /// Stores the larger of the element and `value`; the previous value.
    pub fn fetch_max(&self, value: T, order: Ordering) -> T {
        T::fetch_max(self.at, value, order)
    }

    /// Bitwise and with `value`; the previous value.
    pub fn fetch_and(&self, value: T, order: Ordering) -> T {
        T::fetch_and(self.at, value, order)
    }

    /// Bitwise or with `value`; the previous value.
    pub fn fetch_or(&self, value: T, order: Ordering) -> T {
        T::fetch_or(self.at, value, order)
    }

    /// Bitwise xor with `value`; the previous value.
    pub fn fetch_xor(&self, value: T, order: Ordering) -> T {
        T::fetch_xor(self.at, value, order)
    }

    /// Stores `value`; the previous value.
    pub fn swap(&self, value: T, order: Ordering) -> T {
        T::swap(self.at, value, order)
    }

    /// Stores `new` if the element is `current`: `Ok(previous)` when it stored,
    /// `Err(previous)` when not (never fails spuriously).
    pub fn compare_exchange(
        &self,
        current: T,
        new: T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<T, T> {
        T::compare_exchange(self.at, current, new, success, failure)
    }
}

/// A memory fence of `order` (std's `fence`: `Relaxed` panics).
pub fn fence(order: Ordering) {
    std::sync::atomic::fence(order)
}

/// The relaxed `atomic_*` methods of `Global<T>` and `Shared<T, N>`, over `atomic(index)`.
macro_rules! relaxed_methods {
    () => {
        /// Adds `value` to element `index` atomically (wrapping, relaxed); the old value.
        pub fn atomic_add(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_add(value, Ordering::Relaxed)
        }

        /// Stores the larger of element `index` and `value` atomically; the old value.
        pub fn atomic_max(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_max(value, Ordering::Relaxed)
        }

        /// Stores the smaller of element `index` and `value` atomically; the old value.
        pub fn atomic_min(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_min(value, Ordering::Relaxed)
        }

        /// Bitwise and of element `index` with `value`, atomically; the old value.
        pub fn atomic_and(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_and(value, Ordering::Relaxed)
        }

        /// Bitwise or of element `index` with `value`, atomically; the old value.
        pub fn atomic_or(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_or(value, Ordering::Relaxed)
        }

        /// Bitwise xor of element `index` with `value`, atomically; the old value.
        pub fn atomic_xor(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_xor(value, Ordering::Relaxed)
        }

        /// Stores `value` in element `index` atomically; the old value.
        pub fn atomic_exchange(&self, index: u32, value: T) -> T {
            self.atomic(index).swap(value, Ordering::Relaxed)
        }

        /// Stores `new` in element `index` if it is `current`, atomically: `Ok(old)` when it
        /// stored, `Err(old)` when not.
        pub fn atomic_compare_exchange(&self, index: u32, current: T, new: T) -> Result<T, T> {
            self.atomic(index)
                .compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed)
        }
    };
}

pub(crate) use relaxed_methods;
