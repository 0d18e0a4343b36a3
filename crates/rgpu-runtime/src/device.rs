//! `Device`: one opened backend, the owner of `Buffer`s, and what dispatches buffer and
//! timing operations to the backend that holds them.

use crate::program::Instant;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytemuck::Pod;

use crate::backend::{self, Backend, CpuDevices, Skipped};
use crate::buffer::{Buffer, Memory, RawBuffer};
use crate::cpu::{CpuDevice, HostMemory};
use crate::error::Error;

/// One backend, opened on one device. Cheap to clone (the clones share the device).
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

/// What every buffer of a device keeps alive.
pub(crate) struct DeviceInner {
    /// Distinguishes devices for `Error::WrongDevice`.
    pub(crate) id: u64,
    pub(crate) kind: DeviceKind,
}

// One per `Device`, behind an `Arc`: the size difference of the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum DeviceKind {
    Cpu(CpuDevice),
    #[cfg(feature = "cuda")]
    Cuda(crate::cuda::CudaDevice),
    #[cfg(feature = "wgpu")]
    Wgpu(crate::vulkan::wgpu::WgpuDevice),
    #[cfg(feature = "ash")]
    Ash(crate::vulkan::ash::AshDevice),
    #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
    WebGpu(crate::webgpu::WebGpuDevice),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A buffer's memory reached a device of another backend: cannot happen through the
/// public API (buffers keep their device), but is a value anyway.
fn foreign_memory(backend: Backend) -> Error {
    Error::Transfer {
        backend,
        reason: "a buffer's memory belongs to another backend: report this as an rgpu bug".into(),
    }
}

impl Device {
    pub(crate) fn from_kind(kind: DeviceKind) -> Self {
        Self {
            inner: Arc::new(DeviceInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                kind,
            }),
        }
    }

    /// Opens `backend` on the best device it has (any device type: a CPU Vulkan driver too).
    pub fn open(backend: Backend) -> Result<Device, Error> {
        backend::open(backend, CpuDevices::Accept)
    }

    /// The first backend that opens, in `Backend::AUTO_ORDER`, and why each earlier one was
    /// skipped (not built, unavailable, or only a CPU-type Vulkan device). The cpu backend
    /// never fails, so this always returns a device.
    pub fn auto() -> (Device, Vec<Skipped>) {
        backend::auto()
    }

    /// The backend `RGPU_BACKEND` names (`cpu`, `cuda`, `wgpu`, `ash`; `auto` or unset:
    /// `Device::auto`): how a program lets `rgpu run --backend X` choose. An invalid value
    /// is `Error::Config`.
    pub fn select() -> Result<(Device, Vec<Skipped>), Error> {
        let value = std::env::var_os(backend::BACKEND_VAR);
        let value = match &value {
            None => None,
            Some(v) => Some(v.to_str().ok_or_else(|| Error::Config {
                reason: format!(
                    "{}={v:?} is not UTF-8: set it to cpu, cuda, wgpu, ash or auto",
                    backend::BACKEND_VAR
                ),
            })?),
        };
        backend::select(value)
    }

    pub fn backend(&self) -> Backend {
        self.inner.backend()
    }

    /// What it runs on, for people: the device's name, driver and limits that matter.
    pub fn description(&self) -> String {
        self.inner.description()
    }

    /// A buffer holding a copy of `data`.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>, Error> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let memory = self.inner.upload(bytes, std::mem::align_of::<T>())?;
        Ok(Buffer::from_raw(self.raw(bytes.len(), memory), data.len()))
    }

    /// A buffer of `len` zeroed elements.
    pub fn zeros<T: Pod>(&self, len: usize) -> Result<Buffer<T>, Error> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::OutOfMemory {
                    backend: self.backend(),
                    bytes: u64::MAX,
                    reason: format!("{len} elements overflow the address space"),
                })?;
        let memory = self.inner.zeros(bytes, std::mem::align_of::<T>())?;
        Ok(Buffer::from_raw(self.raw(bytes, memory), len))
    }

    fn raw(&self, bytes: usize, memory: Memory) -> RawBuffer {
        RawBuffer {
            device: Arc::clone(&self.inner),
            bytes,
            memory,
        }
    }

    /// Waits for every launch queued so far.
    pub fn sync(&self) -> Result<(), Error> {
        self.inner.sync()
    }

    /// Runs `f`, which queues launches (and must not read buffers), and returns its result
    /// with the device time of those launches in milliseconds: CUDA events, Vulkan
    /// timestamps (`None` when the device has none), wall time on the cpu. Syncs first and
    /// before returning.
    pub fn timed<R>(
        &self,
        f: impl FnOnce() -> Result<R, Error>,
    ) -> Result<(R, Option<f64>), Error> {
        let inner = &*self.inner;
        inner.sync()?;
        if matches!(inner.kind, DeviceKind::Cpu(_)) {
            let start = Instant::now();
            let result = f()?;
            return Ok((result, Some(start.elapsed().as_secs_f64() * 1e3)));
        }
        inner.begin_timing()?;
        let result = f();
        let ms = inner.end_timing();
        Ok((result?, ms?))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // Queued launches are submitted when the program lets go of the device; errors have
        // nobody left to report to.
        let _ = self.inner.flush();
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.inner.label())
    }
}

