//! CUDA entry points for rustc's own `nvptx64-nvidia-cuda` target (PTX through LLVM).
//!
//! Thin wrappers: each thread maps its index to a key or a compare pair and calls the same
//! `key` and `network` functions the CPU backend runs. Every kernel loops with a grid
//! stride, so any launch size covers any `len`. The host computes the schedule of steps
//! from `network::Steps` and launches `bitonic_step` once per step.
//!
//! Built by `rgpu build --backend cuda --codegen nvptx` as a `cdylib` with
//! `-Zbuild-std=core`; the features used are `abi_ptx` (`extern "ptx-kernel"`) and
//! `stdarch_nvptx` (`core::arch::nvptx`), confirmed against rustc 1.96's library sources
//! (`library/stdarch/crates/core_arch/src/nvptx/mod.rs`).

use core::arch::nvptx;

use shared::{Block, Distance, SortParams};

use crate::key::{decode, encode};
use crate::network::{compare_exchange, pair_count, KeySlots, Step};

/// The keys in device global memory.
struct GlobalKeys(*mut u32);

impl KeySlots for GlobalKeys {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        // SAFETY: the network only asks for indices below `len`, and the host passes a
        // buffer of at least `len` keys.
        unsafe { self.0.add(index as usize).read() }
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        // SAFETY: as for `load`; each index of a step belongs to exactly one thread.
        unsafe { self.0.add(index as usize).write(value) }
    }
}

/// This thread's first index and the grid stride.
#[inline(always)]
fn grid() -> (u32, u32) {
    // SAFETY: reading the special registers has no preconditions.
    unsafe {
        let block = nvptx::_block_dim_x();
        (
            nvptx::_block_idx_x() * block + nvptx::_thread_idx_x(),
            nvptx::_grid_dim_x() * block,
        )
    }
}

/// Calls `f(i)` for every `i < end` this thread owns.
#[inline(always)]
fn for_each_index(end: u32, mut f: impl FnMut(u32)) {
    let (mut i, stride) = grid();
    while i < end {
        f(i);
        i = match i.checked_add(stride) {
            Some(next) => next,
            None => break,
        };
    }
}

/// Raw key bits -> order-preserving `u32`, in place. One thread per key.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn bitonic_encode(params: SortParams, keys: *mut u32) {
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let mut slots = GlobalKeys(keys);
    for_each_index(params.len, |i| {
        slots.store(i, encode(slots.load(i), kind, order))
    });
}

/// One compare-exchange step of the network (`params.block`, `params.distance`).
/// One thread per pair.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn bitonic_step(params: SortParams, keys: *mut u32) {
    let step = Step {
        block: Block(params.block),
        distance: Distance(params.distance),
    };
    let mut slots = GlobalKeys(keys);
    for_each_index(pair_count(params.len), |pair| {
        compare_exchange(&mut slots, params.len, step, pair)
    });
}

/// Ordered `u32` -> raw key bits, in place: the inverse of `bitonic_encode`.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn bitonic_decode(params: SortParams, keys: *mut u32) {
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let mut slots = GlobalKeys(keys);
    for_each_index(params.len, |i| {
        slots.store(i, decode(slots.load(i), kind, order))
    });
}

/// Kernels cannot unwind; nothing above can panic, but `core` needs a handler.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { nvptx::trap() }
}
