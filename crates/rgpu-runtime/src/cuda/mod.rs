//! The cuda backend: embedded SASS or PTX launched on one stream through the CUDA driver API
//! (cudarc 0.19, libcuda opened at run time, so this builds and fails cleanly without CUDA).
//!
//! A kernel's module is the newest cubin (ptxas's SASS, embedded beside each PTX) the GPU
//! runs, loaded without compiling; else the newest PTX it runs, which the driver
//! JIT-compiles (a GPU newer than every cubin's major, or no cubin embedded). A cubin the
//! driver refuses falls back to the PTX. `description()` says which was loaded.
//!
//! Launches use the driver's `cuLaunchKernel` directly: argument 0 is the params struct by
//! value, arguments 1.. are one device pointer per buffer. Launches are asynchronous;
//! reads, host-slice outputs and `sync` wait for the stream. Uploads and downloads go
//! through the device's pinned staging memory (`staging`), in overlapping chunks.

mod fault;
pub(crate) mod nccl;
pub(crate) mod peer;
mod pool;
mod ptx;
mod staging;

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bytemuck::Pod;
use cudarc::driver::{
    result, sys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaSlice, CudaStream,
    DevicePtr, DevicePtrMut, DriverError,
};
use cudarc::nvrtc::Ptx;

use crate::api::{About, Api, Arg, CopyPath, Dst, MemoryOf, Src};
use crate::backend::Backend;
use crate::buffer::Buffer;
use crate::common::deadline::{launch_timeout, Lost};
use crate::common::launch::{host_inputs, host_outputs, Limits};
use crate::common::spin::{pause_after, poll_for, spin_time};
use crate::device::Device;
use crate::devices::{pick, DeviceInfo, DeviceType, Wanted};
use crate::error::Error;
use crate::kernel::{covering_grid, workgroups, Artifact, KernelInfo, CUDA_MAX_GRID};
use crate::registry::DeviceKind;
use crate::stats::{DeviceFacts, KernelStats, Stat, StatValue};

const BACKEND: Backend = Backend::Cuda;

/// A copy longer than its buffer: `Buffer` checks lengths first, so this is a bug.
fn transfer_bug(bytes: usize, capacity: usize) -> Error {
    Error::transfer(
        BACKEND,
        format!(
            "a copy of {bytes} bytes reached a buffer of {capacity}: report this as an rgpu bug"
        ),
    )
}

/// A cuda buffer's memory: at least 4 bytes, so empty buffers have an address.
pub(crate) struct CudaMemory {
    /// (Not freed once the device is lost: `cuMemFree` may wait for a kernel that never
    /// ends.)
    slice: ManuallyDrop<CudaSlice<u8>>,
    device_lost: Arc<Lost>,
}

/// The CUDA part of a device of this backend.
pub(super) fn cuda(device: &Device) -> &CudaDevice {
    match &device.inner.kind {
        DeviceKind::Cuda(d) => d,
        #[allow(unreachable_patterns)]
        _ => unreachable!("callers check that the devices are CUDA devices"),
    }
}

/// The CUDA memory of a buffer of one of this backend's devices.
pub(super) fn memory<T: Pod>(buffer: &Buffer<T>) -> &CudaMemory {
    buffer
        .raw
        .memory()
        .expect("checked: the buffer is on its CUDA device")
}

/// [`memory`], to write.
pub(super) fn memory_mut<T: Pod>(buffer: &mut Buffer<T>) -> &mut CudaMemory {
    buffer
        .raw
        .memory_mut()
        .expect("checked: the buffer is on its CUDA device")
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if !self.device_lost.is_lost() {
            // SAFETY: dropped once, here, and not used after.
            unsafe { ManuallyDrop::drop(&mut self.slice) };
        }
    }
}

/// One loaded module, and what the description says about it.
struct Module {
    module: Arc<CudaModule>,
    /// A checked build's fault record (`fault.rs`).
    fault: Option<fault::Record>,
    /// "SASS sm_90 (cubin)" or "PTX sm_90 (ISA 7.8) JIT-compiled".
    label: String,
}