impl DeviceInner {
    pub(crate) fn backend(&self) -> Backend {
        match &self.kind {
            DeviceKind::Cpu(_) => Backend::Cpu,
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(_) => Backend::Cuda,
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(_) => Backend::Wgpu,
            #[cfg(feature = "ash")]
            DeviceKind::Ash(_) => Backend::Ash,
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(_) => Backend::WebGpu,
        }
    }

    pub(crate) fn description(&self) -> String {
        match &self.kind {
            DeviceKind::Cpu(d) => d.description(),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(d) => d.description(),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => d.description(),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => d.description(),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(d) => d.description(),
        }
    }

    /// "wgpu device 3 (llvmpipe ...)": which device, for `Error::WrongDevice`.
    pub(crate) fn label(&self) -> String {
        format!(
            "{} device {} ({})",
            self.backend(),
            self.id,
            self.description()
        )
    }

    fn upload(&self, data: &[u8], align: usize) -> Result<Memory, Error> {
        Ok(match &self.kind {
            DeviceKind::Cpu(_) => Memory::Cpu(HostMemory::copy_of(data, align)?),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(d) => Memory::Cuda(d.upload(data)?),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => Memory::Wgpu(d.upload(data)?),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => Memory::Ash(d.upload(data)?),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(d) => Memory::WebGpu(d.upload(data)?),
        })
    }

    fn zeros(&self, bytes: usize, align: usize) -> Result<Memory, Error> {
        Ok(match &self.kind {
            DeviceKind::Cpu(_) => Memory::Cpu(HostMemory::zeroed(bytes, align)?),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(d) => Memory::Cuda(d.zeros(bytes)?),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => Memory::Wgpu(d.zeros(bytes)?),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => Memory::Ash(d.zeros(bytes)?),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(d) => Memory::WebGpu(d.zeros(bytes)?),
        })
    }

