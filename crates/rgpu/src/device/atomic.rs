//! Atomics with memory orderings, written once over the codegens' primitives: the handle
//! [`Atomic`] that `Global::atomic` and `Shared::atomic` return, the element types
//! ([`AtomicWord`]: `u32`, `i32`) and the scopes ([`DeviceScope`], [`WorkgroupScope`]).
//!
//! Each codegen implements `arch::AtomicOps` for `u32` and `i32`: a load, a store, a
//! read-modify-write and a compare-exchange at each scope, with the operation and the
//! ordering as const generics (`op`, `ord`), so that each instance is one instruction. The
//! relaxed `atomic_*` methods name `ord::RELAXED` directly; the handle's methods turn an
//! `Ordering` value into the constant with one `match`: on rustc's nvptx target LLVM folds
//! it, on rust-gpu (which inlines no MIR) it stays a switch on a constant in the SPIR-V,
//! which the drivers fold (docs/kernel-api.md). The orderings std forbids for an operation
//! (a `Release` load, an `Acquire` store, a `Release` failure ordering) panic here, before
//! any codegen sees them, as std's do.

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

/// The read-modify-write operations, as the const generic `OP` of the codegens' `rmw`.
#[doc(hidden)]
pub mod op {
    pub const ADD: u8 = 0;
    pub const SUB: u8 = 1;
    pub const AND: u8 = 2;
    pub const OR: u8 = 3;
    pub const XOR: u8 = 4;
    pub const EXCHANGE: u8 = 5;
    /// Signed for `i32`, unsigned for `u32`.
    pub const MIN: u8 = 6;
    /// Signed for `i32`, unsigned for `u32`.
    pub const MAX: u8 = 7;
}

/// The orderings, as the const generic `ORD` of the codegens' primitives.
#[doc(hidden)]
pub mod ord {
    pub const RELAXED: u8 = 0;
    pub const ACQUIRE: u8 = 1;
    pub const RELEASE: u8 = 2;
    pub const ACQ_REL: u8 = 3;
    pub const SEQ_CST: u8 = 4;
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
    unsafe fn load<T: AtomicWord, const ORD: u8>(at: arch::Ptr<T>) -> T;
    #[doc(hidden)]
    unsafe fn store<T: AtomicWord, const ORD: u8>(at: arch::Ptr<T>, value: T);
    #[doc(hidden)]
    unsafe fn rmw<T: AtomicWord, const OP: u8, const ORD: u8>(at: arch::Ptr<T>, value: T) -> T;
    #[doc(hidden)]
    unsafe fn cas<T: AtomicWord, const ORD: u8>(at: arch::Ptr<T>, current: T, new: T) -> T;
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
            unsafe fn load<T: AtomicWord, const ORD: u8>(at: arch::Ptr<T>) -> T {
                // SAFETY: the caller's contract (a valid element of this scope's memory).
                unsafe { T::$load::<ORD>(at) }
            }
            #[inline(always)]
            unsafe fn store<T: AtomicWord, const ORD: u8>(at: arch::Ptr<T>, value: T) {
                // SAFETY: as for `load`.
                unsafe { T::$store::<ORD>(at, value) }
            }
            #[inline(always)]
            unsafe fn rmw<T: AtomicWord, const OP: u8, const ORD: u8>(
                at: arch::Ptr<T>,
                value: T,
            ) -> T {
                // SAFETY: as for `load`.
                unsafe { T::$rmw::<OP, ORD>(at, value) }
            }
            #[inline(always)]
            unsafe fn cas<T: AtomicWord, const ORD: u8>(at: arch::Ptr<T>, current: T, new: T) -> T {
                // SAFETY: as for `load`.
                unsafe { T::$cas::<ORD>(at, current, new) }
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
    fn rmw<const OP: u8>(&self, value: T, order: Ordering) -> T {
        // SAFETY: `at` is an element of S's memory (`Global::atomic`/`Shared::atomic`).
        unsafe {
            match order {
                Ordering::Relaxed => S::rmw::<T, OP, { ord::RELAXED }>(self.at, value),
                Ordering::Acquire => S::rmw::<T, OP, { ord::ACQUIRE }>(self.at, value),
                Ordering::Release => S::rmw::<T, OP, { ord::RELEASE }>(self.at, value),
                Ordering::AcqRel => S::rmw::<T, OP, { ord::ACQ_REL }>(self.at, value),
                _ => S::rmw::<T, OP, { ord::SEQ_CST }>(self.at, value),
            }
        }
    }

    /// The value. `order`: `Relaxed`, `Acquire` or `SeqCst` (`Release`/`AcqRel` panic).
    #[inline(always)]
    pub fn load(&self, order: Ordering) -> T {
        // SAFETY: as for `rmw`.
        unsafe {
            match order {
                Ordering::Release => panic!("there is no such thing as a release load"),
                Ordering::AcqRel => panic!("there is no such thing as an acquire-release load"),
                Ordering::Relaxed => S::load::<T, { ord::RELAXED }>(self.at),
                Ordering::Acquire => S::load::<T, { ord::ACQUIRE }>(self.at),
                _ => S::load::<T, { ord::SEQ_CST }>(self.at),
            }
        }
    }

    /// Stores `value`. `order`: `Relaxed`, `Release` or `SeqCst` (`Acquire`/`AcqRel` panic).
    #[inline(always)]
    pub fn store(&self, value: T, order: Ordering) {
        // SAFETY: as for `rmw`.
        unsafe {
            match order {
                Ordering::Acquire => panic!("there is no such thing as an acquire store"),
                Ordering::AcqRel => panic!("there is no such thing as an acquire-release store"),
                Ordering::Relaxed => S::store::<T, { ord::RELAXED }>(self.at, value),
                Ordering::Release => S::store::<T, { ord::RELEASE }>(self.at, value),
                _ => S::store::<T, { ord::SEQ_CST }>(self.at, value),
            }
        }
    }

    /// Adds `value` (wrapping); the previous value.
    #[inline(always)]
    pub fn fetch_add(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::ADD }>(value, order)
    }

