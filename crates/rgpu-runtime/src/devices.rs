//! Which devices a backend has, and choosing one: `DeviceInfo` (one device of a backend's
//! list: its index, name, kind, memory), `DeviceChoice` (how a program names one: an index
//! or a part of its name, from code or `RGPU_DEVICE`), and the one rule every backend picks
//! a device from its list by (`pick`). Each backend lists its devices in its folder, in its
//! API's own order; these are plain data.

use std::fmt;

use crate::backend::{Backend, BACKEND_VAR};
use crate::error::Error;

/// The environment variable through which a program (`Device::select`) is told which
/// device of the backend to open: an index of the backend's list, or a part of one name.
pub const DEVICE_VAR: &str = "RGPU_DEVICE";

/// What kind of device it is, as its API reports it; ordered best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceType {
    DiscreteGpu,
    IntegratedGpu,
    VirtualGpu,
    Other,
    /// The CPU: the cpu backend, or a software Vulkan driver (lavapipe, llvmpipe).
    Cpu,
}

impl DeviceType {
    /// "discrete GPU", "integrated GPU", "virtual GPU", "other device", "CPU".
    pub fn name(self) -> &'static str {
        match self {
            DeviceType::DiscreteGpu => "discrete GPU",
            DeviceType::IntegratedGpu => "integrated GPU",
            DeviceType::VirtualGpu => "virtual GPU",
            DeviceType::Other => "other device",
            DeviceType::Cpu => "CPU",
        }
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One device of a backend, as `Device::list` gives it and `Device::info` tells which one
/// a `Device` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub backend: Backend,
    /// Its place in the backend's list: what `Device::open_on(backend, index)` and
    /// `RGPU_DEVICE=index` open (docs/reference.md says what each backend's order is).
    pub index: usize,
    pub name: String,
    pub kind: DeviceType,
    /// Bytes of device memory (Vulkan's device-local heaps, CUDA's total memory, the host's
    /// memory for the cpu), `None` where the API does not say (wgpu, webgpu).
    pub memory: Option<u64>,
    /// Its PCI address, `domain:bus:device.function` in hex (`0000:65:00.0`, as CUDA and
    /// wgpu write it; nvidia-smi writes the domain with 8 digits), where the API gives it.
    pub bus: Option<String>,
    /// Why this backend cannot run kernels on it (opening it is an error that says so),
    /// `None` when it can.
    pub unusable: Option<String>,
}

impl DeviceInfo {
    /// A device of `backend` that can run kernels, with neither memory size nor address.
    pub(crate) fn new(backend: Backend, index: usize, name: &str, kind: DeviceType) -> Self {
        DeviceInfo {
            backend,
            index,
            name: name.to_string(),
            kind,
            memory: None,
            bus: None,
            unusable: None,
        }
    }
}

impl fmt::Display for DeviceInfo {
    /// "1: NVIDIA H100 80GB HBM3 (discrete GPU, 79.2 GiB, PCI 0000:65:00.0)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({}", self.index, self.name, self.kind)?;
        if let Some(bytes) = self.memory {
            write!(f, ", {:.1} GiB", bytes as f64 / f64::from(1u32 << 30))?;
        }
        if let Some(bus) = &self.bus {
            write!(f, ", PCI {bus}")?;
        }
        if let Some(why) = &self.unusable {
            write!(f, ", unusable: {why}")?;
        }
        f.write_str(")")
    }
}

/// Which device of a backend to open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The best one: a discrete GPU before an integrated, virtual, other or CPU device, the
    /// first in the backend's order among equals.
    #[default]
    Best,
    /// The device at this index of the backend's list (`Device::list`).
    Index(usize),
    /// The one device whose name contains this (ignoring case): `"H100"`, `"llvmpipe"`.
    Name(String),
}

impl DeviceChoice {
    /// A value of `RGPU_DEVICE` (or a program's `--device`): digits are an index, anything
    /// else a part of a name; empty or `best`: the best device.
    pub fn parse(text: &str) -> DeviceChoice {
        let text = text.trim();
        if text.is_empty() || text == "best" {
            DeviceChoice::Best
        } else if let Ok(index) = text.parse::<usize>() {
            DeviceChoice::Index(index)
        } else {
            DeviceChoice::Name(text.to_string())
        }
    }

