//! What a device and its compiled kernels are, as the driver tells it: `DeviceFacts`
//! (`Device::facts`: subgroup sizes, compute units) and `KernelStats`
//! (`Device::kernel_stats`: registers, spills, shared memory and the driver's own list of
//! statistics for each kernel the device has compiled). Each backend fills them in its
//! folder; these are plain data.

use std::fmt;

use crate::backend::Backend;

/// What kernels on a device see of it: subgroup sizes and compute units, `None` where the
/// backend's API does not say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceFacts {
    pub backend: Backend,
    /// The subgroup size a compute pipeline gets by default (Vulkan's `subgroupSize`,
    /// CUDA's warp size, 1 on the cpu), `None` where the API does not say (wgpu).
    pub subgroup_size: Option<u32>,
    /// The smallest and largest subgroup size a kernel may run with (Vulkan 1.3 /
    /// `VK_EXT_subgroup_size_control`, wgpu's adapter info); the default size where that is
    /// all the API gives.
    pub subgroup_min: Option<u32>,
    pub subgroup_max: Option<u32>,
    /// Compute units (NVIDIA SMs, AMD CUs, the cpu backend's worker threads), `None` where
    /// the API cannot tell.
    pub compute_units: Option<u32>,
    /// What `compute_units` counts: "SM", "CU", "thread"; empty when it is `None`.
    pub compute_unit: &'static str,
    /// Where the numbers come from, for people ("cuDeviceGetAttribute",
    /// "VkPhysicalDeviceSubgroupProperties, VK_NV_shader_sm_builtins", ...).
    pub source: String,
}

impl DeviceFacts {
    /// The subgroup sizes wgpu's `AdapterInfo` gives (wgpu on Vulkan/Metal/DX12, and the
    /// browser's `GPUAdapterInfo` through wgpu's WebGPU backend; 0: not known), and no
    /// compute-unit count (wgpu has none). `source` names where `info` came from.
    #[cfg(any(feature = "wgpu", all(feature = "webgpu", target_arch = "wasm32")))]
    pub(crate) fn of_adapter(backend: Backend, info: &wgpu::AdapterInfo, source: &str) -> Self {
        let known = |n: u32| (n > 0).then_some(n);
        let (min, max) = (known(info.subgroup_min_size), known(info.subgroup_max_size));
        DeviceFacts {
            backend,
            // wgpu does not say which size a pipeline gets unless min and max agree.
            subgroup_size: min.filter(|_| min == max),
            subgroup_min: min,
            subgroup_max: max,
            compute_units: None,
            compute_unit: "",
            source: source.to_string(),
        }
    }
}

/// One statistic's value, as the driver gave it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StatValue {
    Bool(bool),
    I64(i64),
    U64(u64),
    F64(f64),
}

impl StatValue {
    /// The value as a whole number when it is one (booleans and floats are not).
    pub fn as_u64(self) -> Option<u64> {
        match self {
            StatValue::U64(v) => Some(v),
            StatValue::I64(v) => u64::try_from(v).ok(),
            StatValue::Bool(_) | StatValue::F64(_) => None,
        }
    }
}

impl fmt::Display for StatValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatValue::Bool(v) => write!(f, "{v}"),
            StatValue::I64(v) => write!(f, "{v}"),
            StatValue::U64(v) => write!(f, "{v}"),
            StatValue::F64(v) => write!(f, "{v}"),
        }
    }
}

/// One statistic of one compiled kernel, named as the driver names it.
#[derive(Clone, Debug, PartialEq)]
pub struct Stat {
    /// The driver's executable it belongs to (Vulkan: a pipeline may compile to several;
    /// empty on cuda, where a function is one).
    pub executable: String,
    pub name: String,
    pub value: StatValue,
    /// The driver's description of the statistic (may be empty).
    pub description: String,
}

