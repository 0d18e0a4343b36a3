//! The sort, written once.
//!
//! `key` maps every key type to an order-preserving `u32`, `network` is the bitonic sorting
//! network over those `u32`s, and `schedule` turns it into few launches. `kernels` holds the
//! two `#[rgpu::kernel]` functions that run a launch's share of the work: rgpu compiles them
//! for CUDA and Vulkan, and on the host they are the typed launchers
//! (`kernels::bitonic_tile(&device, groups, params, &mut keys)`). The other algorithm, a
//! radix sort, is rgpu-primitives' `sort_keys` (a library of kernels this crate depends on,
//! so `rgpu build` compiles its kernels with these).
#![no_std]

// The PTX and SPIR-V that `rgpu build` made for this crate, for the host's launchers.
rgpu::embed_kernels!();

// The radix sort's kernels are rgpu-primitives': naming the crate links them into this
// crate's PTX and SPIR-V (rustc leaves out a dependency the code never names).
use rgpu_primitives as _;

pub mod kernels;
pub mod key;
pub mod network;
pub mod params;
pub mod schedule;

pub use params::{
    Block, Distance, KeyKind, SortOrder, SortParams, MAX_KEYS, TILE_KEYS, WORKGROUP_SIZE,
};

#[cfg(test)]
mod test_slots;
