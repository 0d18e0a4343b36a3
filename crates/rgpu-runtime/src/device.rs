//! `Device`: one opened device of one backend, the owner of `Buffer`s. Listing a backend's
//! devices (`list`), opening one (`open`: the best, `open_on`: by index or name) or every
//! GPU of a backend (`open_all`), and choosing: `auto` (the first backend that opens, in
//! `Backend::AUTO_ORDER`), `select` (`RGPU_BACKEND`, `RGPU_DEVICE`) and its options form
//! (`Device::options()`: the program's own backend, device and cpu thread count).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytemuck::Pod;

use crate::api::CopyPath;
use crate::backend::{Backend, Skipped, BACKEND_VAR};
use crate::buffer::{Buffer, RawBuffer};
use crate::cpu::CpuDevice;
use crate::devices::{CpuDevices, DeviceChoice, DeviceInfo, DeviceType, Wanted};
use crate::error::Error;
use crate::registry::{self, DeviceKind};
use crate::stats::{DeviceFacts, KernelStats};

/// One device of one backend, opened. Cheap to clone (the clones share the device); each
/// `open` makes a device of its own (with buffers of its own), also of the same hardware.
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

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Device {
    fn from_kind(kind: DeviceKind) -> Self {
        Self {
            inner: Arc::new(DeviceInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                kind,
            }),
        }
    }

    /// The devices of `backend`, in the order its API counts them (the index
    /// `open_on(backend, index)` and `RGPU_DEVICE=index` open; docs/reference.md says what
    /// the order is on each backend), those it cannot run on marked `unusable`.
    /// `Error::NotBuilt` or `Error::Unavailable` (no driver) when it has none to list.
    pub fn list(backend: Backend) -> Result<Vec<DeviceInfo>, Error> {
        registry::list(backend)
    }

    /// Opens `backend` on its best device (a discrete GPU before an integrated, virtual,
    /// other or CPU-type one; the first in the list among equals; a CPU Vulkan driver too).
    pub fn open(backend: Backend) -> Result<Device, Error> {
        Device::open_wanted(backend, &Wanted::best())
    }

    /// Opens device `device` of `backend`: an index of `list` (`1`), or a part of one
    /// device's name (`"H100"`, ignoring case). A device that is not there, a name that
    /// matches none or several, is `Error::NoDevice` listing the devices there are: never
    /// another device.
    pub fn open_on(backend: Backend, device: impl Into<DeviceChoice>) -> Result<Device, Error> {
        Device::open_wanted(backend, &Wanted::device(device.into()))
    }

    /// Opens every GPU of `backend` (the devices `list` shows usable and not CPU-type; the
    /// CPU-type ones where that is all it has, the cpu backend's one device), in list
    /// order: a device each, to split work over (each may be used from its own thread).
    pub fn open_all(backend: Backend) -> Result<Vec<Device>, Error> {
        open_every(backend, &Wanted::best())
    }

    fn open_wanted(backend: Backend, wanted: &Wanted) -> Result<Device, Error> {
        registry::open(backend, wanted).map(Device::from_kind)
    }

    /// The first backend that opens, in `Backend::AUTO_ORDER`, on its best device, and why
    /// each earlier one was skipped (not built, unavailable, or only a CPU-type Vulkan
    /// device). Reads no `RGPU_*` variable but `RGPU_CPU_THREADS`; always returns a device
    /// (the cpu, with rayon's global pool where `RGPU_CPU_THREADS` is invalid).
    pub fn auto() -> (Device, Vec<Skipped>) {
        let wanted = Wanted {
            cpu_devices: CpuDevices::Skip,
            ..Wanted::best()
        };
        let mut skipped = Vec::new();
        for backend in Backend::AUTO_ORDER {
            if !backend.for_this_target() {
                continue;
            }
            match Device::open_wanted(backend, &wanted) {
                Ok(device) => return (device, skipped),
                Err(why) => skipped.push(Skipped {
                    backend,
                    reason: why.skip_reason(),
                }),
            }
        }
        let cpu = Device::from_kind(DeviceKind::Cpu(CpuDevice::global()));
        (cpu, skipped)
    }

    /// The backend `RGPU_BACKEND` names (`cpu`, `cuda`, `wgpu`, `ash`, a comma-separated
    /// list tried in order; `auto` or unset: as `Device::auto`) on the device `RGPU_DEVICE`
    /// names (an index or a part of a name; unset: the best): how a program lets `rgpu run
    /// --backend X` and its user choose. Same as `Device::options().select()`.
    pub fn select() -> Result<(Device, Vec<Skipped>), Error> {
        Device::options().select()
    }

    /// How to choose, for a program with its own options: each setting given wins over its
    /// variable (`RGPU_BACKEND`, `RGPU_DEVICE`, `RGPU_CPU_THREADS`), the rest are read as
    /// `select` reads them. `Device::options().cpu_threads(n).select()?` honours a
    /// program's `--threads` on the cpu backend, whatever backend is chosen.
    pub fn options() -> DeviceOptions {
        DeviceOptions::default()
    }

    /// The cpu backend with a pool of `threads` threads of its own, whatever
    /// `RGPU_CPU_THREADS` says (`Device::options().cpu_threads(n)` does the same where the
    /// cpu is chosen). `threads` 0 is `Error::Config`.
    pub fn cpu_with_threads(threads: usize) -> Result<Device, Error> {
        Ok(Device::from_kind(DeviceKind::Cpu(CpuDevice::with_threads(
            threads,
        )?)))
    }

    /// Runs `f` on this device's cpu threads (its pool); on another backend, here.
    pub(crate) fn cpu_install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.inner.kind {
            DeviceKind::Cpu(cpu) => cpu.install(f),
            #[allow(unreachable_patterns)]
            _ => f(),
        }
    }

    /// The cpu device's launch timeout (`None` on other backends: launchers on the cpu only
    /// ask it).
    pub(crate) fn cpu_timeout(&self) -> Option<Duration> {
        match &self.inner.kind {
            DeviceKind::Cpu(cpu) => cpu.timeout(),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    pub fn backend(&self) -> Backend {
        self.inner.kind.backend()
    }

    /// Which device this is: its index in `Device::list(backend)`, name, kind, memory.
    pub fn info(&self) -> DeviceInfo {
        self.inner.kind.info().clone()
    }

    /// What it runs on, for people: the device's name, driver and limits that matter.
    pub fn description(&self) -> String {
        self.inner.kind.description()
    }

    /// What kernels see of the device: the subgroup size(s) and the number of compute units
    /// (SMs, CUs; the cpu backend's threads), `None` where the backend's API cannot tell.
    pub fn facts(&self) -> DeviceFacts {
        self.inner.kind.facts()
    }

    /// The driver's statistics (registers, spills, shared memory, and its whole list as it
    /// gave it) of every kernel this device has launched so far, in first-launch order:
    /// CUDA's function attributes, Vulkan's `VK_KHR_pipeline_executable_properties` (ash).
    /// `Error::NoKernelStats` says what is missing where the backend or driver cannot tell
    /// (wgpu, webgpu and the cpu always; ash without the extension). Launch timings do not
    /// change: ash compiles a separate copy of each pipeline to ask about.
    pub fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        self.inner.kind.kernel_stats()
    }

    /// A copy on this device of `buffer`, which may belong to any device of any backend,
    /// made after the launches queued on its device: how data moves between devices.
    /// Between two CUDA devices the bytes go GPU to GPU (peer access where the two allow
    /// it, else the driver stages them) and the call returns once they are copied; every
    /// other pair reads the buffer back to host memory and uploads it here. `copy_path`
    /// says which.
    pub fn copy_from<T: Pod>(&self, buffer: &Buffer<T>) -> Result<Buffer<T>, Error> {
        let raw = &buffer.raw;
        let from = &raw.device.kind;
        if let Some(memory) = self
            .inner
            .kind
            .copy_from_device(from, &raw.memory, raw.bytes)
        {
            let raw = RawBuffer {
                device: Arc::clone(&self.inner),
                bytes: raw.bytes,
                memory: memory?,
            };
            return Ok(Buffer::from_raw(raw, buffer.len()));
        }
        self.upload(&buffer.read()?)
    }

    /// Whether `buffer` belongs to this device: made by it or a clone of it (two `open`s
    /// of one GPU are two devices, each owning its own buffers).
    pub fn owns<T: Pod>(&self, buffer: &Buffer<T>) -> bool {
        buffer.raw.device.id == self.inner.id
    }

    /// Whether `other` is this device (a clone of it), not another opening.
    pub fn is(&self, other: &Device) -> bool {
        self.inner.id == other.inner.id
    }

    /// How `copy_from` moves a buffer of `from` to this device: `CopyPath::SameDevice`,
    /// `Peer` or `DriverStaged` between CUDA devices, else `Host`.
    pub fn copy_path(&self, from: &Device) -> CopyPath {
        self.inner.kind.copy_path(&from.inner.kind)
    }

    /// Waits for every launch queued so far. Between chunks of a long computation, it is
    /// the point where a program can report progress (docs/devices.md).
    pub fn sync(&self) -> Result<(), Error> {
        self.inner.kind.sync()
    }

    /// Runs `f`, which queues launches (and must not read buffers), and returns its result
    /// with the device time of those launches in milliseconds: CUDA events, Vulkan
    /// timestamps (`None` when the device has none), wall time on the cpu. Syncs first and
    /// before returning.
    pub fn timed<R>(
        &self,
        f: impl FnOnce() -> Result<R, Error>,
    ) -> Result<(R, Option<f64>), Error> {
        self.inner.kind.timed(f)
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // Queued launches are submitted when the program lets go of the device; errors have
        // nobody left to report to.
        let _ = self.inner.kind.flush();
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.inner.label())
    }
}