/// What the driver says about one kernel as the device compiled it for launches.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelStats {
    /// The kernel's entry point name.
    pub kernel: &'static str,
    /// Registers per thread, where the backend can tell.
    pub registers: Option<u64>,
    /// Local (spill) memory per thread in bytes, where the backend can tell.
    pub local_bytes: Option<u64>,
    /// Static shared (workgroup) memory in bytes, where the backend can tell.
    pub shared_bytes: Option<u64>,
    /// The subgroup size the compiled kernel runs with, where the backend can tell (Vulkan:
    /// the pipeline executable's; CUDA: the warp size).
    pub subgroup_size: Option<u32>,
    /// Every statistic the driver gave, as it gave it.
    pub stats: Vec<Stat>,
    /// Where they come from ("cuFuncGetAttribute", "VK_KHR_pipeline_executable_properties").
    pub source: &'static str,
}

impl KernelStats {
    /// The first statistic named `name` (as the driver spells it).
    pub fn get(&self, name: &str) -> Option<&Stat> {
        self.stats.iter().find(|s| s.name == name)
    }
}

/// Which of the summary fields a Vulkan statistic's name stands for, where the name clearly
/// says so (drivers name them freely: anything unclear stays only in the raw list). Only
/// Vulkan's statistics need it (ash).
#[cfg(any(feature = "ash", test))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Summary {
    Registers,
    LocalBytes,
    SharedBytes,
}

/// The summary field a statistic clearly names, else `None`: "Register Count",
/// "VGPRs"/"SGPRs" are registers only when they are the only register-like name (see
/// `summarize`); spills need "spill", "scratch" or "local memory" and bytes; shared memory
/// needs "shared" or "workgroup" memory in bytes. "In bytes" may be in the name or in the
/// driver's description (NVIDIA: "Shared Memory Size", "Size in bytes used for shared
/// memory").
#[cfg(any(feature = "ash", test))]
pub(crate) fn summary_of(name: &str, description: &str) -> Option<Summary> {
    let n = name.to_ascii_lowercase();
    let bytes = n.contains("byte") || description.to_ascii_lowercase().contains("byte");
    if n.contains("spill") || n.contains("scratch") || n.contains("local memory") {
        return bytes.then_some(Summary::LocalBytes);
    }
    if (n.contains("shared") || n.contains("workgroup memory") || n.contains("lds")) && bytes {
        return Some(Summary::SharedBytes);
    }
    let registers = n == "registers"
        || n == "register count"
        || n == "registers used"
        || n == "gprs"
        || n == "vgprs"
        || n.contains("register count")
        || n.starts_with("registers per");
    registers.then_some(Summary::Registers)
}

/// A byte count no kernel can have (64 GiB and more per thread or workgroup): NVIDIA's
/// driver 580 reports "Local Memory Size" = 2^36 for every compute pipeline (measured on an
/// H100, BENCHMARKS.md issue 19), which says nothing about spills. Such a value stays in the
/// raw list and out of the summary.
#[cfg(any(feature = "ash", test))]
const NOT_A_SIZE: u64 = 1 << 32;

