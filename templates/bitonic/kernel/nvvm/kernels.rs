//! CUDA entry points for Rust-CUDA's `rustc_codegen_nvvm` (PTX through libNVVM).
//!
//! Not part of the kernel crate's module tree: `cuda_std` is a git-only crate, and a git
//! dependency here would make plain `cargo build` of this workspace fetch it (cargo resolves
//! every target's dependencies into Cargo.lock). `rgpu build --codegen nvvm` instead generates,
//! in its cache, a small crate whose library root is THIS file, with `cuda_std` (pinned to the
//! Rust-CUDA rev of rgpu's toolchains/nvvm.toml) and this kernel crate as dependencies; the
//! kernel crate is built with its `nvvm` feature, which turns off its own `nvptx` entry points.
//!
//! The kernels have the same names and parameters as the `nvptx` ones (a `#[repr(C)]` struct
//! by value, then a raw pointer), so the host launches either PTX the same way. Shapes follow
//! Rust-CUDA's guide (guide/src/guide/getting_started.md, kernel_abi.md at rev 946c91f0):
//! `#[kernel] pub unsafe fn`, `Copy` parameters, `cuda_std::thread::*`.
//! rgpu's CI cannot run this codegen (it needs a pinned nightly's rustc-dev, LLVM 7 and CUDA).

use cuda_std::prelude::*;
use kernel::key::{decode, encode};
use kernel::network::{compare_exchange, pair_count, KeySlots, Step};
use shared::{Block, Distance, SortParams};

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

/// Calls `f(i)` for every `i < end` this thread owns (grid-stride loop).
#[inline(always)]
fn for_each_index(end: u32, mut f: impl FnMut(u32)) {
    let stride = thread::grid_dim_x() * thread::block_dim_x();
    let mut i = thread::index_1d();
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
#[kernel]
pub unsafe fn bitonic_encode(params: SortParams, keys: *mut u32) {
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let mut slots = GlobalKeys(keys);
    for_each_index(params.len, |i| {
        slots.store(i, encode(slots.load(i), kind, order))
    });
}

/// One compare-exchange step of the network. One thread per pair.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory.
#[kernel]
pub unsafe fn bitonic_step(params: SortParams, keys: *mut u32) {
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
#[kernel]
pub unsafe fn bitonic_decode(params: SortParams, keys: *mut u32) {
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let mut slots = GlobalKeys(keys);
    for_each_index(params.len, |i| {
        slots.store(i, decode(slots.load(i), kind, order))
    });
}
