//! Launching a kernel: limits, temporaries for host slices, the bind group, the queued
//! dispatch.

use super::batch::Dispatch;
use super::memory::WgpuMemory;
use super::{WgpuDevice, BACKEND};
use crate::api::{Api, Arg, MemoryOf};
use crate::common::launch::{bound, host_inputs, host_outputs};
use crate::common::wgpu_device::pop;
use crate::error::Error;
use crate::kernel::{workgroups, Artifact, KernelInfo};

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
        let buffers: Vec<&wgpu::Buffer> = bound(BACKEND, kernel, args, &temporaries)?
            .into_iter()
            .map(|m| &m.buffer)
            .collect();
        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let bind_group = self.gpu.bind_group(kernel, &compiled.layout, &buffers);
        if let Some(e) = pop(scope) {
            return Err(Error::launch(
                BACKEND,
                kernel.name,
                format!("binding its buffers: {e}"),
            ));
        }
        let groups = workgroups(
            kernel.mode,
            count,
            kernel.threads,
            self.gpu.limits.max_groups,
        );
        self.state().pending.push(Dispatch {
            kernel: compiled,
            bind_group,
            params: params.to_vec(),
            groups,
        });
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
        }
        Ok(())
    }
}