/// What launches change.
#[derive(Default)]
struct State {
    /// Loaded modules by the artifact's sha256 (its address when it has none).
    modules: HashMap<(&'static str, usize), Module>,
    /// Loaded kernels by module and name.
    functions: HashMap<((&'static str, usize), &'static str), CudaFunction>,
    /// `functions`' keys in the order they were loaded (`kernel_stats` lists them so).
    loaded: Vec<((&'static str, usize), &'static str)>,
    /// The function each launcher got last time, by the addresses of its kernel record and
    /// the embedded artifacts (both `'static`): a launch finds it without searching the
    /// artifacts again (the small sorts are launch-bound).
    launched: HashMap<(usize, usize), CudaFunction>,
    /// The start event of `Device::timed`.
    timing: Option<CudaEvent>,
    /// The kernels launched since the last wait, once a checked module is loaded (a fault
    /// names them: the record does not say whose it is).
    since_wait: Vec<&'static KernelInfo>,
}

pub(crate) struct CudaDevice {
    about: About,
    stream: Arc<CudaStream>,
    cc: (i32, i32),
    limits: Limits,
    /// `CU_DEVICE_ATTRIBUTE_WARP_SIZE` (`None`: unreadable).
    warp_size: Option<u32>,
    state: Mutex<State>,
    /// Pinned memory that uploads and downloads go through; its lock also keeps one
    /// transfer at a time.
    staging: Mutex<staging::Staging>,
    /// How long a wait may take (`common::deadline`); `None`: no limit.
    timeout: Option<std::time::Duration>,
    /// How long a wait polls the stream without pausing (`common::spin`).
    spin: std::time::Duration,
    /// Set once a wait timed out or the context hit a sticky error: every later call
    /// returns it.
    lost: Arc<Lost>,
    /// The kernel launched last, which a timed-out wait names.
    last_kernel: Mutex<&'static str>,
    /// Whether a loaded module is a checked build's (has a fault record): launches and
    /// waits of release modules skip the checked launches' work.
    checked: AtomicBool,
    /// The NCCL communicators on this device (`Collective`) and its rank among each's: a
    /// wait ends with their error, and aborts them when it times out (`nccl::Shared`).
    collectives: Mutex<Vec<(std::sync::Weak<nccl::Shared>, usize)>>,
}

/// The errors after which a CUDA context is unusable (the driver's "sticky" errors): the
/// device is lost for this process.
const STICKY: [sys::cudaError_enum; 7] = [
    sys::cudaError_enum::CUDA_ERROR_ILLEGAL_ADDRESS,
    sys::cudaError_enum::CUDA_ERROR_ILLEGAL_INSTRUCTION,
    sys::cudaError_enum::CUDA_ERROR_MISALIGNED_ADDRESS,
    sys::cudaError_enum::CUDA_ERROR_INVALID_ADDRESS_SPACE,
    sys::cudaError_enum::CUDA_ERROR_HARDWARE_STACK_ERROR,
    sys::cudaError_enum::CUDA_ERROR_LAUNCH_FAILED,
    sys::cudaError_enum::CUDA_ERROR_ECC_UNCORRECTABLE,
];

/// CUDA device `ordinal` as `Device::list` shows it: its name, memory and PCI address.
fn device_info(ordinal: usize) -> Result<DeviceInfo, Error> {
    let unreadable = |e| {
        Error::unavailable(
            BACKEND,
            format!("cannot read CUDA device {ordinal} ({e}): check nvidia-smi"),
        )
    };
    let device = result::device::get(ordinal as i32).map_err(unreadable)?;
    let attribute = |a: sys::CUdevice_attribute| {
        // SAFETY: `device` is a device handle the driver just gave.
        unsafe { result::device::get_attribute(device, a) }.ok()
    };
    use sys::CUdevice_attribute as A;
    let kind = match attribute(A::CU_DEVICE_ATTRIBUTE_INTEGRATED) {
        Some(1) => DeviceType::IntegratedGpu,
        _ => DeviceType::DiscreteGpu,
    };
    let name = result::device::get_name(device).map_err(unreadable)?;
    let bus = match (
        attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
        attribute(A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
        attribute(A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID),
    ) {
        (Some(domain), Some(bus), Some(device)) => {
            Some(format!("{domain:04x}:{bus:02x}:{device:02x}.0"))
        }
        _ => None,
    };
    Ok(DeviceInfo {
        // SAFETY: as above.
        memory: unsafe { result::device::total_mem(device) }
            .ok()
            .map(|bytes| bytes as u64),
        bus,
        ..DeviceInfo::new(BACKEND, ordinal, &name, kind)
    })
}

fn driver_version() -> Option<(i32, i32)> {
    let mut version = 0;
    // SAFETY: cuDriverGetVersion writes one int; libcuda is loaded (the device is open).
    let result = unsafe { sys::cuDriverGetVersion(&mut version) };
    (result == sys::CUresult::CUDA_SUCCESS).then_some((version / 1000, version % 1000 / 10))
}

impl Api for CudaDevice {
    const BACKEND: Backend = BACKEND;
    type Memory = CudaMemory;

    /// CUDA's ordinals, as `cuDeviceGet` counts them (`CUDA_VISIBLE_DEVICES` and
    /// `CUDA_DEVICE_ORDER` apply).
    fn list() -> Result<Vec<DeviceInfo>, Error> {
        // SAFETY: only tries to dlopen libcuda; cudarc panics on first use without it.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::unavailable(
                BACKEND,
                "no CUDA driver found (libcuda.so could not be loaded): install the NVIDIA \
                 driver",
            ));
        }
        let count = CudaContext::device_count().map_err(|e| {
            Error::unavailable(
                BACKEND,
                format!("the CUDA driver found no usable GPU ({e}): check nvidia-smi"),
            )
        })?;
        if count < 1 {
            return Err(Error::unavailable(
                BACKEND,
                "the CUDA driver reports no GPU: check nvidia-smi and CUDA_VISIBLE_DEVICES",
            ));
        }
        (0..count as usize).map(device_info).collect()
    }

    fn open(wanted: &Wanted) -> Result<Self, Error> {
        let list = Self::list()?;
        let index = pick(BACKEND, &list, wanted)?;
        let info = list[index].clone();
        let ctx = CudaContext::new(index).map_err(|e| {
            Error::unavailable(
                BACKEND,
                format!("cannot open CUDA device {index} ({e}): check nvidia-smi"),
            )
        })?;
        let attribute = |a: sys::CUdevice_attribute, what: &str| {
            ctx.attribute(a)
                .map_err(|e| Error::unavailable(BACKEND, format!("cannot read the {what} ({e})")))
        };
        if ctx.has_async_alloc() {
            pool::keep_freed(ctx.cu_device())?;
        }
        let cc = ctx.compute_capability().map_err(|e| {
            Error::unavailable(BACKEND, format!("cannot read the compute capability ({e})"))
        })?;
        let shared_limit = attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            "shared memory limit",
        )?;
        let threads_limit = attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "threads per block limit",
        )?;
        let optional = |a: sys::CUdevice_attribute| {
            ctx.attribute(a)
                .ok()
                .and_then(|v| u32::try_from(v).ok())
                .filter(|&v| v > 0)
        };
        let warp_size = optional(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE);
        let sm_count = optional(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        let limits = Limits {
            max_shared: u32::try_from(shared_limit).unwrap_or(0),
            max_threads: u32::try_from(threads_limit).unwrap_or(0),
            // The params are the kernel's by-value first argument, not push constants.
            max_params: None,
            max_buffers: u32::MAX,
            max_binding: u64::MAX,
            max_groups: CUDA_MAX_GRID,
            max_buffer: info.memory.unwrap_or(u64::MAX),
        };
        let facts = DeviceFacts {
            backend: BACKEND,
            subgroup_size: warp_size,
            subgroup_min: warp_size,
            subgroup_max: warp_size,
            compute_units: sm_count,
            compute_unit: if sm_count.is_some() { "SM" } else { "" },
            source: "cuDeviceGetAttribute (WARP_SIZE, MULTIPROCESSOR_COUNT)".into(),
        };
        Ok(Self {
            about: About {
                description: format!("{}, compute {}.{}", info.name, cc.0, cc.1),
                info,
                facts,
            },
            warp_size,
            stream: ctx.default_stream(),
            cc,
            limits,
            state: Mutex::default(),
            staging: Mutex::default(),
            timeout: launch_timeout(wanted.launch_timeout)?,
            spin: spin_time(false)?,
            lost: Arc::default(),
            last_kernel: Mutex::new("(none launched yet)"),
            checked: AtomicBool::new(false),
            collectives: Mutex::default(),
        })
    }

