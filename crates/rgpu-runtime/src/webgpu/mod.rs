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
//! `common::wait::block_on` (JSPI), so the API is the same synchronous one as on every
//! backend. The device, its limits, buffers and pipelines are `common::wgpu_device`'s, as
//! for the wgpu backend.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::api::{About, Api, Arg, MemoryOf};
use crate::backend::Backend;
use crate::common::fault::{self, Access};
use crate::common::launch::{bound, host_inputs, host_outputs, padded_bytes};
use crate::common::wait::block_on;
use crate::common::wgpu_device::{device_info, one_line, pop, Gpu, Params, Pipeline};
use crate::devices::{pick, CpuDevices, DeviceInfo, Wanted};
use crate::error::Error;
use crate::kernel::{workgroups, Artifact, KernelInfo};
use crate::stats::{DeviceFacts, KernelStats};

const BACKEND: Backend = Backend::WebGpu;

/// A WebGPU buffer's memory: whole words, at least one.
pub(crate) struct WebGpuMemory {
    buffer: wgpu::Buffer,
}

pub(crate) struct WebGpuDevice {
    /// The device, its queue and limits (shared with the wgpu backend).
    gpu: Gpu,
    about: About,
    kernels: Mutex<HashMap<&'static str, Arc<Pipeline>>>,
    checked: Mutex<Checked>,
}

/// Checked builds' fault records (`common::fault`).
#[derive(Default)]
struct Checked {
    /// By the module's format strings (every kernel's WGSL of one module has the same).
    records: HashMap<usize, (wgpu::Buffer, &'static [&'static str])>,
    /// The kernels launched since the last wait, once a checked module is loaded.
    since_wait: Vec<&'static KernelInfo>,
}

/// Waits once for two futures (the browser settles both in the same turns): one wait per
/// launch or readback instead of one per error scope. `None` when `limit` (the launch
/// timeout) passed first: an endless kernel keeps the browser's GPU process from answering
/// even an error scope.
fn both<A: std::future::Future, B: std::future::Future>(
    a: A,
    b: B,
    limit: Option<std::time::Duration>,
) -> Option<(A::Output, B::Output)> {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    let started = crate::program::Instant::now();
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
        let late = limit.is_some_and(|l| started.elapsed() >= l);
        if (ra.is_some() && rb.is_some()) || late {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    }));
    ra.zip(rb)
}

