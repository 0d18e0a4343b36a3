//! The sort's two kernels: plain functions with `#[rgpu::kernel]`, the same source for CUDA
//! (rustc's nvptx64 target or Rust-CUDA), Vulkan (rust-gpu) and the CPU. Each runs one
//! launch of `schedule::Passes`; the host launches them in order on keys it keeps on the
//! device (src/sorter.rs).

use rgpu::{Global, Group, Item, Shared};

use crate::network::KeySlots;
use crate::params::{SortParams, TILE_KEYS, WORKGROUP_SIZE};
use crate::schedule::{global_pass, tile_pass, Pass, Workgroup};

// rust-gpu takes the workgroup size as a literal in the attribute: keep it the one
// definition's value.
const _: () = assert!(
    WORKGROUP_SIZE == 256,
    "WORKGROUP_SIZE changed: update threads = 256 in kernels.rs"
);

/// The keys in global memory. Every index a pass touches belongs to one invocation
/// (`network`: each compare-exchange of a step is one thread's), the contract of
/// `Global::read`/`write`.
struct GlobalKeys(Global<u32>);

impl KeySlots for GlobalKeys {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        // The index goes through `rgpu::opaque` so the compiler computes each store's
        // address afresh instead of keeping the loads' 16 addresses live across the fused
        // pass (nvptx, `ptxas -v`: 78 -> 48 registers in `bitonic_global`; free elsewhere).
        // SAFETY: the schedule only asks for indices below `len` (the buffer's length), and
        // no other invocation of the launch touches this index.
        unsafe { self.0.read(rgpu::opaque(index)) }
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        // SAFETY: as for `load`.
        unsafe { self.0.write(index, value) }
    }
}

/// The tile in workgroup memory, `TILE_KEYS` slots.
struct TileKeys(Shared<u32, { TILE_KEYS as usize }>);

impl KeySlots for TileKeys {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        // SAFETY: `tile_pass` only asks for indices below `TILE_KEYS`.
        unsafe { self.0.load_unchecked(index) }
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        // SAFETY: as for `load`; between barriers each index belongs to one invocation.
        unsafe { self.0.store_unchecked(index, value) }
    }
}

/// A workgroup's barrier, as the schedule asks for it.
#[derive(Clone, Copy)]
struct Barrier(Group);

impl Workgroup for Barrier {
    #[inline(always)]
    fn barrier(&self) {
        self.0.barrier();
    }
}

/// One workgroup per tile (`groups` = the tile count): encode and every stage that fits in
/// a tile (`params.block == 0`), or the tile-sized tail of stage `params.block`; the sort's
/// last launch decodes. See `schedule::tile_pass`.
#[rgpu::kernel(threads = 256)]
pub fn bitonic_tile(
    group: Group,
    params: SortParams,
    keys: Global<u32>,
    tile: Shared<u32, { TILE_KEYS as usize }>,
) {
    tile_pass(
        GlobalKeys(keys),
        TileKeys(tile),
        Barrier(group),
        &params,
        group.id(),
        group.thread(),
    );
}

/// Up to `FUSED_STEPS` global steps of stage `params.block` from `params.distance`, each
/// item's keys in registers (`n` = `Pass::threads`). See `schedule::global_pass`.
#[rgpu::kernel(threads = 256)]
pub fn bitonic_global(item: Item, params: SortParams, keys: Global<u32>) {
    global_pass(&mut GlobalKeys(keys), &params, item.index());
}

/// The launch count of a pass: workgroups for a tile pass, items for a global pass.
pub fn launch_count(pass: Pass, len: u32) -> u32 {
    match pass {
        Pass::Tile(_) => crate::schedule::tile_count(len),
        Pass::Global(_) => pass.threads(len),
    }
}
