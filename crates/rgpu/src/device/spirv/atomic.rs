//! Atomics on rust-gpu: spirv-std 0.11's `arch::atomic_*`, scope and semantics as const
//! generics (one call per ordering; the match folds when the ordering is a constant).
//!
//! Scopes: `Global` is `QueueFamily` (see `DEVICE` in spirv.rs for why not `Device`),
//! `Shared` is `Workgroup`. Semantics (rust-gpu's modules use the Vulkan memory model, where
//! an ordering names the storage class it orders and availability/visibility are explicit):
//! - `Relaxed`: `None`;
//! - `Acquire`: `Acquire | MakeVisible | <storage>`;
//! - `Release`: `Release | MakeAvailable | <storage>`;
//! - `AcqRel`, and `SeqCst`: `AcquireRelease | MakeAvailable | MakeVisible | <storage>`
//!   (the Vulkan memory model has no `SequentiallyConsistent`: spirv-val refuses it), an
//!   `Acquire` load and a `Release` store for `SeqCst` loads and stores;
//!
//! with `<storage>` `UniformMemory` for `Global` (storage buffers) and `WorkgroupMemory` for
//! `Shared`. A compare-exchange's `Unequal` semantics are the acquire part of the ordering
//! (`None` or `Acquire | MakeVisible | <storage>`).
//!
//! Under the Vulkan memory model only non-private accesses (atomics, and loads/stores with
//! `NonPrivatePointer`) are ordered by these semantics; rust-gpu 0.11 writes plain loads and
//! stores without it, so data published with a release and read after an acquire should
//! itself go through atomics (relaxed ones suffice) to be covered by the model; drivers
//! (Mesa's lavapipe among them) order plain accesses too (docs/kernel-api.md).

use core::sync::atomic::Ordering;

use spirv_std::arch::{
    atomic_and, atomic_compare_exchange, atomic_exchange, atomic_f_add, atomic_i_add, atomic_i_sub,
    atomic_load, atomic_or, atomic_s_max, atomic_s_min, atomic_store, atomic_u_max, atomic_u_min,
    atomic_xor, memory_barrier,
};
use spirv_std::memory::Semantics;

use super::super::atomic::{op, ord};
use super::{DEVICE, RELAXED, WORKGROUP};

/// An element of a storage buffer or of the workgroup array.
#[doc(hidden)]
pub type Ptr<T> = *mut T;

const UNIFORM: u32 = Semantics::UNIFORM_MEMORY.bits();
const GROUP: u32 = Semantics::WORKGROUP_MEMORY.bits();
const ACQUIRE: u32 = Semantics::ACQUIRE.bits() | Semantics::MAKE_VISIBLE.bits();
const RELEASE: u32 = Semantics::RELEASE.bits() | Semantics::MAKE_AVAILABLE.bits();
const ACQ_REL: u32 = Semantics::ACQUIRE_RELEASE.bits()
    | Semantics::MAKE_AVAILABLE.bits()
    | Semantics::MAKE_VISIBLE.bits();

/// `$func::<T, $scope, SEMANTICS>($args)` with the semantics of the ordering `$order` (a
/// const generic: the `match` is resolved when the function is instantiated).
macro_rules! ordered {
    ($order:expr, $func:ident, $ty:ty, $scope:ident, $storage:ident, ($($args:expr),*)) => {
        match $order {
            ord::RELAXED => $func::<$ty, $scope, RELAXED>($($args),*),
            ord::ACQUIRE => $func::<$ty, $scope, { ACQUIRE | $storage }>($($args),*),
            ord::RELEASE => $func::<$ty, $scope, { RELEASE | $storage }>($($args),*),
            _ => $func::<$ty, $scope, { ACQ_REL | $storage }>($($args),*),
        }
    };
}

