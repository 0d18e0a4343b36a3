//! rustc's nvptx64-nvidia-cuda target: `core::arch::nvptx` for ids and the barrier, inline
//! PTX for workgroup (`.shared`) memory, warp operations and atomics (`nvptx/atomic.rs`:
//! `.gpu`/`.cta` scopes). Confirmed against rustc 1.96's library sources
//! (library/stdarch/crates/core_arch/src/nvptx/mod.rs) and ptxas 13.
//!
//! Workgroup memory: the kernel's entry point declares one `.shared` array per `Shared`
//! parameter (`global_asm!`) and takes its 32-bit shared-window address (`mov.u32`); loads
//! and stores are `ld.shared`/`st.shared` on that address. (A generic pointer through
//! `cvta.shared` works too, but was measured slower on an H100: rustc 1.96 has no address
//! space for Rust pointers.)

use core::arch::{asm, nvptx};
use core::marker::PhantomData;

use super::{Ids, Word};

mod atomic;
#[cfg(rgpu_checked)]
mod fault;
pub use atomic::{atomic_add_f32, fence, AtomicOps, Ptr};

/// Every lane of the warp (subgroup operations are called in uniform control flow).
const ALL: u32 = 0xffff_ffff;

/// This invocation's hardware ids.
#[doc(hidden)]
#[inline(always)]
pub fn ids() -> Ids {
    let lane: u32;
    // SAFETY: reading special registers has no preconditions.
    unsafe {
        asm!("mov.u32 {0}, %laneid;", out(reg32) lane, options(pure, nomem, nostack));
        let local = nvptx::_thread_idx_x() as u32;
        let (x, y) = (nvptx::_block_idx_x() as u32, nvptx::_block_idx_y() as u32);
        let (width, rows) = (nvptx::_grid_dim_x() as u32, nvptx::_grid_dim_y() as u32);
        Ids {
            local,
            group: super::grid_id(x, y, width),
            groups: width.saturating_mul(rows),
            size: nvptx::_block_dim_x() as u32,
            lane,
            subgroup_size: 32,
            subgroup: local / 32,
        }
    }
}

#[inline(always)]
pub fn barrier() {
    // SAFETY: `bar.sync 0`; the caller's workgroup reaches it uniformly (Group::barrier).
    unsafe { nvptx::_syncthreads() }
}