    fn about(&self) -> &About {
        &self.about
    }

    /// "NVIDIA H100 80GB HBM3, compute 9.0, SASS sm_90 (cubin)" (once a module is loaded;
    /// "PTX sm_90 (ISA 7.8) JIT-compiled" where no embedded cubin runs on the GPU).
    fn description(&self) -> String {
        let mut text = self.about.description.clone();
        let mut labels: Vec<&str> = Vec::new();
        let state = self.state();
        for module in state.modules.values() {
            if !labels.contains(&module.label.as_str()) {
                labels.push(&module.label);
            }
        }
        labels.sort_unstable();
        for label in labels {
            text.push_str(", ");
            text.push_str(label);
        }
        text
    }

    /// `cuFuncGetAttribute` on each loaded function.
    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        let state = self.state();
        state
            .loaded
            .iter()
            .map(|key| function_stats(key.1, &state.functions[key], self.warp_size))
            .collect()
    }

    fn copy_path(&self, from: &Self) -> CopyPath {
        peer::path(self, from)
    }

    fn copy_from_device(
        &self,
        from: &Self,
        src: &CudaMemory,
        bytes: usize,
    ) -> Option<Result<CudaMemory, Error>> {
        // The whole allocation is copied (past `bytes` it holds the zeros `zeros` left), so
        // the copy is the source word for word.
        let _ = bytes;
        Some(peer::copy(self, from, src))
    }

    fn copy_between(
        &self,
        from: &Self,
        src: &CudaMemory,
        dst: &mut CudaMemory,
    ) -> Option<Result<(), Error>> {
        Some(peer::copy_into(self, from, src, dst))
    }

    /// A new buffer holding `data`.
    fn upload(&self, data: &[u8], align: usize) -> Result<CudaMemory, Error> {
        let mut memory = self.zeros(data.len(), align)?;
        self.write(&mut memory, 0, data)?;
        Ok(memory)
    }

    /// A new buffer of `bytes` zero bytes.
    fn zeros(&self, bytes: usize, _: usize) -> Result<CudaMemory, Error> {
        self.allocate(bytes, true)
    }

    /// Copies `data` into `memory` from byte `offset`, after the launches queued before.
    /// Returns once `data` is staged (the copy to the GPU may still run: later work on the
    /// stream comes after it).
    fn write(&self, memory: &mut CudaMemory, offset: usize, data: &[u8]) -> Result<(), Error> {
        self.lost.check()?;
        if data.is_empty() {
            return Ok(());
        }
        if offset + data.len() > memory.slice.len() {
            return Err(transfer_bug(offset + data.len(), memory.slice.len()));
        }
        let mut staging = self.staging();
        let (dst, _record) = memory.slice.device_ptr_mut(&self.stream);
        staging
            .copy_in(&self.stream, dst + offset as sys::CUdeviceptr, data)
            .map_err(|(what, e)| {
                Error::api_call(BACKEND, &format!("copying to the GPU: {what}"), e)
            })
    }

    /// Copies `out.len()` bytes of `memory` from byte `offset` into `out`, after every
    /// queued launch.
    fn read(&self, memory: &CudaMemory, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        if out.is_empty() {
            return self.sync();
        }
        if offset + out.len() > memory.slice.len() {
            return Err(transfer_bug(offset + out.len(), memory.slice.len()));
        }
        // The launches queued before it, under the launch timeout (the copy itself blocks).
        self.sync()?;
        let mut staging = self.staging();
        let (src, _record) = memory.slice.device_ptr(&self.stream);
        staging
            .copy_out(&self.stream, src + offset as sys::CUdeviceptr, out)
            .map_err(|(what, e)| {
                Error::api_call(BACKEND, &format!("copying from the GPU: {what}"), e)
            })
    }

    /// Polls the stream (`cuStreamQuery`) instead of blocking in `cuStreamSynchronize`, so
    /// that a kernel that never ends is `Error::Timeout` after the launch timeout: without a
    /// pause for the spin time (`RGPU_SPIN_WAIT_US`, 1 ms by default: a short kernel's sync
    /// costs no wake-up, as CUDA's own spinning wait), then with pauses of a 64th of the
    /// time waited so far (`pause_after`: a wait ends at most ~2% after the work, and a long
    /// kernel costs little CPU). Then a checked module's fault (`take_fault`).
    fn sync(&self) -> Result<(), Error> {
        self.wait()?;
        self.take_fault()
    }

    fn begin_timing(&self) -> Result<(), Error> {
        let event = self.timing_event()?;
        event
            .record(&self.stream)
            .map_err(|e| Error::api_call(BACKEND, "recording a timing event", e))?;
        self.state().timing = Some(event);
        Ok(())
    }

    fn end_timing(&self) -> Result<Option<f64>, Error> {
        let Some(start) = self.state().timing.take() else {
            return Ok(None);
        };
        let end = self.timing_event()?;
        end.record(&self.stream)
            .map_err(|e| Error::api_call(BACKEND, "recording a timing event", e))?;
        self.sync()?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(|e| Error::api_call(BACKEND, "reading the timing events", e))?;
        Ok(Some(f64::from(ms)))
    }

    fn launch<B: MemoryOf<CudaMemory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error> {
        self.lost.check()?;
        self.limits.check_launch(BACKEND, kernel, args)?;
        let function = self.function(kernel, artifacts)?;
        *self.last_kernel.lock().unwrap_or_else(|p| p.into_inner()) = kernel.name;
        if self.checked.load(Ordering::Relaxed) {
            let mut state = self.state();
            if !state.since_wait.iter().any(|k| k.name == kernel.name) {
                state.since_wait.push(kernel);
            }
        }
        // Host slices go to temporary buffers first.
        let mut temporaries = host_inputs(args)
            .map(|data| data.map(|data| self.upload(data, 1)).transpose())
            .collect::<Result<Vec<Option<CudaMemory>>, Error>>()?;
        // Every workgroup the kernel has gets a hardware one (the kernels do not stride).
        let (grid_x, grid_y) =
            covering_grid(workgroups(kernel.mode, count, kernel.threads, u32::MAX));
        let stream = &self.stream;
        {
            // Device pointers, with cudarc's records of their use (dropped after the launch).
            let mut pointers: Vec<sys::CUdeviceptr> = Vec::with_capacity(args.len());
            let mut records = Vec::with_capacity(args.len());
            for (arg, temporary) in args.iter_mut().zip(temporaries.iter_mut()) {
                let (pointer, record) = match (arg, temporary) {
                    (_, Some(t)) => t.slice.device_ptr_mut(stream),
                    (Arg::In(Src::Buffer(b)), None) => match b.memory() {
                        Some(m) => m.slice.device_ptr(stream),
                        None => return Err(Error::foreign_buffer(BACKEND, kernel.name)),
                    },
                    (Arg::InOut(Dst::Buffer(b)), None) => match b.memory_mut() {
                        Some(m) => m.slice.device_ptr_mut(stream),
                        None => return Err(Error::foreign_buffer(BACKEND, kernel.name)),
                    },
                    _ => {
                        return Err(Error::launch(
                            BACKEND,
                            kernel.name,
                            "a host argument was not uploaded: report this as an rgpu bug",
                        ))
                    }
                };
                pointers.push(pointer);
                records.push(record);
            }
            // The params struct, word-aligned (the driver copies it at the launch).
            let mut words: Vec<u32> = params
                .chunks_exact(4)
                .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
                .collect();
            let mut kernel_args: Vec<*mut c_void> = Vec::with_capacity(1 + pointers.len());
            kernel_args.push(words.as_mut_ptr().cast());
            kernel_args.extend(
                pointers
                    .iter_mut()
                    .map(|p| (p as *mut sys::CUdeviceptr).cast()),
            );
            stream.context().bind_to_thread().map_err(|e| {
                Error::launch_call(BACKEND, kernel.name, "binding the CUDA context", e)
            })?;
            // SAFETY: `function` is the kernel `NAME(Params, *T0, *T1, ..)` the launcher was
            // generated with: argument 0 points at the params bytes (`params_size`, checked
            // by `launch`), argument 1 + i at the device pointer of buffer i, whose element
            // count the params carry. Every pointer outlives the call (the driver copies
            // the arguments), and the buffers outlive the work (they are freed on this
            // stream, after it).
            unsafe {
                result::launch_kernel(
                    function.cu_function(),
                    (grid_x, grid_y, 1),
                    (kernel.threads, 1, 1),
                    0,
                    stream.cu_stream(),
                    &mut kernel_args,
                )
            }
            .map_err(|e| Error::launch_call(BACKEND, kernel.name, "cuLaunchKernel", e))?;
            drop(records);
        }
        // Host outputs come back before returning.
        for (t, out) in host_outputs(args, &temporaries) {
            self.read(t, 0, out)?;
        }
        Ok(())
    }
}