impl WebGpuDevice {
    /// The browser's adapter: the one it gives for high performance (a page sees no other).
    fn adapter() -> Result<wgpu::Adapter, Error> {
        crate::program::install_panic_hook();
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::BROWSER_WEBGPU;
        let instance = wgpu::Instance::new(desc);
        block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| {
            Error::unavailable(
                BACKEND,
                format!(
                    "the browser gave no WebGPU adapter ({e}): use a browser with WebGPU \
                     (Chromium: --enable-unsafe-webgpu where it is not on by default)"
                ),
            )
        })
    }

    fn open_browser(wanted: &Wanted) -> Result<Self, Error> {
        let adapter = Self::adapter()?;
        let device = device_info(BACKEND, 0, &adapter, Params::Binding);
        // The browser's adapter is the page's GPU, a software one (SwiftShader) too: `auto`
        // takes it (a page's cpu backend has one thread), where a native program's would
        // prefer the cpu backend to a software Vulkan driver.
        let wanted = Wanted {
            cpu_devices: CpuDevices::Accept,
            ..wanted.clone()
        };
        pick(BACKEND, std::slice::from_ref(&device), &wanted)?;
        let info = adapter.get_info();
        let name = [&info.name, &info.driver, &info.driver_info]
            .into_iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let name = if name.is_empty() {
            "adapter without a name".to_string()
        } else {
            name
        };
        // WebGPU's "subgroups" feature (WGSL `enable subgroups;`) has no name in wgpu 30's
        // WebGPU backend: rgpu's page adds it to the request where the adapter has it.
        let mut gpu = Gpu::request(
            BACKEND,
            &adapter,
            &name,
            wgpu::Features::empty(),
            Params::Binding,
        )?;
        gpu.timeout = crate::common::deadline::launch_timeout(wanted.launch_timeout)?;
        let facts = DeviceFacts::of_adapter(
            BACKEND,
            &info,
            "the browser's GPUAdapterInfo (subgroupMinSize, subgroupMaxSize)",
        );
        Ok(Self {
            gpu,
            about: About {
                info: device,
                description: format!("browser WebGPU ({name}), WGSL"),
                facts,
            },
            kernels: Mutex::default(),
            checked: Mutex::default(),
        })
    }

    fn checked(&self) -> std::sync::MutexGuard<'_, Checked> {
        self.checked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The fault record of a checked build's kernel (`artifact`'s module's, made zeroed with
    /// its first kernel); `None` for any other.
    fn fault_record(&self, artifact: &'static Artifact) -> Result<Option<wgpu::Buffer>, Error> {
        if artifact.faults.is_empty() {
            return Ok(None);
        }
        let key = artifact.faults.as_ptr() as usize;
        if let Some((record, _)) = self.checked().records.get(&key) {
            return Ok(Some(record.clone()));
        }
        let record = self.gpu.storage(fault::BYTES, false)?;
        self.checked()
            .records
            .insert(key, (record.clone(), artifact.faults));
        Ok(Some(record))
    }

    /// A checked module's fault, after a wait: `Error::OutOfRange` naming the kernels
    /// launched since the wait before; the record is cleared, the device usable.
    fn take_fault(&self) -> Result<(), Error> {
        let (records, kernels) = {
            let mut checked = self.checked();
            if checked.records.is_empty() {
                return Ok(());
            }
            let records: Vec<_> = checked.records.values().cloned().collect();
            (records, std::mem::take(&mut checked.since_wait))
        };
        let records = records
            .into_iter()
            .map(|(buffer, sites)| (WebGpuMemory { buffer }, sites));
        fault::take(BACKEND, &kernels, records, |record, access| match access {
            Access::Read(bytes) => self.download(record, 0, bytes),
            Access::Clear => {
                let zeros = [0; fault::BYTES];
                self.gpu.queue.write_buffer(&record.buffer, 0, &zeros);
                Ok(())
            }
        })
    }

    /// Waits for the queue: a `onSubmittedWorkDone` promise.
    fn wait_idle(&self) -> Result<(), Error> {
        let done = Arc::new(Mutex::new(false));
        let flag = Arc::clone(&done);
        self.gpu.queue.on_submitted_work_done(move || {
            *flag.lock().unwrap_or_else(|p| p.into_inner()) = true;
        });
        // The launch timeout: the browser's event loop keeps turning while this waits, so
        // the wait itself can give up (the GPU process's own watchdog may lose the device
        // first, which `reported` then says).
        let started = crate::program::Instant::now();
        let limit = self.gpu.timeout;
        let finished = block_on(std::future::poll_fn(|_| {
            if *done.lock().unwrap_or_else(|p| p.into_inner()) {
                std::task::Poll::Ready(true)
            } else if limit.is_some_and(|l| started.elapsed() >= l) {
                std::task::Poll::Ready(false)
            } else {
                std::task::Poll::Pending
            }
        }));
        if !finished {
            return Err(self.timed_out());
        }
        self.gpu.reported()
    }

    /// The launch timeout passed: the device is lost (the browser's own report first).
    fn timed_out(&self) -> Error {
        if let Err(e) = self.gpu.reported() {
            return e;
        }
        self.gpu.lost.set(Error::timeout(
            BACKEND,
            self.gpu.last_launched(),
            self.gpu.timeout.unwrap_or_default(),
        ))
    }

    /// Copies `out.len()` bytes of the buffer from `offset` back (through a `MAP_READ`
    /// buffer).
    fn download(&self, memory: &WebGpuMemory, offset: u64, out: &mut [u8]) -> Result<(), Error> {
        if out.is_empty() {
            return Ok(());
        }
        let size = padded_bytes(out.len());
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        // One wait for the copy, the mapping and the staging buffer's out-of-memory scope.
        let device = &self.gpu.device;
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let staging = self.gpu.buffer_in_scope(out.len(), usage, false)?;
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(&memory.buffer, offset, &staging, 0, size);
        self.gpu.queue.submit([encoder.finish()]);
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
            self.gpu.timeout,
        )
        .ok_or_else(|| self.timed_out())?;
        if let Some(e) = no_memory {
            return Err(Error::out_of_memory(
                BACKEND,
                out.len() as u64,
                one_line(&e.to_string()),
            ));
        }
        // A failed mapping says only that it failed: the device's loss (`device.lost`) or
        // the errors WebGPU reported outside a scope say why.
        mapped.map_err(|e| self.gpu.explain("mapping a readback buffer", e))?;
        {
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| Error::api_call(BACKEND, "reading a readback buffer", e))?;
            out.copy_from_slice(&view[..out.len()]);
        }
        staging.unmap();
        self.gpu.reported()
    }

    /// The kernel's pipeline, made once from its embedded WGSL.
    fn kernel(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
    ) -> Result<Arc<Pipeline>, Error> {
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
            .ok_or_else(|| {
                Error::missing_artifact(
                    BACKEND,
                    kernel.name,
                    format!(
                        "none of its {} WGSL files has the entry point `{}`; a kernel that uses \
                         what WebGPU lacks (f64, 64-bit integers) has none, and `rgpu build` \
                         warned which",
                        artifacts.iter().filter(|a| a.kind == "wgsl").count(),
                        kernel.name
                    ),
                )
            })?;
        let source = std::str::from_utf8(artifact.bytes).map_err(|e| {
            Error::missing_artifact(
                BACKEND,
                kernel.name,
                format!("the embedded WGSL is not UTF-8 ({e})"),
            )
        })?;
        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .gpu
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(kernel.name),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        if let Some(e) = pop(scope) {
            return Err(self.gpu.module_rejected(kernel, "WGSL", &e));
        }
        // Each buffer bound as its WGSL declares it (WebGPU wants the exact access mode):
        // WGSL written from SPIR-V may declare a buffer the kernel only reads `read_write`.
        let declared = storage_access(source);
        let fault = self.fault_record(artifact)?;
        let compiled = Arc::new(self.gpu.pipeline(
            kernel,
            &module,
            |i, _| declared.get(&i).copied(),
            fault,
        )?);
        self.kernels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kernel.name, Arc::clone(&compiled));
        Ok(compiled)
    }
}

