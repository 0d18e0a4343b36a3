//! Rust-CUDA's rustc_codegen_nvvm: the primitives through cuda_std (crates/cuda_std at the
//! Rust-CUDA revision rgpu pins, toolchains/nvvm.toml): `thread::*` ids and
//! `sync_threads`, `warp::*` votes and shuffles, `atomic::mid` atomics (generic
//! addressing: global and shared memory alike). Workgroup memory is a
//! `#[address_space(shared)] static` the entry point declares; this module only sees its
//! pointer. NOT COMPILED TO PTX on rgpu's machines (no rustc-dev, LLVM 7 or libNVVM there):
//! it is type-checked on the host against cuda_std's source (feature `check-nvvm`).

use core::marker::PhantomData;

use cuda_std::{thread, warp};

use super::{Ids, Word};

mod atomic;
pub use atomic::{atomic_add_f32, fence, AtomicOps, Ptr};

const ALL: u32 = 0xffff_ffff;

/// This invocation's hardware ids.
#[doc(hidden)]
#[inline(always)]
pub fn ids() -> Ids {
    let local = thread::thread_idx_x();
    Ids {
        local,
        group: super::grid_id(
            thread::block_idx_x(),
            thread::block_idx_y(),
            thread::grid_dim_x(),
        ),
        groups: thread::grid_dim_x().saturating_mul(thread::grid_dim_y()),
        size: thread::block_dim_x(),
        lane: warp::lane_id(),
        subgroup_size: 32,
        subgroup: local / 32,
    }
}

#[inline(always)]
pub fn barrier() {
    thread::sync_threads();
}

pub use super::warp::{BitLanes, Lanes};

#[inline(always)]
pub fn ballot(predicate: bool) -> u32 {
    // SAFETY: called by every lane of the warp (uniform control flow).
    unsafe { warp::warp_vote_ballot(ALL, predicate) }
}

#[inline(always)]
pub fn ballot_count(predicate: bool) -> u32 {
    ballot(predicate).count_ones()
}

#[inline(always)]
pub fn all(predicate: bool) -> bool {
    // SAFETY: as for `ballot`.
    unsafe { warp::warp_vote_all(ALL, predicate) }
}

#[inline(always)]
pub fn any(predicate: bool) -> bool {
    // SAFETY: as for `ballot`.
    unsafe { warp::warp_vote_any(ALL, predicate) }
}

/// Lane `lane ^ lane_mask`'s value.
#[inline(always)]
pub fn shfl_xor(value: u32, lane_mask: u32) -> u32 {
    // SAFETY: as for `ballot`.
    unsafe { warp::warp_shuffle_xor(ALL, value, lane_mask, 32).0 }
}

/// Lane `lane - delta`'s value; lanes below `delta` get their own.
#[inline(always)]
pub fn shfl_up(value: u32, delta: u32) -> u32 {
    // SAFETY: as for `ballot`.
    unsafe { warp::warp_shuffle_up(ALL, value, delta, 32).0 }
}

#[inline(always)]
pub fn shuffle_xor(value: u32, lane_mask: u32) -> u32 {
    shfl_xor(value, lane_mask)
}

#[inline(always)]
pub fn shuffle_up(value: u32, delta: u32, _lane: u32) -> u32 {
    shfl_up(value, delta)
}

#[inline(always)]
pub fn shuffle_down(value: u32, delta: u32, _lane: u32, _size: u32) -> u32 {
    // SAFETY: as for `ballot`.
    unsafe { warp::warp_shuffle_down(ALL, value, delta, 32).0 }
}

#[inline(always)]
pub fn broadcast(value: u32, lane: u32) -> u32 {
    // SAFETY: as for `ballot`.
    unsafe { warp::warp_shuffle_idx(ALL, value, lane, 32).0 }
}

/// `shfl.sync.idx` takes a per-lane source lane: the same instruction as `broadcast`.
#[inline(always)]
pub fn shuffle(value: u32, lane: u32) -> u32 {
    broadcast(value, lane)
}

/// Workgroup memory: `N` words of the entry point's shared static.
#[derive(Clone, Copy)]
pub struct Shared<T: Word, const N: usize> {
    ptr: *mut T,
    _type: PhantomData<T>,
}

impl<T: Word, const N: usize> Shared<T, N> {
    /// Elements.
    pub const LEN: usize = N;

    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_ptr(ptr: *mut T) -> Self {
        Self {
            ptr,
            _type: PhantomData,
        }
    }

    #[inline(always)]
    fn check(index: u32) {
        if index as usize >= N {
            panic!("Shared index out of bounds");
        }
    }

    /// Element `index` (past `N`: the kernel traps).
    #[inline(always)]
    pub fn load(&self, index: u32) -> T {
        Self::check(index);
        // SAFETY: checked above.
        unsafe { self.load_unchecked(index) }
    }

    /// Stores element `index` (past `N`: the kernel traps).
    #[inline(always)]
    pub fn store(&self, index: u32, value: T) {
        Self::check(index);
        // SAFETY: checked above.
        unsafe { self.store_unchecked(index, value) }
    }

    /// Element `index`, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn load_unchecked(&self, index: u32) -> T {
        // SAFETY: the caller's contract; the array lives as long as the workgroup.
        unsafe { self.ptr.add(index as usize).read() }
    }

    /// Stores element `index`, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn store_unchecked(&self, index: u32, value: T) {
        // SAFETY: the caller's contract.
        unsafe { self.ptr.add(index as usize).write(value) }
    }
}

impl<T: Word, const N: usize> Shared<T, N> {
    /// Element `index`'s address (past `N`: the kernel traps).
    #[inline(always)]
    pub(super) fn element(&self, index: u32) -> Ptr<T> {
        Self::check(index);
        // SAFETY: checked above.
        unsafe { self.element_unchecked(index) }
    }

    /// Element `index`'s address, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub(super) unsafe fn element_unchecked(&self, index: u32) -> Ptr<T> {
        // SAFETY: the caller's contract.
        unsafe { self.ptr.add(index as usize) }
    }
}

/// A read-write buffer that every invocation of the launch sees whole (global memory).
#[derive(Clone, Copy)]
pub struct Global<T> {
    ptr: *mut T,
    len: u32,
}

impl<T: Copy> Global<T> {
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(ptr: *mut T, len: u32) -> Self {
        Self { ptr, len }
    }

    /// Elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it has no element.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`.
    ///
    /// # Safety
    /// `index < len()`, and no other invocation of the launch writes it meanwhile.
    #[inline(always)]
    pub unsafe fn read(&self, index: u32) -> T {
        // SAFETY: the caller's contract.
        unsafe { self.ptr.add(index as usize).read() }
    }

    /// Stores element `index`.
    ///
    /// # Safety
    /// `index < len()`, and no other invocation of the launch reads or writes it meanwhile.
    #[inline(always)]
    pub unsafe fn write(&self, index: u32, value: T) {
        // SAFETY: the caller's contract.
        unsafe { self.ptr.add(index as usize).write(value) }
    }
}

impl<T: Copy> Global<T> {
    /// Element `index`'s address (past `len()`: the kernel traps).
    #[inline(always)]
    pub(super) fn element(&self, index: u32) -> Ptr<T> {
        if index >= self.len {
            panic!("Global index out of bounds");
        }
        // SAFETY: in bounds (checked).
        unsafe { self.ptr.add(index as usize) }
    }
}