impl Drop for CudaDevice {
    fn drop(&mut self) {
        if self.lost.is_lost() {
            // A kernel may still run (a timeout) or the context is broken: unloading a
            // module, freeing pinned memory and releasing the context wait for the GPU,
            // forever after a kernel that never ends (seen on the H200: the dropping thread
            // spun in the driver). Leaked instead, as the buffers are; the process's end
            // frees them (`common::runaway`).
            std::mem::forget(std::mem::take(&mut *self.state()));
            std::mem::forget(std::mem::take(&mut *self.staging()));
            std::mem::forget(Arc::clone(&self.stream));
        } else if self.stream.context().has_async_alloc() && self.wait().is_ok() {
            // The pool keeps freed memory while the device is open (`pool`); closing it
            // gives what no buffer holds back to the driver, for other devices and
            // processes (a Vulkan device on the same GPU, the next job).
            let _ = pool::give_back(self.stream.context().cu_device());
        }
    }
}

impl CudaDevice {
    /// New memory for `bytes` bytes (its size as the device's limits round it), zeroed, or
    /// (`zeroed` false) as the allocator gives it, for a caller that writes all of it.
    fn allocate(&self, bytes: usize, zeroed: bool) -> Result<CudaMemory, Error> {
        self.lost.check()?;
        let size = self.limits.check_buffer(BACKEND, bytes)? as usize;
        let alloc = || {
            if zeroed {
                self.stream.alloc_zeros::<u8>(size)
            } else {
                // SAFETY: the caller writes every byte before anything reads it.
                unsafe { self.stream.alloc::<u8>(size) }
            }
        };
        let slice = match alloc() {
            Ok(slice) => Ok(slice),
            // The pool keeps freed memory (`pool`): once the frees queued before have run,
            // what it keeps unused goes back to the driver, and the allocation is tried again.
            Err(_) if self.stream.context().has_async_alloc() => {
                self.wait()?;
                pool::give_back(self.stream.context().cu_device())?;
                alloc()
            }
            Err(e) => Err(e),
        }
        .map_err(|e| Error::out_of_memory(BACKEND, bytes as u64, e.to_string()))?;
        Ok(CudaMemory {
            slice: ManuallyDrop::new(slice),
            device_lost: Arc::clone(&self.lost),
        })
    }

