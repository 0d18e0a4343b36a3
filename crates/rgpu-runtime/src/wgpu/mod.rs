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

use crate::api::{About, Api, Arg, MemoryOf};
use crate::backend::Backend;
use crate::common::deadline::launch_timeout;
use crate::common::fault::{self, Access};
use crate::common::spin::{poll_for, spin_time};
use crate::common::spirv::ModuleKey;
use crate::common::wait::block_on;
use crate::common::wgpu_device::{device_info, Gpu, Params};
use crate::devices::{pick, DeviceInfo, Wanted};
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
    /// Checked builds' modules: each one's fault record (`common::fault`) and format strings.
    faults: HashMap<ModuleKey, (Arc<WgpuMemory>, &'static [&'static str])>,
    /// The kernels launched since the last wait, once a checked module is loaded (a fault
    /// names them).
    since_wait: Vec<&'static KernelInfo>,
}

pub(crate) struct WgpuDevice {
    /// The device, its queue and limits (shared with the webgpu backend).
    gpu: Gpu,
    about: About,
    path: ShaderPath,
    /// How long a wait polls before blocking (`common::spin`; 0 on a CPU device).
    spin: Duration,
    timestamps: bool,
    state: Mutex<State>,
    /// Staging buffers of large transfers (locked before `state` when both are).
    staging: Mutex<memory::Staging>,
}

/// The adapters this backend counts: those of wgpu's first native API that has any
/// (Vulkan, where SPIR-V passes through; else Metal, else DX12), in wgpu's order (on Vulkan
/// the loader's, less any device wgpu does not expose).
/// The instance is the process's, made once and kept (as ash's: NVIDIA's driver misbehaves
/// after some cycles of making and destroying Vulkan instances in one process).
fn adapters() -> Result<Vec<wgpu::Adapter>, Error> {
    static INSTANCE: std::sync::OnceLock<wgpu::Instance> = std::sync::OnceLock::new();
    let instance = INSTANCE.get_or_init(|| {
        crate::common::vulkan::ensure_runtime_dir();
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle())
    });
    let mut all = block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    for api in [
        wgpu::Backend::Vulkan,
        wgpu::Backend::Metal,
        wgpu::Backend::Dx12,
    ] {
        if all.iter().any(|a| a.get_info().backend == api) {
            all.retain(|a| a.get_info().backend == api);
            return Ok(all);
        }
    }
    Err(Error::unavailable(
        BACKEND,
        "no Vulkan, Metal or DX12 adapter: install a GPU driver with Vulkan support",
    ))
}

impl Api for WgpuDevice {
    const BACKEND: Backend = BACKEND;
    type Memory = WgpuMemory;

    fn list() -> Result<Vec<DeviceInfo>, Error> {
        let adapters = adapters()?;
        Ok((0..)
            .zip(&adapters)
            .map(|(i, a)| device_info(BACKEND, i, a, Params::Immediates))
            .collect())
    }

    fn open(wanted: &Wanted) -> Result<Self, Error> {
        let adapters = adapters()?;
        let mut list: Vec<DeviceInfo> = (0..)
            .zip(&adapters)
            .map(|(i, a)| device_info(BACKEND, i, a, Params::Immediates))
            .collect();
        let index = pick(BACKEND, &list, wanted)?;
        let adapter = &adapters[index];
        let info = adapter.get_info();
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
        let mut gpu = Gpu::request(BACKEND, adapter, &info.name, features, Params::Immediates)?;
        gpu.timeout = launch_timeout(wanted.launch_timeout)?;
        let device = list.swap_remove(index);
        let description = format!(
            "{} ({:?} {}, driver {} {}, SPIR-V {})",
            info.name,
            info.backend,
            device.kind,
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
            gpu,
            about: About {
                info: device,
                description,
                facts,
            },
            path,
            spin,
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            state: Mutex::default(),
            staging: Mutex::default(),
        })
    }

    fn about(&self) -> &About {
        &self.about
    }

    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        Err(Error::no_kernel_stats(
            BACKEND,
            "wgpu 30 has no API for a pipeline's compiled statistics (registers, spills): use \
             the ash backend (VK_KHR_pipeline_executable_properties) or cuda",
        ))
    }

    // Buffers are made and copied in memory.rs, launches recorded in launch.rs.
    fn upload(&self, data: &[u8], _: usize) -> Result<WgpuMemory, Error> {
        self.gpu.usable()?;
        WgpuDevice::upload(self, data)
    }

    fn zeros(&self, bytes: usize, _: usize) -> Result<WgpuMemory, Error> {
        self.gpu.usable()?;
        WgpuDevice::zeros(self, bytes)
    }

    fn read(&self, memory: &WgpuMemory, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        self.gpu.usable()?;
        self.download(&mut [(memory, offset as u64, out)])?;
        self.take_fault()
    }

    fn write(&self, memory: &mut WgpuMemory, offset: usize, data: &[u8]) -> Result<(), Error> {
        self.gpu.usable()?;
        WgpuDevice::write(self, memory, offset as u64, data)
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
        self.gpu.usable()?;
        self.gpu.launched(kernel.name);
        WgpuDevice::launch(self, kernel, artifacts, count, args, params)
    }

    fn flush(&self) -> Result<(), Error> {
        self.gpu.usable()?;
        self.submit(&[]).map(drop)
    }

    fn sync(&self) -> Result<(), Error> {
        self.flush()?;
        self.wait()?;
        self.take_fault()
    }

    fn begin_timing(&self) -> Result<(), Error> {
        let mut state = self.state();
        if state.timing.is_some() {
            return Err(Error::nested_timing());
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

    /// Waits until the GPU finished every submission: polls for up to the spin time first
    /// (`common::spin`), then blocks for at most the launch timeout.
    fn wait(&self) -> Result<(), Error> {
        self.gpu.usable()?;
        let device = &self.gpu.device;
        let done = poll_for(self.spin, || {
            device
                .poll(wgpu::PollType::Poll)
                .map(|status| status.is_queue_empty())
        })
        .map_err(|e| self.gpu.explain("waiting for the GPU", e))?;
        if !done {
            self.gpu.wait_for(None)?;
        }
        self.gpu.reported()
    }

    /// A checked module's fault (`common::fault`), after a wait: `Error::OutOfRange` naming
    /// the kernels launched since the wait before; the record is cleared, the device usable.
    pub(super) fn take_fault(&self) -> Result<(), Error> {
        let (records, kernels) = {
            let mut state = self.state();
            if state.faults.is_empty() {
                return Ok(());
            }
            let records: Vec<_> = state.faults.values().cloned().collect();
            (records, std::mem::take(&mut state.since_wait))
        };
        fault::take(BACKEND, &kernels, records, |record, access| match access {
            Access::Read(bytes) => self.download(&mut [(record, 0, &mut bytes[..])]),
            Access::Clear => self.write(record, 0, &[0u8; fault::BYTES]),
        })
    }
}
