//! What the Vulkan runners (wgpu, ash) share: the embedded SPIR-V, the entry point names
//! and the list of dispatches one sort needs.
//!
//! The entry points are declared in `kernel/src/spirv.rs` (rust-gpu). The SPIR-V may hold
//! all of them in one module (cargo-gpu's default) or one per module (`--multimodule`), so
//! each entry point is looked up on its own.

use kernel::network::{pair_count, Steps};
use shared::{Block, Distance, KeyKind, SortOrder, SortParams, WORKGROUP_SIZE};

use super::{Backend, RunnerError};
use crate::kernels::{self, Kernel};

/// One thread per key: raw bits -> order-preserving `u32`.
pub const ENCODE: &str = "bitonic_encode";
/// One thread per compare pair of one network step.
pub const STEP: &str = "bitonic_step";
/// One thread per key: the inverse of `ENCODE`.
pub const DECODE: &str = "bitonic_decode";
pub const ENTRY_POINTS: [&str; 3] = [ENCODE, STEP, DECODE];

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

/// Every dispatch of one sort of `len` keys, in order: encode, each network step, decode.
pub fn dispatches(len: u32, kind: KeyKind, order: SortOrder) -> Vec<Dispatch> {
    let map = SortParams::new(len, Block(0), Distance(0), kind, order);
    let mut all = vec![Dispatch {
        entry: 0,
        params: map,
        groups: groups_for(len),
    }];
    all.extend(Steps::new(len).map(|step| Dispatch {
        entry: 1,
        params: SortParams::new(len, step.block, step.distance, kind, order),
        groups: groups_for(pair_count(len)),
    }));
    all.push(Dispatch {
        entry: 2,
        params: map,
        groups: groups_for(len),
    });
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sort_is_encode_steps_decode() {
        let d = dispatches(1024, KeyKind::F32, SortOrder::Descending);
        assert_eq!(d.len(), 55 + 2);
        assert_eq!(d[0].entry, 0);
        assert_eq!(d[56].entry, 2);
        assert!(d[1..56].iter().all(|x| x.entry == 1 && x.groups == 2));
    }

    #[test]
    fn big_sorts_stay_within_the_group_limit() {
        assert_eq!(groups_for(1 << 26), MAX_GROUPS);
        assert_eq!(groups_for(1), 1);
        assert_eq!(groups_for(257), 2);
    }
}
