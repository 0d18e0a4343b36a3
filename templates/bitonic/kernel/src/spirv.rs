//! SPIR-V entry points, compiled by rust-gpu (`rustc_codegen_spirv`) through cargo-gpu.
//!
//! Thin wrappers around `schedule::tile_pass` (workgroup memory, barriers) and
//! `schedule::global_pass` (fused steps in registers), exactly what the CPU backend runs.
//! The host (wgpu or ash) dispatches `schedule::Passes` in order, binds the keys as storage
//! buffer 0 of set 0 and passes `SortParams` as the push constant block; dispatches are
//! capped at 65535 workgroups, so every entry point strides over the rest.
//!
//! The `spirv-std` dependency is not declared in kernel/Cargo.toml: a git dependency, even
//! one limited to `cfg(target_arch = "spirv")`, makes every plain `cargo build` of the
//! workspace clone rust-gpu. rgpu's spirv codegen generates a small shader crate under
//! `target/rgpu/spirv/` that compiles these same sources with `spirv-std` at the pinned rev.
//!
//! tests/fixtures/spirv/bitonic_fixture.comp in rgpu is a GLSL twin of this file (a test
//! FIXTURE); rgpu's tests parse both and fail if their interfaces drift apart.

use spirv_std::arch::workgroup_memory_barrier_with_group_sync;
use spirv_std::glam::UVec3;
use spirv_std::spirv;

use crate::network::{KeySlots, Step};
use crate::schedule::{global_pass, tile_count, tile_pass, Pass, Workgroup};
use shared::{Block, Distance, SortParams, TILE_KEYS, WORKGROUP_SIZE};

// rust-gpu takes the workgroup size as a literal in `threads(...)`: this stops the build if
// the one definition in `shared` changes and the literals below do not.
const _: () = assert!(
    WORKGROUP_SIZE == 256,
    "WORKGROUP_SIZE changed: update every threads(256) in kernel/src/spirv.rs"
);

/// The keys as the network sees them: the storage buffer, or the workgroup array.
struct Slots<'a>(&'a mut [u32]);

impl KeySlots for Slots<'_> {
    fn load(&self, index: u32) -> u32 {
        self.0[index as usize]
    }

    fn store(&mut self, index: u32, value: u32) {
        self.0[index as usize] = value;
    }
}

/// `OpControlBarrier` (workgroup scope, workgroup memory, acquire-release): spirv-std's
/// `arch::workgroup_memory_barrier_with_group_sync` (crates/spirv-std/src/arch/barrier.rs).
struct GroupSync;

impl Workgroup for GroupSync {
    fn barrier(&self) {
        workgroup_memory_barrier_with_group_sync();
    }
}

/// One workgroup per tile (strides over tiles past the dispatch): encode + every stage that
/// fits in a tile (`params.block == 0`), or the tile-sized tail of stage `params.block`; the
/// sort's last dispatch decodes. `tile` is the workgroup's `TILE_KEYS` (16 KiB) array.
#[spirv(compute(threads(256)))]
pub fn bitonic_tile(
    #[spirv(workgroup_id)] group: UVec3,
    #[spirv(local_invocation_id)] local: UVec3,
    #[spirv(num_workgroups)] groups: UVec3,
    #[spirv(push_constant)] params: &SortParams,
    #[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32],
    #[spirv(workgroup)] tile: &mut [u32; TILE_KEYS as usize],
) {
    let mut global = Slots(keys);
    let mut memory = Slots(tile);
    let mut index = group.x;
    while index < tile_count(params.len) {
        tile_pass(&mut global, &mut memory, &GroupSync, params, index, local.x);
        // The next tile overwrites the array: everyone must be done storing.
        workgroup_memory_barrier_with_group_sync();
        index += groups.x;
    }
}

/// Up to `FUSED_STEPS` global steps of stage `params.block` from `params.distance`, each
/// invocation on its keys in registers (grid-stride over the rest).
#[spirv(compute(threads(256)))]
pub fn bitonic_global(
    #[spirv(global_invocation_id)] id: UVec3,
    #[spirv(num_workgroups)] groups: UVec3,
    #[spirv(push_constant)] params: &SortParams,
    #[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32],
) {
    let threads = Pass::Global(Step {
        block: Block(params.block),
        distance: Distance(params.distance),
    })
    .threads(params.len);
    let mut global = Slots(keys);
    let mut thread = id.x;
    while thread < threads {
        global_pass(&mut global, params, thread);
        thread += groups.x * WORKGROUP_SIZE;
    }
}
