//! CUDA entry points for rustc's own `nvptx64-nvidia-cuda` target (PTX through LLVM).
//!
//! Thin wrappers: each thread calls the same `schedule::tile_pass` / `global_pass` the CPU
//! backend runs. The host launches `schedule::Passes` in order (two kernels); every kernel
//! strides past its grid, so any launch size covers any `len`.
//!
//! Workgroup memory: `global_asm!` declares one `.shared` array, `shared_tile()` (the one
//! function that names it) takes its shared-window address, and `SharedTile` reads and
//! writes it with `ld.shared`/`st.shared` (`asm_experimental_arch`; REFERENCE.md section 3
//! names the `cvta.shared` route: a generic pointer works too, measured slower). The
//! barrier is `core::arch::nvptx::_syncthreads`.
//!
//! Built by `rgpu build --backend cuda --codegen nvptx` as a `cdylib` with
//! `-Zbuild-std=core`; the features used are `abi_ptx` (`extern "ptx-kernel"`) and
//! `stdarch_nvptx` (`core::arch::nvptx`), confirmed against rustc 1.96's library sources
//! (`library/stdarch/crates/core_arch/src/nvptx/mod.rs`).

use core::arch::nvptx;

use shared::{Block, Distance, SortParams, TILE_KEYS};

use crate::network::{KeySlots, Step};
use crate::schedule::{global_pass, tile_count, tile_pass, Pass, Workgroup};

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
        // The index goes through an empty `asm!` so LLVM cannot reuse the load's 64-bit
        // address here: a fused global pass loads 16 keys, compares, stores them, and with
        // the addresses kept from the loads ptxas needed 78 registers (nvcc recomputes them
        // from the 32-bit positions: 40). Recomputing is three integer instructions.
        let index = opaque(index);
        // SAFETY: as for `load`; each index of a step belongs to exactly one thread.
        unsafe { self.0.add(index as usize).write(value) }
    }
}

/// `value`, hidden from LLVM's value numbering (no instruction is emitted: ptxas drops
/// the `mov` to the same register).
#[inline(always)]
fn opaque(value: u32) -> u32 {
    let out: u32;
    // SAFETY: a register move; touches no memory.
    unsafe {
        core::arch::asm!(
            "mov.u32 {o}, {i};",
            o = out(reg32) out,
            i = in(reg32) value,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    out
}

/// The tile in workgroup (`.shared`) memory, `TILE_KEYS` slots, by its shared-window
/// address. `ld.shared`/`st.shared` instead of generic loads through a `cvta.shared`
/// pointer: with the generic route the whole sort took 3.563 ms at 2^24 on an H100, with
/// these 3.106 ms (the same algorithm in CUDA C++: 2.675 ms; BENCHMARKS.md, issue 8).
struct SharedTile(u32);

impl KeySlots for SharedTile {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        let value: u32;
        // SAFETY: `tile_pass` only asks for indices below `TILE_KEYS`, so the address is
        // inside `rgpu_tile`; the asm reads 4 bytes there and touches nothing else. Not
        // `pure`: it must stay between the barriers it was written between.
        unsafe {
            core::arch::asm!(
                "ld.shared.u32 {v}, [{a}];",
                v = out(reg32) value,
                a = in(reg32) self.0 + index * 4,
                options(nostack, readonly, preserves_flags)
            );
        }
        value
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        // SAFETY: as for `load`; between barriers each index belongs to one thread.
        unsafe {
            core::arch::asm!(
                "st.shared.u32 [{a}], {v};",
                a = in(reg32) self.0 + index * 4,
                v = in(reg32) value,
                options(nostack, preserves_flags)
            );
        }
    }
}

/// `bar.sync 0`: the CUDA block's barrier, which also orders its shared memory accesses.
struct Block_;

impl Workgroup for Block_ {
    #[inline(always)]
    fn barrier(&self) {
        // SAFETY: every thread of the block reaches each barrier of `tile_pass` (its loops
        // are uniform across the block).
        unsafe { nvptx::_syncthreads() }
    }
}

// The one `.shared` array, declared in PTX: rustc 1.96 has no stable way to put a Rust
// static in the shared state space (REFERENCE.md section 3). Its size is
// `TILE_KEYS * 4` bytes; the assertion below keeps the literal in step.
core::arch::global_asm!(".shared .align 16 .b8 rgpu_tile[16384];");
const _: () = assert!(
    TILE_KEYS * 4 == 16384,
    "update the .shared size in nvptx.rs"
);

/// The shared-window address of `rgpu_tile` (the only code that names the PTX array).
#[inline(always)]
fn shared_tile() -> SharedTile {
    let address: u32;
    // SAFETY: `mov.u32` of a `.shared` symbol only yields its address in the shared window
    // (32 bits wide, as nvcc addresses shared memory); it reads and writes nothing.
    unsafe {
        core::arch::asm!(
            "mov.u32 {0}, rgpu_tile;",
            out(reg32) address,
            options(pure, nomem, nostack)
        );
    }
    SharedTile(address)
}

/// One workgroup per tile (strides over tiles past the grid): encode + every stage that
/// fits in a tile (`params.block == 0`), or the tile-sized tail of stage `params.block`;
/// the sort's last launch decodes. See `schedule::tile_pass`.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory; launched with
/// `WORKGROUP_SIZE` threads per block.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn bitonic_tile(params: SortParams, keys: *mut u32) {
    let mut global = GlobalKeys(keys);
    let mut tile_memory = shared_tile();
    // SAFETY: reading the special registers has no preconditions.
    let (mut tile, groups, local) = unsafe {
        (
            nvptx::_block_idx_x(),
            nvptx::_grid_dim_x(),
            nvptx::_thread_idx_x(),
        )
    };
    while tile < tile_count(params.len) {
        tile_pass(&mut global, &mut tile_memory, &Block_, &params, tile, local);
        // The next tile overwrites the shared array: everyone must be done storing.
        // SAFETY: the loop is uniform across the block (same `tile`, same bound).
        unsafe { nvptx::_syncthreads() };
        tile += groups;
    }
}

/// Up to `FUSED_STEPS` global steps of stage `params.block` from `params.distance`, each
/// thread on its keys in registers. See `schedule::global_pass`.
///
/// # Safety
/// `keys` points to at least `params.len` `u32`s of device memory.
#[no_mangle]
pub unsafe extern "ptx-kernel" fn bitonic_global(params: SortParams, keys: *mut u32) {
    let mut global = GlobalKeys(keys);
    // SAFETY: reading the special registers has no preconditions.
    let (first, stride) = unsafe {
        let block = nvptx::_block_dim_x();
        (
            nvptx::_block_idx_x() * block + nvptx::_thread_idx_x(),
            nvptx::_grid_dim_x() * block,
        )
    };
    let threads = Pass::Global(Step {
        block: Block(params.block),
        distance: Distance(params.distance),
    })
    .threads(params.len);
    let mut thread = first;
    while thread < threads {
        global_pass(&mut global, &params, thread);
        thread = match thread.checked_add(stride) {
            Some(next) => next,
            None => break,
        };
    }
}

/// Kernels cannot unwind; nothing above can panic, but `core` needs a handler.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { nvptx::trap() }
}
