//! Atomics with memory orderings, written once over the codegens' primitives: the handle
//! [`Atomic`] that `Global::atomic` and `Shared::atomic` return, the element types
//! ([`AtomicWord`]: `u32`, `i32`) and the scopes ([`DeviceScope`], [`WorkgroupScope`]).
//!
//! Each codegen implements `arch::AtomicOps` for `u32` and `i32`: a load, a store, a
//! read-modify-write and a compare-exchange at each scope, each taking the ordering as a
//! value and matching it (one instruction per arm; the match folds when the ordering is a
//! constant, as it is in kernels). The orderings std forbids for an operation (a `Release`
//! load, an `Acquire` store, a `Release` failure ordering) panic here, before any codegen
//! sees them, as std's do. docs/kernel-api.md has the instruction each ordering becomes.

use core::marker::PhantomData;
use core::sync::atomic::Ordering;

use super::arch;
use super::Word;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for super::DeviceScope {}
    impl Sealed for super::WorkgroupScope {}
}

/// A read-modify-write operation (the codegens' `rmw`).
#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rmw {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Exchange,
    /// Signed for `i32`, unsigned for `u32`.
    Min,
    /// Signed for `i32`, unsigned for `u32`.
    Max,
}

/// The element types with atomics: `u32` and `i32` (`min`/`max` compare as the type does).
pub trait AtomicWord: Word + arch::AtomicOps + sealed::Sealed {}
impl AtomicWord for u32 {}
impl AtomicWord for i32 {}

/// Which invocations an [`Atomic`]'s operations are atomic and ordered with: every
/// invocation of the launch ([`DeviceScope`], `Global`) or of the workgroup
/// ([`WorkgroupScope`], `Shared`).
pub trait AtomicScope: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn load<T: AtomicWord>(at: arch::Ptr<T>, order: Ordering) -> T;
    #[doc(hidden)]
    unsafe fn store<T: AtomicWord>(at: arch::Ptr<T>, value: T, order: Ordering);
    #[doc(hidden)]
    unsafe fn rmw<T: AtomicWord>(at: arch::Ptr<T>, op: Rmw, value: T, order: Ordering) -> T;
    #[doc(hidden)]
    unsafe fn cas<T: AtomicWord>(at: arch::Ptr<T>, current: T, new: T, order: Ordering) -> T;
}

/// Device scope: `Global`'s atomics, atomic and ordered across every invocation of the
/// launch (PTX `.gpu`, SPIR-V `QueueFamily`).
#[derive(Clone, Copy, Debug)]
pub struct DeviceScope;

/// Workgroup scope: `Shared`'s atomics, atomic and ordered across the invocations of one
/// workgroup (PTX `.cta`, SPIR-V `Workgroup`).
#[derive(Clone, Copy, Debug)]
pub struct WorkgroupScope;

macro_rules! scope {
    ($scope:ty, $load:ident, $store:ident, $rmw:ident, $cas:ident) => {
        impl AtomicScope for $scope {
            #[inline(always)]
            unsafe fn load<T: AtomicWord>(at: arch::Ptr<T>, order: Ordering) -> T {
                // SAFETY: the caller's contract (a valid element of this scope's memory).
                unsafe { T::$load(at, order) }
            }
            #[inline(always)]
            unsafe fn store<T: AtomicWord>(at: arch::Ptr<T>, value: T, order: Ordering) {
                // SAFETY: as for `load`.
                unsafe { T::$store(at, value, order) }
            }
            #[inline(always)]
            unsafe fn rmw<T: AtomicWord>(
                at: arch::Ptr<T>,
                op: Rmw,
                value: T,
                order: Ordering,
            ) -> T {
                // SAFETY: as for `load`.
                unsafe { T::$rmw(at, op, value, order) }
            }
            #[inline(always)]
            unsafe fn cas<T: AtomicWord>(
                at: arch::Ptr<T>,
                current: T,
                new: T,
                order: Ordering,
            ) -> T {
                // SAFETY: as for `load`.
                unsafe { T::$cas(at, current, new, order) }
            }
        }
    };
}

scope!(
    DeviceScope,
    load_device,
    store_device,
    rmw_device,
    cas_device
);
scope!(
    WorkgroupScope,
    load_workgroup,
    store_workgroup,
    rmw_workgroup,
    cas_workgroup
);

