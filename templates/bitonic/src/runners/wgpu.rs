//! The wgpu backend: the embedded SPIR-V on Vulkan (or Metal/DX12 through naga).
//!
//! Keys are uploaded once, every dispatch of the sort (encode, each network step, decode)
//! is encoded in one compute pass, the result is copied to a mapped buffer, and all of it
//! goes to the GPU in one submission. Parameters travel as push constants ("immediates"
//! in wgpu 30).
//!
//! The SPIR-V reaches the driver one of two ways (`RGPU_WGPU_SHADER`):
//! - `passthrough` (default where the adapter has `PASSTHROUGH_SHADERS`): the module goes
//!   to the Vulkan driver as it is, the same bytes the ash backend uses;
//! - `naga`: wgpu parses it with naga's SPIR-V frontend and writes it out again, without
//!   runtime bounds checks (the kernels check every index themselves).
//!
//! Confirmed against wgpu 30.0.1 / wgpu-types 30.0.1 (crates.io sources).

use std::borrow::Cow;
use std::sync::mpsc;

use shared::{KeyKind, SortOrder};

use super::spirv::{self, ENTRY_POINTS, PARAMS_BYTES};
use super::{Backend, RunnerError, SortRunner};

const BACKEND: Backend = Backend::Wgpu;

/// How the SPIR-V is handed to wgpu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShaderPath {
    Passthrough,
    Naga,
}

pub struct WgpuRunner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    layout: wgpu::BindGroupLayout,
    pipelines: Vec<wgpu::ComputePipeline>,
    buffers: Option<Buffers>,
    timestamps: Option<Timestamps>,
    description: String,
}

/// The key buffer, its readback twin and the bind group: kept while big enough.
struct Buffers {
    data: wgpu::Buffer,
    readback: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    capacity: u64,
}

/// GPU timestamps around the sort's compute pass, with `RGPU_GPU_TIMING=1` (benchmarks):
/// the time the GPU spent sorting, without the upload and the readback.
struct Timestamps {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
}

fn timing_requested() -> bool {
    std::env::var("RGPU_GPU_TIMING").is_ok_and(|v| v == "1")
}

fn unavailable(reason: impl Into<String>) -> RunnerError {
    RunnerError::Unavailable {
        backend: BACKEND,
        reason: reason.into(),
    }
}

fn failed(reason: impl Into<String>) -> RunnerError {
    RunnerError::Failed {
        backend: BACKEND,
        reason: reason.into(),
    }
}

fn shader_path(adapter: &wgpu::Adapter) -> Result<ShaderPath, RunnerError> {
    let can_pass = adapter
        .features()
        .contains(wgpu::Features::PASSTHROUGH_SHADERS);
    match std::env::var("RGPU_WGPU_SHADER").as_deref() {
        Ok("naga") => Ok(ShaderPath::Naga),
        Ok("passthrough") if can_pass => Ok(ShaderPath::Passthrough),
        Ok("passthrough") => Err(unavailable(
            "RGPU_WGPU_SHADER=passthrough, but this adapter has no PASSTHROUGH_SHADERS",
        )),
        Ok(other) if !other.is_empty() => Err(unavailable(format!(
            "RGPU_WGPU_SHADER={other}: use `passthrough` or `naga`"
        ))),
        _ if can_pass => Ok(ShaderPath::Passthrough),
        _ => Ok(ShaderPath::Naga),
    }
}

