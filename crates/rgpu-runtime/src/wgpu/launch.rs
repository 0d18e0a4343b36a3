//! Launching a kernel: limits, temporaries for host slices, the bind group (kept for the
//! next launch on the same device buffers), the queued dispatch.

use std::sync::Arc;

use super::batch::Dispatch;
use super::memory::WgpuMemory;
use super::{WgpuDevice, BACKEND};
use crate::api::{Api, Arg, MemoryOf};
use crate::common::launch::{bound, host_inputs, host_outputs};
use crate::common::wgpu_device::pop;
use crate::error::Error;
use crate::kernel::{workgroups, Artifact, KernelInfo};

/// The most bind groups kept for device buffers; launches on other buffers beyond it make
/// theirs per launch (as launches with host-slice temporaries do).
const MAX_BIND_GROUPS: usize = 4096;

impl WgpuDevice {
    pub(super) fn launch<B: MemoryOf<WgpuMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        self.gpu.limits.check_launch(BACKEND, kernel, args)?;
        let compiled = self.kernel(kernel, artifacts)?;
        // Host slices go to temporary buffers.
        let temporaries = host_inputs(args)
            .map(|data| data.map(|data| self.upload(data)).transpose())
            .collect::<Result<Vec<Option<WgpuMemory>>, Error>>()?;
        let buffers: Vec<&WgpuMemory> = bound(BACKEND, kernel, args, &temporaries)?;
        // Device buffers only: the bind group made for them is kept and used again.
        let key = temporaries.iter().all(Option::is_none).then(|| {
            (
                Arc::as_ptr(&compiled) as usize,
                buffers.iter().map(|m| m.id).collect(),
            )
        });
        let kept = key
            .as_ref()
            .and_then(|k| self.state().bind_groups.get(k).cloned());
        let bind_group = match kept {
            Some(group) => group,
            None => {
                let group = self.bind_group(kernel, &compiled.layout, &buffers)?;
                if let Some(key) = key {
                    let mut state = self.state();
                    if state.bind_groups.len() < MAX_BIND_GROUPS {
                        state.bound.extend(key.1.iter().copied());
                        state.bind_groups.insert(key, group.clone());
                    }
                }
                group
            }
        };
        let groups = workgroups(
            kernel.mode,
            count,
            kernel.threads,
            self.gpu.limits.max_groups,
        );
        {
            let mut state = self.state();
            if compiled.fault.is_some() {
                state.since_wait.push(kernel);
            }
            state.pending.push(Dispatch {
                kernel: compiled,
                bind_group,
                params: params.to_vec(),
                groups,
            });
        }
        // Host outputs come back before returning (this submits the queued launches).
        let mut reads: Vec<_> = host_outputs(args, &temporaries)
            .into_iter()
            .map(|(t, out)| (t, 0, out))
            .collect();
        if reads.is_empty() && temporaries.iter().any(Option::is_some) {
            // Host inputs only: nothing to read, but the launch must not wait for a later
            // submission to run with its temporaries (which the bind group keeps alive).
            return self.flush();
        }
        if !reads.is_empty() {
            self.download(&mut reads)?;
            self.take_fault()?;
        }
        Ok(())
    }
}

impl WgpuDevice {
    /// A bind group of the kernel's `layout` with binding i = `buffers[i]` (whole buffers).
    fn bind_group(
        &self,
        kernel: &KernelInfo,
        layout: &wgpu::BindGroupLayout,
        buffers: &[&WgpuMemory],
    ) -> Result<wgpu::BindGroup, Error> {
        let buffers: Vec<&wgpu::Buffer> = buffers.iter().map(|m| &m.buffer).collect();
        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let group = self.gpu.bind_group(kernel, layout, &buffers);
        match pop(scope) {
            None => Ok(group),
            Some(e) => Err(Error::launch(
                BACKEND,
                kernel.name,
                format!("binding its buffers: {e}"),
            )),
        }
    }
}