/// The storage buffers a WGSL module declares in group 0: binding -> read-only
/// (`var<storage>` and `var<storage, read>`; `var<storage, read_write>` is read-write).
/// Other groups' (a checked build's fault record is group 1) are not the kernel's buffers.
fn storage_access(wgsl: &str) -> HashMap<u32, bool> {
    /// The number before the next `)` and the text after it.
    fn number(text: &str) -> Option<(u32, &str)> {
        let close = text.find(')')?;
        Some((text[..close].trim().parse().ok()?, &text[close + 1..]))
    }
    let mut found = HashMap::new();
    let mut rest = wgsl;
    while let Some(at) = rest.find("@group(") {
        rest = &rest[at + "@group(".len()..];
        let Some((group, after)) = number(rest) else {
            continue;
        };
        let Some(after) = after.trim_start().strip_prefix("@binding(") else {
            continue;
        };
        let Some((binding, decl)) = number(after) else {
            continue;
        };
        let Some(var) = decl.trim_start().strip_prefix("var<") else {
            continue;
        };
        let Some(end) = var.find('>') else { break };
        let parts: Vec<&str> = var[..end].split(',').map(str::trim).collect();
        if group == 0 && parts.first() == Some(&"storage") {
            // `var<storage>` without an access mode is `read`.
            found.insert(binding, parts.get(1).is_none_or(|a| *a == "read"));
        }
    }
    found
}

impl Api for WebGpuDevice {
    const BACKEND: Backend = BACKEND;
    type Memory = WebGpuMemory;

    fn list() -> Result<Vec<DeviceInfo>, Error> {
        Ok(vec![device_info(
            BACKEND,
            0,
            &Self::adapter()?,
            Params::Binding,
        )])
    }

    fn open(wanted: &Wanted) -> Result<Self, Error> {
        Self::open_browser(wanted)
    }