impl WgpuRunner {
    pub fn new() -> Result<Self, RunnerError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            ..Default::default()
        }))
        .map_err(|e| unavailable(format!("no Vulkan, Metal or DX12 adapter: {e}")))?;
        let info = adapter.get_info();
        if !adapter.features().contains(wgpu::Features::IMMEDIATES) {
            return Err(unavailable(format!(
                "adapter {} has no push constants (wgpu IMMEDIATES)",
                info.name
            )));
        }
        let path = shader_path(&adapter)?;
        let mut features = wgpu::Features::IMMEDIATES;
        if path == ShaderPath::Passthrough {
            features |= wgpu::Features::PASSTHROUGH_SHADERS;
        }
        let timing =
            timing_requested() && adapter.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        if timing {
            features |= wgpu::Features::TIMESTAMP_QUERY;
        }
        let adapter_limits = adapter.limits();
        // The tile entry point's workgroup array (wgpu's downlevel default is 16352 bytes).
        if adapter_limits.max_compute_workgroup_storage_size < spirv::TILE_BYTES {
            return Err(unavailable(format!(
                "adapter {} allows {} bytes of workgroup memory; the sort's tile needs {}",
                info.name,
                adapter_limits.max_compute_workgroup_storage_size,
                spirv::TILE_BYTES
            )));
        }
        let limits = wgpu::Limits {
            max_compute_workgroup_storage_size: spirv::TILE_BYTES,
            max_immediate_size: PARAMS_BYTES,
            max_storage_buffer_binding_size: adapter_limits.max_storage_buffer_binding_size,
            max_buffer_size: adapter_limits.max_buffer_size,
            ..wgpu::Limits::downlevel_defaults()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rgpu sort"),
            required_features: features,
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| unavailable(format!("adapter {} refused a device: {e}", info.name)))?;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("keys"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: false },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let pipelines = build_pipelines(&device, &layout, path)?;
        let timestamps = timing.then(|| make_timestamps(&device));
        let description = format!(
            "{} ({:?}, driver {} {}, SPIR-V {})",
            info.name,
            info.backend,
            info.driver,
            info.driver_info,
            match path {
                ShaderPath::Passthrough => "passthrough",
                ShaderPath::Naga => "via naga",
            }
        );
        Ok(Self {
            device,
            queue,
            layout,
            pipelines,
            buffers: None,
            timestamps,
            description,
        })
    }
}

fn shader_module(
    device: &wgpu::Device,
    entry: &str,
    words: &[u32],
    path: ShaderPath,
) -> wgpu::ShaderModule {
    match path {
        ShaderPath::Passthrough => {
            let desc = wgpu::ShaderModuleDescriptorPassthrough {
                label: Some(entry),
                spirv: Some(Cow::Borrowed(words)),
                entry_points: Cow::Owned(vec![wgpu::PassthroughShaderEntryPoint {
                    name: Cow::Borrowed(entry),
                    // Unused for SPIR-V (Metal only); the module declares its own size.
                    workgroup_size: (shared::WORKGROUP_SIZE, 1, 1),
                }]),
                ..Default::default()
            };
            // SAFETY: the module is one rgpu embedded after checking it (spirv-val, entry
            // point names) and its interface matches the layout built here.
            unsafe { device.create_shader_module_passthrough(desc) }
        }
        ShaderPath::Naga => {
            let desc = wgpu::ShaderModuleDescriptor {
                label: Some(entry),
                source: wgpu::ShaderSource::SpirV(Cow::Borrowed(words)),
            };
            // SAFETY: every index the kernels use is checked against `len` in the kernel
            // itself, so wgpu's extra bounds checks only cost time.
            unsafe {
                device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
            }
        }
    }
}

fn build_pipelines(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    path: ShaderPath,
) -> Result<Vec<wgpu::ComputePipeline>, RunnerError> {
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("sort"),
        bind_group_layouts: &[Some(layout)],
        immediate_size: PARAMS_BYTES,
    });
    let mut pipelines = Vec::new();
    for entry in ENTRY_POINTS {
        let (_, words) = spirv::module_for(BACKEND, entry)?;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = shader_module(device, entry, &words, path);
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(entry),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(failed(format!("pipeline `{entry}`: {error}")));
        }
        pipelines.push(pipeline);
    }
    Ok(pipelines)
}

fn make_timestamps(device: &wgpu::Device) -> Timestamps {
    Timestamps {
        set: device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("sort pass"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        }),
        resolve: device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        }),
        read: device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps readback"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }),
    }
}

