//! The cpu backend: the executor (`run_items` on rayon, `run_groups` with coroutines for
//! workgroups), the host versions of the kernel-side types (`Item`, `Group`, `Shared`,
//! `Global`), and host memory for cpu `Buffer`s.

mod atomic;
mod global;
mod groups;
mod items;
mod memory;
mod place;
mod shared;
mod watch;

pub use atomic::{fence, Atomic, AtomicScope, AtomicWord, DeviceScope, WorkgroupScope};
pub use global::Global;
pub use groups::{
    run_groups, run_groups_grid, run_groups_named, Group, SCRATCH_ALIGN, STACK_BYTES,
};
pub use items::{run_items, run_items_grid, Item, MIN_ITEMS_PER_TASK};
use memory::HostMemory;
pub use shared::{LaneValue, Shared, SubgroupBits, SubgroupValue, Word};

use crate::program::Instant;

use crate::api::{About, Api, Arg, MemoryOf};
use crate::backend::Backend;
use crate::devices::{pick, DeviceInfo, DeviceType, Wanted};
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};
use crate::stats::{DeviceFacts, KernelStats};

/// The variable that sets the cpu backend's thread count (a positive integer; unset, empty
/// or `0`: rayon's global pool, which has one thread per core unless `RAYON_NUM_THREADS`).
pub const CPU_THREADS_VAR: &str = "RGPU_CPU_THREADS";

/// The cpu as a `Device`: rayon's global thread pool, or a pool of its own with a set
/// number of threads (`RGPU_CPU_THREADS`, `Device::cpu_with_threads`). Launchers run kernels
/// on it themselves (`run_items_on`, `run_groups_on`), on the buffers' host memory.
pub(crate) struct CpuDevice {
    pool: Option<rayon::ThreadPool>,
    /// The launch timeout (`common::deadline`), enforced from inside kernels (`watch.rs`).
    timeout: Option<std::time::Duration>,
    about: About,
}

/// The one device of the cpu backend: the host's processor (its model name and memory
/// where the system tells them: Linux's /proc).
fn the_cpu() -> DeviceInfo {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let field = |text: &str, key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.trim_start().strip_prefix(':'))
            .map(|value| value.trim().to_string())
    };
    let name = field(&read("/proc/cpuinfo"), "model name").unwrap_or_else(|| "CPU".into());
    let memory = field(&read("/proc/meminfo"), "MemTotal")
        .and_then(|kb| kb.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024);
    DeviceInfo {
        memory,
        ..DeviceInfo::new(Backend::Cpu, 0, &name, DeviceType::Cpu)
    }
}

impl CpuDevice {
    /// `bytes` fit the host's memory (`MemTotal`). Past it the allocator may still say yes
    /// (Linux overcommits), and the process would be killed when the pages are touched: a
    /// buffer larger than the device is `Error::OutOfMemory` here, as on the GPUs.
    fn fits(&self, bytes: usize) -> Result<(), Error> {
        match self.about.info.memory {
            Some(memory) if bytes as u64 > memory => Err(Error::out_of_memory(
                Backend::Cpu,
                bytes as u64,
                format!("more than the host's {memory} bytes of memory"),
            )),
            _ => Ok(()),
        }
    }

    /// The cpu device `RGPU_CPU_THREADS` asks for; an invalid value is `Error::Config`.
    pub(crate) fn from_env() -> Result<Self, Error> {
        let value = std::env::var_os(CPU_THREADS_VAR);
        let text = value.as_ref().map(|v| v.to_str().map(str::trim));
        match text {
            None | Some(Some("")) | Some(Some("0")) => Ok(Self::global()),
            Some(Some(t)) => match t.parse::<usize>() {
                Ok(n) => Self::with_threads(n),
                Err(_) => Err(invalid(&format!("{value:?}"))),
            },
            Some(None) => Err(invalid(&format!("{value:?}"))),
        }
    }

