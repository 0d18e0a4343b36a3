//! The CUDA backend: the kernel crate's PTX (rustc's nvptx64 target), launched with cudarc.
//!
//! cudarc 0.19 (features `driver`, `nvrtc` for its `Ptx` type only, `dynamic-loading`):
//! libcuda is opened at run time, so this builds with no CUDA installed. The keys are
//! uploaded once, every launch of `kernel::schedule::Passes` runs on the device (tile
//! passes in shared memory, fused global passes), and they come back once.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, DriverError, LaunchConfig,
    PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use kernel::schedule::{Pass, Passes};
use shared::{KeyKind, SortOrder, SortParams, TILE_KEYS, WORKGROUP_SIZE};

use super::{Backend, RunnerError, SortRunner};
use crate::kernels::{self, Kernel};

/// `SortParams` as a by-value kernel argument (the kernels take it by value).
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Params(SortParams);

// SAFETY: `SortParams` is `#[repr(C)]` plain old data (four `u32`s), the layout of the
// kernels' first parameter (`.param .align 4 .b8 [16]`).
unsafe impl DeviceRepr for Params {}

pub struct CudaRunner {
    stream: Arc<CudaStream>,
    tile: CudaFunction,
    global: CudaFunction,
    device: String,
    /// Device time of the last sort's kernels, between upload and download.
    last_kernel_ms: Option<f32>,
}

fn unavailable(reason: impl Into<String>) -> RunnerError {
    RunnerError::Unavailable {
        backend: Backend::Cuda,
        reason: reason.into(),
    }
}

fn failed(what: &str, e: DriverError) -> RunnerError {
    RunnerError::Failed {
        backend: Backend::Cuda,
        reason: format!("{what}: {e}"),
    }
}

/// `"sm_86"` -> `(86, false)`; `"sm_90a"` -> `(90, true)` (runs only on exactly 9.0).
fn arch_of(target: &str) -> Option<(u32, bool)> {
    let digits = target.strip_prefix("sm_")?;
    let (number, specific) = match digits.strip_suffix(['a', 'f']) {
        Some(n) => (n, true),
        None => (digits, false),
    };
    Some((number.parse().ok()?, specific))
}

/// The newest embedded PTX that the device can run: highest `sm_XX <= cc`; `sm_XXa`/`f`
/// only on exactly that compute capability.
pub fn pick_ptx<'a>(candidates: &[&'a Kernel], cc: (i32, i32)) -> Option<&'a Kernel> {
    let device = (cc.0 * 10 + cc.1) as u32;
    candidates
        .iter()
        .filter_map(|k| arch_of(k.target).map(|a| (a, *k)))
        .filter(|((arch, specific), _)| *arch <= device && (!specific || *arch == device))
        // On a tie, the arch-specific variant (sm_90a on a 9.0 device) wins.
        .max_by_key(|(arch, _)| *arch)
        .map(|(_, k)| k)
}

fn driver_version() -> Option<(i32, i32)> {
    let mut version = 0;
    // SAFETY: cuDriverGetVersion writes one int; libcuda is known to be loaded.
    let result = unsafe { sys::cuDriverGetVersion(&mut version) };
    (result == sys::CUresult::CUDA_SUCCESS).then_some((version / 1000, version % 1000 / 10))
}

fn ptx_isa(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".version "))
        .unwrap_or("?")
}