impl WgpuRunner {
    fn ensure_buffers(&mut self, bytes: u64) {
        if self.buffers.as_ref().is_some_and(|b| b.capacity >= bytes) {
            return;
        }
        self.buffers = None; // free the old pair before allocating the new one
        let data = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keys"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("keys"),
            layout: &self.layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: data.as_entire_binding(),
            }],
        });
        self.buffers = Some(Buffers {
            data,
            readback,
            bind_group,
            capacity: bytes,
        });
    }

    /// Maps `buffer`, waits for the GPU, and copies its first `out.len()` words out.
    fn read_back(&self, buffer: &wgpu::Buffer, out: &mut [u32]) -> Result<(), RunnerError> {
        let bytes = (out.len() * 4) as u64;
        let (sender, receiver) = mpsc::channel();
        buffer.map_async(wgpu::MapMode::Read, ..bytes, move |r| {
            let _ = sender.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| failed(format!("waiting for the GPU: {e}")))?;
        receiver
            .recv()
            .map_err(|_| failed("the readback callback never ran"))?
            .map_err(|e| failed(format!("mapping the result: {e}")))?;
        {
            let view = buffer
                .slice(..bytes)
                .get_mapped_range()
                .map_err(|e| failed(format!("reading the result: {e}")))?;
            out.copy_from_slice(bytemuck::cast_slice(&view));
        }
        buffer.unmap();
        Ok(())
    }

    fn report_timing(&self, len: usize) -> Result<(), RunnerError> {
        let Some(ts) = &self.timestamps else {
            return Ok(());
        };
        let mut ticks = [0u32; 4];
        self.read_back(&ts.read, &mut ticks)?;
        let start = u64::from(ticks[0]) | u64::from(ticks[1]) << 32;
        let end = u64::from(ticks[2]) | u64::from(ticks[3]) << 32;
        let ns = end.saturating_sub(start) as f64 * f64::from(self.queue.get_timestamp_period());
        eprintln!("gpu-timing: wgpu {len} keys: sort pass {:.3} ms", ns / 1e6);
        Ok(())
    }
}

impl SortRunner for WgpuRunner {
    fn backend(&self) -> Backend {
        BACKEND
    }

    fn device(&self) -> String {
        self.description.clone()
    }

    fn sort_checked(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), RunnerError> {
        let bytes = (keys.len() * 4) as u64;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        self.ensure_buffers(bytes);
        let buffers = self.buffers.as_ref().expect("ensure_buffers ran");
        self.queue
            .write_buffer(&buffers.data, 0, bytemuck::cast_slice(keys));
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("sort"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("sort"),
                timestamp_writes: self.timestamps.as_ref().map(|ts| {
                    wgpu::ComputePassTimestampWrites {
                        query_set: &ts.set,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }
                }),
            });
            pass.set_bind_group(0, &buffers.bind_group, &[]);
            let mut bound = usize::MAX;
            for d in spirv::dispatches(keys.len() as u32, kind, order) {
                if d.entry != bound {
                    pass.set_pipeline(&self.pipelines[d.entry]);
                    bound = d.entry;
                }
                pass.set_immediates(0, bytemuck::bytes_of(&d.params));
                pass.dispatch_workgroups(d.groups, 1, 1);
            }
        }
        encoder.copy_buffer_to_buffer(&buffers.data, 0, &buffers.readback, 0, bytes);
        if let Some(ts) = &self.timestamps {
            encoder.resolve_query_set(&ts.set, 0..2, &ts.resolve, 0);
            encoder.copy_buffer_to_buffer(&ts.resolve, 0, &ts.read, 0, 16);
        }
        self.queue.submit([encoder.finish()]);
        if let Some(error) = pollster::block_on(scope.pop()) {
            return Err(failed(error.to_string()));
        }
        self.read_back(&buffers.readback, keys)?;
        self.report_timing(keys.len())?;
        Ok(())
    }
}