/// One element of `Global` or `Shared` memory, accessed atomically with an ordering, like
/// std's `AtomicU32`/`AtomicI32` (the same method names, the same `Ordering`, the same
/// panics for orderings std forbids). `S` is the scope: [`DeviceScope`] for `Global`
/// (`global.atomic(i)`), [`WorkgroupScope`] for `Shared` (`shared.atomic(i)`).
///
/// Every concurrent access to the element must be atomic (through an `Atomic` or the
/// `atomic_*` methods). `SeqCst` is as strong as each codegen can say: PTX `fence.sc` then
/// the `acq_rel` operation; SPIR-V's Vulkan memory model has no sequentially consistent
/// semantics, so there it is `AcquireRelease` (see docs/kernel-api.md).
pub struct Atomic<'a, T: AtomicWord, S: AtomicScope = DeviceScope> {
    at: arch::Ptr<T>,
    _memory: PhantomData<(&'a T, S)>,
}

impl<T: AtomicWord, S: AtomicScope> Clone for Atomic<'_, T, S> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: AtomicWord, S: AtomicScope> Copy for Atomic<'_, T, S> {}

/// The success ordering and the failure ordering of a compare-exchange as the one
/// ordering the codegens take: the success ordering strengthened with the failure's
/// acquire (std's rule: the failure ordering is a load's, never `Release`/`AcqRel`).
#[inline(always)]
fn cas_order(success: Ordering, failure: Ordering) -> Ordering {
    use Ordering::*;
    match (success, failure) {
        (_, Release | AcqRel) => panic!("there is no such thing as a release failure ordering"),
        (SeqCst, _) | (_, SeqCst) => SeqCst,
        (Relaxed, Acquire) => Acquire,
        (Release, Acquire) => AcqRel,
        (order, _) => order,
    }
}

impl<T: AtomicWord, S: AtomicScope> Atomic<'_, T, S> {
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_ptr(at: arch::Ptr<T>) -> Self {
        Self {
            at,
            _memory: PhantomData,
        }
    }

    #[inline(always)]
    fn rmw(&self, op: Rmw, value: T, order: Ordering) -> T {
        // SAFETY: `at` is an element of S's memory (`Global::atomic`/`Shared::atomic`).
        unsafe { S::rmw(self.at, op, value, order) }
    }

    /// The value. `order`: `Relaxed`, `Acquire` or `SeqCst` (`Release`/`AcqRel` panic).
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> T {
        match order {
            Ordering::Release => panic!("there is no such thing as a release load"),
            Ordering::AcqRel => panic!("there is no such thing as an acquire-release load"),
            // SAFETY: as for `rmw`.
            _ => unsafe { S::load(self.at, order) },
        }
    }

    /// Stores `value`. `order`: `Relaxed`, `Release` or `SeqCst` (`Acquire`/`AcqRel` panic).
    #[inline(always)]
    pub fn store(&self, value: T, order: Ordering) {
        match order {
            Ordering::Acquire => panic!("there is no such thing as an acquire store"),
            Ordering::AcqRel => panic!("there is no such thing as an acquire-release store"),
            // SAFETY: as for `rmw`.
            _ => unsafe { S::store(self.at, value, order) },
        }
    }

    /// Adds `value` (wrapping); the previous value.
    #[inline(always)]
    pub fn fetch_add(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Add, value, order)
    }

    /// Subtracts `value` (wrapping); the previous value.
    #[inline(always)]
    pub fn fetch_sub(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Sub, value, order)
    }

    /// Stores the smaller of the element and `value`; the previous value.
    #[inline(always)]
    pub fn fetch_min(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Min, value, order)
    }

    /// Stores the larger of the element and `value`; the previous value.
    #[inline(always)]
    pub fn fetch_max(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Max, value, order)
    }

    /// Bitwise and with `value`; the previous value.
    #[inline(always)]
    pub fn fetch_and(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::And, value, order)
    }

    /// Bitwise or with `value`; the previous value.
    #[inline(always)]
    pub fn fetch_or(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Or, value, order)
    }

    /// Bitwise xor with `value`; the previous value.
    #[inline(always)]
    pub fn fetch_xor(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Xor, value, order)
    }

    /// Stores `value`; the previous value.
    #[inline(always)]
    pub fn swap(&self, value: T, order: Ordering) -> T {
        self.rmw(Rmw::Exchange, value, order)
    }

    /// Stores `new` if the element is `current`: `Ok(previous)` when it stored,
    /// `Err(previous)` when not (std's `compare_exchange`; never fails spuriously).
    /// `failure` is a load's ordering (`Release`/`AcqRel` panic); the codegens apply the
    /// stronger of the two to the one instruction (docs/kernel-api.md).
    #[inline(always)]
    pub fn compare_exchange(
        &self,
        current: T,
        new: T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<T, T> {
        let order = cas_order(success, failure);
        // SAFETY: as for `rmw`.
        let old = unsafe { S::cas(self.at, current, new, order) };
        if old.to_bits() == current.to_bits() {
            Ok(old)
        } else {
            Err(old)
        }
    }
}

