//! The sort's types and constants, used by the host and the kernels alike.
//!
//! `SortParams` is `#[repr(C)]` plain old data, so the same bytes mean the same thing on the
//! CPU, in a CUDA kernel argument and in a Vulkan push constant.

/// Threads per workgroup (a CUDA block). The kernels' `#[rgpu::kernel(threads = 256)]` must
/// say the same (rust-gpu takes a literal there): `kernels.rs` asserts it.
pub const WORKGROUP_SIZE: u32 = 256;

/// Keys per workgroup tile in workgroup (shared) memory: 4096 `u32`s = 16 KiB, the
/// smallest `maxComputeSharedMemorySize` every Vulkan device guarantees (CUDA allows 48 KiB
/// of static shared memory). One tile is 2 * WORKGROUP_SIZE * 8 keys: each thread compares
/// 8 pairs per step. The one definition: kernels size their shared arrays with it.
pub const TILE_KEYS: u32 = 4096;

/// Global steps fused into one launch: a thread keeps 2^FUSED_STEPS keys in registers.
pub const FUSED_STEPS: u32 = 4;

/// The largest number of keys one sort accepts (indices are `u32` on every backend).
pub const MAX_KEYS: u32 = 1 << 31;

/// The type of the keys being sorted (`u32`, `i32`, `f32`) and the order, as the kernels see
/// them: rgpu-primitives' (the radix sort is its `sort_keys`), so both sorts take the same
/// values (plain `u32`s on the wire: `KeyKind::from_u32`, `SortOrder::from_u32`).
pub use rgpu_primitives::key::{KeyKind, Order as SortOrder};

/// Size of the blocks a bitonic stage merges (a power of two, at least 2).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block(pub u32);

/// Distance between the two keys of a compare-exchange (a power of two, below the block).
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Distance(pub u32);

/// One step of the bitonic network, as passed to a kernel launch.
///
/// 16 bytes: a CUDA by-value argument and a Vulkan push constant alike.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortParams {
    /// Number of real keys; positions at or past `len` act as keys that sort last.
    pub len: u32,
    /// `Block` of this step's stage.
    pub block: u32,
    /// `Distance` of this step.
    pub distance: u32,
    /// `KeyKind` in bits 0..8, `SortOrder` in bit 8 (for the map/unmap passes).
    pub key_order: u32,
}

impl SortParams {
    pub const fn new(
        len: u32,
        block: Block,
        distance: Distance,
        kind: KeyKind,
        order: SortOrder,
    ) -> Self {
        Self {
            len,
            block: block.0,
            distance: distance.0,
            key_order: kind as u32 | (order as u32) << 8,
        }
    }

    pub const fn key_kind(&self) -> Option<KeyKind> {
        KeyKind::from_u32(self.key_order & 0xff)
    }

    pub const fn order(&self) -> Option<SortOrder> {
        SortOrder::from_u32(self.key_order >> 8)
    }
}

// SAFETY: `SortParams` is `#[repr(C)]`, made of four `u32`s: no padding, every bit pattern
// is a valid value, and all-zero is a valid value.
unsafe impl bytemuck::Zeroable for SortParams {}
// SAFETY: as above; the type is `Copy` and `'static`.
unsafe impl bytemuck::Pod for SortParams {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_sixteen_bytes_of_plain_data() {
        assert_eq!(core::mem::size_of::<SortParams>(), 16);
        let p = SortParams::new(
            7,
            Block(8),
            Distance(4),
            KeyKind::F32,
            SortOrder::Descending,
        );
        assert_eq!(p.key_kind(), Some(KeyKind::F32));
        assert_eq!(p.order(), Some(SortOrder::Descending));
        assert_eq!(bytemuck::bytes_of(&p).len(), 16);
    }

    #[test]
    fn wire_values_outside_the_enums_are_rejected() {
        assert_eq!(KeyKind::from_u32(3), None);
        assert_eq!(SortOrder::from_u32(2), None);
    }
}