    /// Polls the stream (`cuStreamQuery`): see `sync`.
    fn wait(&self) -> Result<(), Error> {
        self.lost.check()?;
        // The stream is its context's NULL stream: the query asks the current context's.
        self.stream
            .context()
            .bind_to_thread()
            .map_err(|e| self.failed("binding the CUDA context", e))?;
        let started = std::time::Instant::now();
        let done = || {
            // SAFETY: the device's stream, alive as long as the device.
            match unsafe { sys::cuStreamQuery(self.stream.cu_stream()) }.result() {
                Ok(()) => Ok(true),
                Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
                Err(e) => Err(self.failed("waiting for the GPU (cuStreamQuery)", e)),
            }
        };
        if poll_for(self.spin, done)? {
            return Ok(());
        }
        loop {
            if done()? {
                return Ok(());
            }
            if let Some(e) = self.collective_failure(None) {
                return Err(self.lost.set(e));
            }
            if let Some(limit) = self.timeout {
                if started.elapsed() >= limit {
                    if let Some(e) = self.collective_failure(Some(limit)) {
                        return Err(self.lost.set(e));
                    }
                    let kernel = *self.last_kernel.lock().unwrap_or_else(|p| p.into_inner());
                    return Err(self.lost.set(Error::timeout(BACKEND, kernel, limit)));
                }
            }
            std::thread::sleep(pause_after(started.elapsed()));
        }
    }

