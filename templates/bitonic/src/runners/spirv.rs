//! What the Vulkan runners (wgpu, ash) share: the embedded SPIR-V, the entry point names
//! and the list of dispatches one sort needs.
//!
//! The entry points are declared in `kernel/src/spirv.rs` (rust-gpu). The SPIR-V may hold
//! all of them in one module (cargo-gpu's default) or one per module (`--multimodule`), so
//! each entry point is looked up on its own.

use kernel::schedule::{Pass, Passes};
use shared::{KeyKind, SortOrder, SortParams, TILE_KEYS, WORKGROUP_SIZE};

use super::{Backend, RunnerError};
use crate::kernels::{self, Kernel};

/// One workgroup per tile, in workgroup memory (`schedule::Pass::Tile`).
pub const TILE: &str = "bitonic_tile";
/// Fused global steps, keys in registers (`schedule::Pass::Global`).
pub const GLOBAL: &str = "bitonic_global";
pub const ENTRY_POINTS: [&str; 2] = [TILE, GLOBAL];

/// Workgroup memory the tile entry point declares: `TILE_KEYS` `u32`s (16 KiB, the
/// smallest `maxComputeSharedMemorySize` Vulkan allows).
pub const TILE_BYTES: u32 = TILE_KEYS * 4;

/// The push constant block is `SortParams`, 16 bytes.
pub const PARAMS_BYTES: u32 = core::mem::size_of::<SortParams>() as u32;

/// Workgroups per dispatch never exceed this: the kernels stride over the rest, and
/// 65535 is the smallest `maxComputeWorkGroupCount[0]` Vulkan allows.
pub const MAX_GROUPS: u32 = 65535;

/// The embedded SPIR-V module that holds `entry`, as 32-bit words.
pub fn module_for(
    backend: Backend,
    entry: &str,
) -> Result<(&'static Kernel, Vec<u32>), RunnerError> {
    let kernel = kernels::of_kind("spirv")
        .find(|k| k.entry_points.contains(&entry))
        .ok_or_else(|| RunnerError::Unavailable {
            backend,
            reason: format!(
                "no embedded SPIR-V has the entry point `{entry}`: build with `rgpu build --backend {backend}`"
            ),
        })?;
    Ok((kernel, words(backend, kernel.bytes)?))
}

/// SPIR-V words from bytes (`include_bytes!` gives no 4-byte alignment, so copy).
pub fn words(backend: Backend, bytes: &[u8]) -> Result<Vec<u32>, RunnerError> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(RunnerError::Failed {
            backend,
            reason: format!("embedded SPIR-V is {} bytes, not a module", bytes.len()),
        });
    }
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if words[0] != 0x0723_0203 {
        return Err(RunnerError::Failed {
            backend,
            reason: "embedded SPIR-V does not start with the SPIR-V magic number".into(),
        });
    }
    Ok(words)
}

/// One dispatch of a sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// Index into `ENTRY_POINTS`.
    pub entry: usize,
    pub params: SortParams,
    pub groups: u32,
}

/// Workgroups for `threads` threads, capped at `MAX_GROUPS` (the kernels stride).
pub fn groups_for(threads: u32) -> u32 {
    threads.div_ceil(WORKGROUP_SIZE).clamp(1, MAX_GROUPS)
}

/// Every dispatch of one sort of `len` keys, in order: `kernel::schedule::Passes`.
pub fn dispatches(len: u32, kind: KeyKind, order: SortOrder) -> Vec<Dispatch> {
    Passes::new(len)
        .map(|pass| Dispatch {
            entry: match pass {
                Pass::Tile(_) => 0,
                Pass::Global(_) => 1,
            },
            params: pass.params(len, kind, order),
            groups: groups_for(pass.threads(len)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sort_is_tile_passes_and_fused_global_passes() {
        let d = dispatches(1 << 24, KeyKind::F32, SortOrder::Descending);
        assert_eq!(d.len(), 37);
        assert_eq!((d[0].entry, d[0].params.block, d[0].groups), (0, 0, 4096));
        assert_eq!(d[36].entry, 0);
        assert_eq!(d[36].params.block, 1 << 24);
        assert_eq!((d[1].entry, d[1].params.distance), (1, 4096));
        assert!(dispatches(1, KeyKind::U32, SortOrder::Ascending).is_empty());
        assert_eq!(
            dispatches(1000, KeyKind::U32, SortOrder::Ascending).len(),
            1
        );
    }

    #[test]
    fn big_sorts_stay_within_the_group_limit() {
        assert_eq!(groups_for(1 << 26), MAX_GROUPS);
        assert_eq!(groups_for(1), 1);
        assert_eq!(groups_for(257), 2);
    }
}
