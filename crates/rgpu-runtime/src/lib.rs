//! rgpu-runtime: the host runtime of rgpu's kernel API.
//!
//! A `#[rgpu::kernel]` function expands into one entry point per GPU codegen and a typed
//! host launcher; the launcher calls into this crate, which runs the launch on one of four
//! backends: `cpu` (rayon, with coroutines for workgroups), `cuda` (cudarc, embedded PTX),
//! `wgpu` and `ash` (Vulkan, embedded SPIR-V). Pick a device with `Device::select` (what
//! `rgpu run --backend X` sets), `Device::auto` or `Device::open`.
#![deny(unsafe_op_in_unsafe_fn)]

mod backend;
mod buffer;
#[cfg(any(feature = "cuda", feature = "wgpu", feature = "ash"))]
mod copy;
mod cpu;
#[cfg(feature = "cuda")]
mod cuda;
mod device;
mod error;
mod launch;
pub mod program;
pub mod testing;
#[cfg(any(feature = "wgpu", feature = "ash"))]
mod vulkan;
#[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
mod webgpu;

pub use backend::{Backend, Skipped, BACKEND_VAR};
pub use buffer::{Buffer, Input, InputOutput};
pub use bytemuck::Pod;
pub use cpu::{Global, Group, Item, Shared, Word};
pub use device::Device;
pub use error::Error;
pub use program::{args, Instant};

/// What the `#[rgpu::kernel]` launchers use; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::buffer::{Dst, RawBuffer, Src};
    pub use crate::launch::{
        check_lengths, launch, workgroups, Access, Arg, Artifact, BufferInfo, KernelInfo, Mode,
        CUDA_MAX_GRID,
    };

    /// The cpu executor and the host versions of the kernel-side types.
    pub mod cpu {
        pub use crate::cpu::{
            run_groups, run_groups_named, run_items, Global, Group, Item, Shared, Word,
            MIN_ITEMS_PER_TASK, SCRATCH_ALIGN, STACK_BYTES,
        };
    }
}
