//! Atomics on rustc's nvptx target: inline PTX with the scope rgpu means (`.gpu` for
//! `Global`, `.cta` for `Shared`), not `core::sync::atomic` (LLVM's NVPTX backend gives
//! Rust's atomics system scope, `.sys`, stronger and slower than a launch needs). sm_70+
//! (PTX 6.0): rgpu's archs are sm_75 and later.
//!
//! Each ordering becomes (`S` = `gpu.global` or `cta.shared`):
//! - `Relaxed`/`Acquire`/`Release`/`AcqRel`: the instruction with `.relaxed`, `.acquire`,
//!   `.release`, `.acq_rel` (`ld.acquire.S.b32`, `st.release.S.b32`, `atom.acq_rel.S.add.u32`);
//! - `SeqCst`: `fence.sc.gpu;` (`fence.sc.cta;` for `Shared`) then the `.acquire` load, the
//!   `.release` store or the `.acq_rel` read-modify-write (the PTX memory model's mapping of
//!   C++'s `seq_cst`).
//!
//! `Global` addresses are generic pointers (what the kernel's arguments are), moved into the
//! `.global` window with `cvta.to.global` (ptxas folds it); `Shared` addresses are 32-bit
//! shared-window addresses. The asm has no `pure`/`nomem`/`readonly`: atomics read and write
//! memory and must stay where the program order puts them.

use core::arch::asm;
use core::marker::PhantomData;
use core::sync::atomic::Ordering;

use super::super::atomic::{op, ord};
use super::super::Word;

/// An element's address: a generic address of global memory or a shared-window address.
#[doc(hidden)]
pub struct Ptr<T> {
    address: u64,
    _type: PhantomData<T>,
}

impl<T> Clone for Ptr<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Ptr<T> {}

impl<T> Ptr<T> {
    #[inline(always)]
    pub(in super::super) fn new(address: u64) -> Self {
        Self {
            address,
            _type: PhantomData,
        }
    }
}

/// The fence before a `SeqCst` operation.
macro_rules! fence_before {
    (global, sc) => {
        "fence.sc.gpu; "
    };
    (shared, sc) => {
        "fence.sc.cta; "
    };
    ($space:ident, no) => {
        ""
    };
}

/// One atomic instruction on the address `a` (`%rgpu_a` in the instruction): `$head` is
/// `ld.acquire`, `atom.relaxed`, ...; `$tail` what follows the scope and state space.
macro_rules! ptx {
    (global, $fence:ident, $head:literal, $tail:literal, $address:expr, $($operands:tt)*) => {
        asm!(
            concat!(
                "{{ .reg .u64 %rgpu_a; cvta.to.global.u64 %rgpu_a, {a}; ",
                fence_before!(global, $fence), $head, ".gpu.global.", $tail, " }}"
            ),
            a = in(reg64) $address,
            $($operands)*
            options(nostack, preserves_flags)
        )
    };
    (shared, $fence:ident, $head:literal, $tail:literal, $address:expr, $($operands:tt)*) => {
        asm!(
            concat!(
                "{{ .reg .u32 %rgpu_a; mov.u32 %rgpu_a, {a}; ",
                fence_before!(shared, $fence), $head, ".cta.shared.", $tail, " }}"
            ),
            a = in(reg32) $address as u32,
            $($operands)*
            options(nostack, preserves_flags)
        )
    };
}

/// `$tail` as a read-modify-write (`atom`) with `order`'s semantics.
macro_rules! atom {
    ($space:ident, $order:expr, $tail:literal, $address:expr, $($operands:tt)*) => {
        match $order {
            ord::RELAXED => ptx!($space, no, "atom.relaxed", $tail, $address, $($operands)*),
            ord::ACQUIRE => ptx!($space, no, "atom.acquire", $tail, $address, $($operands)*),
            ord::RELEASE => ptx!($space, no, "atom.release", $tail, $address, $($operands)*),
            ord::ACQ_REL => ptx!($space, no, "atom.acq_rel", $tail, $address, $($operands)*),
            _ => ptx!($space, sc, "atom.acq_rel", $tail, $address, $($operands)*),
        }
    };
}

