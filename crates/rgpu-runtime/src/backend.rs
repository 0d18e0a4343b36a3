//! `Backend` (which API runs a launch), opening one, and choosing one: `auto` (the first
//! that opens, in `Backend::AUTO_ORDER`) and `select` (`RGPU_BACKEND`).

use std::fmt;

use crate::device::Device;
use crate::error::Error;

/// Every backend the runtime knows, built into this binary or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The CPU: rayon over items, coroutines for workgroups. Always built.
    Cpu,
    /// NVIDIA GPUs through the CUDA driver API (cudarc), running embedded PTX.
    Cuda,
    /// Vulkan (or Metal/DX12) through wgpu, running embedded SPIR-V.
    Wgpu,
    /// Vulkan 1.2 through ash, running embedded SPIR-V.
    Ash,
    /// The browser's WebGPU (wasm32, through wgpu), running embedded WGSL.
    WebGpu,
}

impl Backend {
    pub const ALL: [Backend; 5] = [
        Backend::Cpu,
        Backend::Cuda,
        Backend::Wgpu,
        Backend::Ash,
        Backend::WebGpu,
    ];

    /// The order `Device::auto` tries them in.
    pub const AUTO_ORDER: [Backend; 5] = [
        Backend::Cuda,
        Backend::Wgpu,
        Backend::Ash,
        Backend::WebGpu,
        Backend::Cpu,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::Wgpu => "wgpu",
            Backend::Ash => "ash",
            Backend::WebGpu => "webgpu",
        }
    }

    /// `"cpu"`, `"cuda"`, `"wgpu"`, `"ash"` or `"webgpu"`.
    pub fn parse(s: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == s)
    }

    /// Whether this binary was built with the backend's cargo feature (cpu always is).
    pub const fn is_built(self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::Cuda => cfg!(feature = "cuda"),
            Backend::Wgpu => cfg!(feature = "wgpu"),
            Backend::Ash => cfg!(feature = "ash"),
            Backend::WebGpu => cfg!(all(feature = "webgpu", target_arch = "wasm32")),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend `Device::auto` passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub backend: Backend,
    pub reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.backend, self.reason)
    }
}

/// The environment variable through which rgpu (`rgpu run --backend X`) picks a backend.
pub const BACKEND_VAR: &str = "RGPU_BACKEND";

/// What `RGPU_BACKEND` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    Auto,
    /// These backends, tried in order (`RGPU_BACKEND=cuda,wgpu`).
    List(Vec<Backend>),
}

/// Reads a value of `RGPU_BACKEND` (`None` = unset): `auto`, one backend, or several,
/// comma-separated, tried in order.
pub(crate) fn choice(value: Option<&str>) -> Result<Choice, Error> {
    let value = value.map(str::trim).unwrap_or("");
    if value.is_empty() || value == "auto" {
        return Ok(Choice::Auto);
    }
    let mut list = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let backend = Backend::parse(name).ok_or_else(|| Error::Config {
            reason: format!(
                "{BACKEND_VAR}={value}: `{name}` is not a backend: set it to cpu, cuda, wgpu, \
                 ash, webgpu, a comma-separated list of them, or auto (or unset it)"
            ),
        })?;
        if !list.contains(&backend) {
            list.push(backend);
        }
    }
    Ok(Choice::List(list))
}

/// Whether opening a Vulkan backend may end on a CPU-type device (lavapipe, llvmpipe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuDevices {
    /// `Device::open`: the caller asked for this backend, so any device will do.
    Accept,
    /// `Device::auto`: the cpu backend is a better CPU than a software Vulkan driver.
    Skip,
}

/// The reason `auto` gives for passing over a CPU-type Vulkan device.
#[cfg(any(feature = "wgpu", feature = "ash", test))]
pub(crate) fn cpu_device_reason(backend: Backend, name: &str) -> String {
    format!(
        "only a CPU Vulkan device ({name}); auto prefers the cpu backend: ask for it with \
         {BACKEND_VAR}={backend}"
    )
}

