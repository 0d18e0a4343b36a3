//! The webgpu backend: the browser's WebGPU through wgpu (wasm32 only), running the WGSL
//! that `rgpu build --backend webgpu` embeds (one `.wgsl` per kernel, written from rust-gpu's
//! SPIR-V).
//!
//! The kernel ABI is the Vulkan one with one change the web needs: WebGPU has no push
//! constants, so the params block (the same `#[repr(C)]` bytes) is a read-only storage
//! buffer at `@group(0) @binding(<number of buffers>)` (storage, not uniform: a uniform
//! buffer would want struct parameters at multiples of 16 bytes); buffer i stays at
//! `@binding(i)`. Every launch
//! is submitted when it is made; waiting (device, readback, error scopes) goes through
//! `wait::block_on` (JSPI), so the API is the same synchronous one as on every backend.

mod wait;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::api::{Api, Arg, CpuDevices, Dst, MemoryOf, Src};
use crate::backend::Backend;
use crate::error::Error;
use crate::kernel::{workgroups, Access, Artifact, KernelInfo};
use crate::stats::{DeviceFacts, KernelStats};
use wait::block_on;

const BACKEND: Backend = Backend::WebGpu;

/// A WebGPU buffer's memory: whole words, at least one.
pub(crate) struct WebGpuMemory {
    buffer: wgpu::Buffer,
}

struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
}

pub(crate) struct WebGpuDevice {
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    description: String,
    facts: DeviceFacts,
    kernels: Mutex<HashMap<&'static str, Arc<Kernel>>>,
    /// Errors WebGPU reported outside an error scope.
    uncaptured: Arc<Mutex<Vec<String>>>,
}

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

fn launch_error(kernel: &KernelInfo, reason: String) -> Error {
    Error::Launch {
        backend: BACKEND,
        kernel: kernel.name,
        reason,
    }
}

/// Whole 4-byte words, at least one (WebGPU copies and binds words).
fn oom(bytes: usize, reason: String) -> Error {
    Error::OutOfMemory {
        backend: BACKEND,
        bytes: bytes as u64,
        reason,
    }
}

fn padded_bytes(bytes: usize) -> u64 {
    (bytes.max(4) as u64).next_multiple_of(4)
}

fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

fn pop(scope: wgpu::ErrorScopeGuard) -> Option<String> {
    block_on(scope.pop()).map(|e| one_line(&e.to_string()))
}

/// Waits once for two futures (the browser settles both in the same turns): one wait per
/// launch or readback instead of one per error scope.
fn both<A: std::future::Future, B: std::future::Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    block_on(std::future::poll_fn(|cx| {
        if ra.is_none() {
            if let std::task::Poll::Ready(v) = a.as_mut().poll(cx) {
                ra = Some(v);
            }
        }
        if rb.is_none() {
            if let std::task::Poll::Ready(v) = b.as_mut().poll(cx) {
                rb = Some(v);
            }
        }
        if ra.is_some() && rb.is_some() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }));
    match (ra, rb) {
        (Some(a), Some(b)) => (a, b),
        _ => unreachable!("poll_fn returned Ready with both results"),
    }
}

