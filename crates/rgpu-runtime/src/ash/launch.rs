//! Launching a kernel: limits, temporaries for host slices, the descriptor set, and the
//! dispatch recorded into the batch.

use ash::vk;

use super::transfer::{copy_in, copy_out, Target};
use super::{AshDevice, AshMemory, BACKEND};
use crate::api::{Arg, Dst, MemoryOf, Src};
use crate::common::vulkan::padded_bytes;
use crate::error::Error;
use crate::kernel::{workgroups, Artifact, KernelInfo};

impl AshDevice {
    fn check_limits<B: MemoryOf<AshMemory>>(
        &self,
        kernel: &KernelInfo,
        args: &[Arg<'_, B>],
    ) -> Result<(), Error> {
        let l = &self.limits;
        let launch_error = |reason: String| Error::Launch {
            backend: BACKEND,
            kernel: kernel.name,
            reason,
        };
        if kernel.shared_bytes > l.max_shared {
            return Err(launch_error(format!(
                "it declares {} bytes of workgroup memory, the device allows {} \
                 (maxComputeSharedMemorySize): use less",
                kernel.shared_bytes, l.max_shared
            )));
        }
        if kernel.threads > l.max_threads {
            return Err(launch_error(format!(
                "{} threads per workgroup, the device allows {}: use fewer",
                kernel.threads, l.max_threads
            )));
        }
        if kernel.params_size > l.max_push_constants {
            return Err(launch_error(format!(
                "its params are {} bytes, the device's push constants hold {}: pass fewer \
                 scalars",
                kernel.params_size, l.max_push_constants
            )));
        }
        if kernel.buffers.len() as u64 > u64::from(l.max_buffers) {
            return Err(launch_error(format!(
                "{} buffers, the device binds at most {}: pass fewer",
                kernel.buffers.len(),
                l.max_buffers
            )));
        }
        for (info, arg) in kernel.buffers.iter().zip(args) {
            let bytes = arg.bytes();
            if padded_bytes(bytes) > u64::from(l.max_binding) {
                return Err(Error::Argument {
                    kernel: kernel.name,
                    param: info.name,
                    reason: format!(
                        "{bytes} bytes, the device binds at most {} bytes \
                         (maxStorageBufferRange): split the data",
                        l.max_binding
                    ),
                });
            }
        }
        Ok(())
    }

    pub(super) fn launch<B: MemoryOf<AshMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        self.check_limits(kernel, args)?;
        let mut c = self.context();
        let (pipeline, pipeline_layout, set_layout) = {
            let k = c.kernel(kernel, artifacts)?;
            (k.pipeline, k.pipeline_layout, k.set_layout)
        };
        // Host slices go to temporary buffers, freed once the launch ran.
        let mut temporaries: Vec<Option<AshMemory>> = Vec::with_capacity(args.len());
        let result = (|| {
            for arg in args.iter() {
                let data = match arg {
                    Arg::In(Src::Host(data)) => Some(&**data),
                    Arg::InOut(Dst::Host(data)) => Some(&**data),
                    _ => None,
                };
                let Some(data) = data else {
                    temporaries.push(None);
                    continue;
                };
                let memory = c.allocate_storage(padded_bytes(data.len()))?;
                // Kept before the copy: freed below however it ends.
                temporaries.push(Some(memory));
                copy_in(&mut c, &memory, data, Target::New)?;
            }
            let mut buffers = Vec::with_capacity(args.len());
            for (arg, temporary) in args.iter().zip(&temporaries) {
                buffers.push(match (arg, temporary) {
                    (_, Some(t)) => t.buffer,
                    (Arg::In(Src::Buffer(b)), None) => ash_memory(kernel, *b)?.buffer,
                    (Arg::InOut(Dst::Buffer(b)), None) => ash_memory(kernel, &**b)?.buffer,
                    _ => return Err(foreign(kernel)),
                });
            }
            // Device buffers only: the set made for them is kept and bound again.
            let set = if temporaries.iter().all(Option::is_none) {
                c.bound_set(kernel, set_layout, &buffers)?
            } else {
                c.descriptor_set(kernel, set_layout, &buffers)?
            };
            let groups = workgroups(kernel.mode, count, kernel.threads, self.limits.max_groups);
            let cb = c.batch()?;
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
            let mut reads: Vec<(&AshMemory, &mut [u8])> = args
                .iter_mut()
                .zip(&temporaries)
                .filter_map(|(arg, temporary)| match (arg, temporary) {
                    (Arg::InOut(Dst::Host(out)), Some(t)) => Some((t, &mut **out)),
                    _ => None,
                })
                .collect();
            if !reads.is_empty() {
                copy_out(&mut c, &mut reads)
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

fn foreign(kernel: &KernelInfo) -> Error {
    Error::Launch {
        backend: BACKEND,
        kernel: kernel.name,
        reason: "a buffer of another backend reached ash: report this as an rgpu bug".into(),
    }
}

fn ash_memory<'a, B: MemoryOf<AshMemory>>(
    kernel: &KernelInfo,
    buffer: &'a B,
) -> Result<&'a AshMemory, Error> {
    buffer.memory().ok_or_else(|| foreign(kernel))
}
