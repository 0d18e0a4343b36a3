//! Atomics on Rust-CUDA's nvvm: cuda_std's `atomic::mid` functions (an ordering argument,
//! `_device` = `.gpu` scope for `Global`, `_block` = `.cta` for `Shared`; generic
//! addressing) and `atomic::intrinsics`' `cas` (one function per ordering). cuda_std maps
//! `SeqCst` to `fence.sc` then the `.acquire`/`.release`/`.acq_rel` operation on sm_70+, as
//! the nvptx codegen does.

use core::sync::atomic::Ordering;

use cuda_std::atomic::{intrinsics, mid};

use super::super::atomic::{op, ord};

/// An element's generic address.
#[doc(hidden)]
pub type Ptr<T> = *mut T;

/// One scope's four primitives for `$ty` (`$names`: cuda_std's functions at that scope).
macro_rules! scope_ops {
    ($ty:ty, $load:ident, $store:ident, $rmw:ident, $cas:ident, $fence:path,
     load: $mload:path, store: $mstore:path,
     add: $add:path, sub: $sub:path, and: $and:path, or: $or:path, xor: $xor:path,
     exch: $exch:path, min: $min:path, max: $max:path,
     cas: [$cas_relaxed:path, $cas_acquire:path, $cas_release:path, $cas_acqrel:path]) => {
        #[inline(always)]
        unsafe fn $load<const ORD: u8>(at: Ptr<Self>) -> Self {
            let order = ordering(ORD);
            // SAFETY: the caller's: `at` is an element of this scope's memory (a 32-bit word,
            // read as cuda_std's `u32` load).
            unsafe { $mload(at as *mut u32, order) as $ty }
        }

        #[inline(always)]
        unsafe fn $store<const ORD: u8>(at: Ptr<Self>, value: Self) {
            let order = ordering(ORD);
            // SAFETY: as for the load.
            unsafe { $mstore(at as *mut u32, order, value as u32) }
        }

        #[inline(always)]
        unsafe fn $rmw<const OP: u8, const ORD: u8>(at: Ptr<Self>, value: Self) -> Self {
            let order = ordering(ORD);
            // SAFETY: as for the load.
            unsafe {
                match OP {
                    op::ADD => $add(at, order, value),
                    op::SUB => $sub(at, order, value),
                    op::AND => $and(at, order, value),
                    op::OR => $or(at, order, value),
                    op::XOR => $xor(at, order, value),
                    op::EXCHANGE => $exch(at, order, value),
                    op::MIN => $min(at, order, value),
                    _ => $max(at, order, value),
                }
            }
        }

        #[inline(always)]
        unsafe fn $cas<const ORD: u8>(at: Ptr<Self>, current: Self, new: Self) -> Self {
            // SAFETY: as for the load. `atom.cas`'s operands: compare, then new.
            unsafe {
                match ORD {
                    ord::RELAXED => $cas_relaxed(at, current, new),
                    ord::ACQUIRE => $cas_acquire(at, current, new),
                    ord::RELEASE => $cas_release(at, current, new),
                    ord::ACQ_REL => $cas_acqrel(at, current, new),
                    _ => {
                        $fence(Ordering::SeqCst);
                        $cas_acqrel(at, current, new)
                    }
                }
            }
        }
    };
}

/// `Ordering` of an `atomic::ord` constant (cuda_std takes the value).
#[inline(always)]
fn ordering(code: u8) -> Ordering {
    match code {
        ord::RELAXED => Ordering::Relaxed,
        ord::ACQUIRE => Ordering::Acquire,
        ord::RELEASE => Ordering::Release,
        ord::ACQ_REL => Ordering::AcqRel,
        _ => Ordering::SeqCst,
    }
}

/// The codegen's atomics on one element type (`Global`: device scope, `Shared`: block
/// scope); `OP` and `ORD` are `atomic::op` and `atomic::ord` constants.
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