pub(crate) fn open(backend: Backend, cpu_devices: CpuDevices) -> Result<Device, Error> {
    let _ = cpu_devices; // unused when no Vulkan backend is built
    let kind = match backend {
        Backend::Cpu => crate::device::DeviceKind::Cpu(crate::cpu::CpuDevice::new()),
        #[cfg(feature = "cuda")]
        Backend::Cuda => crate::device::DeviceKind::Cuda(crate::cuda::CudaDevice::open()?),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => {
            crate::device::DeviceKind::Wgpu(crate::vulkan::wgpu::WgpuDevice::open(cpu_devices)?)
        }
        #[cfg(feature = "ash")]
        Backend::Ash => {
            crate::device::DeviceKind::Ash(crate::vulkan::ash::AshDevice::open(cpu_devices)?)
        }
        #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
        Backend::WebGpu => crate::device::DeviceKind::WebGpu(crate::webgpu::WebGpuDevice::open()?),
        #[allow(unreachable_patterns)]
        other => return Err(Error::NotBuilt { backend: other }),
    };
    Ok(Device::from_kind(kind))
}

pub(crate) fn auto() -> (Device, Vec<Skipped>) {
    let mut skipped = Vec::new();
    for backend in Backend::AUTO_ORDER {
        match open(backend, CpuDevices::Skip) {
            Ok(device) => return (device, skipped),
            Err(why) => skipped.push(Skipped {
                backend,
                reason: why.skip_reason(),
            }),
        }
    }
    // Unreachable in practice: the cpu backend, last in AUTO_ORDER, never fails to open.
    (
        Device::from_kind(crate::device::DeviceKind::Cpu(crate::cpu::CpuDevice::new())),
        skipped,
    )
}

pub(crate) fn select(value: Option<&str>) -> Result<(Device, Vec<Skipped>), Error> {
    let list = match choice(value)? {
        Choice::Auto => return Ok(auto()),
        Choice::List(list) => list,
    };
    let mut skipped = Vec::new();
    let mut last = None;
    for backend in list.iter().copied() {
        match open(backend, CpuDevices::Accept) {
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

    #[test]
    fn names_round_trip() {
        for b in Backend::ALL {
            assert_eq!(Backend::parse(b.name()), Some(b));
            assert_eq!(b.to_string(), b.name());
        }
        assert_eq!(Backend::parse("CUDA"), None);
        assert_eq!(Backend::parse("vulkan"), None);
        assert!(Backend::Cpu.is_built());
        assert_eq!(Backend::Cuda.is_built(), cfg!(feature = "cuda"));
        assert_eq!(Backend::AUTO_ORDER.last(), Some(&Backend::Cpu));
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
        let at = Backend::AUTO_ORDER
            .iter()
            .position(|&b| b == device.backend())
            .unwrap();
        assert_eq!(tried, Backend::AUTO_ORDER[..at]);
        for s in &skipped {
            assert!(s.to_string().starts_with(&format!("{}: ", s.backend)));
        }
    }

    #[test]
    fn a_backend_that_is_not_built_is_named_with_the_fix() {
        for b in Backend::ALL.into_iter().filter(|b| !b.is_built()) {
            assert_eq!(
                open(b, CpuDevices::Accept).err(),
                Some(Error::NotBuilt { backend: b })
            );
            let (_, skipped) = select(None).unwrap();
            let s = skipped.iter().find(|s| s.backend == b).unwrap();
            assert_eq!(
                s.reason,
                format!("built without the {b} feature: run rgpu build --backend {b}")
            );
        }
    }

    #[test]
    fn cpu_device_reason_names_the_variable() {
        assert_eq!(
            cpu_device_reason(Backend::Wgpu, "llvmpipe (LLVM 19.1.7, 256 bits)"),
            "only a CPU Vulkan device (llvmpipe (LLVM 19.1.7, 256 bits)); auto prefers the cpu \
             backend: ask for it with RGPU_BACKEND=wgpu"
        );
    }
}