impl WebGpuDevice {
    fn open_browser() -> Result<Self, Error> {
        crate::program::install_panic_hook();
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::BROWSER_WEBGPU;
        let instance = wgpu::Instance::new(desc);
        let adapter = block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| {
            unavailable(format!(
                "the browser gave no WebGPU adapter ({e}): use a browser with WebGPU \
                 (Chromium: --enable-unsafe-webgpu where it is not on by default)"
            ))
        })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        // WebGPU's "subgroups" feature (WGSL `enable subgroups;`) has no name in wgpu 30's
        // WebGPU backend: rgpu's page adds it to the request where the adapter has it.
        let (device, queue) = block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rgpu"),
            required_features: wgpu::Features::empty(),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| unavailable(format!("the WebGPU adapter refused a device ({e})")))?;
        let uncaptured = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&uncaptured);
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            sink.lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(one_line(&e.to_string()));
        }));
        let name = [&info.name, &info.driver, &info.driver_info]
            .into_iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let description = format!(
            "browser WebGPU ({}), WGSL",
            if name.is_empty() {
                "adapter without a name"
            } else {
                &name
            }
        );
        let facts = DeviceFacts::of_adapter(
            BACKEND,
            &info,
            "the browser's GPUAdapterInfo (subgroupMinSize, subgroupMaxSize)",
        );
        Ok(Self {
            device,
            queue,
            limits,
            description,
            facts,
            kernels: Mutex::default(),
            uncaptured,
        })
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn uncaptured(&self) -> Option<String> {
        let mut errors = self.uncaptured.lock().unwrap_or_else(|e| e.into_inner());
        (!errors.is_empty()).then(|| errors.drain(..).collect::<Vec<_>>().join("; "))
    }

    /// Waits for the queue: a `onSubmittedWorkDone` promise.
    fn wait_idle(&self) -> Result<(), Error> {
        let done = Arc::new(Mutex::new(false));
        let flag = Arc::clone(&done);
        self.queue.on_submitted_work_done(move || {
            *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        });
        block_on(std::future::poll_fn(|_| {
            if *done.lock().unwrap_or_else(|p| p.into_inner()) {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        }));
        match self.uncaptured() {
            None => Ok(()),
            Some(e) => Err(transfer(format!("the GPU reported: {e}"))),
        }
    }

    fn create_buffer(
        &self,
        bytes: usize,
        usage: wgpu::BufferUsages,
        mapped: bool,
    ) -> Result<wgpu::Buffer, Error> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.buffer_in_scope(bytes, usage, mapped)?;
        match pop(scope) {
            None => Ok(buffer),
            Some(reason) => Err(oom(bytes, reason)),
        }
    }

    /// A new buffer, inside an out-of-memory error scope the caller pushed and pops.
    fn buffer_in_scope(
        &self,
        bytes: usize,
        usage: wgpu::BufferUsages,
        mapped: bool,
    ) -> Result<wgpu::Buffer, Error> {
        let size = padded_bytes(bytes);
        if size > self.limits.max_buffer_size {
            return Err(Error::OutOfMemory {
                backend: BACKEND,
                bytes: bytes as u64,
                reason: format!(
                    "the device's largest buffer is {} bytes",
                    self.limits.max_buffer_size
                ),
            });
        }
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rgpu buffer"),
            size,
            usage,
            mapped_at_creation: mapped,
        }))
    }

    fn storage(&self, bytes: usize, mapped: bool) -> Result<wgpu::Buffer, Error> {
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        self.create_buffer(bytes, usage, mapped)
    }

    /// A new buffer holding `data` (written while mapped at creation).
    fn upload_bytes(&self, data: &[u8]) -> Result<WebGpuMemory, Error> {
        let buffer = self.storage(data.len(), true)?;
        put_mapped(&buffer, data)?;
        Ok(WebGpuMemory { buffer })
    }

    /// A new buffer of `bytes` zeros (WebGPU zeroes new buffers).
    fn zeros_bytes(&self, bytes: usize) -> Result<WebGpuMemory, Error> {
        Ok(WebGpuMemory {
            buffer: self.storage(bytes, false)?,
        })
    }

    fn write_bytes(&self, memory: &mut WebGpuMemory, data: &[u8]) -> Result<(), Error> {
        let mut words = data.to_vec();
        words.resize(padded_bytes(data.len()) as usize, 0);
        self.queue.write_buffer(&memory.buffer, 0, &words);
        Ok(())
    }

    /// Copies the buffer's first `out.len()` bytes back (through a `MAP_READ` buffer).
    fn download(&self, memory: &WebGpuMemory, out: &mut [u8]) -> Result<(), Error> {
        if out.is_empty() {
            return Ok(());
        }
        let size = padded_bytes(out.len());
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        // One wait for the copy, the mapping and the staging buffer's out-of-memory scope.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let staging = self.buffer_in_scope(out.len(), usage, false)?;
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(&memory.buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let result = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&result);
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            *sink.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
        });
        let (mapped, no_memory) = both(
            std::future::poll_fn(|_| {
                match result.lock().unwrap_or_else(|p| p.into_inner()).take() {
                    Some(r) => std::task::Poll::Ready(r),
                    None => std::task::Poll::Pending,
                }
            }),
            scope.pop(),
        );
        if let Some(e) = no_memory {
            return Err(oom(out.len(), one_line(&e.to_string())));
        }
        mapped.map_err(|e| {
            let gpu = self
                .uncaptured()
                .map(|g| format!(" ({g})"))
                .unwrap_or_default();
            transfer(format!("mapping a readback buffer: {e}{gpu}"))
        })?;
        {
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| transfer(format!("reading a readback buffer: {e}")))?;
            out.copy_from_slice(&view[..out.len()]);
        }
        staging.unmap();
        match self.uncaptured() {
            None => Ok(()),
            Some(e) => Err(transfer(format!("the GPU reported: {e}"))),
        }
    }

    /// The kernel's pipeline, made once from its embedded WGSL.
    fn kernel(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
    ) -> Result<Arc<Kernel>, Error> {
        if let Some(k) = self
            .kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(kernel.name)
        {
            return Ok(Arc::clone(k));
        }
        let artifact = artifacts
            .iter()
            .find(|a| a.kind == "wgsl" && a.entry_points.contains(&kernel.name))
            .ok_or_else(|| Error::MissingArtifact {
                backend: BACKEND,
                kernel: kernel.name,
                reason: format!(
                    "none of its {} WGSL files has the entry point `{}`; a kernel that uses \
                     what WebGPU lacks (f64, 64-bit integers) has none, and `rgpu build` \
                     warned which",
                    artifacts.iter().filter(|a| a.kind == "wgsl").count(),
                    kernel.name
                ),
            })?;
        let source = std::str::from_utf8(artifact.bytes).map_err(|e| Error::MissingArtifact {
            backend: BACKEND,
            kernel: kernel.name,
            reason: format!("the embedded WGSL is not UTF-8 ({e})"),
        })?;
        // Each buffer bound as its WGSL declares it (WebGPU wants the exact access mode):
        // WGSL written from SPIR-V may declare a buffer the kernel only reads `read_write`.
        let declared = storage_access(source);
        let mut entries: Vec<wgpu::BindGroupLayoutEntry> = kernel
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let read_only = declared
                    .get(&(i as u32))
                    .copied()
                    .unwrap_or(b.access == Access::Read);
                wgpu::BindGroupLayoutEntry {
                    binding: i as u32,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                }
            })
            .collect();
        entries.push(wgpu::BindGroupLayoutEntry {
            binding: kernel.buffers.len() as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        });
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(kernel.name),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(kernel.name),
                entries: &entries,
            });
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(kernel.name),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(kernel.name),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(kernel.name),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(e) = pop(scope) {
            return Err(launch_error(
                kernel,
                format!(
                    "the browser rejected its WGSL ({e}): rebuild with rgpu build --backend webgpu"
                ),
            ));
        }
        let compiled = Arc::new(Kernel { pipeline, layout });
        self.kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kernel.name, Arc::clone(&compiled));
        Ok(compiled)
    }

    fn launch_kernel<B: MemoryOf<WebGpuMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        let compiled = self.kernel(kernel, artifacts)?;
        let l = &self.limits;
        if kernel.shared_bytes > l.max_compute_workgroup_storage_size {
            return Err(launch_error(
                kernel,
                format!(
                    "it declares {} bytes of workgroup memory, the device allows {}: use less",
                    kernel.shared_bytes, l.max_compute_workgroup_storage_size
                ),
            ));
        }
        if kernel.buffers.len() as u32 + 1 > l.max_storage_buffers_per_shader_stage {
            return Err(launch_error(
                kernel,
                format!(
                    "{} buffers and the params block, the device binds at most {}: pass fewer",
                    kernel.buffers.len(),
                    l.max_storage_buffers_per_shader_stage
                ),
            ));
        }
        // One wait per launch: the params buffer, the bind group and the dispatch go inside
        // one out-of-memory and one validation scope, popped together.
        let no_memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        // Host slices go to temporary buffers.
        let mut temporaries: Vec<Option<WebGpuMemory>> = Vec::with_capacity(args.len());
        for arg in args.iter() {
            temporaries.push(match arg {
                // Each waits for its own scope (nested in the launch's) before it is
                // written: a buffer that failed to allocate has no mapping to write.
                Arg::In(Src::Host(data)) => Some(self.upload_bytes(data)?),
                Arg::InOut(Dst::Host(data)) => Some(self.upload_bytes(data)?),
                _ => None,
            });
        }
        let mut buffers: Vec<&wgpu::Buffer> = Vec::with_capacity(args.len() + 1);
        for (arg, temporary) in args.iter().zip(&temporaries) {
            let memory = match (arg, temporary) {
                (_, Some(t)) => &t.buffer,
                (Arg::In(Src::Buffer(b)), None) => memory_of(kernel, *b)?,
                (Arg::InOut(Dst::Buffer(b)), None) => memory_of(kernel, &**b)?,
                _ => return Err(foreign(kernel)),
            };
            if memory.size() > l.max_storage_buffer_binding_size {
                return Err(launch_error(
                    kernel,
                    format!(
                        "a {}-byte buffer, the device binds at most {} bytes: split the data",
                        memory.size(),
                        l.max_storage_buffer_binding_size
                    ),
                ));
            }
            buffers.push(memory);
        }
        // The params block as a read-only storage buffer (whole 16-byte rows), written through
        // the queue: a buffer mapped at creation per launch makes the renderer hold one
        // ArrayBuffer per launch until it is collected, and Chromium refuses new ones after a
        // few thousand launches (the radix sort makes that many).
        let uniform = self.buffer_in_scope(
            params.len().next_multiple_of(16),
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            false,
        )?;
        let mut words = params.to_vec();
        words.resize(params.len().next_multiple_of(16), 0);
        self.queue.write_buffer(&uniform, 0, &words);
        buffers.push(&uniform);
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name),
            layout: &compiled.layout,
            entries: &entries,
        });
        let groups = workgroups(
            kernel.mode,
            count,
            kernel.threads,
            l.max_compute_workgroups_per_dimension,
        );
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.name),
                timestamp_writes: None,
            });
            pass.set_pipeline(&compiled.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(groups, 1, 1);
        }
        self.queue.submit([encoder.finish()]);
        let (invalid, no_memory) = both(validation.pop(), no_memory.pop());
        if let Some(e) = no_memory {
            return Err(launch_error(
                kernel,
                format!("out of memory: {}", one_line(&e.to_string())),
            ));
        }
        if let Some(e) = invalid {
            let e = one_line(&e.to_string());
            return Err(launch_error(kernel, format!("binding its buffers: {e}")));
        }
        // Host outputs come back before returning.
        for (arg, temporary) in args.iter_mut().zip(&temporaries) {
            if let (Arg::InOut(Dst::Host(out)), Some(t)) = (arg, temporary) {
                self.download(t, out)?;
            }
        }
        Ok(())
    }
}