impl DeviceInner {
    /// "wgpu device 0 (llvmpipe (LLVM 15.0.6, 256 bits))": which device, by its index in
    /// the backend's list, for `Error::WrongDevice`.
    pub(crate) fn label(&self) -> String {
        let info = self.kind.info();
        format!("{} device {} ({})", info.backend, info.index, info.name)
    }
}

/// The options of `Device::options()`: what the program chose itself; what it leaves is
/// read from the environment as `Device::select` reads it.
#[derive(Clone, Debug, Default)]
pub struct DeviceOptions {
    plan: Option<Plan>,
    device: Option<DeviceChoice>,
    cpu_threads: Option<usize>,
    launch_timeout: Option<Option<Duration>>,
}

impl DeviceOptions {
    /// Open this backend (instead of what `RGPU_BACKEND` says).
    pub fn backend(mut self, backend: Backend) -> Self {
        self.plan = Some(Plan::List(vec![backend]));
        self
    }

    /// Try the backends as `Device::auto` does (instead of what `RGPU_BACKEND` says).
    pub fn auto(mut self) -> Self {
        self.plan = Some(Plan::Auto);
        self
    }

    /// Open this device of the backend: an index or a part of a name (instead of what
    /// `RGPU_DEVICE` says); `DeviceChoice::Best` for the best one.
    pub fn device(mut self, device: impl Into<DeviceChoice>) -> Self {
        self.device = Some(device.into());
        self
    }

