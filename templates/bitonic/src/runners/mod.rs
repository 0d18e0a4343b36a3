//! Backends that run the sort. Each is a `SortRunner`; `open` picks one at run time.

use std::fmt;

use kernel::key::SortKey;
use shared::{KeyKind, SortOrder};

#[cfg(feature = "ash")]
pub mod ash;
pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(any(feature = "wgpu", feature = "ash"))]
pub mod spirv;
#[cfg(feature = "wgpu")]
pub mod wgpu;

/// Every backend this program knows, built in or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Cuda,
    Wgpu,
    Ash,
}

impl Backend {
    pub const ALL: [Backend; 4] = [Backend::Cpu, Backend::Cuda, Backend::Wgpu, Backend::Ash];

    /// The order `--backend auto` tries them in.
    pub const AUTO_ORDER: [Backend; 4] = [Backend::Cuda, Backend::Wgpu, Backend::Ash, Backend::Cpu];

    pub const fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::Wgpu => "wgpu",
            Backend::Ash => "ash",
        }
    }

    /// Whether this binary was built with the backend's cargo feature.
    pub const fn is_built(self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::Cuda => cfg!(feature = "cuda"),
            Backend::Wgpu => cfg!(feature = "wgpu"),
            Backend::Ash => cfg!(feature = "ash"),
        }
    }

    pub fn built() -> impl Iterator<Item = Backend> {
        Self::ALL.into_iter().filter(|b| b.is_built())
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a backend could not sort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerError {
    /// The binary was built without the backend's feature.
    NotBuilt(Backend),
    /// Built in, but this machine cannot run it (no device, driver too old, ...).
    Unavailable { backend: Backend, reason: String },
    /// The backend started but the sort failed.
    Failed { backend: Backend, reason: String },
    /// The input cannot be sorted by any backend.
    TooManyKeys(usize),
}

impl fmt::Display for RunnerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunnerError::NotBuilt(b) => {
                write!(
                    f,
                    "built without the {b} feature: run rgpu build --backend {b}"
                )
            }
            RunnerError::Unavailable { backend, reason } => {
                write!(f, "{backend} backend unavailable: {reason}")
            }
            RunnerError::Failed { backend, reason } => {
                write!(f, "{backend} backend failed: {reason}")
            }
            RunnerError::TooManyKeys(n) => write!(
                f,
                "{n} keys is more than the {} one sort accepts",
                shared::MAX_KEYS
            ),
        }
    }
}

impl std::error::Error for RunnerError {}

/// A backend, opened on a device and ready to sort.
pub trait SortRunner {
    fn backend(&self) -> Backend;

    /// What it runs on, for people: device name, driver, threads.
    fn device(&self) -> String;

    /// Sorts keys given as raw bits of `kind`, in place.
    fn sort_bits(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), RunnerError> {
        if keys.len() > shared::MAX_KEYS as usize {
            return Err(RunnerError::TooManyKeys(keys.len()));
        }
        if keys.len() < 2 {
            // Nothing to order (and GPU APIs reject zero-sized buffers).
            return Ok(());
        }
        self.sort_checked(keys, kind, order)
    }

    /// The backend's sort, for 2 to `MAX_KEYS` keys (`sort_bits` checks the length).
    fn sort_checked(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), RunnerError>;
}

/// Sorts typed keys with any runner.
pub fn sort<K: SortKey>(
    runner: &mut dyn SortRunner,
    keys: &mut [K],
    order: SortOrder,
) -> Result<(), RunnerError> {
    runner.sort_bits(bytemuck::cast_slice_mut(keys), K::KIND, order)
}

/// Opens one backend.
pub fn open(backend: Backend) -> Result<Box<dyn SortRunner>, RunnerError> {
    match backend {
        Backend::Cpu => Ok(Box::new(cpu::CpuRunner::new())),
        #[cfg(feature = "cuda")]
        Backend::Cuda => Ok(Box::new(cuda::CudaRunner::open()?)),
        #[cfg(feature = "wgpu")]
        Backend::Wgpu => Ok(Box::new(wgpu::WgpuRunner::new()?)),
        #[cfg(feature = "ash")]
        Backend::Ash => Ok(Box::new(ash::AshRunner::new()?)),
        #[cfg(not(all(feature = "cuda", feature = "wgpu", feature = "ash")))]
        other => Err(RunnerError::NotBuilt(other)),
    }
}

/// Opens the first backend that works here, trying CUDA, then Vulkan, then the CPU.
/// Returns the runner and, for each backend skipped, why.
pub fn open_auto() -> (Box<dyn SortRunner>, Vec<RunnerError>) {
    let mut skipped = Vec::new();
    for backend in Backend::AUTO_ORDER {
        match open(backend) {
            Ok(runner) => return (runner, skipped),
            Err(why) => skipped.push(why),
        }
    }
    // The CPU backend is always built and never fails to open.
    (Box::new(cpu::CpuRunner::new()), skipped)
}
