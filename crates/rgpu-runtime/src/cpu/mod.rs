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
use memory::HostMemory;
pub use shared::{Shared, Word};

use std::time::Instant;

use crate::api::{Api, Arg, CpuDevices, MemoryOf};
use crate::backend::Backend;
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};

/// The cpu as a `Device`: rayon's global thread pool. Launchers run kernels on it
/// themselves (`run_items`, `run_groups`), on the buffers' host memory.
pub(crate) struct CpuDevice;

impl Api for CpuDevice {
    const BACKEND: Backend = Backend::Cpu;
    type Memory = HostMemory;

    fn open(_: CpuDevices) -> Result<Self, Error> {
        Ok(Self)
    }

    fn description(&self) -> String {
        format!("CPU, {} threads (rayon)", rayon::current_num_threads())
    }

    fn upload(&self, data: &[u8], align: usize) -> Result<HostMemory, Error> {
        HostMemory::copy_of(data, align)
    }

    fn zeros(&self, bytes: usize, align: usize) -> Result<HostMemory, Error> {
        HostMemory::zeroed(bytes, align)
    }

    fn read(&self, memory: &HostMemory, out: &mut [u8]) -> Result<(), Error> {
        out.copy_from_slice(memory.bytes());
        Ok(())
    }

    fn write(&self, memory: &mut HostMemory, data: &[u8]) -> Result<(), Error> {
        memory.bytes_mut().copy_from_slice(data);
        Ok(())
    }

    fn host_bytes(memory: &HostMemory) -> Option<&[u8]> {
        Some(memory.bytes())
    }

    fn host_bytes_mut(memory: &mut HostMemory) -> Option<&mut [u8]> {
        Some(memory.bytes_mut())
    }

    fn sync(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Wall time: the launches ran before `f` returned.
    fn timed<R>(&self, f: impl FnOnce() -> Result<R, Error>) -> Result<(R, Option<f64>), Error> {
        let start = Instant::now();
        let result = f()?;
        Ok((result, Some(start.elapsed().as_secs_f64() * 1e3)))
    }

    fn launch<B: MemoryOf<HostMemory>>(
        &self,
        kernel: &'static KernelInfo,
        _: &'static [Artifact],
        _: u32,
        _: &mut [Arg<'_, B>],
        _: &[u8],
    ) -> Result<(), Error> {
        Err(Error::Launch {
            backend: Self::BACKEND,
            kernel: kernel.name,
            reason: "the cpu backend runs kernels through __private::cpu::run_items / \
                     run_groups, not launch(): regenerate the launcher with rgpu's macro"
                .into(),
        })
    }
}
