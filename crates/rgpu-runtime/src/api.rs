//! `Api`: what a backend implements. Each backend is one folder (`cpu/`, `cuda/`, `wgpu/`,
//! `ash/`, `webgpu/`: the list in `backend.rs`) whose device type implements this trait and
//! imports nothing from the other backends or from the types above them (`Device`,
//! `Buffer`); what several share is in `common/`; the choice between backends happens once,
//! above them, in `registry.rs`.
//!
//! The contract, for every backend:
//! - results are the same on every backend: a launch runs the kernel's entry point over
//!   `count` items or workgroups with buffer i bound as binding i / pointer argument 1 + i,
//!   and the params bytes as push constants / the by-value first argument;
//! - the arguments were checked before `launch` (kinds, devices, whole elements, lengths,
//!   params size), so a backend checks only what depends on its device: its limits first
//!   (`common::launch::Limits`, one message per mistake on every backend), then its code;
//! - launches on device buffers may be queued; `read`, host-slice outputs, `sync` and
//!   `timed` see every launch queued before them;
//! - every failure is an `Error` value, one line with the fix, never a panic.

use crate::backend::Backend;
use crate::devices::{DeviceInfo, Wanted};
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};
use crate::stats::{DeviceFacts, KernelStats};

/// Which device an opened backend runs on, and what it is: kept by every backend's device,
/// read through `Api::about`.
#[derive(Clone, Debug)]
pub(crate) struct About {
    /// The device as the backend's list shows it (`Device::list`).
    pub(crate) info: DeviceInfo,
    /// For people: the device's name, driver and what matters about it.
    pub(crate) description: String,
    /// What kernels see of it.
    pub(crate) facts: DeviceFacts,
}

/// One backend's device, and its buffers' memory.
pub(crate) trait Api: Sized {
    /// Which backend this is.
    const BACKEND: Backend;
    /// A buffer's memory on this backend (at least 4 bytes, so an empty buffer can be bound).
    type Memory;

    /// Every device the backend sees, in its API's order (the order indices count in), with
    /// the ones it cannot run on marked; `Error::Unavailable` when it sees none (no driver).
    fn list() -> Result<Vec<DeviceInfo>, Error>;

    /// Opens the device `wanted` names in `list`'s order (`devices::pick`), or says why it
    /// cannot (`Error::Unavailable`, `Error::NoDevice`).
    fn open(wanted: &Wanted) -> Result<Self, Error>;

    /// Which device it runs on, and what it is.
    fn about(&self) -> &About;

    /// What it runs on, for people: the device's name, driver and limits that matter.
    fn description(&self) -> String {
        self.about().description.clone()
    }

    /// Subgroup sizes and compute units, as the backend's API tells them.
    fn facts(&self) -> DeviceFacts {
        self.about().facts.clone()
    }

    /// The driver's statistics of every kernel this device has compiled for launches, in
    /// the order they were first launched; `Error::NoKernelStats` (saying what is missing)
    /// when the backend or driver cannot tell.
    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error>;

    /// New memory holding `data`, for elements aligned to `align` bytes.
    fn upload(&self, data: &[u8], align: usize) -> Result<Self::Memory, Error>;

    /// New memory of `bytes` zero bytes, for elements aligned to `align` bytes.
    fn zeros(&self, bytes: usize, align: usize) -> Result<Self::Memory, Error>;

    /// Copies `out.len()` bytes of `memory` from byte `offset` into `out`, after every
    /// queued launch. `offset` is a multiple of 4 and the range lies inside the buffer
    /// (`Buffer` checks both and widens sub-word ranges).
    fn read(&self, memory: &Self::Memory, offset: usize, out: &mut [u8]) -> Result<(), Error>;

    /// Replaces the bytes of `memory` from `offset` with `data`, after every queued launch.
    /// `offset` is a multiple of 4, and so is `data.len()` unless the range ends where the
    /// buffer's bytes end (a backend may then write zeros up to the next word).
    fn write(&self, memory: &mut Self::Memory, offset: usize, data: &[u8]) -> Result<(), Error>;

    /// A buffer's memory is being dropped: a backend that frees memory itself waits until
    /// no queued launch uses it. Others let `Self::Memory`'s own `Drop` free it.
    fn release(&self, memory: &mut Self::Memory) {
        let _ = memory;
    }

    /// How a copy from a buffer of `from` (a device of this backend) to this device goes.
    fn copy_path(&self, from: &Self) -> CopyPath {
        let _ = from;
        CopyPath::Host
    }

    /// New memory holding the first `bytes` bytes of `src`, a buffer of `from` (a device of
    /// this backend), copied after the launches queued on `from` without going through host
    /// memory; `None` where the backend has no such path (the caller reads back and
    /// uploads).
    fn copy_from_device(
        &self,
        from: &Self,
        src: &Self::Memory,
        bytes: usize,
    ) -> Option<Result<Self::Memory, Error>> {
        let _ = (from, src, bytes);
        None
    }

