//! The wgpu backend: the embedded SPIR-V on Vulkan (or Metal/DX12 through naga).
//!
//! Launches on device buffers are queued as dispatches and recorded together, in one
//! compute pass of one command buffer, when something needs their results (a read, a
//! write, `sync`, a host-slice launch, dropping the `Device`). Params travel as push
//! constants ("immediates" in wgpu 30).
//!
//! The SPIR-V reaches the driver one of two ways (`RGPU_WGPU_SHADER`):
//! - `passthrough` (the default where the adapter has `PASSTHROUGH_SHADERS`): the module
//!   goes to the Vulkan driver as it is, the same bytes the ash backend uses;
//! - `naga`: wgpu parses it with naga's SPIR-V front end and writes it out again, without
//!   runtime bounds checks (the kernels check their indices themselves).

mod batch;
mod launch;
mod memory;
mod shader;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::api::{cpu_device_reason, Api, Arg, CpuDevices, MemoryOf};
use crate::backend::Backend;
use crate::common::spirv::ModuleKey;
use crate::common::vulkan::DeviceRank;
use crate::common::wait::{poll_for, spin_time};
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};
use crate::stats::{DeviceFacts, KernelStats};
use batch::{Dispatch, Timing};
use memory::WgpuMemory;
use shader::{shader_path, Kernel, ShaderPath, SHADER_VAR};

const BACKEND: Backend = Backend::Wgpu;

/// Features used when the adapter has them: kernels may need them on the naga path.
const OPTIONAL_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY
    .union(wgpu::Features::SUBGROUP)
    .union(wgpu::Features::SHADER_INT64)
    .union(wgpu::Features::SHADER_F64)
    .union(wgpu::Features::SHADER_F16);

fn unavailable(reason: impl Into<String>) -> Error {
    Error::Unavailable {
        backend: BACKEND,
        reason: reason.into(),
    }
}

fn transfer(reason: impl Into<String>) -> Error {
    Error::Transfer {
        backend: BACKEND,
        reason: reason.into(),
    }
}

/// Bind groups of launches on device buffers, kept while the buffers live: by the kernel
/// (its address: kernels are kept for the device's life) and the buffers' ids.
type BindKey = (usize, Vec<u64>);

#[derive(Default)]
struct State {
    modules: HashMap<ModuleKey, shader::Module>,
    kernels: HashMap<(ModuleKey, &'static str), Arc<Kernel>>,
    bind_groups: HashMap<BindKey, wgpu::BindGroup>,
    /// The ids of every buffer a kept bind group holds.
    bound: HashSet<u64>,
    pending: Vec<Dispatch>,
    /// Inside `Device::timed`: the device time of the batches submitted so far.
    timing: Option<Timing>,
}

pub(crate) struct WgpuDevice {
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    path: ShaderPath,
    /// How long a wait polls before blocking (`common::wait`; 0 on a CPU device).
    spin: Duration,
    timestamps: bool,
    description: String,
    facts: DeviceFacts,
    /// Errors wgpu reported outside an error scope (its default handler would panic).
    uncaptured: Arc<Mutex<Vec<String>>>,
    state: Mutex<State>,
    /// Staging buffers of large transfers (locked before `state` when both are).
    staging: Mutex<memory::Staging>,
}

fn rank(device_type: wgpu::DeviceType) -> DeviceRank {
    match device_type {
        wgpu::DeviceType::DiscreteGpu => DeviceRank::Discrete,
        wgpu::DeviceType::IntegratedGpu => DeviceRank::Integrated,
        wgpu::DeviceType::VirtualGpu => DeviceRank::Virtual,
        wgpu::DeviceType::Other => DeviceRank::Other,
        wgpu::DeviceType::Cpu => DeviceRank::Cpu,
    }
}

/// Pops an error scope; its error, if any, as one line of text.
fn pop(scope: wgpu::ErrorScopeGuard) -> Option<String> {
    pollster::block_on(scope.pop()).map(|e| one_line(&e.to_string()))
}

/// wgpu's multi-line error reports as one line: "Validation Error: Caused by: ...".
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

impl Api for WgpuDevice {
    const BACKEND: Backend = BACKEND;
    type Memory = WgpuMemory;

