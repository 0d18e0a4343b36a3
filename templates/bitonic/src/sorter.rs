//! Sorting on any device. On a GPU the keys go up once, the algorithm's launches run, and
//! the keys come back once: the bitonic sort is the kernel crate's own kernels through
//! rgpu's launchers (`kernel::kernels::*`, the same calls for cuda, wgpu and ash), the radix
//! sort is rgpu-primitives' `sort_keys` on the keys' device buffer. On the cpu backend each
//! algorithm has a host version on rayon (src/cpu.rs: the bitonic schedule with slice-wise
//! min/max, which vectorizes; rgpu-primitives' radix passes): that part is the sort's own,
//! the bitonic kernels also run there (the parity tests check both).

use std::fmt;

use kernel::kernels::{self, launch_count};
use kernel::key::SortKey;
use kernel::schedule::{Pass, Passes};
use kernel::{KeyKind, SortOrder, MAX_KEYS};
use rgpu::{Backend, Buffer, Device};
use rgpu_primitives::Primitives;

use crate::cpu;

/// Which sort runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    /// The bitonic network (`kernel::schedule`): in place, O(n log^2 n) work.
    #[default]
    Bitonic,
    /// The LSD radix sort of rgpu-primitives (`sort_keys`): 4 passes over 8-bit digits,
    /// stable, a second buffer of n keys.
    Radix,
}

impl Algorithm {
    pub const ALL: [Algorithm; 2] = [Algorithm::Bitonic, Algorithm::Radix];

    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::Bitonic => "bitonic",
            Algorithm::Radix => "radix",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a sort failed.
#[derive(Debug)]
pub enum SortError {
    /// More keys than one sort accepts (indices are `u32` on every backend).
    TooManyKeys(usize),
    /// The device failed (no kernels embedded for it, a launch or a copy failed).
    Device(rgpu::Error),
}

impl fmt::Display for SortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SortError::TooManyKeys(n) => {
                write!(f, "{n} keys is more than the {MAX_KEYS} one sort accepts")
            }
            SortError::Device(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SortError {}

impl From<rgpu::Error> for SortError {
    fn from(e: rgpu::Error) -> Self {
        SortError::Device(e)
    }
}

/// Sorts keys on one device, keeping its buffers between sorts of the same size.
pub struct Sorter {
    device: Device,
    algorithm: Algorithm,
    keys: Option<Buffer<u32>>,
    /// The radix sort, with its scratch buffers kept between sorts of one size.
    radix: Primitives,
    last_device_ms: Option<f64>,
}

impl Sorter {
    /// A bitonic sorter.
    pub fn new(device: Device) -> Self {
        Self::with_algorithm(device, Algorithm::default())
    }

    pub fn with_algorithm(device: Device, algorithm: Algorithm) -> Self {
        Self {
            radix: Primitives::new(&device),
            device,
            algorithm,
            keys: None,
            last_device_ms: None,
        }
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn backend(&self) -> Backend {
        self.device.backend()
    }

    /// Device time of the last sort's launches (GPU timers; wall time on the cpu backend).
    pub fn last_device_ms(&self) -> Option<f64> {
        self.last_device_ms
    }

    /// Sorts keys given as the raw bits of `kind`, in place.
    pub fn sort_bits(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), SortError> {
        if keys.len() > MAX_KEYS as usize {
            return Err(SortError::TooManyKeys(keys.len()));
        }
        if keys.len() < 2 {
            return Ok(()); // nothing to order
        }
        if self.device.backend() == Backend::Cpu {
            let started = rgpu::Instant::now();
            match self.algorithm {
                Algorithm::Bitonic => cpu::sort_in_place(keys, kind, order),
                Algorithm::Radix => radix_sort_host(&mut self.radix, keys, kind, order)?,
            }
            self.last_device_ms = Some(started.elapsed().as_secs_f64() * 1e3);
            return Ok(());
        }
        let len = keys.len() as u32;
        let buffer = match self.keys.take() {
            Some(mut buffer) if buffer.len() == keys.len() => {
                buffer.write(keys)?;
                buffer
            }
            _ => self.device.upload(keys)?,
        };
        let buffer = self.keys.insert(buffer);
        let device = &self.device;
        let ((), ms) = match self.algorithm {
            Algorithm::Bitonic => device.timed(|| launch_all(device, buffer, len, kind, order))?,
            Algorithm::Radix => {
                let radix = &mut self.radix;
                device.timed(|| radix_sort(radix, buffer, kind, order))?
            }
        };
        self.last_device_ms = ms;
        buffer.read_into(keys)?;
        Ok(())
    }
}

/// Every launch of one sort of the `len` keys in `keys` (already on `device`).
pub fn launch_all(
    device: &Device,
    keys: &mut Buffer<u32>,
    len: u32,
    kind: KeyKind,
    order: SortOrder,
) -> Result<(), rgpu::Error> {
    for pass in Passes::new(len) {
        let params = pass.params(len, kind, order);
        let count = launch_count(pass, len);
        match pass {
            Pass::Tile(_) => kernels::bitonic_tile(device, count, params, keys)?,
            Pass::Global(_) => kernels::bitonic_global(device, count, params, keys)?,
        }
    }
    Ok(())
}

/// The radix sort (rgpu-primitives' `sort_keys`) of keys given as the raw bits of `kind`,
/// in a device buffer.
pub fn radix_sort(
    radix: &mut Primitives,
    keys: &mut Buffer<u32>,
    kind: KeyKind,
    order: SortOrder,
) -> Result<(), rgpu::Error> {
    match kind {
        KeyKind::U32 => radix.sort_keys(keys, order),
        KeyKind::I32 => radix.sort_keys(keys.cast_mut::<i32>()?, order),
        KeyKind::F32 => radix.sort_keys(keys.cast_mut::<f32>()?, order),
    }
}

/// [`radix_sort`] of keys in host memory (the cpu backend's rayon version).
pub fn radix_sort_host(
    radix: &mut Primitives,
    keys: &mut [u32],
    kind: KeyKind,
    order: SortOrder,
) -> Result<(), rgpu::Error> {
    match kind {
        KeyKind::U32 => radix.sort_keys(keys, order),
        KeyKind::I32 => radix.sort_keys(bytemuck::cast_slice_mut::<u32, i32>(keys), order),
        KeyKind::F32 => radix.sort_keys(bytemuck::cast_slice_mut::<u32, f32>(keys), order),
    }
}

/// Sorts typed keys with any sorter.
pub fn sort<K: SortKey>(
    sorter: &mut Sorter,
    keys: &mut [K],
    order: SortOrder,
) -> Result<(), SortError> {
    sorter.sort_bits(bytemuck::cast_slice_mut(keys), K::KIND, order)
}
