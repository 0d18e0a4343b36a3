//! Device-wide primitives on rgpu's kernel API: sort keys and stable key-value pairs,
//! exclusive and inclusive scan, reduce, histogram and top-k, each one call on any
//! `rgpu::Device` (CUDA, Vulkan through wgpu or ash, WebGPU, the CPU), on host slices,
//! `Vec`s and device `Buffer`s, with the same bits on every backend.
//!
//! ```ignore
//! let (device, _) = rgpu::Device::select()?;
//! let mut keys: Vec<f32> = ...;
//! rgpu_primitives::sort_keys(&device, &mut keys, Order::Ascending)?; // IEEE total order
//! let sum: u32 = rgpu_primitives::sum(&device, &counts)?;
//! ```
//!
//! Its kernels are `#[rgpu::kernel]` functions of this crate: a workspace compiles them
//! when its kernel crate depends on `rgpu-primitives` (rgpu builds the kernels of the
//! crates the kernel crate depends on like its own). The cpu backend runs host versions of
//! the primitives on rayon with the kernels' results.
#![no_std]

// The PTX, SPIR-V and WGSL `rgpu build` made for the workspace, for this crate's launchers.
rgpu::embed_kernels!();

pub mod group;
pub mod histogram;
pub mod key;
pub mod merge;
pub mod onesweep;
pub mod partition;
pub mod radix;
pub mod reduce;
pub mod scan;
pub mod words;

pub use key::{KeyKind, KeyMap, Order};

// The host side on rgpu's host codegen only (rgpu's gate, not a target cfg: `check-spirv`
// and `check-nvvm` type-check the GPU side on the host target, where rgpu has no Device).
rgpu::__host! {
    extern crate std;
    mod host;
    pub use host::*;
}