    fn about(&self) -> &About {
        &self.about
    }

    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        Err(Error::no_kernel_stats(
            BACKEND,
            "WebGPU has no API for a pipeline's compiled statistics (registers, spills): run \
             the native build with the ash or cuda backend",
        ))
    }

    /// A new buffer holding `data` (written while mapped at creation).
    fn upload(&self, data: &[u8], _align: usize) -> Result<WebGpuMemory, Error> {
        self.gpu.usable()?;
        Ok(WebGpuMemory {
            buffer: self.gpu.storage_with(data)?,
        })
    }

    /// A new buffer of `bytes` zeros (WebGPU zeroes new buffers).
    fn zeros(&self, bytes: usize, _align: usize) -> Result<WebGpuMemory, Error> {
        self.gpu.usable()?;
        Ok(WebGpuMemory {
            buffer: self.gpu.storage(bytes, false)?,
        })
    }

    fn read(&self, memory: &WebGpuMemory, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        self.gpu.usable()?;
        self.download(memory, offset as u64, out)?;
        self.take_fault()
    }

    fn write(&self, memory: &mut WebGpuMemory, offset: usize, data: &[u8]) -> Result<(), Error> {
        self.gpu.usable()?;
        let mut words = data.to_vec();
        words.resize(padded_bytes(data.len()) as usize, 0);
        self.gpu
            .queue
            .write_buffer(&memory.buffer, offset as u64, &words);
        Ok(())
    }

    fn sync(&self) -> Result<(), Error> {
        self.wait_idle()?;
        self.take_fault()
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
        self.gpu.usable()?;
        self.gpu.limits.check_launch(BACKEND, kernel, args)?;
        self.gpu.launched(kernel.name);
        let compiled = self.kernel(kernel, artifacts)?;
        if compiled.fault.is_some() {
            self.checked().since_wait.push(kernel);
        }
        let device = &self.gpu.device;
        // One wait per launch: the params buffer, the bind group and the dispatch go inside
        // one out-of-memory and one validation scope, popped together.
        let no_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        // Host slices go to temporary buffers. Each waits for its own scope (nested in the
        // launch's) before it is written: a buffer that failed to allocate has no mapping.
        let temporaries = host_inputs(args)
            .map(|data| data.map(|data| self.upload(data, 1)).transpose())
            .collect::<Result<Vec<Option<WebGpuMemory>>, Error>>()?;
        let mut buffers: Vec<&wgpu::Buffer> = bound(BACKEND, kernel, args, &temporaries)?
            .into_iter()
            .map(|m| &m.buffer)
            .collect();
        // The params block as a read-only storage buffer (whole 16-byte rows), written through
        // the queue: a buffer mapped at creation per launch makes the renderer hold one
        // ArrayBuffer per launch until it is collected, and Chromium refuses new ones after a
        // few thousand launches (the radix sort makes that many).
        let rows = params.len().next_multiple_of(16);
        let params_block = self.gpu.buffer_in_scope(
            rows,
            wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            false,
        )?;
        let mut words = params.to_vec();
        words.resize(rows, 0);
        self.gpu.queue.write_buffer(&params_block, 0, &words);
        buffers.push(&params_block);
        let bind_group = self.gpu.bind_group(kernel, &compiled.layout, &buffers);
        let groups = workgroups(
            kernel.mode,
            count,
            kernel.threads,
            self.gpu.limits.max_groups,
        );
        let mut encoder =
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(kernel.name),
                timestamp_writes: None,
            });
            pass.set_pipeline(&compiled.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            if let Some(fault) = &compiled.fault {
                pass.set_bind_group(fault::SET, fault, &[]);
            }
            pass.dispatch_workgroups(groups, 1, 1);
        }
        self.gpu.queue.submit([encoder.finish()]);
        let (invalid, no_memory) = both(validation.pop(), no_memory.pop(), self.gpu.timeout)
            .ok_or_else(|| self.timed_out())?;
        if let Some(e) = no_memory {
            let e = one_line(&e.to_string());
            return Err(Error::launch(
                BACKEND,
                kernel.name,
                format!("out of memory: {e}"),
            ));
        }
        if let Some(e) = invalid {
            let e = one_line(&e.to_string());
            return Err(Error::launch(
                BACKEND,
                kernel.name,
                format!("binding its buffers: {e}"),
            ));
        }
        // Host outputs come back before returning.
        let outputs = host_outputs(args, &temporaries);
        let read = !outputs.is_empty();
        for (t, out) in outputs {
            self.download(t, 0, out)?;
        }
        if read {
            self.take_fault()?;
        }
        Ok(())
    }
}