    fn open(cpu_devices: CpuDevices) -> Result<Self, Error> {
        crate::common::vulkan::ensure_runtime_dir();
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        // Vulkan first (SPIR-V passes through), then the best device type.
        let adapter = adapters
            .into_iter()
            .filter(|a| a.features().contains(wgpu::Features::IMMEDIATES))
            .min_by_key(|a| {
                let info = a.get_info();
                (
                    info.backend != wgpu::Backend::Vulkan,
                    rank(info.device_type),
                )
            })
            .ok_or_else(|| {
                unavailable(
                    "no Vulkan, Metal or DX12 adapter with push constants (wgpu IMMEDIATES): \
                     install a GPU driver with Vulkan support",
                )
            })?;
        let info = adapter.get_info();
        if cpu_devices == CpuDevices::Skip && info.device_type == wgpu::DeviceType::Cpu {
            return Err(unavailable(cpu_device_reason(BACKEND, &info.name)));
        }
        // Passthrough hands SPIR-V to the driver: Vulkan only.
        let can_pass = info.backend == wgpu::Backend::Vulkan
            && adapter
                .features()
                .contains(wgpu::Features::PASSTHROUGH_SHADERS);
        let path = shader_path(std::env::var(SHADER_VAR).ok().as_deref(), can_pass)?;
        let spin = spin_time(info.device_type == wgpu::DeviceType::Cpu)?;
        let mut features = wgpu::Features::IMMEDIATES | (adapter.features() & OPTIONAL_FEATURES);
        if path == ShaderPath::Passthrough {
            features |= wgpu::Features::PASSTHROUGH_SHADERS;
        }
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rgpu"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| {
            unavailable(format!(
                "adapter {} refused a device ({e}): update the driver",
                info.name
            ))
        })?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(one_line(&e.to_string()));
        }));
        let description = format!(
            "{} ({:?} {}, driver {} {}, SPIR-V {})",
            info.name,
            info.backend,
            rank(info.device_type).name(),
            info.driver,
            info.driver_info,
            match path {
                ShaderPath::Passthrough => "passthrough",
                ShaderPath::Naga => "via naga",
            }
        );
        let facts = DeviceFacts::of_adapter(
            BACKEND,
            &info,
            "wgpu's AdapterInfo (subgroup_min_size, subgroup_max_size)",
        );
        Ok(Self {
            facts,
            device,
            queue,
            limits,
            path,
            spin,
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            description,
            uncaptured,
            state: Mutex::default(),
            staging: Mutex::default(),
        })
    }

    fn description(&self) -> String {
        self.description.clone()
    }

    fn facts(&self) -> DeviceFacts {
        self.facts.clone()
    }

    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        Err(Error::NoKernelStats {
            backend: BACKEND,
            reason: "wgpu 30 has no API for a pipeline's compiled statistics (registers, \
                     spills): use the ash backend (VK_KHR_pipeline_executable_properties) or cuda"
                .into(),
        })
    }

    // Buffers are made and copied in memory.rs, launches recorded in launch.rs.
    fn upload(&self, data: &[u8], _: usize) -> Result<WgpuMemory, Error> {
        WgpuDevice::upload(self, data)
    }

    fn zeros(&self, bytes: usize, _: usize) -> Result<WgpuMemory, Error> {
        WgpuDevice::zeros(self, bytes)
    }

    fn read(&self, memory: &WgpuMemory, out: &mut [u8]) -> Result<(), Error> {
        self.download(&mut [(memory, out)])
    }

    fn write(&self, memory: &mut WgpuMemory, data: &[u8]) -> Result<(), Error> {
        WgpuDevice::write(self, memory, data)
    }

    /// A buffer is dropped: the bind groups kept for it go too (they hold it alive).
    fn release(&self, memory: &mut WgpuMemory) {
        let mut state = self.state();
        if state.bound.remove(&memory.id) {
            state
                .bind_groups
                .retain(|(_, ids), _| !ids.contains(&memory.id));
        }
    }

    fn launch<B: MemoryOf<WgpuMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        WgpuDevice::launch(self, kernel, artifacts, count, args, params)
    }

    fn flush(&self) -> Result<(), Error> {
        self.submit(&[]).map(drop)
    }

    fn sync(&self) -> Result<(), Error> {
        self.flush()?;
        self.wait()
    }

    fn begin_timing(&self) -> Result<(), Error> {
        let mut state = self.state();
        if state.timing.is_some() {
            return Err(Error::Config {
                reason: "Device::timed was called inside Device::timed: time the outer call only"
                    .into(),
            });
        }
        state.timing = Some(Timing::default());
        Ok(())
    }

    fn end_timing(&self) -> Result<Option<f64>, Error> {
        let synced = self.sync();
        let timing = self.state().timing.take();
        synced?;
        Ok(timing.and_then(|t| (!t.untimed).then_some(t.ms)))
    }
}

impl WgpuDevice {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An error wgpu reported outside a scope since the last check.
    fn uncaptured(&self) -> Option<String> {
        let mut errors = self.uncaptured.lock().unwrap_or_else(|e| e.into_inner());
        (!errors.is_empty()).then(|| errors.drain(..).collect::<Vec<_>>().join("; "))
    }

    /// Waits until the GPU finished every submission: polls for up to the spin time first
    /// (`common::wait`), then blocks.
    fn wait(&self) -> Result<(), Error> {
        let waiting = |e: wgpu::PollError| transfer(format!("waiting for the GPU: {e}"));
        let done = poll_for(self.spin, || {
            self.device
                .poll(wgpu::PollType::Poll)
                .map(|status| status.is_queue_empty())
        })
        .map_err(waiting)?;
        if !done {
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(waiting)?;
        }
        match self.uncaptured() {
            None => Ok(()),
            Some(e) => Err(transfer(format!("the GPU reported: {e}"))),
        }
    }
}