    /// Watches `shared`'s communicator `local` in this device's waits.
    pub(crate) fn watch(&self, shared: std::sync::Weak<nccl::Shared>, local: usize) {
        let mut watched = self.collectives.lock().unwrap_or_else(|e| e.into_inner());
        watched.retain(|(s, _)| s.strong_count() > 0);
        watched.push((shared, local));
    }

    /// An error of the NCCL communicators on this device: one NCCL reported, or, when the
    /// wait ran out of time (`timed_out`), all of them aborted so that their kernels end
    /// (a collective waits for ever for a rank that died).
    fn collective_failure(&self, timed_out: Option<std::time::Duration>) -> Option<Error> {
        let watched = self.collectives.lock().unwrap_or_else(|e| e.into_inner());
        let live = watched
            .iter()
            .filter_map(|(s, local)| Some((s.upgrade()?, *local)));
        let mut found = None;
        for (shared, local) in live {
            let failed = match timed_out {
                None => shared.failure(local),
                Some(limit) => Some(shared.abort(
                    local,
                    format!(
                        "it did not finish within {} ms (the launch timeout)",
                        limit.as_millis()
                    ),
                )),
            };
            found = found.or(failed);
        }
        found
    }

    /// A checked module's fault (`fault.rs`), after a wait: `Error::OutOfRange` naming the
    /// kernels launched since the wait before; the record is cleared, the device usable.
    fn take_fault(&self) -> Result<(), Error> {
        if !self.checked.load(Ordering::Relaxed) {
            return Ok(());
        }
        let mut state = self.state();
        let records: Vec<fault::Record> = state.modules.values().filter_map(|m| m.fault).collect();
        if records.is_empty() {
            return Ok(());
        }
        let kernels = std::mem::take(&mut state.since_wait);
        drop(state);
        let mut first = None;
        for record in records {
            let found = record
                .take()
                .map_err(|e| self.failed("reading the checked launch's fault record", e))?;
            first = first.or(found);
        }
        match first {
            None => Ok(()),
            Some(f) => {
                let names = kernels.iter().map(|k| k.name).collect();
                let places: Vec<crate::kernel::Place> = kernels
                    .iter()
                    .flat_map(|k| k.places.iter().copied())
                    .collect();
                Err(Error::out_of_range(BACKEND, names, f.location, f.message).with_places(&places))
            }
        }
    }