    /// Copies `src`, a buffer of `from` (a device of this backend), into `dst` (this
    /// device's, as large) after the launches queued on both, without going through host
    /// memory; `None` where the backend has no such path (the caller reads back and writes).
    fn copy_between(
        &self,
        from: &Self,
        src: &Self::Memory,
        dst: &mut Self::Memory,
    ) -> Option<Result<(), Error>> {
        let _ = (from, src, dst);
        None
    }

    /// The bytes of memory the host reaches directly (the cpu backend's), else `None`.
    fn host_bytes(memory: &Self::Memory) -> Option<&[u8]> {
        let _ = memory;
        None
    }

    /// As `host_bytes`, writable.
    fn host_bytes_mut(memory: &mut Self::Memory) -> Option<&mut [u8]> {
        let _ = memory;
        None
    }

    /// Submits queued launches without waiting for them.
    fn flush(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Waits for every launch queued so far.
    fn sync(&self) -> Result<(), Error>;

    /// Starts measuring device time (the default: a device without a clock).
    fn begin_timing(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Syncs, and returns the device time since `begin_timing` in milliseconds.
    fn end_timing(&self) -> Result<Option<f64>, Error> {
        Ok(None)
    }

    /// `Device::timed`: runs `f`, which queues launches, and returns its result with their
    /// device time. Syncs first and before returning.
    fn timed<R>(&self, f: impl FnOnce() -> Result<R, Error>) -> Result<(R, Option<f64>), Error> {
        self.sync()?;
        self.begin_timing()?;
        let result = f();
        let ms = self.end_timing();
        Ok((result?, ms?))
    }

    /// Runs `kernel` (see the module's contract): `count` items or workgroups, `args` in
    /// `kernel.buffers` order, `params` padded to whole words. Host-slice outputs are
    /// written back before this returns.
    fn launch<B: MemoryOf<Self::Memory>>(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
        count: u32,
        args: &mut [Arg<'_, B>],
        params: &[u8],
    ) -> Result<(), Error>;
}

/// A device buffer argument (the runtime's `RawBuffer`), as launches see it.
pub trait DeviceBuffer {
    /// Bytes the buffer holds.
    fn bytes(&self) -> usize;
}

/// A device buffer whose memory a backend with memory `M` reaches.
// Which methods are called depends on the backends built (the cpu's launch calls none).
#[allow(dead_code)]
pub(crate) trait MemoryOf<M>: DeviceBuffer {
    /// Its memory, when it is `M`: always, for a buffer of the launching device (`launch`
    /// checked that), but a value anyway.
    fn memory(&self) -> Option<&M>;
    fn memory_mut(&mut self) -> Option<&mut M>;
}

/// A read-only buffer argument, type-erased: host bytes (uploaded for the launch) or a
/// device buffer `B` (used in place).
pub enum Src<'a, B> {
    Host(&'a [u8]),
    Buffer(&'a B),
}

/// A read-write buffer argument: host bytes (uploaded, and downloaded after the launch)
/// or a device buffer `B`.
pub enum Dst<'a, B> {
    Host(&'a mut [u8]),
    Buffer(&'a mut B),
}

/// One buffer argument of a launch, in `KernelInfo::buffers` order.
pub enum Arg<'a, B> {
    In(Src<'a, B>),
    InOut(Dst<'a, B>),
}

impl<B: DeviceBuffer> Src<'_, B> {
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Src::Host(h) => h.len(),
            Src::Buffer(b) => b.bytes(),
        }
    }
}

impl<B: DeviceBuffer> Dst<'_, B> {
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Dst::Host(h) => h.len(),
            Dst::Buffer(b) => b.bytes(),
        }
    }
}

impl<B: DeviceBuffer> Arg<'_, B> {
    /// Bytes the argument holds.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Arg::In(src) => src.bytes(),
            Arg::InOut(dst) => dst.bytes(),
        }
    }
}

/// How `Device::copy_from` moves a buffer's bytes from one device to another
/// (`Device::copy_path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyPath {
    /// Both are the same GPU: a copy inside its memory.
    SameDevice,
    /// GPU to GPU directly (CUDA peer access: NVLink or PCIe), the host not involved.
    Peer,
    /// The driver copies GPU to GPU itself, staging through host memory (CUDA without peer
    /// access between the two).
    DriverStaged,
    /// rgpu reads the buffer back into host memory and uploads it (Vulkan, the cpu, two
    /// backends).
    Host,
}

impl std::fmt::Display for CopyPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CopyPath::SameDevice => "same device (a copy inside its memory)",
            CopyPath::Peer => "peer (GPU to GPU, peer access)",
            CopyPath::DriverStaged => "staged by the driver through host memory (no peer access)",
            CopyPath::Host => "through host memory (read back, then uploaded)",
        })
    }
}
