//! The queued launches: recorded together into one compute pass of one command buffer
//! when something needs their results, with timestamps around it inside `Device::timed`.

use std::sync::{mpsc, Arc};

use super::shader::Kernel;
use super::{WgpuDevice, BACKEND};
use crate::common::fault;
use crate::common::wgpu_device::pop;
use crate::error::Error;

/// One queued launch.
pub(super) struct Dispatch {
    pub(super) kernel: Arc<Kernel>,
    pub(super) bind_group: wgpu::BindGroup,
    pub(super) params: Vec<u8>,
    pub(super) groups: u32,
}

#[derive(Default)]
pub(super) struct Timing {
    pub(super) ms: f64,
    /// A batch ran without timestamps (the device has none).
    pub(super) untimed: bool,
}

/// A buffer copy recorded after the batch's launches.
pub(super) struct Region<'a> {
    pub(super) source: &'a wgpu::Buffer,
    pub(super) source_offset: u64,
    pub(super) destination: &'a wgpu::Buffer,
    pub(super) destination_offset: u64,
    pub(super) size: u64,
}

/// Timestamps around one batch.
struct Queries {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

impl WgpuDevice {
    /// Records the queued dispatches (one compute pass) and `copies` (after it) into one
    /// command buffer and submits it (returning its index, `None` when there was nothing
    /// to submit); inside `Device::timed`, waits for it and adds its device time.
    pub(super) fn submit(
        &self,
        copies: &[Region<'_>],
    ) -> Result<Option<wgpu::SubmissionIndex>, Error> {
        let mut state = self.state();
        let dispatches = std::mem::take(&mut state.pending);
        if dispatches.is_empty() && copies.is_empty() {
            return Ok(None);
        }
        let timing = state.timing.is_some() && !dispatches.is_empty();
        let queries = (timing && self.timestamps).then(|| self.timestamp_queries());
        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("rgpu launches"),
            });
        if !dispatches.is_empty() {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rgpu launches"),
                timestamp_writes: queries.as_ref().map(|q| wgpu::ComputePassTimestampWrites {
                    query_set: &q.set,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            });
            let mut bound: Option<&Arc<Kernel>> = None;
            for d in &dispatches {
                if !bound.is_some_and(|k| Arc::ptr_eq(k, &d.kernel)) {
                    pass.set_pipeline(&d.kernel.pipeline);
                    if let Some(fault) = &d.kernel.fault {
                        pass.set_bind_group(fault::SET, fault, &[]);
                    }
                    bound = Some(&d.kernel);
                }
                pass.set_bind_group(0, &d.bind_group, &[]);
                pass.set_immediates(0, &d.params);
                pass.dispatch_workgroups(d.groups, 1, 1);
            }
        }
        for c in copies {
            encoder.copy_buffer_to_buffer(
                c.source,
                c.source_offset,
                c.destination,
                c.destination_offset,
                c.size,
            );
        }
        if let Some(q) = &queries {
            encoder.resolve_query_set(&q.set, 0..2, &q.resolve, 0);
            encoder.copy_buffer_to_buffer(&q.resolve, 0, &q.read, 0, 16);
        }
        let index = self.gpu.queue.submit([encoder.finish()]);
        if let Some(e) = pop(scope) {
            return Err(Error::api_call(BACKEND, "submitting launches", e));
        }
        if timing {
            let timing = state.timing.as_mut().expect("timing checked above");
            match queries {
                Some(q) => {
                    drop(state);
                    let ms = self.read_timestamps(&q)?;
                    if let Some(t) = self.state().timing.as_mut() {
                        t.ms += ms;
                    }
                }
                None => timing.untimed = true,
            }
        }
        Ok(Some(index))
    }

    fn timestamp_queries(&self) -> Queries {
        Queries {
            set: self.gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("rgpu timing"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolve: self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rgpu timing"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            }),
            read: self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rgpu timing readback"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        }
    }

    /// Waits for the batch and returns the time between its two timestamps, in ms.
    fn read_timestamps(&self, q: &Queries) -> Result<f64, Error> {
        let (sender, receiver) = mpsc::channel();
        q.read.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = sender.send(r);
        });
        self.wait()?;
        receiver
            .recv()
            .map_err(|_| Error::transfer(BACKEND, "the timestamp readback never finished"))?
            .map_err(|e| self.gpu.explain("mapping the timestamps", e))?;
        let ticks = {
            let view = q
                .read
                .get_mapped_range(..)
                .map_err(|e| Error::api_call(BACKEND, "reading the timestamps", e))?;
            let mut ticks = [0u64; 2];
            for (t, bytes) in ticks.iter_mut().zip(view.chunks_exact(8)) {
                *t = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
            }
            ticks
        };
        q.read.unmap();
        let ns = ticks[1].saturating_sub(ticks[0]) as f64
            * f64::from(self.gpu.queue.get_timestamp_period());
        Ok(ns / 1e6)
    }
}