    /// The error of a failed driver call: `Error::DeviceLost` with the driver's text (and
    /// the device marked lost) for a sticky error, else the call and the driver's text.
    fn failed(&self, what: &str, e: DriverError) -> Error {
        if STICKY.contains(&e.0) {
            let kernel = *self.last_kernel.lock().unwrap_or_else(|p| p.into_inner());
            return self.lost.set(Error::device_lost(
                BACKEND,
                format!("{what} after kernel `{kernel}`: {e}"),
            ));
        }
        Error::api_call(BACKEND, what, e)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves only caches behind: keep using them.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn staging(&self) -> MutexGuard<'_, staging::Staging> {
        // A panic while holding the lock leaves slots whose events still tell when they
        // are free: keep using them.
        self.staging.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn timing_event(&self) -> Result<CudaEvent, Error> {
        self.stream
            .context()
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| Error::api_call(BACKEND, "creating a timing event", e))
    }

    /// The kernel's function: the newest SASS, else PTX, the device runs, loaded once per
    /// device.
    fn function(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
    ) -> Result<CudaFunction, Error> {
        let fast = (
            std::ptr::from_ref(kernel) as usize,
            artifacts.as_ptr() as usize,
        );
        if let Some(f) = self.state().launched.get(&fast) {
            return Ok(f.clone());
        }
        let function = self.find_function(kernel, artifacts)?;
        self.state().launched.insert(fast, function.clone());
        Ok(function)
    }

    fn find_function(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
    ) -> Result<CudaFunction, Error> {
        let missing = |reason: String| Error::missing_artifact(BACKEND, kernel.name, reason);
        let ptxs = ptx::candidates(artifacts, kernel.name, ptx::PTX);
        let cubins = ptx::candidates(artifacts, kernel.name, ptx::CUBIN);
        if ptxs.is_empty() && cubins.is_empty() {
            return Err(missing(format!(
                "no embedded PTX has the entry point `{}`",
                kernel.name
            )));
        }
        let (sass, fallback) = (
            ptx::pick_sass(&cubins, self.cc),
            ptx::pick_ptx(&ptxs, self.cc),
        );
        let Some(artifact) = sass.or(fallback) else {
            let targets: Vec<String> = ptxs
                .iter()
                .map(|a| a.target.to_string())
                .chain(cubins.iter().map(|a| format!("{} SASS", a.target)))
                .collect();
            return Err(missing(format!(
                "{} has compute capability {}.{}, the binary embeds PTX for [{}]",
                self.about.info.name,
                self.cc.0,
                self.cc.1,
                targets.join(", ")
            )));
        };
        let key = (artifact.sha256, artifact.bytes.as_ptr() as usize);
        let mut state = self.state();
        if let Some(f) = state.functions.get(&(key, kernel.name)) {
            return Ok(f.clone());
        }
        let state = &mut *state;
        let module = match state.modules.entry(key) {
            Entry::Occupied(loaded) => loaded.into_mut(),
            // SASS when the device runs one (no JIT at start-up), else the PTX; a cubin the
            // driver refuses (one from a newer CUDA than the driver's) falls back to the PTX.
            Entry::Vacant(slot) => slot.insert(match sass {
                Some(cubin) => match self.load_sass(cubin) {
                    Ok(module) => module,
                    Err(e) => {
                        let Some(ptx) = fallback else {
                            return Err(Error::launch(
                                BACKEND,
                                kernel.name,
                                format!(
                                    "the driver rejected the {} cubin ({e}) and no embedded PTX \
                                     runs on compute {}.{}: rebuild it with rgpu build \
                                     --backend cuda",
                                    cubin.target, self.cc.0, self.cc.1
                                ),
                            ));
                        };
                        let mut module = self.load_ptx(kernel, ptx)?;
                        module.label = format!(
                            "{} (the {} cubin was refused: {e})",
                            module.label, cubin.target
                        );
                        module
                    }
                },
                None => self.load_ptx(kernel, artifact)?,
            }),
        };
        if module.fault.is_some() {
            self.checked.store(true, Ordering::Relaxed);
        }
        let function = module.module.load_function(kernel.name).map_err(|e| {
            Error::launch(
                BACKEND,
                kernel.name,
                format!(
                    "the {} module lists `{}` but has no such kernel ({e}): rebuild it with \
                         rgpu build --backend cuda",
                    artifact.target, kernel.name
                ),
            )
        })?;
        state.functions.insert((key, kernel.name), function.clone());
        state.loaded.push((key, kernel.name));
        Ok(function)
    }

