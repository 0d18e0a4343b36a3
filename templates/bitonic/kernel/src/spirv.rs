//! SPIR-V entry points, compiled by rust-gpu (`rustc_codegen_spirv`) through cargo-gpu.
//!
//! Thin wrappers: each thread runs `key::encode`/`key::decode` for one key or
//! `network::compare_exchange` for one pair, exactly like the CPU backend. The host (wgpu or
//! ash) binds the keys as storage buffer 0 of set 0 and passes `SortParams` as the push
//! constant block; dispatches are capped at 65535 workgroups, so every entry point strides
//! over the rest (grid-stride loop).
//!
//! The `spirv-std` dependency is not declared in kernel/Cargo.toml: a git dependency, even
//! one limited to `cfg(target_arch = "spirv")`, makes every plain `cargo build` of the
//! workspace clone rust-gpu. rgpu's spirv codegen generates a small shader crate under
//! `target/rgpu/spirv/` that compiles these same sources with `spirv-std` at the pinned rev.
//!
//! tests/fixtures/spirv/bitonic_fixture.comp in rgpu is a GLSL twin of this file (a test
//! FIXTURE); rgpu's tests parse both and fail if their interfaces drift apart.

use spirv_std::glam::UVec3;
use spirv_std::spirv;

use crate::key::{decode, encode};
use crate::network::{compare_exchange, pair_count, KeySlots, Step};
use shared::{Block, Distance, SortParams, WORKGROUP_SIZE};

// rust-gpu takes the workgroup size as a literal in `threads(...)`: this stops the build if
// the one definition in `shared` changes and the literals below do not.
const _: () = assert!(
    WORKGROUP_SIZE == 256,
    "WORKGROUP_SIZE changed: update every threads(256) in kernel/src/spirv.rs"
);

/// The keys as the network sees them: the storage buffer.
struct BufferSlots<'a>(&'a mut [u32]);

impl KeySlots for BufferSlots<'_> {
    fn load(&self, index: u32) -> u32 {
        self.0[index as usize]
    }

    fn store(&mut self, index: u32, value: u32) {
        self.0[index as usize] = value;
    }
}

/// Threads in the whole dispatch: the grid-stride loop's step.
fn stride(groups: UVec3) -> u32 {
    groups.x * WORKGROUP_SIZE
}

/// One thread per key: raw bits -> order-preserving `u32`.
#[spirv(compute(threads(256)))]
pub fn bitonic_encode(
    #[spirv(global_invocation_id)] id: UVec3,
    #[spirv(num_workgroups)] groups: UVec3,
    #[spirv(push_constant)] params: &SortParams,
    #[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32],
) {
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let mut i = id.x;
    while i < params.len {
        keys[i as usize] = encode(keys[i as usize], kind, order);
        i += stride(groups);
    }
}

/// One thread per compare pair of one network step (`params.block`, `params.distance`).
#[spirv(compute(threads(256)))]
pub fn bitonic_step(
    #[spirv(global_invocation_id)] id: UVec3,
    #[spirv(num_workgroups)] groups: UVec3,
    #[spirv(push_constant)] params: &SortParams,
    #[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32],
) {
    let step = Step {
        block: Block(params.block),
        distance: Distance(params.distance),
    };
    let pairs = pair_count(params.len);
    let mut slots = BufferSlots(keys);
    let mut pair = id.x;
    while pair < pairs {
        compare_exchange(&mut slots, params.len, step, pair);
        pair += stride(groups);
    }
}

/// One thread per key: the inverse of `bitonic_encode`.
#[spirv(compute(threads(256)))]
pub fn bitonic_decode(
    #[spirv(global_invocation_id)] id: UVec3,
    #[spirv(num_workgroups)] groups: UVec3,
    #[spirv(push_constant)] params: &SortParams,
    #[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32],
) {
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let mut i = id.x;
    while i < params.len {
        keys[i as usize] = decode(keys[i as usize], kind, order);
        i += stride(groups);
    }
}