    /// `RGPU_DEVICE` as a choice; unset is `Best`, a value that is not UTF-8 is
    /// `Error::Config`.
    pub(crate) fn from_env() -> Result<DeviceChoice, Error> {
        match std::env::var_os(DEVICE_VAR) {
            None => Ok(DeviceChoice::Best),
            Some(value) => match value.to_str() {
                Some(text) => Ok(DeviceChoice::parse(text)),
                None => Err(Error::Config {
                    reason: format!(
                        "{DEVICE_VAR}={value:?} is not UTF-8: set it to a device's index or a \
                         part of its name (rgpu doctor lists them)"
                    ),
                }),
            },
        }
    }
}

impl From<usize> for DeviceChoice {
    fn from(index: usize) -> Self {
        DeviceChoice::Index(index)
    }
}

impl From<&str> for DeviceChoice {
    fn from(text: &str) -> Self {
        DeviceChoice::parse(text)
    }
}

impl From<String> for DeviceChoice {
    fn from(text: String) -> Self {
        DeviceChoice::parse(&text)
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceChoice::Best => f.write_str("best"),
            DeviceChoice::Index(i) => write!(f, "{i}"),
            DeviceChoice::Name(name) => f.write_str(name),
        }
    }
}

/// Whether opening may end on a CPU-type device (lavapipe, llvmpipe) when the best device
/// is asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CpuDevices {
    /// `Device::open`: the caller asked for this backend, so any device will do.
    Accept,
    /// `Device::auto`: the cpu backend is a better CPU than a software Vulkan driver.
    Skip,
}

/// What a caller asked a backend to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) device: DeviceChoice,
    /// The choice came from `RGPU_DEVICE` (the error says so, and how to change it).
    pub(crate) from_env: bool,
    pub(crate) cpu_devices: CpuDevices,
    /// The cpu backend's thread count, where the program gave one (else
    /// `RGPU_CPU_THREADS`).
    pub(crate) cpu_threads: Option<usize>,
    /// The launch timeout, where the program gave one (`Some(None)`: none; else
    /// `RGPU_LAUNCH_TIMEOUT_MS`, `common::deadline`).
    pub(crate) launch_timeout: Option<Option<std::time::Duration>>,
}

impl Wanted {
    /// The best device, any type.
    pub(crate) fn best() -> Self {
        Wanted {
            device: DeviceChoice::Best,
            from_env: false,
            cpu_devices: CpuDevices::Accept,
            cpu_threads: None,
            launch_timeout: None,
        }
    }

    /// `device`, asked for in code.
    pub(crate) fn device(device: DeviceChoice) -> Self {
        Wanted {
            device,
            ..Wanted::best()
        }
    }
}

/// The reason `auto` gives for passing over a CPU-type Vulkan device.
pub(crate) fn cpu_device_reason(backend: Backend, name: &str) -> String {
    format!(
        "only a CPU Vulkan device ({name}); auto prefers the cpu backend: ask for it with \
         {BACKEND_VAR}={backend}"
    )
}