    /// Where the choice ends on the cpu backend, give it `threads` threads of its own
    /// (instead of what `RGPU_CPU_THREADS` says); 0 is `Error::Config` there.
    pub fn cpu_threads(mut self, threads: usize) -> Self {
        self.cpu_threads = Some(threads);
        self
    }

    /// Give each launch, and each wait for queued launches (`sync`, a read), at most
    /// `limit` (instead of what `RGPU_LAUNCH_TIMEOUT_MS` says; default 60 s): past it the
    /// call returns `Error::Timeout` naming the kernel. `Duration::ZERO`: no limit.
    pub fn launch_timeout(mut self, limit: Duration) -> Self {
        self.launch_timeout = Some((!limit.is_zero()).then_some(limit));
        self
    }

    /// The first backend that opens (see `Device::select`), and why each earlier one was
    /// skipped. A device named (here or in `RGPU_DEVICE`) that the first backend to open
    /// does not have is an error, never another device; so is an invalid setting.
    pub fn select(self) -> Result<(Device, Vec<Skipped>), Error> {
        let (plan, wanted) = self.plan()?;
        plan.first(|backend| Device::open_wanted(backend, &wanted))
    }

    /// As `select`, but every GPU of the chosen backend (as `Device::open_all`; only the
    /// device named, where one is named): how a program spreads its work over all of them.
    pub fn select_all(self) -> Result<(Vec<Device>, Vec<Skipped>), Error> {
        let (plan, wanted) = self.plan()?;
        plan.first(|backend| match wanted.device {
            DeviceChoice::Best => open_every(backend, &wanted),
            _ => Device::open_wanted(backend, &wanted).map(|d| vec![d]),
        })
    }