/// The storage buffers a WGSL module declares in group 0: binding -> read-only
/// (`var<storage>` and `var<storage, read>`; `var<storage, read_write>` is read-write).
fn storage_access(wgsl: &str) -> HashMap<u32, bool> {
    let mut found = HashMap::new();
    let mut rest = wgsl;
    while let Some(at) = rest.find("@binding(") {
        rest = &rest[at + "@binding(".len()..];
        let Some(close) = rest.find(')') else { break };
        let Ok(binding) = rest[..close].trim().parse::<u32>() else {
            continue;
        };
        let decl = rest[close + 1..].trim_start();
        let Some(var) = decl.strip_prefix("var<") else {
            continue;
        };
        let Some(end) = var.find('>') else { break };
        let parts: Vec<&str> = var[..end].split(',').map(str::trim).collect();
        if parts.first() == Some(&"storage") {
            // `var<storage>` without an access mode is `read`.
            found.insert(binding, parts.get(1).is_none_or(|a| *a == "read"));
        }
    }
    found
}

/// Writes `data` at the start of a buffer mapped at creation, and unmaps it.
fn put_mapped(buffer: &wgpu::Buffer, data: &[u8]) -> Result<(), Error> {
    {
        let mut view = buffer
            .get_mapped_range_mut(..)
            .map_err(|e| transfer(format!("writing a new buffer: {e}")))?;
        view.slice(..data.len()).copy_from_slice(data);
    }
    buffer.unmap();
    Ok(())
}