    /// rayon's global pool.
    pub(crate) fn global() -> Self {
        Self::on(None)
    }

    fn on(pool: Option<rayon::ThreadPool>) -> Self {
        let threads = pool.as_ref().map_or_else(
            rayon::current_num_threads,
            rayon::ThreadPool::current_num_threads,
        );
        let about = About {
            info: the_cpu(),
            description: format!("CPU, {threads} threads (rayon)"),
            // Subgroups of one invocation (`Group::subgroup_size`); its threads as units.
            facts: DeviceFacts {
                backend: Backend::Cpu,
                subgroup_size: Some(1),
                subgroup_min: Some(1),
                subgroup_max: Some(1),
                compute_units: u32::try_from(threads).ok(),
                compute_unit: "thread",
                source: "the cpu backend's workgroups and its rayon threads".into(),
            },
        };
        Self {
            pool,
            about,
            // `open` sets the program's; elsewhere (`Device::auto`'s fallback,
            // `cpu_with_threads`) the variable's, the default where it is invalid.
            timeout: crate::common::deadline::launch_timeout(None)
                .unwrap_or(Some(crate::common::deadline::DEFAULT_TIMEOUT)),
        }
    }

    /// A pool of its own with `threads` threads (at least 1).
    pub(crate) fn with_threads(threads: usize) -> Result<Self, Error> {
        if threads == 0 {
            return Err(invalid("0 threads"));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("rgpu-cpu-{i}"))
            .build()
            .map_err(|e| Error::Config {
                reason: format!("cannot start {threads} cpu threads: {e}"),
            })?;
        Ok(Self::on(Some(pool)))
    }

    /// The launch timeout of this device.
    pub(crate) fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout
    }

    /// Runs `f` (a launch) on this device's threads.
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

impl Api for CpuDevice {
    const BACKEND: Backend = Backend::Cpu;
    type Memory = HostMemory;

    fn list() -> Result<Vec<DeviceInfo>, Error> {
        Ok(vec![the_cpu()])
    }

    /// The cpu (its one device), with the thread count the program gave, else
    /// `RGPU_CPU_THREADS`'s.
    fn open(wanted: &Wanted) -> Result<Self, Error> {
        pick(Self::BACKEND, &Self::list()?, wanted)?;
        let timeout = crate::common::deadline::launch_timeout(wanted.launch_timeout)?;
        let device = match wanted.cpu_threads {
            Some(threads) => Self::with_threads(threads),
            None => Self::from_env(),
        }?;
        Ok(Self { timeout, ..device })
    }

    fn about(&self) -> &About {
        &self.about
    }

    fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        Err(Error::no_kernel_stats(
            Self::BACKEND,
            "the cpu backend runs kernels as Rust compiled into the host program, with no \
             driver to report registers or spills: use the cuda or ash backend",
        ))
    }

    fn upload(&self, data: &[u8], align: usize) -> Result<HostMemory, Error> {
        self.fits(data.len())?;
        HostMemory::copy_of(data, align)
    }

    fn zeros(&self, bytes: usize, align: usize) -> Result<HostMemory, Error> {
        self.fits(bytes)?;
        HostMemory::zeroed(bytes, align)
    }

    fn read(&self, memory: &HostMemory, offset: usize, out: &mut [u8]) -> Result<(), Error> {
        out.copy_from_slice(&memory.bytes()[offset..][..out.len()]);
        Ok(())
    }

    fn write(&self, memory: &mut HostMemory, offset: usize, data: &[u8]) -> Result<(), Error> {
        memory.bytes_mut()[offset..][..data.len()].copy_from_slice(data);
        Ok(())
    }

    fn host_bytes(memory: &HostMemory) -> Option<&[u8]> {
        Some(memory.bytes())
    }

    fn host_bytes_mut(memory: &mut HostMemory) -> Option<&mut [u8]> {
        Some(memory.bytes_mut())
    }

    fn sync(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Wall time: the launches ran before `f` returned.
    fn timed<R>(&self, f: impl FnOnce() -> Result<R, Error>) -> Result<(R, Option<f64>), Error> {
        let start = Instant::now();
        let result = f()?;
        Ok((result, Some(start.elapsed().as_secs_f64() * 1e3)))
    }

    fn launch<B: MemoryOf<HostMemory>>(
        &self,
        kernel: &'static KernelInfo,
        _: &'static [Artifact],
        _: u32,
        _: &mut [Arg<'_, B>],
        _: &[u8],
    ) -> Result<(), Error> {
        Err(Error::launch(
            Self::BACKEND,
            kernel.name,
            "the cpu backend runs kernels through __private::cpu::run_items / run_groups, not \
             launch(): regenerate the launcher with rgpu's macro",
        ))
    }
}

fn invalid(value: &str) -> Error {
    Error::Config {
        reason: format!(
            "{CPU_THREADS_VAR}={value} is not a thread count: set it to a positive integer \
             (or unset it for one thread per core)"
        ),
    }
}

/// `run_items` on `device`'s threads (the cpu device's pool); what the launchers call.
/// `Error::Timeout` when the kernel runs past the device's launch timeout (`watch.rs`).
pub fn run_items_on(
    device: &crate::Device,
    kernel: &'static str,
    count: u32,
    threads: u32,
    f: &(dyn Fn(Item) + Sync),
) -> Result<(), Error> {
    run_items_grid_on(device, kernel, count, [count, 1, 1], threads, f)
}

/// The launchers of a kernel crate built with `rgpu build --checked` (its manifest says so:
/// `embed_kernels!()`): `launch` (one of the `run_*_on` calls) with the kernel's panic
/// returned as `Error::OutOfRange` (`watch.rs`).
pub fn checked<R>(checked: bool, launch: impl FnOnce() -> R) -> R {
    CHECKED.with(|c| {
        let before = c.replace(checked);
        let result = launch();
        c.set(before);
        result
    })
}

thread_local! {
    /// Whether the launch this thread starts is checked (`checked`).
    static CHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn is_checked() -> bool {
    CHECKED.with(std::cell::Cell::get)
}

/// `run_items_grid` on `device`'s threads; what the 2-D and 3-D launchers call.
pub fn run_items_grid_on<const D: usize>(
    device: &crate::Device,
    kernel: &'static str,
    count: u32,
    shape: [u32; 3],
    threads: u32,
    f: &(dyn Fn(Item<D>) + Sync),
) -> Result<(), Error> {
    let _ = threads;
    watch::run_limited(kernel, device.cpu_timeout(), is_checked(), |deadline| {
        device.cpu_install(|| items::run_items_until(count, shape, deadline, f))
    })
}

/// `run_groups_grid` on `device`'s threads; what the 2-D and 3-D launchers call.
pub fn run_groups_grid_on<const D: usize>(
    device: &crate::Device,
    kernel: &'static str,
    groups: u32,
    shape: [u32; 3],
    threads: u32,
    shared_bytes: usize,
    f: &(dyn Fn(Group<D>, *mut u8) + Sync),
) -> Result<(), Error> {
    watch::run_limited(kernel, device.cpu_timeout(), is_checked(), |deadline| {
        device.cpu_install(|| {
            groups::run_groups_until(kernel, groups, shape, threads, shared_bytes, deadline, f)
        })
    })
}

/// `run_groups_named` on `device`'s threads (the cpu device's pool); what the launchers call.
pub fn run_groups_on(
    device: &crate::Device,
    kernel: &'static str,
    groups: u32,
    threads: u32,
    shared_bytes: usize,
    f: &(dyn Fn(Group, *mut u8) + Sync),
) -> Result<(), Error> {
    run_groups_grid_on(
        device,
        kernel,
        groups,
        [groups, 1, 1],
        threads,
        shared_bytes,
        f,
    )
}