/// A memory fence of `order` at device scope (`Acquire`, `Release`, `AcqRel`, `SeqCst`;
/// `Relaxed` panics, as std's `fence` does): orders this invocation's memory accesses
/// before and after it for every invocation of the launch that synchronizes with it.
#[inline(always)]
pub fn fence(order: Ordering) {
    match order {
        Ordering::Relaxed => panic!("there is no such thing as a relaxed fence"),
        _ => arch::fence(order),
    }
}

/// The relaxed `atomic_*` methods of `Global<T>` and `Shared<T, N>` (T = u32, i32), written
/// once over `atomic(index)`.
macro_rules! relaxed_methods {
    ($what:literal) => {
        #[doc = concat!("Adds `value` to element `index` atomically (wrapping, relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_add(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_add(value, Ordering::Relaxed)
        }

        #[doc = concat!("Stores the larger of element `index` and `value` atomically (relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_max(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_max(value, Ordering::Relaxed)
        }

        #[doc = concat!("Stores the smaller of element `index` and `value` atomically (relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_min(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_min(value, Ordering::Relaxed)
        }

        #[doc = concat!("Bitwise and of element `index` with `value`, atomically (relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_and(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_and(value, Ordering::Relaxed)
        }

        #[doc = concat!("Bitwise or of element `index` with `value`, atomically (relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_or(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_or(value, Ordering::Relaxed)
        }

        #[doc = concat!("Bitwise xor of element `index` with `value`, atomically (relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_xor(&self, index: u32, value: T) -> T {
            self.atomic(index).fetch_xor(value, Ordering::Relaxed)
        }

        #[doc = concat!("Stores `value` in element `index` atomically (relaxed, ", $what, "); the old value.")]
        #[inline(always)]
        pub fn atomic_exchange(&self, index: u32, value: T) -> T {
            self.atomic(index).swap(value, Ordering::Relaxed)
        }

        #[doc = concat!("Stores `new` in element `index` if it is `current`, atomically (relaxed, ", $what, "): `Ok(old)` when it stored, `Err(old)` when not.")]
        #[inline(always)]
        pub fn atomic_compare_exchange(&self, index: u32, current: T, new: T) -> Result<T, T> {
            self.atomic(index)
                .compare_exchange(current, new, Ordering::Relaxed, Ordering::Relaxed)
        }
    };
}

impl<T: AtomicWord> arch::Global<T> {
    /// Element `index` as an [`Atomic`] at device scope (every invocation of the launch).
    /// Past `len()` the kernel traps (the invocation stops on Vulkan).
    #[inline(always)]
    pub fn atomic(&self, index: u32) -> Atomic<'_, T, DeviceScope> {
        // SAFETY: `element` checks the index; the buffer outlives the launch.
        unsafe { Atomic::from_ptr(self.element(index)) }
    }

    relaxed_methods!("device scope");
}

impl arch::Global<f32> {
    /// Adds `value` to element `index` atomically (relaxed, device scope); the old value.
    /// PTX `atom.relaxed.gpu.global.add.f32`; SPIR-V `OpAtomicFAddEXT` (the module needs the
    /// AtomicFloat32AddEXT capability: docs/kernel-api.md). Past `len()` the kernel traps.
    #[inline(always)]
    pub fn atomic_add(&self, index: u32, value: f32) -> f32 {
        // SAFETY: `element` checks the index; the buffer outlives the launch.
        unsafe { arch::atomic_add_f32(self.element(index), value) }
    }
}

impl<T: AtomicWord, const N: usize> arch::Shared<T, N> {
    /// Element `index` as an [`Atomic`] at workgroup scope (the invocations of this
    /// workgroup). Past `N` the kernel traps (the invocation stops on Vulkan).
    #[inline(always)]
    pub fn atomic(&self, index: u32) -> Atomic<'_, T, WorkgroupScope> {
        // SAFETY: `element` checks the index; the array outlives the workgroup.
        unsafe { Atomic::from_ptr(self.element(index)) }
    }

    relaxed_methods!("workgroup scope");

    /// `atomic_add` without the bounds check.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn atomic_add_unchecked(&self, index: u32, value: T) -> T {
        // SAFETY: the caller's contract (index < N).
        unsafe {
            Atomic::<T, WorkgroupScope>::from_ptr(self.element_unchecked(index))
                .fetch_add(value, Ordering::Relaxed)
        }
    }
}
