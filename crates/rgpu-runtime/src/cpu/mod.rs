//! The cpu backend: the executor (`run_items` on rayon, `run_groups` with coroutines for
//! workgroups), the host versions of the kernel-side types (`Item`, `Group`, `Shared`,
//! `Global`), and host memory for cpu `Buffer`s.

mod global;
mod groups;
mod items;
mod memory;
mod shared;

pub use global::Global;
pub use groups::{run_groups, run_groups_named, Group, SCRATCH_ALIGN, STACK_BYTES};
pub use items::{run_items, Item, MIN_ITEMS_PER_TASK};
pub(crate) use memory::HostMemory;
pub use shared::{Shared, Word};

/// The cpu as a `Device`: rayon's global thread pool.
pub(crate) struct CpuDevice;

impl CpuDevice {
    pub(crate) fn new() -> Self {
        Self
    }

    pub(crate) fn description(&self) -> String {
        format!("CPU, {} threads (rayon)", rayon::current_num_threads())
    }
}