    /// Subtracts `value` (wrapping); the previous value.
    #[inline(always)]
    pub fn fetch_sub(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::SUB }>(value, order)
    }

    /// Stores the smaller of the element and `value`; the previous value.
    #[inline(always)]
    pub fn fetch_min(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::MIN }>(value, order)
    }

    /// Stores the larger of the element and `value`; the previous value.
    #[inline(always)]
    pub fn fetch_max(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::MAX }>(value, order)
    }

    /// Bitwise and with `value`; the previous value.
    #[inline(always)]
    pub fn fetch_and(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::AND }>(value, order)
    }

    /// Bitwise or with `value`; the previous value.
    #[inline(always)]
    pub fn fetch_or(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::OR }>(value, order)
    }

    /// Bitwise xor with `value`; the previous value.
    #[inline(always)]
    pub fn fetch_xor(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::XOR }>(value, order)
    }

    /// Stores `value`; the previous value.
    #[inline(always)]
    pub fn swap(&self, value: T, order: Ordering) -> T {
        self.rmw::<{ op::EXCHANGE }>(value, order)
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
        // SAFETY: as for `rmw`.
        let old = unsafe {
            match cas_order(success, failure) {
                Ordering::Relaxed => S::cas::<T, { ord::RELAXED }>(self.at, current, new),
                Ordering::Acquire => S::cas::<T, { ord::ACQUIRE }>(self.at, current, new),
                Ordering::Release => S::cas::<T, { ord::RELEASE }>(self.at, current, new),
                Ordering::AcqRel => S::cas::<T, { ord::ACQ_REL }>(self.at, current, new),
                _ => S::cas::<T, { ord::SEQ_CST }>(self.at, current, new),
            }
        };
        exchanged(old, current)
    }
}

