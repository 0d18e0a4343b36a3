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
        super::watch::tick();
        T::load(self.at, order)
    }

    /// Stores `value`. `order`: `Relaxed`, `Release` or `SeqCst` (`Acquire`/`AcqRel` panic).
    pub fn store(&self, value: T, order: Ordering) {
        T::store(self.at, value, order)
    }

    /// Adds `value` (wrapping); the previous value.
    pub fn fetch_add(&self, value: T, order: Ordering) -> T {
        super::watch::tick();
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
        super::watch::tick();
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
        super::watch::tick();
        T::compare_exchange(self.at, current, new, success, failure)
    }
}

/// A memory fence of `order` (std's `fence`: `Relaxed` panics).
pub fn fence(order: Ordering) {
    super::watch::tick();
    std::sync::atomic::fence(order)
}

/// The relaxed `atomic_*` methods of `Global<T>` and `Shared<T, N>`, over `atomic(index)`.
macro_rules! relaxed_methods {
    () => {
        /// Adds `value` to element `index` atomically (wrapping, relaxed); the old value.
        #[track_caller]
        pub fn atomic_add(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_add(value, Ordering::Relaxed)
        }

        /// Stores the larger of element `index` and `value` atomically; the old value.
        #[track_caller]
        pub fn atomic_max(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_max(value, Ordering::Relaxed)
        }

        /// Stores the smaller of element `index` and `value` atomically; the old value.
        #[track_caller]
        pub fn atomic_min(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_min(value, Ordering::Relaxed)
        }

        /// Bitwise and of element `index` with `value`, atomically; the old value.
        #[track_caller]
        pub fn atomic_and(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_and(value, Ordering::Relaxed)
        }

        /// Bitwise or of element `index` with `value`, atomically; the old value.
        #[track_caller]
        pub fn atomic_or(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_or(value, Ordering::Relaxed)
        }

        /// Bitwise xor of element `index` with `value`, atomically; the old value.
        #[track_caller]
        pub fn atomic_xor(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_xor(value, Ordering::Relaxed)
        }

        /// Element `index`, read atomically (relaxed).
        #[track_caller]
        pub fn atomic_load(&self, index: u32) -> T {
            self.atomic(index).load(Ordering::Relaxed)
        }

        /// Stores `value` in element `index` atomically (relaxed).
        #[track_caller]
        pub fn atomic_store(&self, index: u32, value: T) {
            self.atomic(index).store(value, Ordering::Relaxed)
        }

        /// Stores `value` in element `index` atomically; the old value.
        #[track_caller]
        pub fn atomic_exchange(&self, index: u32, value: T) -> T {
            self.atomic(index).swap(value, Ordering::Relaxed)
        }

        /// Stores `new` in element `index` if it is `current`, atomically: `Ok(old)` when it
        /// stored, `Err(old)` when not.
        #[track_caller]
        pub fn atomic_compare_exchange(&self, index: u32, current: T, new: T) -> Result<T, T> {
            self.atomic(index)
                .compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed)
        }
    };
}

