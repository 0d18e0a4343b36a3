//! The ash backend: the embedded SPIR-V straight on Vulkan 1.2, no translation layer.
//!
//! Launches on device buffers are recorded into one command buffer, a compute->compute
//! memory barrier between dispatches, and submitted together when something needs their
//! results (a read, `sync`, a host-slice launch, dropping the `Device`). Uploads and
//! downloads go through two mapped staging buffers the device keeps (`transfer`): small
//! uploads join the batch, large transfers move in overlapping chunks. The Vulkan loader is
//! opened at run time (`ash::Entry::load`), so a machine without one gets a clear error.

mod batch;
mod context;
mod launch;
mod memory;
mod pipeline;
mod setup;
mod statistics;
mod transfer;

use std::sync::{Mutex, MutexGuard};

use ash::vk;

use context::Allocation as AshMemory;

use crate::api::{About, Api, Arg, MemoryOf};
use crate::backend::Backend;
use crate::common::launch::Limits;
use crate::devices::{DeviceInfo, Wanted};
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};
use crate::stats::KernelStats;
use context::{Context, Timing};
use transfer::{copy_in, copy_out, Target};

const BACKEND: Backend = Backend::Ash;

/// Starts recording command buffer `cb` for one submission. Its pool was made with
/// `RESET_COMMAND_BUFFER`, so beginning resets what it held (no `vkResetCommandBuffer`).
///
/// # Safety
/// `cb` is idle: never submitted, or the fence of its last submission was waited for.
unsafe fn begin_one_time(d: &ash::Device, cb: vk::CommandBuffer) -> Result<(), Error> {
    let begin =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    // SAFETY: the caller guarantees `cb` is idle; its pool resets command buffers.
    unsafe { d.begin_command_buffer(cb, &begin) }
        .map_err(|e| Error::api_call(BACKEND, "vkBeginCommandBuffer", e))
}

pub(crate) struct AshDevice {
    context: Mutex<Context>,
    about: About,
    limits: Limits,
}

impl AshDevice {
    fn context(&self) -> MutexGuard<'_, Context> {
        // A panic under the lock leaves Vulkan objects that are still valid: keep going.
        self.context.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The context, unless the device is lost (a wait timed out, the driver lost it): then
    /// the error that lost it, without touching the driver.
    fn usable(&self) -> Result<MutexGuard<'_, Context>, Error> {
        let c = self.context();
        c.lost.check()?;
        Ok(c)
    }
}

impl Api for AshDevice {
    const BACKEND: Backend = BACKEND;
    type Memory = AshMemory;

    fn list() -> Result<Vec<DeviceInfo>, Error> {
        setup::list()
    }

    fn open(wanted: &Wanted) -> Result<Self, Error> {
        let opened = setup::open(wanted)?;
        Ok(Self {
            context: Mutex::new(opened.context),
            about: opened.about,
            limits: opened.limits,
        })
    }

    fn about(&self) -> &About {
        &self.about
    }

    // Asked of a copy of each pipeline in statistics.rs.
    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        self.usable()?.kernel_stats()
    }

    /// A new buffer holding `data` (its copy recorded into the batch when small).
    fn upload(&self, data: &[u8], _: usize) -> Result<AshMemory, Error> {
        let size = self.limits.check_buffer(BACKEND, data.len())?;
        let mut c = self.usable()?;
        let memory = c.allocate_storage(size)?;
        match copy_in(&mut c, &memory, 0, data, Target::New) {
            Ok(()) => Ok(memory),
            Err(e) => {
                c.discard(memory);
                Err(e)
            }
        }
    }

    /// A new buffer of zeros (filled in the queued batch).
    fn zeros(&self, bytes: usize, _: usize) -> Result<AshMemory, Error> {
        let size = self.limits.check_buffer(BACKEND, bytes)?;
        let mut c = self.usable()?;
        let memory = c.allocate_storage(size)?;
        let cb = match c.batch() {
            Ok(cb) => cb,
            Err(e) => {
                // SAFETY: never recorded anywhere.
                unsafe { memory.free(&c.device) };
                return Err(e);
            }
        };
        // SAFETY: the batch is recording; the buffer is live until the batch ran (a drop
        // before that only queues it for freeing).
        unsafe {
            c.device
                .cmd_fill_buffer(cb, memory.buffer, 0, vk::WHOLE_SIZE, 0)
        };
        if let Some(batch) = c.batch.as_mut() {
            batch.transfer_writes = true;
        }
        Ok(memory)
    }

    /// Replaces the bytes of `memory` from `offset` with `data`, after the queued launches.
    fn write(&self, memory: &mut AshMemory, offset: usize, data: &[u8]) -> Result<(), Error> {
        copy_in(
            &mut *self.usable()?,
            memory,
            offset as u64,
            data,
            Target::Live,
        )
    }

    /// Copies `out.len()` bytes of `memory` from `offset` into `out`, after every queued
    /// launch.
    fn read(&self, memory: &AshMemory, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        let mut c = self.usable()?;
        copy_out(&mut c, &mut [(memory, offset as u64, out)])?;
        c.take_fault()
    }

    /// A buffer is dropped: freed now, or after the batch that may use it.
    fn release(&self, memory: &mut AshMemory) {
        self.context().discard(*memory);
    }

    /// Submits the queued launches (and waits: ash submissions are synchronous).
    fn flush(&self) -> Result<(), Error> {
        self.usable()?.submit_batch()
    }

    fn sync(&self) -> Result<(), Error> {
        let mut c = self.usable()?;
        c.submit_batch()?;
        c.take_fault()
    }

    fn begin_timing(&self) -> Result<(), Error> {
        let mut c = self.usable()?;
        if c.timing.is_some() {
            return Err(Error::nested_timing());
        }
        c.submit_batch()?;
        c.timing = Some(Timing::default());
        Ok(())
    }

    fn end_timing(&self) -> Result<Option<f64>, Error> {
        let mut c = self.usable()?;
        let submitted = c.submit_batch();
        let timing = c.timing.take();
        submitted?;
        Ok(timing.and_then(|t| (!t.untimed).then_some(t.ms)))
    }

    // Recorded in launch.rs.
    fn launch<B: MemoryOf<AshMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        AshDevice::launch(self, kernel, artifacts, count, args, params)
    }
}

impl Drop for AshDevice {
    fn drop(&mut self) {
        // Queued launches still run (up to the launch timeout); the context's own Drop then
        // destroys everything (or leaks it, on a lost device).
        let mut c = self.context();
        if !c.lost.is_lost() {
            let _ = c.submit_batch();
        }
    }
}
