//! The sort, written once.
//!
//! `key` maps every key type to an order-preserving `u32`, and `network` is the bitonic
//! sorting network over those `u32`s. The CPU backend calls these functions directly; each
//! GPU codegen gets a thin entry point module (selected by `cfg`) that calls the same
//! functions for its thread of the network.
#![no_std]
// rustc's nvptx64-nvidia-cuda target: `extern "ptx-kernel"` and `core::arch::nvptx`.
// `asm_experimental_arch`: the tile's `.shared` array (nvptx.rs).
#![cfg_attr(
    all(target_arch = "nvptx64", not(feature = "nvvm")),
    feature(abi_ptx, stdarch_nvptx, asm_experimental_arch)
)]

pub mod key;
pub mod network;
pub mod schedule;

pub use shared::{
    Block, Distance, KeyKind, SortOrder, SortParams, MAX_KEYS, TILE_KEYS, WORKGROUP_SIZE,
};

// GPU entry points: one thin module per codegen, compiled only for its target.
// - `target_os = "cuda"` (rustc's nvptx64-nvidia-cuda target, or Rust-CUDA's nvvm codegen)
// - `target_arch = "spirv"` (rust-gpu)

// The `nvvm` feature is set only by rgpu's generated Rust-CUDA entry crate (kernel/nvvm/),
// which has its own kernels of the same names.
#[cfg(all(target_arch = "nvptx64", not(feature = "nvvm")))]
pub mod nvptx;

#[cfg(target_arch = "spirv")]
pub mod spirv;

#[cfg(test)]
mod test_slots;