// The warp's shuffles and vote as LLVM's NVVM intrinsics, not inline assembly: LLVM knows
// these are convergent, so it never copies one into the two sides of a branch that splits a
// warp (with `asm!`, which LLVM treats as an ordinary instruction, it did: a scan whose last
// round covered part of a warp put `shfl.sync` on both sides of `i < n`, and the warp waited
// forever on the H100; docs/reference.md).
#[allow(improper_ctypes)]
extern "C" {
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(member_mask: u32, predicate: bool) -> u32;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn vote_all_sync(member_mask: u32, predicate: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any_sync(member_mask: u32, predicate: bool) -> bool;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_sync_bfly(member_mask: u32, value: u32, lane_mask: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_sync_up(member_mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_sync_down(member_mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx(member_mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.isspacep.shared"]
    fn isspacep_shared(pointer: *const u8) -> bool;
}

/// Whether a generic pointer is in the shared window (`isspacep.shared`): assumed of each
/// `Shared` array's pointer so that LLVM's address-space inference (InferAddressSpaces,
/// through NVPTX's `getPredicatedAddrSpace`) sees it. The answer is also handed to an empty
/// `asm!`: LLVM 22's DropUnnecessaryAssumes drops an assumption whose condition nothing else
/// uses, and it does not know that this one informs the address space (checked with
/// `opt-22 -O3 -print-changed`). The empty statement costs nothing after ptxas.
#[inline(always)]
fn is_shared(pointer: *const u8) -> bool {
    // SAFETY: a pure query on the pointer's value.
    let shared = unsafe { isspacep_shared(pointer) };
    // SAFETY: a PTX comment; touches nothing.
    unsafe {
        asm!("// {0}", in(reg32) shared as u32, options(nomem, nostack, preserves_flags));
    }
    shared
}

pub use super::warp::{BitLanes, Lanes};

#[inline(always)]
pub fn ballot(predicate: bool) -> u32 {
    // SAFETY: a register-only vote over the whole warp, which reaches it together.
    unsafe { vote_ballot_sync(ALL, predicate) }
}

#[inline(always)]
pub fn ballot_count(predicate: bool) -> u32 {
    ballot(predicate).count_ones()
}

#[inline(always)]
pub fn all(predicate: bool) -> bool {
    // SAFETY: as for `ballot`.
    unsafe { vote_all_sync(ALL, predicate) }
}

#[inline(always)]
pub fn any(predicate: bool) -> bool {
    // SAFETY: as for `ballot`.
    unsafe { vote_any_sync(ALL, predicate) }
}

/// Lane `lane ^ lane_mask`'s value.
#[inline(always)]
pub fn shfl_xor(value: u32, lane_mask: u32) -> u32 {
    // SAFETY: a register-only shuffle over the whole warp.
    unsafe { shfl_sync_bfly(ALL, value, lane_mask, 0x1f) }
}

/// Lane `lane - delta`'s value; lanes below `delta` get their own.
#[inline(always)]
pub fn shfl_up(value: u32, delta: u32) -> u32 {
    // SAFETY: a register-only shuffle over the whole warp.
    unsafe { shfl_sync_up(ALL, value, delta, 0) }
}

#[inline(always)]
pub fn shuffle_xor(value: u32, lane_mask: u32) -> u32 {
    shfl_xor(value, lane_mask)
}

/// `shfl.sync.up` keeps a lane's own value below `delta`: the API's promise.
#[inline(always)]
pub fn shuffle_up(value: u32, delta: u32, _lane: u32) -> u32 {
    shfl_up(value, delta)
}

/// `shfl.sync.down` keeps a lane's own value where `lane + delta` is past the warp.
#[inline(always)]
pub fn shuffle_down(value: u32, delta: u32, _lane: u32, _size: u32) -> u32 {
    // SAFETY: a register-only shuffle over the whole warp.
    unsafe { shfl_sync_down(ALL, value, delta, 0x1f) }
}

#[inline(always)]
pub fn broadcast(value: u32, lane: u32) -> u32 {
    // SAFETY: a register-only shuffle over the whole warp.
    unsafe { shfl_sync_idx(ALL, value, lane, 0x1f) }
}

/// `shfl.sync.idx` takes a per-lane source lane: the same instruction as `broadcast`.
#[inline(always)]
pub fn shuffle(value: u32, lane: u32) -> u32 {
    broadcast(value, lane)
}

/// Workgroup memory: `N` words in the workgroup's `.shared` state space.
#[derive(Clone, Copy)]
pub struct Shared<T: Word, const N: usize> {
    /// The shared-window address (atomics address `.shared` by it).
    address: u32,
    /// `BIAS` bytes past the array's start, as a generic pointer that LLVM knows points into
    /// `.shared` (loads and stores: plain LLVM memory operations, see `from_addr`).
    biased: *mut u8,
    _type: PhantomData<T>,
}

/// How far past its array's start a `Shared`'s pointer points. LLVM's address-space inference
/// rewrites accesses made through an offset from the pointer it knows to be in `.shared`, not
/// those made through that pointer itself: element 0 would stay a generic `ld`. With the
/// bias every element is at an offset (`[%rd+64]` in the PTX: free).
const BIAS: usize = 64;

impl<T: Word, const N: usize> Shared<T, N> {
    /// Elements.
    pub const LEN: usize = N;

    #[doc(hidden)]
    #[inline(always)]
    pub fn from_addr(address: u32) -> Self {
        let generic: u64;
        // SAFETY: converts a `.shared` address to the generic window; touches no memory.
        unsafe {
            asm!(
                "{{ .reg .b64 %rgpu_s; cvt.u64.u32 %rgpu_s, {a}; cvta.shared.u64 %rgpu_s, %rgpu_s; add.s64 {g}, %rgpu_s, {bias}; }}",
                a = in(reg32) address,
                g = out(reg64) generic,
                bias = const BIAS,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        let biased = generic as *mut u8;
        let shared = is_shared(biased);
        // SAFETY: `cvta.shared` of a `.shared` address is in the shared window, and so is the
        // address 64 bytes on (`isspacep.shared` tests the window, far larger than any
        // workgroup's memory); the array is declared `.align 16` (the kernel macro). Told to
        // LLVM, its address-space inference makes every access an `ld.shared`/`st.shared`
        // it can schedule, unroll around and merge (`ld.shared.v4` for neighbouring words).
        unsafe {
            core::hint::assert_unchecked(shared);
            core::hint::assert_unchecked(generic % 16 == 0);
        }
        Self {
            address,
            biased,
            _type: PhantomData,
        }
    }

    /// Element `index`'s generic pointer (no check).
    #[inline(always)]
    fn at(&self, index: u32) -> *mut T {
        self.biased
            .wrapping_sub(BIAS)
            .cast::<T>()
            .wrapping_add(index as usize)
    }

    #[inline(always)]
    #[cfg_attr(rgpu_checked, track_caller)]
    fn check(index: u32) {
        if index as usize >= N {
            #[cfg(not(rgpu_checked))]
            panic!("Shared index out of bounds");
            // A checked build says where and what (`nvptx/fault.rs` records it).
            #[cfg(rgpu_checked)]
            panic!("Shared: index {index} is past the {N} elements of this workgroup array");
        }
    }

    /// Element `index` (past `N`: the kernel traps).
    #[inline(always)]
    #[cfg_attr(rgpu_checked, track_caller)]
    pub fn load(&self, index: u32) -> T {
        Self::check(index);
        // SAFETY: checked above.
        unsafe { self.load_unchecked(index) }
    }

    /// Stores element `index` (past `N`: the kernel traps).
    #[inline(always)]
    #[cfg_attr(rgpu_checked, track_caller)]
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
        // SAFETY: the caller keeps the index inside the array. An ordinary load: it stays
        // between the barriers around it (a barrier is a call LLVM cannot see through).
        unsafe { self.at(index).read() }
    }

    /// Stores element `index`, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn store_unchecked(&self, index: u32, value: T) {
        // SAFETY: the caller keeps the index inside the array.
        unsafe { self.at(index).write(value) }
    }
}

impl<T: Word, const N: usize> Shared<T, N> {
    /// Element `index`'s shared-window address (past `N`: the kernel traps).
    #[inline(always)]
    #[cfg_attr(rgpu_checked, track_caller)]
    pub(super) fn element(&self, index: u32) -> Ptr<T> {
        Self::check(index);
        // SAFETY: checked above.
        unsafe { self.element_unchecked(index) }
    }

    /// Element `index`'s shared-window address, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub(super) unsafe fn element_unchecked(&self, index: u32) -> Ptr<T> {
        Ptr::new((self.address + index * 4) as u64)
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
    /// Element `index`'s generic address (past `len()`: the kernel traps).
    #[inline(always)]
    #[cfg_attr(rgpu_checked, track_caller)]
    pub(super) fn element(&self, index: u32) -> Ptr<T> {
        if index >= self.len {
            #[cfg(not(rgpu_checked))]
            panic!("Global index out of bounds");
            #[cfg(rgpu_checked)]
            panic!(
                "Global: index {index} is past the {} elements of the buffer",
                self.len
            );
        }
        // SAFETY: in bounds (checked); device memory outlives the launch.
        Ptr::new(unsafe { self.ptr.add(index as usize) } as u64)
    }
}

/// Kernels cannot unwind: a panic (an index out of bounds) aborts the kernel, and the host
/// sees a launch failure. (A checked build's handler records the fault instead: `fault`.)
#[cfg(not(rgpu_checked))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel.
    unsafe { nvptx::trap() }
}