/// `Ok(old)` when a compare-exchange that read `old` stored (`old` is `current`).
#[inline(always)]
fn exchanged<T: Word>(old: T, current: T) -> Result<T, T> {
    if old.to_bits() == current.to_bits() {
        Ok(old)
    } else {
        Err(old)
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
/// once: each is one relaxed instruction at scope `$scope` (no dispatch on an ordering) on
/// `self.element(index)` (bounds-checked).
macro_rules! relaxed_methods {
    ($scope:ty, $what:literal) => {
        #[doc = concat!("Adds `value` to element `index` atomically (wrapping, relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_add(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::ADD }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Stores the larger of element `index` and `value` atomically (relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_max(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::MAX }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Stores the smaller of element `index` and `value` atomically (relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_min(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::MIN }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Bitwise and of element `index` with `value`, atomically (relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_and(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::AND }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Bitwise or of element `index` with `value`, atomically (relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_or(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::OR }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Bitwise xor of element `index` with `value`, atomically (relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_xor(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::XOR }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Element `index`, read atomically (relaxed, ", $what, "): a load that sees another invocation's atomic store, as the ordered handle's `load(Relaxed)` without its dispatch on an ordering.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_load(&self, index: u32) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::load::<T, { ord::RELAXED }>(self.element(index)) }
        }

        #[doc = concat!("Stores `value` in element `index` atomically (relaxed, ", $what, "), as the ordered handle's `store(value, Relaxed)` without its dispatch on an ordering.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_store(&self, index: u32, value: T) {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::store::<T, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Stores `value` in element `index` atomically (relaxed, ", $what, "); the old value.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_exchange(&self, index: u32, value: T) -> T {
            // SAFETY: `element` checks the index; the memory outlives the kernel.
            unsafe { <$scope>::rmw::<T, { op::EXCHANGE }, { ord::RELAXED }>(self.element(index), value) }
        }

        #[doc = concat!("Stores `new` in element `index` if it is `current`, atomically (relaxed, ", $what, "): `Ok(old)` when it stored, `Err(old)` when not.")]
        #[cfg_attr(rgpu_checked, track_caller)]
        #[inline(always)]
        pub fn atomic_compare_exchange(&self, index: u32, current: T, new: T) -> Result<T, T> {
            // SAFETY: as for `atomic_add`.
            let old = unsafe { <$scope>::cas::<T, { ord::RELAXED }>(self.element(index), current, new) };
            exchanged(old, current)
        }
    };
}

impl<T: AtomicWord> arch::Global<T> {
    /// Element `index` as an [`Atomic`] at device scope (every invocation of the launch).
    /// Past `len()` the kernel traps (the invocation stops on Vulkan).
    #[cfg_attr(rgpu_checked, track_caller)]
    #[inline(always)]
    pub fn atomic(&self, index: u32) -> Atomic<'_, T, DeviceScope> {
        // SAFETY: `element` checks the index; the buffer outlives the launch.
        unsafe { Atomic::from_ptr(self.element(index)) }
    }

    relaxed_methods!(DeviceScope, "device scope");
}

impl arch::Global<f32> {
    /// Adds `value` to element `index` atomically (relaxed, device scope); the old value.
    /// PTX `atom.relaxed.gpu.global.add.f32`; SPIR-V `OpAtomicFAddEXT` (the module needs the
    /// AtomicFloat32AddEXT capability: docs/kernel-api.md). Past `len()` the kernel traps.
    #[cfg_attr(rgpu_checked, track_caller)]
    #[inline(always)]
    pub fn atomic_add(&self, index: u32, value: f32) -> f32 {
        // SAFETY: `element` checks the index; the buffer outlives the launch.
        unsafe { arch::atomic_add_f32(self.element(index), value) }
    }
}

impl<T: AtomicWord, const N: usize> arch::Shared<T, N> {
    /// Element `index` as an [`Atomic`] at workgroup scope (the invocations of this
    /// workgroup). Past `N` the kernel traps (the invocation stops on Vulkan).
    #[cfg_attr(rgpu_checked, track_caller)]
    #[inline(always)]
    pub fn atomic(&self, index: u32) -> Atomic<'_, T, WorkgroupScope> {
        // SAFETY: `element` checks the index; the array outlives the workgroup.
        unsafe { Atomic::from_ptr(self.element(index)) }
    }

    relaxed_methods!(WorkgroupScope, "workgroup scope");

    /// `atomic_add` without the bounds check.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn atomic_add_unchecked(&self, index: u32, value: T) -> T {
        // SAFETY: the caller's contract (index < N).
        unsafe {
            WorkgroupScope::rmw::<T, { op::ADD }, { ord::RELAXED }>(
                self.element_unchecked(index),
                value,
            )
        }
    }
}
