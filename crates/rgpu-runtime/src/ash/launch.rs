//! Launching a kernel: limits, temporaries for host slices, the descriptor set, and the
//! dispatch recorded into the batch.

use ash::vk;

use super::transfer::{copy_in, copy_out, Target};
use super::{AshDevice, AshMemory, BACKEND};
use crate::api::{Arg, MemoryOf};
use crate::common::fault;
use crate::common::launch::{bound, host_inputs, host_outputs};
use crate::error::Error;
use crate::kernel::{workgroups, Artifact, KernelInfo};

impl AshDevice {
    pub(super) fn launch<B: MemoryOf<AshMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        self.limits.check_launch(BACKEND, kernel, args)?;
        let mut c = self.usable()?;
        let (pipeline, pipeline_layout, set_layout, fault) = {
            let k = c.kernel(kernel, artifacts)?;
            (k.pipeline, k.pipeline_layout, k.set_layout, k.fault)
        };
        // Host slices go to temporary buffers, freed once the launch ran.
        let mut temporaries: Vec<Option<AshMemory>> = Vec::with_capacity(args.len());
        let result = (|| {
            for data in host_inputs(args) {
                let Some(data) = data else {
                    temporaries.push(None);
                    continue;
                };
                let size = self.limits.check_buffer(BACKEND, data.len())?;
                let memory = c.allocate_storage(size)?;
                // Kept before the copy: freed below however it ends.
                temporaries.push(Some(memory));
                copy_in(&mut c, &memory, 0, data, Target::New)?;
            }
            let buffers: Vec<vk::Buffer> = bound(BACKEND, kernel, args, &temporaries)?
                .into_iter()
                .map(|m| m.buffer)
                .collect();
            // Device buffers only: the set made for them is kept and bound again.
            let set = if temporaries.iter().all(Option::is_none) {
                c.bound_set(kernel, set_layout, &buffers)?
            } else {
                c.descriptor_set(kernel, set_layout, &buffers)?
            };
            if fault.is_some() {
                c.since_wait.push(kernel);
            }
            let groups = workgroups(kernel.mode, count, kernel.threads, self.limits.max_groups);
            let cb = c.batch()?;
            c.last_kernel = kernel.name;
            let rw = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
            c.barrier(vk::PipelineStageFlags::COMPUTE_SHADER, rw);
            let batch = c.batch.as_mut().expect("c.batch() opened it");
            let bind = batch.bound != pipeline;
            batch.bound = pipeline;
            batch.compute_writes = true;
            // SAFETY: the batch is recording; the pipeline, its layout and the set belong
            // to this device, and the set's buffers live until the batch ran (temporaries
            // are freed after it, dropped buffers wait for it).
            unsafe {
                let d = &c.device;
                if bind {
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
                }
                d.cmd_bind_descriptor_sets(
                    cb,
                    vk::PipelineBindPoint::COMPUTE,
                    pipeline_layout,
                    0,
                    &[set],
                    &[],
                );
                if let Some(record) = fault {
                    d.cmd_bind_descriptor_sets(
                        cb,
                        vk::PipelineBindPoint::COMPUTE,
                        pipeline_layout,
                        fault::SET,
                        &[record],
                        &[],
                    );
                }
                if !params.is_empty() {
                    d.cmd_push_constants(
                        cb,
                        pipeline_layout,
                        vk::ShaderStageFlags::COMPUTE,
                        0,
                        params,
                    );
                }
                d.cmd_dispatch(cb, groups, 1, 1);
            }
            // Host outputs come back before returning; host inputs are submitted too.
            let mut reads: Vec<_> = host_outputs(args, &temporaries)
                .into_iter()
                .map(|(t, out)| (t, 0, out))
                .collect();
            if !reads.is_empty() {
                copy_out(&mut c, &mut reads)?;
                c.take_fault()
            } else if temporaries.iter().any(Option::is_some) {
                c.submit_batch()
            } else {
                Ok(())
            }
        })();
        for t in temporaries.into_iter().flatten() {
            c.discard(t);
        }
        result
    }
}