/// The index in `list` (a backend's devices, in its order) of the device `wanted` names,
/// or the error that says what was asked and what exists.
pub(crate) fn pick(backend: Backend, list: &[DeviceInfo], wanted: &Wanted) -> Result<usize, Error> {
    let asked = if wanted.from_env {
        format!("{DEVICE_VAR}={}", wanted.device)
    } else {
        match &wanted.device {
            DeviceChoice::Name(name) => format!("device {name:?}"),
            other => format!("device {other}"),
        }
    };
    let listed = || match list {
        [] => format!("{backend} has no device"),
        [one] => format!("{backend} has one device, {one}"),
        all => format!(
            "{backend}'s devices are {}",
            all.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let fix = if wanted.from_env {
        format!("set {DEVICE_VAR} to one of those indices or a part of one name, or unset it")
    } else {
        "open one of those (Device::list lists them; rgpu doctor too)".to_string()
    };
    let no_device = |what: String| Error::NoDevice {
        backend,
        asked: asked.clone(),
        reason: format!("{what}; {}: {fix}", listed()),
    };
    let usable = |index: usize| match &list[index].unusable {
        None => Ok(index),
        Some(why) => Err(no_device(format!(
            "device {index} cannot run kernels ({why})"
        ))),
    };
    match &wanted.device {
        DeviceChoice::Best => {
            let best = list
                .iter()
                .filter(|d| d.unusable.is_none())
                .min_by_key(|d| (d.kind, d.index))
                .ok_or_else(|| {
                    Error::unavailable(
                        backend,
                        match list {
                            [] => "no device: install a driver for the GPU".to_string(),
                            _ => format!("no device that can run kernels: {}", listed()),
                        },
                    )
                })?;
            // The cpu backend's own device is the CPU it is for.
            let software = best.kind == DeviceType::Cpu && backend != Backend::Cpu;
            if wanted.cpu_devices == CpuDevices::Skip && software {
                return Err(Error::unavailable(
                    backend,
                    cpu_device_reason(backend, &best.name),
                ));
            }
            Ok(best.index)
        }
        DeviceChoice::Index(index) if *index < list.len() => usable(*index),
        DeviceChoice::Index(index) => Err(no_device(format!("there is no device {index}"))),
        DeviceChoice::Name(part) => {
            let part_lower = part.to_lowercase();
            let found: Vec<&DeviceInfo> = list
                .iter()
                .filter(|d| d.name.to_lowercase().contains(&part_lower))
                .collect();
            match found.as_slice() {
                [one] => usable(one.index),
                [] => Err(no_device(format!("no device's name contains {part:?}"))),
                several => Err(Error::NoDevice {
                    backend,
                    asked: asked.clone(),
                    reason: format!(
                        "{} devices' names contain {part:?} ({}): give the index of one \
                         instead",
                        several.len(),
                        several
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100(index: usize) -> DeviceInfo {
        DeviceInfo {
            memory: Some(80 << 30),
            bus: Some(format!("0000:{:02x}:00.0", 0x18 + index)),
            ..DeviceInfo::new(
                Backend::Cuda,
                index,
                "NVIDIA H100 80GB HBM3",
                DeviceType::DiscreteGpu,
            )
        }
    }

    fn from_env(device: &str) -> Wanted {
        Wanted {
            device: DeviceChoice::parse(device),
            from_env: true,
            ..Wanted::best()
        }
    }

    #[test]
    fn rgpu_device_values() {
        assert_eq!(DeviceChoice::parse(""), DeviceChoice::Best);
        assert_eq!(DeviceChoice::parse("best"), DeviceChoice::Best);
        assert_eq!(DeviceChoice::parse(" 3\n"), DeviceChoice::Index(3));
        assert_eq!(
            DeviceChoice::parse("H100"),
            DeviceChoice::Name("H100".into())
        );
        assert_eq!(DeviceChoice::from(2), DeviceChoice::Index(2));
        assert_eq!(
            DeviceChoice::from("llvmpipe"),
            DeviceChoice::Name("llvmpipe".into())
        );
    }

    #[test]
    fn a_device_shows_its_index_name_kind_memory_and_address() {
        assert_eq!(
            h100(1).to_string(),
            "1: NVIDIA H100 80GB HBM3 (discrete GPU, 80.0 GiB, PCI 0000:19:00.0)"
        );
        let old = DeviceInfo {
            unusable: Some("Vulkan 1.1: the ash backend needs 1.2".into()),
            ..DeviceInfo::new(Backend::Ash, 0, "old", DeviceType::IntegratedGpu)
        };
        assert_eq!(
            old.to_string(),
            "0: old (integrated GPU, unusable: Vulkan 1.1: the ash backend needs 1.2)"
        );
    }

    #[test]
    fn the_best_device_is_a_gpu_before_a_cpu_and_the_first_among_equals() {
        let cpu = DeviceInfo::new(Backend::Wgpu, 0, "llvmpipe", DeviceType::Cpu);
        let igpu = DeviceInfo::new(Backend::Wgpu, 1, "Intel", DeviceType::IntegratedGpu);
        let list = [cpu.clone(), igpu, h100(2), h100(3)];
        assert_eq!(pick(Backend::Cuda, &list, &Wanted::best()), Ok(2));
        let skip = Wanted {
            cpu_devices: CpuDevices::Skip,
            ..Wanted::best()
        };
        assert_eq!(pick(Backend::Cuda, &list, &skip), Ok(2));
        let e = pick(Backend::Wgpu, std::slice::from_ref(&cpu), &skip).unwrap_err();
        assert_eq!(
            e.to_string(),
            "wgpu backend unavailable: only a CPU Vulkan device (llvmpipe); auto prefers the \
             cpu backend: ask for it with RGPU_BACKEND=wgpu"
        );
        // Asked for by name or index, a CPU device is what was asked for.
        let named = Wanted {
            device: DeviceChoice::parse("llvm"),
            ..skip
        };
        assert_eq!(pick(Backend::Wgpu, &[cpu], &named), Ok(0));
        let e = pick(Backend::Cuda, &[], &Wanted::best()).unwrap_err();
        assert!(matches!(e, Error::Unavailable { .. }), "{e}");
    }

    #[test]
    fn a_device_is_found_by_index_or_by_a_part_of_its_name() {
        let list = [h100(0), h100(1)];
        assert_eq!(pick(Backend::Cuda, &list, &from_env("1")), Ok(1));
        assert_eq!(pick(Backend::Cuda, &list, &Wanted::device(0.into())), Ok(0));
        let mut named = list.clone();
        named[1].name = "NVIDIA A100-SXM4-40GB".into();
        assert_eq!(pick(Backend::Cuda, &named, &from_env("a100")), Ok(1));
    }

    #[test]
    fn a_device_that_is_not_there_says_what_was_asked_and_what_exists() {
        let list = [h100(0), h100(1)];
        let e = pick(Backend::Cuda, &list, &from_env("3")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cuda: RGPU_DEVICE=3: there is no device 3; cuda's devices are 0: NVIDIA H100 80GB \
             HBM3 (discrete GPU, 80.0 GiB, PCI 0000:18:00.0), 1: NVIDIA H100 80GB HBM3 \
             (discrete GPU, 80.0 GiB, PCI 0000:19:00.0): set RGPU_DEVICE to one of those \
             indices or a part of one name, or unset it"
        );
        let e = pick(Backend::Cuda, &list, &from_env("H100")).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "cuda: RGPU_DEVICE=H100: 2 devices' names contain \"H100\" (0: NVIDIA H100"
            ),
            "{e}"
        );
        assert!(
            e.to_string().ends_with("give the index of one instead"),
            "{e}"
        );
        let e = pick(Backend::Cuda, &list, &Wanted::device("A100".into())).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "cuda: device \"A100\": no device's name contains \"A100\"; cuda's devices are \
                 0: NVIDIA H100"
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .ends_with(": open one of those (Device::list lists them; rgpu doctor too)"),
            "{e}"
        );
        // The cpu backend has one device.
        let cpu = [DeviceInfo::new(
            Backend::Cpu,
            0,
            "AMD EPYC",
            DeviceType::Cpu,
        )];
        let e = pick(Backend::Cpu, &cpu, &from_env("1")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cpu: RGPU_DEVICE=1: there is no device 1; cpu has one device, 0: AMD EPYC (CPU): \
             set RGPU_DEVICE to one of those indices or a part of one name, or unset it"
        );
        // A device the backend cannot run on is named with why.
        let mut old = list.clone();
        old[1].unusable = Some("compute capability 3.5".into());
        let e = pick(Backend::Cuda, &old, &Wanted::device(1.into())).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "cuda: device 1: device 1 cannot run kernels (compute capability 3.5); "
            ),
            "{e}"
        );
    }
}