/// Fills `registers`, `local_bytes` and `shared_bytes` of `stats` from its raw list, where
/// exactly one whole-number statistic clearly names each (two candidates: left `None`, the
/// raw list says which is which), and a byte count is a plausible size.
#[cfg(any(feature = "ash", test))]
pub(crate) fn summarize(stats: &mut KernelStats) {
    for (field, summary) in [
        (0, Summary::Registers),
        (1, Summary::LocalBytes),
        (2, Summary::SharedBytes),
    ] {
        let found: Vec<u64> = stats
            .stats
            .iter()
            .filter(|s| summary_of(&s.name, &s.description) == Some(summary))
            .filter_map(|s| s.value.as_u64())
            .collect();
        let value = match found.as_slice() {
            [one] if summary == Summary::Registers || *one < NOT_A_SIZE => Some(*one),
            _ => None,
        };
        let slot = match field {
            0 => &mut stats.registers,
            1 => &mut stats.local_bytes,
            _ => &mut stats.shared_bytes,
        };
        if slot.is_none() {
            *slot = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(name: &str, value: StatValue) -> Stat {
        described(name, value, "")
    }

    fn described(name: &str, value: StatValue, description: &str) -> Stat {
        Stat {
            executable: "Compute".into(),
            name: name.into(),
            value,
            description: description.into(),
        }
    }

    #[test]
    fn only_clear_names_become_summary_fields() {
        assert_eq!(summary_of("Register Count", ""), Some(Summary::Registers));
        assert_eq!(summary_of("VGPRs", ""), Some(Summary::Registers));
        assert_eq!(summary_of("Spilled bytes", ""), Some(Summary::LocalBytes));
        assert_eq!(
            summary_of("Scratch Memory Size (bytes)", ""),
            Some(Summary::LocalBytes)
        );
        assert_eq!(summary_of("Spilled SGPRs", ""), None);
        assert_eq!(
            summary_of("Shared memory bytes", ""),
            Some(Summary::SharedBytes)
        );
        assert_eq!(summary_of("Instruction Count", ""), None);
        assert_eq!(
            summary_of("Shared Memory Size", "Size in bytes used for shared memory"),
            Some(Summary::SharedBytes)
        );
        assert_eq!(summary_of("Shared Memory Size", ""), None);
        assert_eq!(summary_of("Loops", ""), None);
    }

    #[test]
    fn summarize_fills_unambiguous_fields_only() {
        let mut s = KernelStats {
            kernel: "k",
            registers: None,
            local_bytes: None,
            shared_bytes: None,
            subgroup_size: None,
            stats: vec![
                stat("Register Count", StatValue::U64(40)),
                stat("Spilled bytes", StatValue::I64(16)),
                stat("Instruction Count", StatValue::U64(900)),
                stat("Flag", StatValue::Bool(true)),
            ],
            source: "test",
        };
        summarize(&mut s);
        assert_eq!(
            (s.registers, s.local_bytes, s.shared_bytes),
            (Some(40), Some(16), None)
        );
        assert_eq!(s.get("Instruction Count").unwrap().value.to_string(), "900");
        // Two register-like names (AMD's VGPRs and SGPRs): neither is "the" count.
        s.registers = None;
        s.stats.push(stat("VGPRs", StatValue::U64(64)));
        summarize(&mut s);
        assert_eq!(s.registers, None);
    }

    /// What NVIDIA's driver 580.159.04 listed for the demo's radix_downsweep on an H100
    /// (issue 19, run 9): its names and descriptions, as they came.
    #[test]
    fn nvidias_list_gives_registers_and_shared_memory_not_its_local_memory_sentinel() {
        let mut s = KernelStats {
            kernel: "radix_downsweep",
            registers: None,
            local_bytes: None,
            shared_bytes: None,
            subgroup_size: Some(32),
            stats: vec![
                described(
                    "Register Count",
                    StatValue::U64(100),
                    "Number of temporary registers used by this shader stage",
                ),
                described(
                    "Binary Size",
                    StatValue::U64(37760),
                    "Size in bytes of the executable for this stage",
                ),
                described(
                    "Stack Size",
                    StatValue::U64(0),
                    "Size in bytes required for the shader stack",
                ),
                described(
                    "Local Memory Size",
                    StatValue::U64(68_719_476_736),
                    "Size in bytes required per-thread for local memory",
                ),
                described(
                    "Shared Memory Size",
                    StatValue::U64(27648),
                    "Size in bytes used for shared memory",
                ),
            ],
            source: "VK_KHR_pipeline_executable_properties",
        };
        summarize(&mut s);
        assert_eq!(
            (s.registers, s.local_bytes, s.shared_bytes),
            (Some(100), None, Some(27648))
        );
    }
}