    pub(crate) fn read(&self, memory: &Memory, out: &mut [u8]) -> Result<(), Error> {
        match (&self.kind, memory) {
            (DeviceKind::Cpu(_), Memory::Cpu(m)) => {
                out.copy_from_slice(m.bytes());
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (DeviceKind::Cuda(d), Memory::Cuda(m)) => d.download(m, out),
            #[cfg(feature = "wgpu")]
            (DeviceKind::Wgpu(d), Memory::Wgpu(m)) => d.download(&mut [(m, out)]),
            #[cfg(feature = "ash")]
            (DeviceKind::Ash(d), Memory::Ash(m)) => d.download(m, out),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            (DeviceKind::WebGpu(d), Memory::WebGpu(m)) => d.download(m, out),
            #[allow(unreachable_patterns)]
            _ => Err(foreign_memory(self.backend())),
        }
    }

    pub(crate) fn write(&self, memory: &mut Memory, data: &[u8]) -> Result<(), Error> {
        match (&self.kind, memory) {
            (DeviceKind::Cpu(_), Memory::Cpu(m)) => {
                m.bytes_mut().copy_from_slice(data);
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (DeviceKind::Cuda(d), Memory::Cuda(m)) => d.write(m, data),
            #[cfg(feature = "wgpu")]
            (DeviceKind::Wgpu(d), Memory::Wgpu(m)) => d.write(m, data),
            #[cfg(feature = "ash")]
            (DeviceKind::Ash(d), Memory::Ash(m)) => d.write(m, data),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            (DeviceKind::WebGpu(d), Memory::WebGpu(m)) => d.write(m, data),
            #[allow(unreachable_patterns)]
            _ => Err(foreign_memory(self.backend())),
        }
    }

    /// A buffer's memory is being dropped: backends that free memory themselves (ash) wait
    /// until no queued launch uses it.
    pub(crate) fn release(&self, memory: &mut Memory) {
        match (&self.kind, memory) {
            #[cfg(feature = "ash")]
            (DeviceKind::Ash(d), Memory::Ash(m)) => d.release(m),
            _ => {}
        }
    }

    /// Submits queued launches without waiting for them.
    pub(crate) fn flush(&self) -> Result<(), Error> {
        match &self.kind {
            DeviceKind::Cpu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(_) => Ok(()),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => d.flush(),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => d.flush(),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(_) => Ok(()),
        }
    }

    pub(crate) fn sync(&self) -> Result<(), Error> {
        match &self.kind {
            DeviceKind::Cpu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(d) => d.sync(),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => d.sync(),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => d.sync(),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(d) => d.sync(),
        }
    }

    fn begin_timing(&self) -> Result<(), Error> {
        match &self.kind {
            DeviceKind::Cpu(_) => Ok(()),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(d) => d.begin_timing(),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => d.begin_timing(),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => d.begin_timing(),
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(_) => Ok(()),
        }
    }

    /// Syncs, and returns the device time since `begin_timing`.
    fn end_timing(&self) -> Result<Option<f64>, Error> {
        match &self.kind {
            DeviceKind::Cpu(_) => Ok(None),
            #[cfg(feature = "cuda")]
            DeviceKind::Cuda(d) => d.end_timing(),
            #[cfg(feature = "wgpu")]
            DeviceKind::Wgpu(d) => d.end_timing(),
            #[cfg(feature = "ash")]
            DeviceKind::Ash(d) => d.end_timing(),
            // No timestamps on the web here: the time is unknown.
            #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
            DeviceKind::WebGpu(d) => d.sync().map(|()| None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{Input, InputOutput};

    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn devices_and_buffers_cross_threads() {
        send_sync::<Device>();
        send_sync::<Buffer<f32>>();
        send_sync::<RawBuffer>();
    }

    #[test]
    fn cpu_buffers_round_trip() {
        let device = Device::open(Backend::Cpu).unwrap();
        assert_eq!(device.backend(), Backend::Cpu);
        assert!(device.description().starts_with("CPU, "));
        let mut b = device.upload(&[1u32, 2, 3]).unwrap();
        assert_eq!(
            (b.len(), b.is_empty(), b.backend()),
            (3, false, Backend::Cpu)
        );
        assert_eq!(b.read().unwrap(), [1, 2, 3]);
        b.write(&[4, 5, 6]).unwrap();
        let mut out = [0u32; 3];
        b.read_into(&mut out).unwrap();
        assert_eq!(out, [4, 5, 6]);
        assert_eq!(Input::host(&b).unwrap(), [4, 5, 6]);
        b.host_mut().unwrap()[0] = 9;
        assert_eq!(b.read().unwrap(), [9, 5, 6]);
        let e = b.write(&[1, 2]).unwrap_err();
        assert!(
            e.to_string().contains("got 2 elements for a buffer of 3"),
            "{e}"
        );
        assert!(b.read_into(&mut [0; 4]).is_err());
        let z = device.zeros::<u64>(5).unwrap();
        assert_eq!(z.read().unwrap(), [0; 5]);
        let empty = device.zeros::<f32>(0).unwrap();
        assert!(empty.is_empty() && empty.read().unwrap().is_empty());
        assert!(matches!(
            device.zeros::<u64>(usize::MAX),
            Err(Error::OutOfMemory { .. })
        ));
        device.sync().unwrap();
        let (value, ms) = device.timed(|| Ok(7)).unwrap();
        assert_eq!(value, 7);
        assert!(ms.is_some_and(|ms| ms >= 0.0));
        let e = device
            .timed(|| -> Result<(), Error> { Err(Error::Config { reason: "x".into() }) })
            .unwrap_err();
        assert_eq!(e, Error::Config { reason: "x".into() });
        assert!(format!("{device:?}").starts_with("cpu device "));
        assert!(format!("{b:?}").contains("len: 3"));
    }
}
