//! `Device`: one opened backend, the owner of `Buffer`s; opening one (`open`), and choosing
//! one: `auto` (the first that opens, in `Backend::AUTO_ORDER`) and `select`
//! (`RGPU_BACKEND`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::api::CpuDevices;
use crate::backend::{Backend, Skipped, BACKEND_VAR};
use crate::cpu::CpuDevice;
use crate::error::Error;
use crate::registry::{self, DeviceKind};
use crate::stats::{DeviceFacts, KernelStats};

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

    /// Opens `backend` on the best device it has (any device type: a CPU Vulkan driver too).
    pub fn open(backend: Backend) -> Result<Device, Error> {
        registry::open(backend, CpuDevices::Accept).map(Device::from_kind)
    }

    /// The first backend that opens, in `Backend::AUTO_ORDER`, and why each earlier one was
    /// skipped (not built, unavailable, or only a CPU-type Vulkan device). The cpu backend
    /// never fails, so this always returns a device.
    pub fn auto() -> (Device, Vec<Skipped>) {
        let mut skipped = Vec::new();
        for backend in Backend::AUTO_ORDER {
            if !backend.for_this_target() {
                continue;
            }
            match registry::open(backend, CpuDevices::Skip) {
                Ok(kind) => return (Device::from_kind(kind), skipped),
                Err(why) => skipped.push(Skipped {
                    backend,
                    reason: why.skip_reason(),
                }),
            }
        }
        // Unreachable in practice: the cpu backend, last in AUTO_ORDER, never fails to open.
        let cpu = Device::open(Backend::Cpu).expect("the cpu backend always opens");
        (cpu, skipped)
    }

    /// The backend `RGPU_BACKEND` names (`cpu`, `cuda`, `wgpu`, `ash`; `auto` or unset:
    /// `Device::auto`): how a program lets `rgpu run --backend X` choose. An invalid value
    /// is `Error::Config`.
    pub fn select() -> Result<(Device, Vec<Skipped>), Error> {
        let value = std::env::var_os(BACKEND_VAR);
        let value = match &value {
            None => None,
            Some(v) => Some(v.to_str().ok_or_else(|| Error::Config {
                reason: format!(
                    "{BACKEND_VAR}={v:?} is not UTF-8: set it to {} or auto",
                    Backend::names()
                ),
            })?),
        };
        select(value)
    }

    /// The cpu backend with a pool of `threads` threads of its own, whatever
    /// `RGPU_CPU_THREADS` says: how a program's own `--threads` option reaches the launches
    /// (`Device::open(Backend::Cpu)` and `select` read `RGPU_CPU_THREADS`; unset, every
    /// core). `threads` 0 is `Error::Config`.
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

    pub fn backend(&self) -> Backend {
        self.inner.kind.backend()
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

    /// Waits for every launch queued so far.
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
    /// "wgpu device 3 (llvmpipe ...)": which device, for `Error::WrongDevice`.
    pub(crate) fn label(&self) -> String {
        format!(
            "{} device {} ({})",
            self.kind.backend(),
            self.id,
            self.kind.description()
        )
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

/// `Device::select` for a value of `RGPU_BACKEND` (`None` = unset).
fn select(value: Option<&str>) -> Result<(Device, Vec<Skipped>), Error> {
    let list = match choice(value)? {
        Choice::Auto => return Ok(Device::auto()),
        Choice::List(list) => list,
    };
    let mut skipped = Vec::new();
    let mut last = None;
    for backend in list.iter().copied() {
        match Device::open(backend) {
            Ok(device) => return Ok((device, skipped)),
            Err(why) => {
                skipped.push(Skipped {
                    backend,
                    reason: why.skip_reason(),
                });
                last = Some(why);
            }
        }
    }
    match (list.len(), last) {
        (1, Some(why)) => Err(why),
        (_, _) => Err(Error::Config {
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
    }
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