pub(crate) use relaxed_methods;

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering::{self, AcqRel, Acquire, Relaxed, Release, SeqCst};

    use super::super::{Global, Shared};

    const ALL: [Ordering; 5] = [Relaxed, Acquire, Release, AcqRel, SeqCst];
    const LOADS: [Ordering; 3] = [Relaxed, Acquire, SeqCst];
    const STORES: [Ordering; 3] = [Relaxed, Release, SeqCst];

    fn global<T: bytemuck::Pod>(data: &mut [T]) -> Global<T> {
        // SAFETY: `data` outlives each test's uses and is only reached through this Global.
        unsafe { Global::from_raw(data.as_mut_ptr(), data.len() as u32) }
    }

    #[test]
    fn every_read_modify_write_on_u32_with_every_ordering() {
        for order in ALL {
            let mut data = [10u32, 10, 10, 0b1100, 0b1100, 0b1100, 10, 10];
            let g = global(&mut data);
            assert_eq!(g.atomic(0).fetch_add(u32::MAX, order), 10);
            assert_eq!(g.atomic(1).fetch_sub(11, order), 10);
            assert_eq!(g.atomic(2).fetch_min(3, order), 10);
            assert_eq!(g.atomic(3).fetch_and(0b1010, order), 0b1100);
            assert_eq!(g.atomic(4).fetch_or(0b1010, order), 0b1100);
            assert_eq!(g.atomic(5).fetch_xor(0b1010, order), 0b1100);
            assert_eq!(g.atomic(6).swap(7, order), 10);
            assert_eq!(g.atomic(7).fetch_max(12, order), 10);
            assert_eq!(data, [9, u32::MAX, 3, 0b1000, 0b1110, 0b0110, 7, 12]);
        }
    }

    #[test]
    fn min_and_max_compare_i32_as_signed() {
        for order in ALL {
            let mut data = [-5i32, -5, 3];
            let g = global(&mut data);
            assert_eq!(g.atomic(0).fetch_min(-7, order), -5);
            assert_eq!(g.atomic(1).fetch_max(2, order), -5);
            assert_eq!(g.atomic(2).fetch_sub(5, order), 3);
            assert_eq!(data, [-7, 2, -2]);
        }
        let mut data = [0u32];
        let g = global(&mut data);
        g.atomic_max(0, (-1i32) as u32);
        assert_eq!(data, [u32::MAX]);
    }

    #[test]
    fn loads_and_stores_with_each_allowed_ordering() {
        let mut data = [1u32];
        let g = global(&mut data);
        for (i, order) in STORES.into_iter().enumerate() {
            g.atomic(0).store(i as u32 + 2, order);
            for load in LOADS {
                assert_eq!(g.atomic(0).load(load), i as u32 + 2);
            }
        }
    }

    #[test]
    fn compare_exchange_is_ok_with_the_old_value_when_it_stores() {
        for success in ALL {
            for failure in LOADS {
                let mut data = [5i32];
                let g = global(&mut data);
                assert_eq!(g.atomic(0).compare_exchange(4, 9, success, failure), Err(5));
                assert_eq!(g.atomic(0).compare_exchange(5, 9, success, failure), Ok(5));
                assert_eq!(data, [9]);
            }
        }
    }

    #[test]
    fn the_relaxed_methods_on_global_and_shared() {
        let mut data = [1u32, 1, 1, 0b0110, 0b0110, 0b0110, 1, 1];
        let g = global(&mut data);
        let mut words = [0u128; 2];
        // SAFETY: 8 aligned words that outlive `s`.
        let s = unsafe { Shared::<u32, 8>::from_cpu(words.as_mut_ptr().cast()) };
        for i in 0..8 {
            s.store(i, g.atomic(i).load(Relaxed));
        }
        for (expect, (a, b)) in [
            (1, (g.atomic_add(0, 2), s.atomic_add(0, 2))),
            (1, (g.atomic_min(1, 0), s.atomic_min(1, 0))),
            (1, (g.atomic_max(2, 4), s.atomic_max(2, 4))),
            (0b0110, (g.atomic_and(3, 0b0011), s.atomic_and(3, 0b0011))),
            (0b0110, (g.atomic_or(4, 0b0011), s.atomic_or(4, 0b0011))),
            (0b0110, (g.atomic_xor(5, 0b0011), s.atomic_xor(5, 0b0011))),
            (1, (g.atomic_exchange(6, 8), s.atomic_exchange(6, 8))),
        ] {
            assert_eq!((a, b), (expect, expect));
        }
        assert_eq!(g.atomic_compare_exchange(7, 2, 3), Err(1));
        assert_eq!(s.atomic_compare_exchange(7, 1, 3), Ok(1));
        // SAFETY: 7 < 8.
        assert_eq!(unsafe { s.atomic_add_unchecked(7, 1) }, 3);
        assert_eq!(data, [3, 0, 4, 0b0010, 0b0111, 0b0101, 8, 1]);
        let shared: Vec<u32> = (0..8).map(|i| s.atomic(i).load(SeqCst)).collect();
        assert_eq!(shared, [3, 0, 4, 0b0010, 0b0111, 0b0101, 8, 4]);
        g.atomic_store(1, 9);
        s.atomic_store(1, 10);
        assert_eq!((g.atomic_load(1), s.atomic_load(1)), (9, 10));
        assert_eq!(data[1], 9);
    }

    #[test]
    fn f32_add_on_global() {
        let mut data = [1.5f32];
        let g = global(&mut data);
        assert_eq!(g.atomic_add(0, 2.25), 1.5);
        assert_eq!(data, [3.75]);
    }

    #[test]
    fn concurrent_adds_and_compare_exchange_loops_lose_nothing() {
        let mut data = [0u32, 0];
        let g = global(&mut data);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(move || {
                    for _ in 0..10_000 {
                        g.atomic_add(0, 1);
                        let a = g.atomic(1);
                        let mut seen = a.load(Relaxed);
                        while let Err(now) = a.compare_exchange(seen, seen + 2, AcqRel, Acquire) {
                            seen = now;
                        }
                    }
                });
            }
        });
        assert_eq!(data, [40_000, 80_000]);
    }

    #[test]
    fn a_release_store_publishes_to_an_acquire_load() {
        let mut data = [0u32; 2];
        let g = global(&mut data);
        std::thread::scope(|scope| {
            scope.spawn(move || {
                g.atomic(0).store(42, Relaxed);
                g.atomic(1).store(1, Release);
            });
            scope.spawn(move || {
                while g.atomic(1).load(Acquire) == 0 {
                    std::hint::spin_loop();
                }
                assert_eq!(g.atomic(0).load(Relaxed), 42);
            });
        });
    }

    #[test]
    #[should_panic(expected = "release load")]
    fn a_release_load_panics_as_std_does() {
        let mut data = [0u32];
        global(&mut data).atomic(0).load(Release);
    }

    #[test]
    #[should_panic(expected = "acquire store")]
    fn an_acquire_store_panics_as_std_does() {
        let mut data = [0u32];
        global(&mut data).atomic(0).store(1, Acquire);
    }

    #[test]
    #[should_panic(expected = "failure ordering")]
    fn a_release_failure_ordering_panics_as_std_does() {
        let mut data = [0u32];
        let _ = global(&mut data)
            .atomic(0)
            .compare_exchange(0, 1, AcqRel, Release);
    }

    #[test]
    #[should_panic(expected = "past the 1 elements")]
    fn an_index_past_the_end_panics() {
        let mut data = [0u32];
        global(&mut data).atomic(1);
    }
}