fn foreign(kernel: &KernelInfo) -> Error {
    launch_error(
        kernel,
        "a buffer of another backend reached webgpu: report this as an rgpu bug".into(),
    )
}

fn memory_of<'a, B: MemoryOf<WebGpuMemory>>(
    kernel: &KernelInfo,
    buffer: &'a B,
) -> Result<&'a wgpu::Buffer, Error> {
    buffer
        .memory()
        .map(|m| &m.buffer)
        .ok_or_else(|| foreign(kernel))
}

impl Api for WebGpuDevice {
    const BACKEND: Backend = BACKEND;
    type Memory = WebGpuMemory;

    fn open(_: CpuDevices) -> Result<Self, Error> {
        Self::open_browser()
    }

    fn description(&self) -> String {
        self.describe()
    }

    fn facts(&self) -> DeviceFacts {
        self.facts.clone()
    }

    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        Err(Error::NoKernelStats {
            backend: BACKEND,
            reason: "WebGPU has no API for a pipeline's compiled statistics (registers, \
                     spills): run the native build with the ash or cuda backend"
                .into(),
        })
    }

    fn upload(&self, data: &[u8], _align: usize) -> Result<WebGpuMemory, Error> {
        self.upload_bytes(data)
    }

    fn zeros(&self, bytes: usize, _align: usize) -> Result<WebGpuMemory, Error> {
        self.zeros_bytes(bytes)
    }

    fn read(&self, memory: &WebGpuMemory, out: &mut [u8]) -> Result<(), Error> {
        self.download(memory, out)
    }

    fn write(&self, memory: &mut WebGpuMemory, data: &[u8]) -> Result<(), Error> {
        self.write_bytes(memory, data)
    }

    fn sync(&self) -> Result<(), Error> {
        self.wait_idle()
    }

    /// No timestamps on the web here: the time is unknown.
    fn end_timing(&self) -> Result<Option<f64>, Error> {
        self.wait_idle().map(|()| None)
    }

    fn launch<B: MemoryOf<WebGpuMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        self.launch_kernel(kernel, artifacts, count, args, params)
    }
}
