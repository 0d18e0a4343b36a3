//! Recording and submitting: the queued launches go into one command buffer (the batch),
//! with a memory barrier before each command that needs one, and are submitted together
//! when something needs their results. Every submission waits for its fence (polling it
//! first, `common::spin`), so when a function here returns, the GPU is idle (as when
//! `transfer`'s chunked copies return).

use ash::vk;

use super::context::{Batch, Context};
use super::{begin_one_time, BACKEND};
use crate::common::spin::poll_for;
use crate::error::Error;

impl Context {
    /// The batch's command buffer, starting a batch when none is open.
    pub(super) fn batch(&mut self) -> Result<vk::CommandBuffer, Error> {
        let cb = self.batch_commands;
        if self.batch.is_some() {
            return Ok(cb);
        }
        let timestamps = self.timing.as_ref().and(self.timestamps.as_ref());
        // SAFETY: the batch command buffer is idle (every submission waits for its fence).
        unsafe {
            let d = &self.device;
            begin_one_time(d, cb)?;
            if let Some(t) = timestamps {
                d.cmd_reset_query_pool(cb, t.pool, 0, 2);
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, t.pool, 0);
            }
        }
        // Earlier submissions' writes (finished, but not yet visible to this one) are
        // covered by a barrier before the batch's first command that needs one.
        self.batch = Some(Batch {
            compute_writes: true,
            transfer_writes: true,
            bound: vk::Pipeline::null(),
            timed: timestamps.is_some(),
        });
        Ok(cb)
    }

    /// Makes the open batch's earlier writes visible to what comes next at `stage`.
    pub(super) fn barrier(&mut self, stage: vk::PipelineStageFlags, access: vk::AccessFlags) {
        let Some(batch) = self.batch.as_mut() else {
            return;
        };
        let (mut src_stage, mut src_access) =
            (vk::PipelineStageFlags::empty(), vk::AccessFlags::empty());
        if batch.compute_writes {
            src_stage |= vk::PipelineStageFlags::COMPUTE_SHADER;
            src_access |= vk::AccessFlags::SHADER_WRITE;
        }
        if batch.transfer_writes {
            src_stage |= vk::PipelineStageFlags::TRANSFER;
            src_access |= vk::AccessFlags::TRANSFER_WRITE;
        }
        if src_stage.is_empty() {
            return;
        }
        batch.compute_writes = false;
        batch.transfer_writes = false;
        let barrier = [vk::MemoryBarrier::default()
            .src_access_mask(src_access)
            .dst_access_mask(access)];
        // SAFETY: the batch command buffer is recording (a batch is open).
        unsafe {
            self.device.cmd_pipeline_barrier(
                self.batch_commands,
                src_stage,
                stage,
                vk::DependencyFlags::empty(),
                &barrier,
                &[],
                &[],
            );
        }
    }

    /// Submits the open batch (if any), waits for it, and frees what waited for it.
    pub(super) fn submit_batch(&mut self) -> Result<(), Error> {
        let Some(batch) = self.batch.take() else {
            return Ok(());
        };
        let cb = self.batch_commands;
        if batch.timed {
            if let Some(t) = &self.timestamps {
                // SAFETY: recording; the query was reset at the start of the batch.
                unsafe {
                    self.device.cmd_write_timestamp(
                        cb,
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        t.pool,
                        1,
                    )
                };
            }
        }
        self.lost.check()?;
        // SAFETY: the batch command buffer is recording and ends here.
        unsafe { self.device.end_command_buffer(cb) }
            .map_err(|e| Error::api_call(BACKEND, "vkEndCommandBuffer", e))?;
        let submitted = self.submit(cb);
        if self.lost.is_lost() {
            // The GPU may still be running the batch: nothing it uses may go.
            return submitted;
        }
        // What the batch used can go now (also after a failed submission: the GPU is
        // idle or lost either way).
        self.upload_used = 0;
        // SAFETY: `submit` waited for the fence.
        unsafe {
            for a in std::mem::take(&mut self.garbage) {
                a.free(&self.device);
            }
            self.descriptors.reset(&self.device);
            self.bound_sets.free_stale(&self.device);
        }
        submitted?;
        if let Some(timing) = self.timing.as_mut() {
            match (&self.timestamps, batch.timed) {
                (Some(t), true) => {
                    let mut ticks = [0u64; 2];
                    // SAFETY: both queries were written by the batch that just finished.
                    unsafe {
                        self.device.get_query_pool_results(
                            t.pool,
                            0,
                            &mut ticks,
                            vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                        )
                    }
                    .map_err(|e| Error::api_call(BACKEND, "vkGetQueryPoolResults", e))?;
                    let mask = if t.valid_bits >= 64 {
                        u64::MAX
                    } else {
                        (1u64 << t.valid_bits) - 1
                    };
                    let ticks = (ticks[1] & mask).wrapping_sub(ticks[0] & mask) & mask;
                    timing.ms += ticks as f64 * t.tick_ns / 1e6;
                }
                _ => timing.untimed = true,
            }
        }
        Ok(())
    }

    /// Submits one command buffer and waits for it.
    fn submit(&self, cb: vk::CommandBuffer) -> Result<(), Error> {
        let cbs = [cb];
        let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
        // SAFETY: `cb` is fully recorded; the fence is unsignalled (reset after each wait).
        unsafe {
            let d = &self.device;
            d.queue_submit(self.queue, &submit, self.fence)
                .map_err(|e| self.failed("vkQueueSubmit", e))?;
        }
        self.wait_fence(self.fence)
    }

    /// The error of a failed call: `Error::DeviceLost` (and the device marked lost) for
    /// `VK_ERROR_DEVICE_LOST`, else the call and its result.
    pub(super) fn failed(&self, what: &str, e: vk::Result) -> Error {
        if e == vk::Result::ERROR_DEVICE_LOST {
            return self.lost.set(Error::device_lost(
                BACKEND,
                format!(
                    "{what} returned VK_ERROR_DEVICE_LOST after kernel `{}`",
                    self.last_kernel
                ),
            ));
        }
        Error::api_call(BACKEND, what, e)
    }

    /// Waits for a submitted `fence` and resets it: polls it for up to the device's spin
    /// time first (common/spin.rs), then blocks, for at most the launch timeout in all
    /// (`common::deadline`). A wait that times out marks the device lost: the fence stays
    /// pending, and the GPU may run on forever.
    pub(super) fn wait_fence(&self, fence: vk::Fence) -> Result<(), Error> {
        self.lost.check()?;
        let d = &self.device;
        let started = std::time::Instant::now();
        // SAFETY: the fence belongs to this device and was submitted; reading its status
        // does not change it.
        let polled = poll_for(self.spin, || unsafe { d.get_fence_status(fence) });
        let waited = match polled {
            Ok(true) => Ok(()),
            Ok(false) => {
                let left = self.timeout.map_or(u64::MAX, |t| {
                    u64::try_from(t.saturating_sub(started.elapsed()).as_nanos())
                        .unwrap_or(u64::MAX)
                });
                // SAFETY: as above; the wait only blocks until the fence is signalled or
                // `left` nanoseconds passed.
                unsafe { d.wait_for_fences(&[fence], true, left) }
            }
            Err(e) => Err(e),
        };
        match waited {
            Err(vk::Result::TIMEOUT) => {
                let limit = self.timeout.unwrap_or_default();
                return Err(self
                    .lost
                    .set(Error::timeout(BACKEND, self.last_kernel, limit)));
            }
            Err(e) => return Err(self.failed("waiting for the GPU (vkWaitForFences)", e)),
            Ok(()) => {}
        }
        // SAFETY: the fence is signalled: no submission waits on it.
        unsafe { d.reset_fences(&[fence]) }.map_err(|e| self.failed("vkResetFences", e))
    }
}