/// The primitives for one space, on the element's bits (`signed`: `min`/`max` compare as
/// `i32`).
macro_rules! space {
    ($space:ident, $load:ident, $store:ident, $rmw:ident, $cas:ident) => {
        /// An atomic load (`Relaxed`, `Acquire` or `SeqCst`).
        #[inline(always)]
        unsafe fn $load(address: u64, order: u8) -> u32 {
            let value: u32;
            // SAFETY: the caller's: `address` is an element of this space's memory.
            unsafe {
                match order {
                    ord::RELAXED => {
                        ptx!($space, no, "ld.relaxed", "b32 {v}, [%rgpu_a];", address, v = out(reg32) value,)
                    }
                    ord::ACQUIRE => {
                        ptx!($space, no, "ld.acquire", "b32 {v}, [%rgpu_a];", address, v = out(reg32) value,)
                    }
                    _ => ptx!($space, sc, "ld.acquire", "b32 {v}, [%rgpu_a];", address, v = out(reg32) value,),
                }
            }
            value
        }

        /// An atomic store (`Relaxed`, `Release` or `SeqCst`).
        #[inline(always)]
        pub(super) unsafe fn $store(address: u64, value: u32, order: u8) {
            // SAFETY: as for the load.
            unsafe {
                match order {
                    ord::RELAXED => {
                        ptx!($space, no, "st.relaxed", "b32 [%rgpu_a], {v};", address, v = in(reg32) value,)
                    }
                    ord::RELEASE => {
                        ptx!($space, no, "st.release", "b32 [%rgpu_a], {v};", address, v = in(reg32) value,)
                    }
                    _ => ptx!($space, sc, "st.release", "b32 [%rgpu_a], {v};", address, v = in(reg32) value,),
                }
            }
        }

        /// A read-modify-write; the old bits.
        #[inline(always)]
        unsafe fn $rmw(address: u64, op: u8, value: u32, signed: bool, order: u8) -> u32 {
            let old: u32;
            // SAFETY: as for the load.
            unsafe {
                match (op, signed) {
                    (op::ADD, _) => atom!($space, order, "add.u32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::SUB, _) => atom!($space, order, "add.u32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value.wrapping_neg(),),
                    (op::AND, _) => atom!($space, order, "and.b32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::OR, _) => atom!($space, order, "or.b32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::XOR, _) => atom!($space, order, "xor.b32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::EXCHANGE, _) => atom!($space, order, "exch.b32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::MIN, false) => atom!($space, order, "min.u32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::MIN, true) => atom!($space, order, "min.s32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    (op::MAX, true) => atom!($space, order, "max.s32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                    _ => atom!($space, order, "max.u32 {o}, [%rgpu_a], {v};", address, o = out(reg32) old, v = in(reg32) value,),
                }
            }
            old
        }

        /// `atom.cas`: stores `new` if the element is `current`; the old bits.
        #[inline(always)]
        pub(super) unsafe fn $cas(address: u64, current: u32, new: u32, order: u8) -> u32 {
            let old: u32;
            // SAFETY: as for the load.
            unsafe {
                atom!($space, order, "cas.b32 {o}, [%rgpu_a], {c}, {n};", address, o = out(reg32) old, c = in(reg32) current, n = in(reg32) new,)
            }
            old
        }
    };
}

space!(global, load_global, store_global, rmw_global, cas_global);
space!(shared, load_shared, store_shared, rmw_shared, cas_shared);

/// The codegen's atomics on one element type (`Global`: device scope, `Shared`: workgroup
/// scope), written once for `u32` and `i32` on the element's bits.
#[doc(hidden)]
pub trait AtomicOps: Word {
    #[doc(hidden)]
    const SIGNED: bool;

    #[doc(hidden)]
    #[inline(always)]
    unsafe fn load_device<const ORD: u8>(at: Ptr<Self>) -> Self {
        // SAFETY: the caller's (an element of global memory).
        Self::from_bits(unsafe { load_global(at.address, ORD) })
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn store_device<const ORD: u8>(at: Ptr<Self>, value: Self) {
        // SAFETY: as for `load_device`.
        unsafe { store_global(at.address, value.to_bits(), ORD) }
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn rmw_device<const OP: u8, const ORD: u8>(at: Ptr<Self>, value: Self) -> Self {
        // SAFETY: as for `load_device`.
        Self::from_bits(unsafe { rmw_global(at.address, OP, value.to_bits(), Self::SIGNED, ORD) })
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn cas_device<const ORD: u8>(at: Ptr<Self>, current: Self, new: Self) -> Self {
        // SAFETY: as for `load_device`.
        Self::from_bits(unsafe { cas_global(at.address, current.to_bits(), new.to_bits(), ORD) })
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn load_workgroup<const ORD: u8>(at: Ptr<Self>) -> Self {
        // SAFETY: the caller's (an element of this workgroup's shared memory).
        Self::from_bits(unsafe { load_shared(at.address, ORD) })
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn store_workgroup<const ORD: u8>(at: Ptr<Self>, value: Self) {
        // SAFETY: as for `load_workgroup`.
        unsafe { store_shared(at.address, value.to_bits(), ORD) }
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn rmw_workgroup<const OP: u8, const ORD: u8>(at: Ptr<Self>, value: Self) -> Self {
        // SAFETY: as for `load_workgroup`.
        Self::from_bits(unsafe { rmw_shared(at.address, OP, value.to_bits(), Self::SIGNED, ORD) })
    }
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn cas_workgroup<const ORD: u8>(at: Ptr<Self>, current: Self, new: Self) -> Self {
        // SAFETY: as for `load_workgroup`.
        Self::from_bits(unsafe { cas_shared(at.address, current.to_bits(), new.to_bits(), ORD) })
    }
}

impl AtomicOps for u32 {
    const SIGNED: bool = false;
}

impl AtomicOps for i32 {
    const SIGNED: bool = true;
}

/// `atom.relaxed.gpu.global.add.f32`; the old value.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn atomic_add_f32(at: Ptr<f32>, value: f32) -> f32 {
    let old: f32;
    // SAFETY: the caller's (an element of global memory).
    unsafe {
        ptx!(global, no, "atom.relaxed", "add.f32 {o}, [%rgpu_a], {v};", at.address, o = out(reg32) old, v = in(reg32) value,);
    }
    old
}

/// `fence.acq_rel.gpu` (`Acquire`, `Release`, `AcqRel`) or `fence.sc.gpu` (`SeqCst`).
#[doc(hidden)]
#[inline(always)]
pub fn fence(order: Ordering) {
    // SAFETY: a fence touches no memory of its own; it orders this thread's accesses.
    unsafe {
        match order {
            Ordering::SeqCst => asm!("fence.sc.gpu;", options(nostack, preserves_flags)),
            _ => asm!("fence.acq_rel.gpu;", options(nostack, preserves_flags)),
        }
    }
}
