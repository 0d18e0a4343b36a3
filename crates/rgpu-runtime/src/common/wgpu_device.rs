//! What the wgpu and webgpu backends share: both drive a `wgpu::Device` (wgpu's native
//! backends, or the browser's WebGPU through wgpu's), so opening it, its limits, buffers,
//! error scopes, bind group layouts and pipelines are written once, here. They differ in how
//! the SPIR-V or WGSL reaches the device, where the params go (`Params`), and in how they
//! batch launches and transfers, which stays in their folders.

use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::backend::Backend;
use crate::common::deadline::Lost;
use crate::common::launch::Limits;
use crate::common::wait::block_on;
use crate::devices::{DeviceInfo, DeviceType};
use crate::error::Error;
use crate::kernel::{Access, BufferInfo, KernelInfo};

/// Where a kernel's params block is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Params {
    /// Push constants ("immediates" in wgpu 30): Vulkan, Metal, DX12.
    Immediates,
    /// A read-only storage buffer at the binding after the kernel's buffers: WebGPU has no
    /// push constants.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    Binding,
}

/// A wgpu device and queue, with the limits launches are checked against and the errors
/// wgpu reported outside an error scope.
pub(crate) struct Gpu {
    pub(crate) backend: Backend,
    /// (Both never dropped once the device is lost: wgpu's queue waits for the GPU to be
    /// idle when it drops, forever after a kernel that never ends.)
    pub(crate) device: ManuallyDrop<wgpu::Device>,
    pub(crate) queue: ManuallyDrop<wgpu::Queue>,
    pub(crate) limits: Limits,
    params: Params,
    /// Errors reported outside an error scope (wgpu's default handler would panic).
    uncaptured: Arc<Mutex<Vec<String>>>,
    /// What `device.lost` said, once wgpu lost the device.
    lost_reason: Arc<Mutex<Option<String>>>,
    /// Set once a wait timed out or the device was lost: every later call returns it.
    pub(crate) lost: Lost,
    /// How long a wait may block (`common::deadline`); `None`: no limit.
    pub(crate) timeout: Option<Duration>,
    /// The kernel launched last, which a timed-out wait names.
    last_kernel: Mutex<&'static str>,
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if self.lost.is_lost() {
            // Leaked: the GPU may still run a kernel, and the queue would wait for it.
            return;
        }
        // SAFETY: dropped once, here, and not used after.
        unsafe {
            ManuallyDrop::drop(&mut self.device);
            ManuallyDrop::drop(&mut self.queue);
        }
    }
}

/// A kernel's pipeline and the layout its bind groups follow.
pub(crate) struct Pipeline {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
    /// A checked build's kernel: the bind group of its module's fault record
    /// (`common::fault`), set `fault::SET` of every launch.
    pub(crate) fault: Option<wgpu::BindGroup>,
}

/// An adapter as `Device::list` shows it (wgpu tells no memory size): device `index` of
/// `backend`, unusable without push constants where the params go there.
pub(crate) fn device_info(
    backend: Backend,
    index: usize,
    adapter: &wgpu::Adapter,
    params: Params,
) -> DeviceInfo {
    let info = adapter.get_info();
    let kind = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => DeviceType::DiscreteGpu,
        wgpu::DeviceType::IntegratedGpu => DeviceType::IntegratedGpu,
        wgpu::DeviceType::VirtualGpu => DeviceType::VirtualGpu,
        wgpu::DeviceType::Cpu => DeviceType::Cpu,
        wgpu::DeviceType::Other => DeviceType::Other,
    };
    let immediates = adapter.features().contains(wgpu::Features::IMMEDIATES);
    DeviceInfo {
        bus: Some(info.device_pci_bus_id.clone()).filter(|b| !b.is_empty()),
        unusable: (params == Params::Immediates && !immediates)
            .then(|| "no push constants (wgpu's IMMEDIATES feature)".to_string()),
        ..DeviceInfo::new(backend, index, &info.name, kind)
    }
}

/// wgpu's multi-line error reports as one line: "Validation Error: Caused by: ...".
pub(crate) fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

/// Pops an error scope; its error, if any, as one line of text.
pub(crate) fn pop(scope: wgpu::ErrorScopeGuard) -> Option<String> {
    block_on(scope.pop()).map(|e| one_line(&e.to_string()))
}

/// The limits launches are checked against, from wgpu's.
fn limits_of(l: &wgpu::Limits, params: Params) -> Limits {
    Limits {
        max_shared: l.max_compute_workgroup_storage_size,
        max_threads: l
            .max_compute_invocations_per_workgroup
            .min(l.max_compute_workgroup_size_x),
        max_params: (params == Params::Immediates).then_some(l.max_immediate_size),
        max_buffers: match params {
            Params::Immediates => l.max_storage_buffers_per_shader_stage,
            Params::Binding => l.max_storage_buffers_per_shader_stage.saturating_sub(1),
        },
        max_binding: l.max_storage_buffer_binding_size,
        max_groups: l.max_compute_workgroups_per_dimension,
        max_buffer: l.max_buffer_size,
    }
}

