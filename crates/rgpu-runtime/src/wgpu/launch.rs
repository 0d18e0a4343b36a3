//! Launching a kernel: limits, temporaries for host slices, the bind group (kept for the
//! next launch on the same device buffers), the queued dispatch.

use std::sync::Arc;

use super::batch::Dispatch;
use super::memory::WgpuMemory;
use super::shader::Kernel;
use super::{pop, WgpuDevice, BACKEND};
use crate::api::{Api, Arg, Dst, MemoryOf, Src};
use crate::common::vulkan::padded_bytes;
use crate::error::Error;
use crate::kernel::{workgroups, Artifact, KernelInfo};

/// The most bind groups kept for device buffers; launches on other buffers beyond it make
/// theirs per launch (as launches with host-slice temporaries do).
const MAX_BIND_GROUPS: usize = 4096;

impl WgpuDevice {
    /// The limits a launch must fit, checked before wgpu would reject it.
    fn check_limits<B: MemoryOf<WgpuMemory>>(
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
        if kernel.shared_bytes > l.max_compute_workgroup_storage_size {
            return Err(launch_error(format!(
                "it declares {} bytes of workgroup memory, the device allows {}: use less",
                kernel.shared_bytes, l.max_compute_workgroup_storage_size
            )));
        }
        let threads = l
            .max_compute_invocations_per_workgroup
            .min(l.max_compute_workgroup_size_x);
        if kernel.threads > threads {
            return Err(launch_error(format!(
                "{} threads per workgroup, the device allows {threads}: use fewer",
                kernel.threads
            )));
        }
        if kernel.params_size > l.max_immediate_size {
            return Err(launch_error(format!(
                "its params are {} bytes, the device's push constants hold {}: pass fewer scalars",
                kernel.params_size, l.max_immediate_size
            )));
        }
        if kernel.buffers.len() as u32 > l.max_storage_buffers_per_shader_stage {
            return Err(launch_error(format!(
                "{} buffers, the device binds at most {}: pass fewer",
                kernel.buffers.len(),
                l.max_storage_buffers_per_shader_stage
            )));
        }
        for (info, arg) in kernel.buffers.iter().zip(args) {
            let bytes = arg.bytes();
            if padded_bytes(bytes) > l.max_storage_buffer_binding_size {
                return Err(Error::Argument {
                    kernel: kernel.name,
                    param: info.name,
                    reason: format!(
                        "{bytes} bytes, the device binds at most {} bytes: split the data",
                        l.max_storage_buffer_binding_size
                    ),
                });
            }
        }
        Ok(())
    }

    pub(super) fn launch<B: MemoryOf<WgpuMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        let compiled = self.kernel(kernel, artifacts)?;
        self.check_limits(kernel, args)?;
        // Host slices go to temporary buffers.
        let mut temporaries: Vec<Option<WgpuMemory>> = Vec::with_capacity(args.len());
        for arg in args.iter() {
            temporaries.push(match arg {
                Arg::In(Src::Host(data)) => Some(self.upload(data)?),
                Arg::InOut(Dst::Host(data)) => Some(self.upload(data)?),
                _ => None,
            });
        }
        let mut buffers: Vec<&WgpuMemory> = Vec::with_capacity(args.len());
        for (arg, temporary) in args.iter().zip(&temporaries) {
            buffers.push(match (arg, temporary) {
                (_, Some(t)) => t,
                (Arg::In(Src::Buffer(b)), None) => wgpu_memory(kernel, *b)?,
                (Arg::InOut(Dst::Buffer(b)), None) => wgpu_memory(kernel, &**b)?,
                _ => return Err(foreign(kernel)),
            });
        }
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
                let group = self.bind_group(kernel, &compiled, &buffers)?;
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
            self.limits.max_compute_workgroups_per_dimension,
        );
        self.state().pending.push(Dispatch {
            kernel: compiled,
            bind_group,
            params: params.to_vec(),
            groups,
        });
        // Host outputs come back before returning (this submits the queued launches).
        let mut reads: Vec<(&WgpuMemory, &mut [u8])> = args
            .iter_mut()
            .zip(&temporaries)
            .filter_map(|(arg, temporary)| match (arg, temporary) {
                (Arg::InOut(Dst::Host(out)), Some(t)) => Some((t, &mut **out)),
                _ => None,
            })
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

impl WgpuDevice {
    /// A bind group of the kernel's layout with binding i = `buffers[i]` (whole buffers).
    fn bind_group(
        &self,
        kernel: &KernelInfo,
        compiled: &Kernel,
        buffers: &[&WgpuMemory],
    ) -> Result<wgpu::BindGroup, Error> {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, m)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: m.buffer.as_entire_binding(),
            })
            .collect();
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name),
            layout: &compiled.layout,
            entries: &entries,
        });
        match pop(scope) {
            None => Ok(bind_group),
            Some(e) => Err(Error::Launch {
                backend: BACKEND,
                kernel: kernel.name,
                reason: format!("binding its buffers: {e}"),
            }),
        }
    }
}

fn foreign(kernel: &KernelInfo) -> Error {
    Error::Launch {
        backend: BACKEND,
        kernel: kernel.name,
        reason: "a buffer of another backend reached wgpu: report this as an rgpu bug".into(),
    }
}

fn wgpu_memory<'a, B: MemoryOf<WgpuMemory>>(
    kernel: &KernelInfo,
    buffer: &'a B,
) -> Result<&'a WgpuMemory, Error> {
    buffer.memory().ok_or_else(|| foreign(kernel))
}