    /// The backends to try, and what to ask each for.
    fn plan(self) -> Result<(Plan, Wanted), Error> {
        let plan = match self.plan {
            Some(plan) => plan,
            None => match choice(backend_var()?.as_deref())? {
                Choice::Auto => Plan::Auto,
                Choice::List(list) => Plan::List(list),
            },
        };
        let (device, from_env) = match self.device {
            Some(device) => (device, false),
            None => (DeviceChoice::from_env()?, true),
        };
        let cpu_devices = match (&plan, &device) {
            // Auto passes over a backend that has only a software Vulkan device, unless
            // a device was named.
            (Plan::Auto, DeviceChoice::Best) => CpuDevices::Skip,
            _ => CpuDevices::Accept,
        };
        let wanted = Wanted {
            from_env: from_env && device != DeviceChoice::Best,
            device,
            cpu_devices,
            cpu_threads: self.cpu_threads,
            launch_timeout: self.launch_timeout,
        };
        Ok((plan, wanted))
    }
}

/// `RGPU_BACKEND`, `None` when unset; not UTF-8 is `Error::Config`.
fn backend_var() -> Result<Option<String>, Error> {
    match std::env::var_os(BACKEND_VAR) {
        None => Ok(None),
        Some(v) => v.into_string().map(Some).map_err(|v| Error::Config {
            reason: format!(
                "{BACKEND_VAR}={v:?} is not UTF-8: set it to {} or auto",
                Backend::names()
            ),
        }),
    }
}

/// Every GPU of `backend` (see `Device::open_all`), each with what `wanted` says of the cpu.
fn open_every(backend: Backend, wanted: &Wanted) -> Result<Vec<Device>, Error> {
    let list = Device::list(backend)?;
    let usable: Vec<&DeviceInfo> = list.iter().filter(|d| d.unusable.is_none()).collect();
    let gpus: Vec<&DeviceInfo> = usable
        .iter()
        .copied()
        .filter(|d| d.kind != DeviceType::Cpu)
        .collect();
    let chosen = match (gpus.is_empty(), usable.first()) {
        (false, _) => gpus,
        (true, Some(cpu)) if wanted.cpu_devices == CpuDevices::Skip && backend != Backend::Cpu => {
            return Err(Error::unavailable(
                backend,
                crate::devices::cpu_device_reason(backend, &cpu.name),
            ))
        }
        (true, _) => usable,
    };
    if chosen.is_empty() {
        // No device can run kernels: the best-device rule says why, with the list.
        return Device::open_wanted(backend, wanted).map(|d| vec![d]);
    }
    chosen
        .into_iter()
        .map(|d| {
            let one = Wanted {
                device: DeviceChoice::Index(d.index),
                from_env: false,
                ..wanted.clone()
            };
            Device::open_wanted(backend, &one)
        })
        .collect()
}