    /// Loads a cubin: the driver only links the machine code.
    fn load_sass(&self, cubin: &Artifact) -> Result<Module, DriverError> {
        let module = self
            .stream
            .context()
            .load_module(Ptx::from_binary(cubin.bytes.to_vec()))?;
        Ok(Module {
            fault: fault::record_of(&module, &self.stream),
            module,
            label: format!("SASS {} (cubin)", cubin.target),
        })
    }

    /// Loads a PTX module: the driver JIT-compiles it for the device.
    fn load_ptx(&self, kernel: &KernelInfo, artifact: &Artifact) -> Result<Module, Error> {
        let launch_error = |reason: String| Error::launch(BACKEND, kernel.name, reason);
        let text = ptx::text(artifact.bytes).ok_or_else(|| {
            launch_error(format!(
                "the embedded {} PTX is not text: rebuild it with rgpu build --backend cuda",
                artifact.target
            ))
        })?;
        let module = self
            .stream
            .context()
            .load_module(Ptx::from_src(text))
            .map_err(|e| match e.0 {
                sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => Error::unavailable(
                    BACKEND,
                    format!(
                        "the NVIDIA driver (CUDA {}) is too old for PTX ISA {} ({}): update the \
                         driver, or build with an older toolchain or arch",
                        driver_version().map_or("?".into(), |(a, b)| format!("{a}.{b}")),
                        ptx::isa(text),
                        artifact.target
                    ),
                ),
                _ => launch_error(format!(
                    "the driver rejected the {} PTX ({e}): rebuild it with rgpu build --backend \
                     cuda",
                    artifact.target
                )),
            })?;
        Ok(Module {
            fault: fault::record_of(&module, &self.stream),
            module,
            label: format!(
                "PTX {} (ISA {}) JIT-compiled",
                artifact.target,
                ptx::isa(text)
            ),
        })
    }
}

/// The `cuFuncGetAttribute` values `kernel_stats` reports: the attribute's name, and what
/// the CUDA documentation says it is.
const FUNCTION_ATTRIBUTES: [(sys::CUfunction_attribute, &str, &str); 8] = {
    use sys::CUfunction_attribute as A;
    [
        (
            A::CU_FUNC_ATTRIBUTE_NUM_REGS,
            "NUM_REGS",
            "registers used by each thread",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
            "LOCAL_SIZE_BYTES",
            "local memory used by each thread, in bytes (register spills, local arrays)",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "SHARED_SIZE_BYTES",
            "statically-allocated shared memory per block, in bytes",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
            "CONST_SIZE_BYTES",
            "user-allocated constant memory, in bytes",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "MAX_THREADS_PER_BLOCK",
            "the most threads per block a launch of this function can have",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            "MAX_DYNAMIC_SHARED_SIZE_BYTES",
            "the most dynamically-allocated shared memory a launch can have, in bytes",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_PTX_VERSION,
            "PTX_VERSION",
            "the PTX virtual architecture it was compiled for (major * 10 + minor)",
        ),
        (
            A::CU_FUNC_ATTRIBUTE_BINARY_VERSION,
            "BINARY_VERSION",
            "the binary architecture it was compiled for (major * 10 + minor)",
        ),
    ]
};

fn function_stats(
    kernel: &'static str,
    function: &CudaFunction,
    warp_size: Option<u32>,
) -> Result<KernelStats, Error> {
    let mut stats = Vec::with_capacity(FUNCTION_ATTRIBUTES.len());
    for (attribute, name, description) in FUNCTION_ATTRIBUTES {
        let value = function.get_attribute(attribute).map_err(|e| {
            Error::no_kernel_stats(
                BACKEND,
                format!(
                    "cuFuncGetAttribute({name}) failed for kernel `{kernel}` ({e}): check \
                         the driver with nvidia-smi"
                ),
            )
        })?;
        stats.push(Stat {
            executable: String::new(),
            name: name.into(),
            value: StatValue::I64(i64::from(value)),
            description: description.into(),
        });
    }
    let whole = |name: &str| {
        stats
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.value.as_u64())
    };
    Ok(KernelStats {
        kernel,
        registers: whole("NUM_REGS"),
        local_bytes: whole("LOCAL_SIZE_BYTES"),
        shared_bytes: whole("SHARED_SIZE_BYTES"),
        subgroup_size: warp_size,
        stats,
        source: "cuFuncGetAttribute",
    })
}