impl AtomicOps for u32 {
    scope_ops!(u32, load_device, store_device, rmw_device, cas_device, mid::device_thread_fence,
        load: mid::atomic_load_32_device, store: mid::atomic_store_32_device,
        add: mid::atomic_fetch_add_u32_device, sub: mid::atomic_fetch_sub_u32_device,
        and: mid::atomic_fetch_and_u32_device, or: mid::atomic_fetch_or_u32_device,
        xor: mid::atomic_fetch_xor_u32_device, exch: mid::atomic_fetch_exch_u32_device,
        min: mid::atomic_fetch_min_u32_device, max: mid::atomic_fetch_max_u32_device,
        cas: [intrinsics::atomic_fetch_cas_relaxed_u32_device,
              intrinsics::atomic_fetch_cas_acquire_u32_device,
              intrinsics::atomic_fetch_cas_release_u32_device,
              intrinsics::atomic_fetch_cas_acqrel_u32_device]);
    scope_ops!(u32, load_workgroup, store_workgroup, rmw_workgroup, cas_workgroup,
        mid::block_thread_fence,
        load: mid::atomic_load_32_block, store: mid::atomic_store_32_block,
        add: mid::atomic_fetch_add_u32_block, sub: mid::atomic_fetch_sub_u32_block,
        and: mid::atomic_fetch_and_u32_block, or: mid::atomic_fetch_or_u32_block,
        xor: mid::atomic_fetch_xor_u32_block, exch: mid::atomic_fetch_exch_u32_block,
        min: mid::atomic_fetch_min_u32_block, max: mid::atomic_fetch_max_u32_block,
        cas: [intrinsics::atomic_fetch_cas_relaxed_u32_block,
              intrinsics::atomic_fetch_cas_acquire_u32_block,
              intrinsics::atomic_fetch_cas_release_u32_block,
              intrinsics::atomic_fetch_cas_acqrel_u32_block]);
}

impl AtomicOps for i32 {
    scope_ops!(i32, load_device, store_device, rmw_device, cas_device, mid::device_thread_fence,
        load: mid::atomic_load_32_device, store: mid::atomic_store_32_device,
        add: mid::atomic_fetch_add_i32_device, sub: mid::atomic_fetch_sub_i32_device,
        and: mid::atomic_fetch_and_i32_device, or: mid::atomic_fetch_or_i32_device,
        xor: mid::atomic_fetch_xor_i32_device, exch: mid::atomic_fetch_exch_i32_device,
        min: mid::atomic_fetch_min_i32_device, max: mid::atomic_fetch_max_i32_device,
        cas: [intrinsics::atomic_fetch_cas_relaxed_i32_device,
              intrinsics::atomic_fetch_cas_acquire_i32_device,
              intrinsics::atomic_fetch_cas_release_i32_device,
              intrinsics::atomic_fetch_cas_acqrel_i32_device]);
    scope_ops!(i32, load_workgroup, store_workgroup, rmw_workgroup, cas_workgroup,
        mid::block_thread_fence,
        load: mid::atomic_load_32_block, store: mid::atomic_store_32_block,
        add: mid::atomic_fetch_add_i32_block, sub: mid::atomic_fetch_sub_i32_block,
        and: mid::atomic_fetch_and_i32_block, or: mid::atomic_fetch_or_i32_block,
        xor: mid::atomic_fetch_xor_i32_block, exch: mid::atomic_fetch_exch_i32_block,
        min: mid::atomic_fetch_min_i32_block, max: mid::atomic_fetch_max_i32_block,
        cas: [intrinsics::atomic_fetch_cas_relaxed_i32_block,
              intrinsics::atomic_fetch_cas_acquire_i32_block,
              intrinsics::atomic_fetch_cas_release_i32_block,
              intrinsics::atomic_fetch_cas_acqrel_i32_block]);
}

/// cuda_std's `atom.add.f32` at device scope, relaxed; the old value.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn atomic_add_f32(at: Ptr<f32>, value: f32) -> f32 {
    // SAFETY: the caller's (an element of global memory).
    unsafe { mid::atomic_fetch_add_f32_device(at, Ordering::Relaxed, value) }
}

/// cuda_std's `device_thread_fence`: `fence.acq_rel.gl` or, for `SeqCst`, `fence.sc.gl`
/// (`.gl` is PTX's older name of `.gpu`).
#[doc(hidden)]
#[inline(always)]
pub fn fence(order: Ordering) {
    mid::device_thread_fence(order);
}