/// Which backends a choice tries, in order.
#[derive(Clone, Debug)]
enum Plan {
    /// `Backend::AUTO_ORDER`, those this target can have.
    Auto,
    /// These, as asked (`RGPU_BACKEND=cuda,wgpu`, `DeviceOptions::backend`).
    List(Vec<Backend>),
}

impl Plan {
    /// What `open` gives for the first backend that opens, and why each earlier one was
    /// skipped. A device that is not there or an invalid setting ends the search: the
    /// user asked for something this backend cannot give, and another device or backend
    /// would not be it.
    fn first<T>(
        &self,
        mut open: impl FnMut(Backend) -> Result<T, Error>,
    ) -> Result<(T, Vec<Skipped>), Error> {
        let list: Vec<Backend> = match self {
            Plan::Auto => Backend::AUTO_ORDER
                .into_iter()
                .filter(|b| b.for_this_target())
                .collect(),
            Plan::List(list) => list.clone(),
        };
        let mut skipped = Vec::new();
        let mut last = None;
        for backend in list.iter().copied() {
            match open(backend) {
                Ok(device) => return Ok((device, skipped)),
                Err(e @ (Error::NoDevice { .. } | Error::Config { .. })) => return Err(e),
                Err(why) => {
                    skipped.push(Skipped {
                        backend,
                        reason: why.skip_reason(),
                    });
                    last = Some(why);
                }
            }
        }
        match (self, list.len(), last) {
            (Plan::List(_), 1, Some(why)) => Err(why),
            (Plan::List(_), _, _) => Err(Error::Config {
                reason: format!(
                    "none of {BACKEND_VAR}={} opens here ({}): pick one that does, or unset it",
                    list.iter().map(|b| b.name()).collect::<Vec<_>>().join(","),
                    skipped
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }),
            // The cpu is last in AUTO_ORDER and opens unless a setting is invalid (an
            // error above): unreachable in practice, but a value anyway.
            (Plan::Auto, _, _) => Err(Error::Config {
                reason: format!(
                    "no backend opens here ({})",
                    skipped
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }),
        }
    }
}

/// What `RGPU_BACKEND` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Choice {
    Auto,
    /// These backends, tried in order (`RGPU_BACKEND=cuda,wgpu`).
    List(Vec<Backend>),
}

/// Reads a value of `RGPU_BACKEND` (`None` = unset): `auto`, one backend, or several,
/// comma-separated, tried in order.
fn choice(value: Option<&str>) -> Result<Choice, Error> {
    let value = value.map(str::trim).unwrap_or("");
    if value.is_empty() || value == "auto" {
        return Ok(Choice::Auto);
    }
    let mut list = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let backend = Backend::parse(name).ok_or_else(|| Error::Config {
            reason: format!(
                "{BACKEND_VAR}={value}: `{name}` is not a backend: set it to {}, a \
                 comma-separated list of them, or auto (or unset it)",
                Backend::names()
            ),
        })?;
        if !list.contains(&backend) {
            list.push(backend);
        }
    }
    Ok(Choice::List(list))
}