impl CudaRunner {
    pub fn open() -> Result<Self, RunnerError> {
        // SAFETY: only tries to dlopen libcuda; cudarc panics on first use without it.
        if !unsafe { sys::is_culib_present() } {
            return Err(unavailable(
                "no CUDA driver found (libcuda.so could not be loaded): install the NVIDIA driver",
            ));
        }
        let count = CudaContext::device_count()
            .map_err(|e| unavailable(format!("the CUDA driver found no usable GPU ({e})")))?;
        if count < 1 {
            return Err(unavailable("the CUDA driver reports no GPU"));
        }
        let ctx = CudaContext::new(0)
            .map_err(|e| unavailable(format!("cannot open CUDA device 0 ({e})")))?;
        let cc = ctx
            .compute_capability()
            .map_err(|e| unavailable(format!("cannot read the compute capability ({e})")))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let embedded: Vec<&Kernel> = kernels::of_kind("ptx").collect();
        let Some(kernel) = pick_ptx(&embedded, cc) else {
            let archs: Vec<&str> = embedded.iter().map(|k| k.target).collect();
            return Err(unavailable(format!(
                "{name} has compute capability {}.{}, and this binary embeds PTX for [{}], none \
                 of which it can run: run rgpu build --backend cuda --arch native",
                cc.0,
                cc.1,
                archs.join(", ")
            )));
        };
        let text = std::str::from_utf8(kernel.bytes)
            .map_err(|_| unavailable(format!("embedded PTX for {} is not text", kernel.target)))?;
        let module = ctx
            .load_module(Ptx::from_src(text))
            .map_err(|e| match e.0 {
                sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION => unavailable(format!(
                "the NVIDIA driver (CUDA {}) is too old for PTX ISA {} ({}): update the driver, \
                 or build with an older toolchain or arch",
                driver_version().map_or("?".into(), |(a, b)| format!("{a}.{b}")),
                ptx_isa(text),
                kernel.target
            )),
                _ => unavailable(format!(
                    "the driver rejected the {} PTX ({e})",
                    kernel.target
                )),
            })?;
        let function = |name: &str| {
            module
                .load_function(name)
                .map_err(|e| unavailable(format!("PTX has no kernel {name} ({e})")))
        };
        // The tile kernel's static shared array must fit the device's per-block limit.
        let shared_limit = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)
            .map_err(|e| unavailable(format!("cannot read the shared memory limit ({e})")))?;
        if (shared_limit as u64) < u64::from(TILE_KEYS) * 4 {
            return Err(unavailable(format!(
                "{name} allows {shared_limit} bytes of shared memory per block; the sort's \
                 tile needs {}",
                TILE_KEYS * 4
            )));
        }
        Ok(Self {
            tile: function("bitonic_tile")?,
            global: function("bitonic_global")?,
            device: format!(
                "{name}, compute {}.{}, PTX {} (ISA {})",
                cc.0,
                cc.1,
                kernel.target,
                ptx_isa(text)
            ),
            stream: ctx.default_stream(),
            last_kernel_ms: None,
        })
    }

    /// Device time of the last `sort_bits` kernels (encode, every step, decode).
    pub fn last_kernel_ms(&self) -> Option<f32> {
        self.last_kernel_ms
    }

    fn launch(
        &self,
        function: &CudaFunction,
        params: SortParams,
        threads: u32,
        keys: &mut CudaSlice<u32>,
    ) -> Result<(), DriverError> {
        let config = LaunchConfig {
            grid_dim: (threads.div_ceil(WORKGROUP_SIZE).max(1), 1, 1),
            block_dim: (WORKGROUP_SIZE, 1, 1),
            shared_mem_bytes: 0,
        };
        let params = Params(params);
        let mut args = self.stream.launch_builder(function);
        args.arg(&params).arg(keys);
        // SAFETY: the kernels take (SortParams by value, *mut u32 of at least `len` keys),
        // and `keys` holds `params.len` keys.
        unsafe { args.launch(config) }.map(|_| ())
    }

    /// Runs every launch of the sort (encode and decode folded into the tile passes) on
    /// keys already on the device.
    pub fn sort_on_device(
        &self,
        keys: &mut CudaSlice<u32>,
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), DriverError> {
        let len = keys.len() as u32;
        for pass in Passes::new(len) {
            let function = match pass {
                Pass::Tile(_) => &self.tile,
                Pass::Global(_) => &self.global,
            };
            self.launch(
                function,
                pass.params(len, kind, order),
                pass.threads(len),
                keys,
            )?;
        }
        Ok(())
    }

    /// The stream the runner launches on (for benchmarks that time it with events).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    fn sort_timed(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), DriverError> {
        let mut buf = self.stream.clone_htod(keys)?;
        let ctx = self.stream.context();
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let (start, end) = (ctx.new_event(timing)?, ctx.new_event(timing)?);
        start.record(&self.stream)?;
        self.sort_on_device(&mut buf, kind, order)?;
        end.record(&self.stream)?;
        self.stream.memcpy_dtoh(&buf, keys)?;
        self.stream.synchronize()?;
        self.last_kernel_ms = Some(start.elapsed_ms(&end)?);
        Ok(())
    }
}

impl SortRunner for CudaRunner {
    fn backend(&self) -> Backend {
        Backend::Cuda
    }

    fn device(&self) -> String {
        self.device.clone()
    }

    fn sort_checked(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), RunnerError> {
        self.sort_timed(keys, kind, order)
            .map_err(|e| failed("sort", e))?;
        // The same benchmark hook as the Vulkan runners.
        if std::env::var("RGPU_GPU_TIMING").is_ok_and(|v| v == "1") {
            if let Some(ms) = self.last_kernel_ms {
                eprintln!(
                    "gpu-timing: cuda {} keys: sort kernels {ms:.3} ms",
                    keys.len()
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptx(target: &'static str) -> Kernel {
        Kernel {
            kind: "ptx",
            target,
            codegen: "nvptx",
            entry_points: &[],
            sha256: "",
            bytes: b"",
        }
    }

    #[test]
    fn picks_the_newest_arch_the_device_runs() {
        let (a, b, c, d) = (ptx("sm_75"), ptx("sm_80"), ptx("sm_90"), ptx("sm_90a"));
        let all = [&a, &b, &c, &d];
        assert_eq!(pick_ptx(&all, (8, 6)).unwrap().target, "sm_80");
        assert_eq!(pick_ptx(&all, (9, 0)).unwrap().target, "sm_90a");
        assert_eq!(pick_ptx(&all[..3], (9, 0)).unwrap().target, "sm_90");
        assert_eq!(pick_ptx(&all, (12, 0)).unwrap().target, "sm_90");
        assert!(pick_ptx(&all, (7, 0)).is_none());
        assert_eq!(pick_ptx(&[&d], (9, 0)).unwrap().target, "sm_90a");
        assert!(pick_ptx(&[&d], (10, 0)).is_none());
    }
}
