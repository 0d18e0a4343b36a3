//! rgpu-runtime: the host runtime of rgpu's kernel API.
//!
//! A `#[rgpu::kernel]` function expands into one entry point per GPU codegen and a typed
//! host launcher; the launcher calls into this crate, which runs the launch on one of its
//! backends: `cpu` (rayon, with coroutines for workgroups), `cuda` (cudarc, embedded PTX),
//! `wgpu` and `ash` (Vulkan, embedded SPIR-V), `webgpu` (a browser's WebGPU, embedded WGSL).
//! Pick a device with `Device::select` (what `rgpu run --backend X` and `RGPU_DEVICE` set),
//! `Device::options` (a program's own choices), `Device::auto`, `Device::open` or
//! `Device::open_on` (a backend's device by index or name: `Device::list`); spread work over
//! every GPU with `Device::open_all` or `Device::options().select_all()`.
#![deny(unsafe_op_in_unsafe_fn)]

// The layers, bottom up: what a backend is named (`backend`), errors, what a kernel is
// (`kernel`), which devices a backend has and how one is picked (`devices`), the trait
// every backend implements (`api`) and the helpers several share (`common`); one folder per backend; above them the enums that pick one at run time
// (`registry`, made from the list in `backend`), and the public `Device`, `Buffer` and
// `launch`.
mod api;
mod backend;
mod buffer;
mod collective;
mod common;
mod device;
mod devices;
mod error;
mod kernel;
mod launch;
pub mod program;
mod registry;
mod stats;
pub mod testing;

// The backends' folders, each under the `cfg` its line in `backend.rs` gives. (Declared here,
// not from that list, so that rustfmt, which does not expand macros, finds them.)
#[cfg(feature = "ash")]
mod ash;
mod cpu;
#[cfg(feature = "cuda")]
mod cuda;
#[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
mod webgpu;
#[cfg(feature = "wgpu")]
mod wgpu;

pub use api::CopyPath;
pub use backend::{Backend, Skipped, BACKEND_VAR};
pub use buffer::{Buffer, Input, InputOutput};
pub use bytemuck::Pod;
pub use collective::{Collective, ReduceOp, Reducible, Transfer, NCCL_ID_VAR};
pub use cpu::{
    fence, Atomic, AtomicScope, AtomicWord, DeviceScope, Global, Group, Item, LaneValue, Shared,
    SubgroupBits, SubgroupValue, Word, WorkgroupScope, CPU_THREADS_VAR,
};
pub use device::{Device, DeviceOptions};
pub use devices::{DeviceChoice, DeviceInfo, DeviceType, DEVICE_VAR};
pub use error::Error;
pub use program::{args, Instant};
pub use stats::{DeviceFacts, KernelStats, Stat, StatValue};

/// What the `#[rgpu::kernel]` launchers use; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::buffer::{Dst, RawBuffer, Src};
    pub use crate::kernel::{
        check_lengths, shape_count, workgroups, Access, Artifact, BufferInfo, KernelInfo, Mode,
        CUDA_MAX_GRID,
    };
    pub use crate::launch::{launch, Arg};

    /// The cpu executor and the host versions of the kernel-side types.
    pub mod cpu {
        pub use crate::cpu::{
            checked, run_groups, run_groups_grid, run_groups_grid_on, run_groups_named,
            run_groups_on, run_items, run_items_grid, run_items_grid_on, run_items_on, Global,
            Group, Item, Shared, Word, MIN_ITEMS_PER_TASK, SCRATCH_ALIGN, STACK_BYTES,
        };
    }
}
