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
//! by value, then a raw pointer), so the host launches either PTX the same way: the same
//! `kernel::schedule` passes. The tile pass runs in global memory here (see `bitonic_tile`). Shapes follow
//! Rust-CUDA's guide (guide/src/guide/getting_started.md, kernel_abi.md at rev 946c91f0):
//! `#[kernel] pub unsafe fn`, `Copy` parameters, `cuda_std::thread::*`.
//! rgpu's CI cannot run this codegen (it needs a pinned nightly's rustc-dev, LLVM 7 and CUDA).

use cuda_std::prelude::*;
use kernel::network::{KeySlots, Step};
use kernel::schedule::{global_pass, tile_count, tile_pass, Pass, Workgroup};
use shared::{Block, Distance, SortParams, TILE_KEYS};

/// The keys in device global memory (from `offset` on).
struct GlobalKeys(*mut u32);

impl KeySlots for GlobalKeys {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        // SAFETY: the schedule only asks for indices below `len` (or, for a tile, below
        // `TILE_KEYS` from the tile's first key that are also below `len`), and the host
        // passes a buffer of at least `len` keys.
        unsafe { self.0.add(index as usize).read() }
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        // SAFETY: as for `load`; each index of a step belongs to exactly one thread.
        unsafe { self.0.add(index as usize).write(value) }
    }
}

/// `__syncthreads()` (Rust-CUDA `cuda_std::thread::sync_threads`, crates/cuda_std/src/
/// thread.rs): also orders the block's global memory accesses, which the tile needs here.
struct Block_;

impl Workgroup for Block_ {
    #[inline(always)]
    fn barrier(&self) {
        thread::sync_threads();
    }
}

/// `schedule::Pass::Tile`, GLOBAL-MEMORY FALLBACK: this codegen's shared-memory API is not
/// used (not confirmed or run here), so each block works on its tile in place in global
/// memory, with the same steps and barriers. The manifest says so (`tile_memory: global`:
/// the PTX has no `.shared` array).
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory; launched with
/// `WORKGROUP_SIZE` threads per block.
#[kernel]
pub unsafe fn bitonic_tile(params: SortParams, keys: *mut u32) {
    let mut global = GlobalKeys(keys);
    let local = thread::thread_idx_x();
    let mut tile = thread::block_idx_x();
    while tile < tile_count(params.len) {
        // SAFETY: the tile's first key is below `len` (tile < tile_count), so in the buffer.
        let mut in_place = GlobalKeys(unsafe { keys.add((tile * TILE_KEYS) as usize) });
        tile_pass(&mut global, &mut in_place, &Block_, &params, tile, local);
        thread::sync_threads();
        tile += thread::grid_dim_x();
    }
}

/// `schedule::Pass::Global`: up to `FUSED_STEPS` global steps, keys in registers.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory.
#[kernel]
pub unsafe fn bitonic_global(params: SortParams, keys: *mut u32) {
    let mut global = GlobalKeys(keys);
    let threads = Pass::Global(Step {
        block: Block(params.block),
        distance: Distance(params.distance),
    })
    .threads(params.len);
    let stride = thread::grid_dim_x() * thread::block_dim_x();
    let mut t = thread::index_1d();
    while t < threads {
        global_pass(&mut global, &params, t);
        t = match t.checked_add(stride) {
            Some(next) => next,
            None => break,
        };
    }
}