/// One scope's four primitives for `$ty` (`$min`/`$max`: spirv-std's signed or unsigned).
macro_rules! scope_ops {
    ($ty:ty, $min:ident, $max:ident, $scope:ident, $storage:ident,
     $load:ident, $store:ident, $rmw:ident, $cas:ident) => {
        #[inline(always)]
        unsafe fn $load<const ORD: u8>(at: Ptr<Self>) -> Self {
            // SAFETY: the caller's: `at` is an element of this scope's memory.
            unsafe {
                match ORD {
                    ord::RELAXED => atomic_load::<$ty, $scope, RELAXED>(&*at),
                    _ => atomic_load::<$ty, $scope, { ACQUIRE | $storage }>(&*at),
                }
            }
        }

        #[inline(always)]
        unsafe fn $store<const ORD: u8>(at: Ptr<Self>, value: Self) {
            // SAFETY: as for the load.
            unsafe {
                match ORD {
                    ord::RELAXED => atomic_store::<$ty, $scope, RELAXED>(&mut *at, value),
                    _ => atomic_store::<$ty, $scope, { RELEASE | $storage }>(&mut *at, value),
                }
            }
        }

        #[inline(always)]
        unsafe fn $rmw<const OP: u8, const ORD: u8>(at: Ptr<Self>, value: Self) -> Self {
            // SAFETY: as for the load.
            unsafe {
                match OP {
                    op::ADD => {
                        ordered!(ORD, atomic_i_add, $ty, $scope, $storage, (&mut *at, value))
                    }
                    op::SUB => {
                        ordered!(ORD, atomic_i_sub, $ty, $scope, $storage, (&mut *at, value))
                    }
                    op::AND => ordered!(ORD, atomic_and, $ty, $scope, $storage, (&mut *at, value)),
                    op::OR => ordered!(ORD, atomic_or, $ty, $scope, $storage, (&mut *at, value)),
                    op::XOR => ordered!(ORD, atomic_xor, $ty, $scope, $storage, (&mut *at, value)),
                    op::EXCHANGE => ordered!(
                        ORD,
                        atomic_exchange,
                        $ty,
                        $scope,
                        $storage,
                        (&mut *at, value)
                    ),
                    op::MIN => ordered!(ORD, $min, $ty, $scope, $storage, (&mut *at, value)),
                    _ => ordered!(ORD, $max, $ty, $scope, $storage, (&mut *at, value)),
                }
            }
        }

        #[inline(always)]
        unsafe fn $cas<const ORD: u8>(at: Ptr<Self>, current: Self, new: Self) -> Self {
            // SAFETY: as for the load. spirv-std's operands: pointer, value, comparator.
            unsafe {
                match ORD {
                    ord::RELAXED => atomic_compare_exchange::<$ty, $scope, RELAXED, RELAXED>(
                        &mut *at, new, current,
                    ),
                    ord::ACQUIRE => atomic_compare_exchange::<
                        $ty,
                        $scope,
                        { ACQUIRE | $storage },
                        { ACQUIRE | $storage },
                    >(&mut *at, new, current),
                    ord::RELEASE => {
                        atomic_compare_exchange::<$ty, $scope, { RELEASE | $storage }, RELAXED>(
                            &mut *at, new, current,
                        )
                    }
                    _ => atomic_compare_exchange::<
                        $ty,
                        $scope,
                        { ACQ_REL | $storage },
                        { ACQUIRE | $storage },
                    >(&mut *at, new, current),
                }
            }
        }
    };
}

/// The codegen's atomics on one element type (`Global`: queue-family scope, `Shared`:
/// workgroup scope); `OP` and `ORD` are `atomic::op` and `atomic::ord` constants.
#[doc(hidden)]
pub trait AtomicOps: Sized {
    #[doc(hidden)]
    unsafe fn load_device<const ORD: u8>(at: Ptr<Self>) -> Self;
    #[doc(hidden)]
    unsafe fn store_device<const ORD: u8>(at: Ptr<Self>, value: Self);
    #[doc(hidden)]
    unsafe fn rmw_device<const OP: u8, const ORD: u8>(at: Ptr<Self>, value: Self) -> Self;
    #[doc(hidden)]
    unsafe fn cas_device<const ORD: u8>(at: Ptr<Self>, current: Self, new: Self) -> Self;
    #[doc(hidden)]
    unsafe fn load_workgroup<const ORD: u8>(at: Ptr<Self>) -> Self;
    #[doc(hidden)]
    unsafe fn store_workgroup<const ORD: u8>(at: Ptr<Self>, value: Self);
    #[doc(hidden)]
    unsafe fn rmw_workgroup<const OP: u8, const ORD: u8>(at: Ptr<Self>, value: Self) -> Self;
    #[doc(hidden)]
    unsafe fn cas_workgroup<const ORD: u8>(at: Ptr<Self>, current: Self, new: Self) -> Self;
}

macro_rules! atomic_ops {
    ($ty:ty, $min:ident, $max:ident) => {
        impl AtomicOps for $ty {
            scope_ops!(
                $ty,
                $min,
                $max,
                DEVICE,
                UNIFORM,
                load_device,
                store_device,
                rmw_device,
                cas_device
            );
            scope_ops!(
                $ty,
                $min,
                $max,
                WORKGROUP,
                GROUP,
                load_workgroup,
                store_workgroup,
                rmw_workgroup,
                cas_workgroup
            );
        }
    };
}

atomic_ops!(u32, atomic_u_min, atomic_u_max);
atomic_ops!(i32, atomic_s_min, atomic_s_max);

/// `OpAtomicFAddEXT` at queue-family scope, relaxed; the old value. The module needs the
/// AtomicFloat32AddEXT capability and the SPV_EXT_shader_atomic_float_add extension.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn atomic_add_f32(at: Ptr<f32>, value: f32) -> f32 {
    // SAFETY: the caller's (an element of a storage buffer).
    unsafe { atomic_f_add::<f32, DEVICE, RELAXED>(&mut *at, value) }
}

/// `OpMemoryBarrier` at queue-family scope on storage buffers and workgroup memory:
/// `Acquire`, `Release` or `AcquireRelease` (also for `SeqCst`) with MakeAvailable and
/// MakeVisible as the ordering says.
#[doc(hidden)]
#[inline(always)]
pub fn fence(order: Ordering) {
    const MEMORY: u32 = UNIFORM | GROUP;
    match order {
        Ordering::Acquire => memory_barrier::<DEVICE, { ACQUIRE | MEMORY }>(),
        Ordering::Release => memory_barrier::<DEVICE, { RELEASE | MEMORY }>(),
        _ => memory_barrier::<DEVICE, { ACQ_REL | MEMORY }>(),
    }
}