/// `Device::select` for a value of `RGPU_BACKEND` (`None` = unset), the best device.
#[cfg(test)]
fn select(value: Option<&str>) -> Result<(Device, Vec<Skipped>), Error> {
    let options = match choice(value)? {
        Choice::Auto => DeviceOptions::default().auto(),
        Choice::List(list) => DeviceOptions {
            plan: Some(Plan::List(list)),
            ..DeviceOptions::default()
        },
    };
    options.device(DeviceChoice::Best).select()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn devices_cross_threads() {
        send_sync::<Device>();
    }

    #[test]
    fn a_device_owns_its_buffers_and_is_its_clones() {
        let (a, b) = (
            Device::open(Backend::Cpu).unwrap(),
            Device::open(Backend::Cpu).unwrap(),
        );
        let buffer = a.zeros::<u32>(3).unwrap();
        assert!(a.owns(&buffer) && a.clone().owns(&buffer) && !b.owns(&buffer));
        assert!(a.is(&a.clone()) && !a.is(&b));
    }

    #[test]
    fn rgpu_backend_values() {
        assert_eq!(choice(None), Ok(Choice::Auto));
        assert_eq!(choice(Some("")), Ok(Choice::Auto));
        assert_eq!(choice(Some("auto")), Ok(Choice::Auto));
        assert_eq!(choice(Some("wgpu")), Ok(Choice::List(vec![Backend::Wgpu])));
        assert_eq!(choice(Some(" ash\n")), Ok(Choice::List(vec![Backend::Ash])));
        assert_eq!(
            choice(Some("cuda,cpu,cuda")),
            Ok(Choice::List(vec![Backend::Cuda, Backend::Cpu]))
        );
        let e = choice(Some("gpu")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "RGPU_BACKEND=gpu: `gpu` is not a backend: set it to cpu, cuda, wgpu, ash, webgpu, \
             a comma-separated list of them, or auto (or unset it)"
        );
    }

    #[test]
    fn select_opens_what_it_is_asked_for() {
        let (device, skipped) = select(Some("cpu")).unwrap();
        assert_eq!(device.backend(), Backend::Cpu);
        assert!(skipped.is_empty());
        assert!(matches!(select(Some("metal")), Err(Error::Config { .. })));
        // Auto always ends with a device, the cpu one at worst, and says why it skipped.
        let (device, skipped) = select(None).unwrap();
        let tried: Vec<Backend> = skipped.iter().map(|s| s.backend).collect();
        let order: Vec<Backend> = Backend::AUTO_ORDER
            .into_iter()
            .filter(|b| b.for_this_target())
            .collect();
        let at = order.iter().position(|&b| b == device.backend()).unwrap();
        assert_eq!(tried, order[..at]);
        for s in &skipped {
            assert!(s.to_string().starts_with(&format!("{}: ", s.backend)));
        }
    }

    #[test]
    fn a_backend_that_is_not_built_is_named_with_the_fix() {
        for b in Backend::ALL
            .into_iter()
            .filter(|b| !b.is_built() && b.for_this_target())
        {
            assert_eq!(Device::open(b).err(), Some(Error::NotBuilt { backend: b }));
            let (_, skipped) = select(None).unwrap();
            let s = skipped.iter().find(|s| s.backend == b).unwrap();
            assert_eq!(
                s.reason,
                format!("built without the {b} feature: run rgpu build --backend {b}")
            );
        }
    }

    #[test]
    fn the_cpu_device_states_its_facts_and_has_no_kernel_stats() {
        let device = Device::cpu_with_threads(3).unwrap();
        let facts = device.facts();
        assert_eq!(facts.backend, Backend::Cpu);
        assert_eq!(
            (facts.subgroup_size, facts.subgroup_min, facts.subgroup_max),
            (Some(1), Some(1), Some(1))
        );
        assert_eq!(
            (facts.compute_units, facts.compute_unit),
            (Some(3), "thread")
        );
        let e = device.kernel_stats().unwrap_err();
        assert!(matches!(e, Error::NoKernelStats { .. }), "{e}");
        assert!(
            e.to_string()
                .starts_with("cpu: no per-kernel statistics: the cpu backend runs kernels"),
            "{e}"
        );
        assert!(!e.to_string().contains("  "), "{e}");
    }

    #[test]
    fn the_cpu_device_times_wall_time() {
        let device = Device::open(Backend::Cpu).unwrap();
        assert!(device.description().starts_with("CPU, "));
        device.sync().unwrap();
        let (value, ms) = device.timed(|| Ok(7)).unwrap();
        assert_eq!(value, 7);
        assert!(ms.is_some_and(|ms| ms >= 0.0));
        let e = device
            .timed(|| -> Result<(), Error> { Err(Error::Config { reason: "x".into() }) })
            .unwrap_err();
        assert_eq!(e, Error::Config { reason: "x".into() });
        assert!(format!("{device:?}").starts_with("cpu device "));
    }
}
