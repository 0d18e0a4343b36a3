//! The sort, written once.
//!
//! `key` maps every key type to an order-preserving `u32`, `network` is the bitonic sorting
//! network over those `u32`s, and `schedule` turns it into few launches. `kernels` holds the
//! two `#[rgpu::kernel]` functions that run a launch's share of the work: rgpu compiles them
//! for CUDA and Vulkan, and on the host they are the typed launchers
//! (`kernels::bitonic_tile(&device, groups, params, &mut keys)`). `radix` is the other
//! algorithm: an LSD radix sort in three kernels (upsweep, scan, downsweep) per 8-bit digit.
#![no_std]

// The PTX and SPIR-V that `rgpu build` made for this crate, for the host's launchers.
rgpu::embed_kernels!();

pub mod kernels;
pub mod key;
pub mod network;
pub mod params;
pub mod radix;
pub mod schedule;

pub use params::{
    Block, Distance, KeyKind, SortOrder, SortParams, MAX_KEYS, TILE_KEYS, WORKGROUP_SIZE,
};

#[cfg(test)]
mod test_slots;