impl Gpu {
    /// A device of `adapter` (named `name` in messages) with all the adapter's limits and
    /// `features`.
    pub(crate) fn request(
        backend: Backend,
        adapter: &wgpu::Adapter,
        name: &str,
        features: wgpu::Features,
        params: Params,
    ) -> Result<Self, Error> {
        let limits = adapter.limits();
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rgpu"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| {
            Error::unavailable(
                backend,
                format!("adapter {name} refused a device ({e}): update the driver"),
            )
        })?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(one_line(&e.to_string()));
        }));
        let lost_reason = Arc::new(Mutex::new(None));
        let lost_sink = Arc::clone(&lost_reason);
        device.set_device_lost_callback(move |reason, message| {
            // `Destroyed` is the device being dropped, not a fault.
            if reason != wgpu::DeviceLostReason::Destroyed {
                *lost_sink.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some(format!("{reason:?}: {}", one_line(&message)));
            }
        });
        Ok(Self {
            backend,
            device: ManuallyDrop::new(device),
            queue: ManuallyDrop::new(queue),
            limits: limits_of(&limits, params),
            params,
            uncaptured,
            lost_reason,
            lost: Lost::default(),
            timeout: None,
            last_kernel: Mutex::new("(none launched yet)"),
        })
    }

    /// Records the kernel a launch queued, for a timed-out wait to name.
    pub(crate) fn launched(&self, kernel: &'static str) {
        *self.last_kernel.lock().unwrap_or_else(|p| p.into_inner()) = kernel;
    }

    /// The kernel launched last.
    pub(crate) fn last_launched(&self) -> &'static str {
        *self.last_kernel.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `Err` once the device is lost (a wait timed out, wgpu lost it): checked first by
    /// every call.
    pub(crate) fn usable(&self) -> Result<(), Error> {
        self.lost.check()?;
        if let Some(reason) = self
            .lost_reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Err(self.lost.set(Error::device_lost(self.backend, reason)));
        }
        Ok(())
    }

    /// Waits for `submission` (every submission: `None`) for at most the launch timeout;
    /// past it the device is lost (`Error::Timeout`, naming the kernel launched last).
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn wait_for(&self, submission: Option<wgpu::SubmissionIndex>) -> Result<(), Error> {
        self.usable()?;
        let polled = self.device.poll(wgpu::PollType::Wait {
            submission_index: submission,
            timeout: self.timeout,
        });
        match polled {
            Ok(_) => self.usable(),
            Err(wgpu::PollError::Timeout) => Err(self.lost.set(Error::timeout(
                self.backend,
                self.last_launched(),
                self.timeout.unwrap_or_default(),
            ))),
            Err(e) => Err(self.explain("waiting for the GPU", e)),
        }
    }

    /// The error of a failed call `what`: the device's loss or the errors wgpu reported
    /// outside a scope, where there are any (they say why), else the call's own error.
    pub(crate) fn explain(&self, what: &str, error: impl std::fmt::Display) -> Error {
        match self.reported() {
            Err(e) => e,
            Ok(()) => Error::api_call(self.backend, what, error),
        }
    }

    /// The errors wgpu reported outside a scope since the last call, joined.
    pub(crate) fn uncaptured(&self) -> Option<String> {
        let mut errors = self.uncaptured.lock().unwrap_or_else(|e| e.into_inner());
        (!errors.is_empty()).then(|| errors.drain(..).collect::<Vec<_>>().join("; "))
    }

    /// `Error::Transfer` when wgpu reported an error outside a scope since the last check.
    pub(crate) fn reported(&self) -> Result<(), Error> {
        self.usable()?;
        match self.uncaptured() {
            None => Ok(()),
            Some(e) => Err(Error::gpu_reported(self.backend, &e)),
        }
    }

    /// A new buffer of `bytes` (whole words), inside an out-of-memory scope the caller
    /// pushed and pops.
    pub(crate) fn buffer_in_scope(
        &self,
        bytes: usize,
        usage: wgpu::BufferUsages,
        mapped: bool,
    ) -> Result<wgpu::Buffer, Error> {
        let size = self.limits.check_buffer(self.backend, bytes)?;
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rgpu buffer"),
            size,
            usage,
            mapped_at_creation: mapped,
        }))
    }

    /// A new buffer of `bytes` (whole words); `Error::OutOfMemory` when the device has no
    /// room for it.
    pub(crate) fn buffer(
        &self,
        bytes: usize,
        usage: wgpu::BufferUsages,
        mapped: bool,
    ) -> Result<wgpu::Buffer, Error> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.buffer_in_scope(bytes, usage, mapped);
        match (pop(scope), buffer) {
            (None, buffer) => buffer,
            (Some(reason), _) => Err(Error::out_of_memory(self.backend, bytes as u64, reason)),
        }
    }

    /// A new storage buffer of `bytes`: what a `Buffer`'s memory is.
    pub(crate) fn storage(&self, bytes: usize, mapped: bool) -> Result<wgpu::Buffer, Error> {
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        self.buffer(bytes, usage, mapped)
    }

    /// A new storage buffer holding `data`, written while mapped at creation (no queue).
    pub(crate) fn storage_with(&self, data: &[u8]) -> Result<wgpu::Buffer, Error> {
        let buffer = self.storage(data.len(), true)?;
        {
            let mut view = buffer
                .get_mapped_range_mut(..)
                .map_err(|e| Error::api_call(self.backend, "writing a new buffer", e))?;
            view.slice(..data.len()).copy_from_slice(data);
        }
        buffer.unmap();
        Ok(buffer)
    }

    /// `Error::Launch` for a module the device refused.
    pub(crate) fn module_rejected(&self, kernel: &KernelInfo, what: &str, e: &str) -> Error {
        let backend = self.backend;
        Error::launch(
            backend,
            kernel.name,
            format!("{backend} rejected the {what} module ({e}): rebuild it with rgpu build --backend {backend}"),
        )
    }

    /// The kernel's pipeline from `module`: buffer i at binding i, read-only as
    /// `read_only(i, buffer)` says (the access the module declares, which wgpu and WebGPU
    /// require exactly), and the params where `Params` puts them.
    pub(crate) fn pipeline(
        &self,
        kernel: &'static KernelInfo,
        module: &wgpu::ShaderModule,
        read_only: impl Fn(u32, &BufferInfo) -> Option<bool>,
        fault: Option<wgpu::Buffer>,
    ) -> Result<Pipeline, Error> {
        let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let mut entries: Vec<wgpu::BindGroupLayoutEntry> = (0u32..)
            .zip(kernel.buffers)
            .map(|(i, b)| storage(i, read_only(i, b).unwrap_or(b.access == Access::Read)))
            .collect();
        let immediate_size = match self.params {
            Params::Immediates => kernel.params_size.next_multiple_of(4),
            Params::Binding => {
                entries.push(storage(kernel.buffers.len() as u32, true));
                0
            }
        };
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(kernel.name),
                entries: &entries,
            });
        // A checked build's kernel: its fault record in a set of its own.
        let fault = fault.map(|record| {
            let layout = self
                .device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some("rgpu fault record"),
                    entries: &[storage(crate::common::fault::BINDING, false)],
                });
            let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("rgpu fault record"),
                layout: &layout,
                entries: &[wgpu::BindGroupEntry {
                    binding: crate::common::fault::BINDING,
                    resource: record.as_entire_binding(),
                }],
            });
            (layout, group)
        });
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(kernel.name),
                bind_group_layouts: &[Some(&layout), fault.as_ref().map(|(l, _)| l)],
                immediate_size,
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(kernel.name),
                layout: Some(&pipeline_layout),
                module,
                entry_point: Some(kernel.name),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(e) = pop(scope) {
            return Err(Error::launch(
                self.backend,
                kernel.name,
                format!(
                    "{} rejected its pipeline ({e}): check that the kernel and its launcher \
                     come from the same build",
                    self.backend
                ),
            ));
        }
        Ok(Pipeline {
            pipeline,
            layout,
            fault: fault.map(|(_, group)| group),
        })
    }

    /// A bind group of `buffers` (binding i = `buffers[i]`) for a kernel's `layout`.
    pub(crate) fn bind_group(
        &self,
        kernel: &KernelInfo,
        layout: &wgpu::BindGroupLayout,
        buffers: &[&wgpu::Buffer],
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = (0u32..)
            .zip(buffers)
            .map(|(binding, b)| wgpu::BindGroupEntry {
                binding,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name),
            layout,
            entries: &entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_one_line() {
        assert_eq!(
            one_line("Validation Error\n\nCaused by\n    In a set_bind_group command\n"),
            "Validation Error: Caused by: In a set_bind_group command"
        );
    }

    #[test]
    fn webgpu_keeps_a_storage_buffer_for_the_params() {
        let wgpu_limits = wgpu::Limits::default();
        let native = limits_of(&wgpu_limits, Params::Immediates);
        let web = limits_of(&wgpu_limits, Params::Binding);
        assert_eq!(native.max_buffers, web.max_buffers + 1);
        assert_eq!(native.max_params, Some(wgpu_limits.max_immediate_size));
        assert_eq!(web.max_params, None);
    }
}
