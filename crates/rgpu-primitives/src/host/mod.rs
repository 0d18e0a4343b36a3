//! The primitives' host API: one call on any device, on host slices, `Vec`s and device
//! `Buffer`s. On a GPU device the data goes up once (host memory) or stays where it is (a
//! `Buffer` of that device) and the kernels run; on the cpu backend the host versions run
//! (`cpu.rs`), with the same results.
//!
//! Every failure is an `rgpu::Error`, and a call that fails writes nothing to the caller's
//! data: lengths are checked first, a buffer of another device is refused by the first
//! launch that reads it (before any launch writes the caller's memory), and host data is
//! written back only after every launch succeeded.

mod cpu;
mod data;
mod gpu;
pub mod multi;

use std::string::String;
use std::vec::Vec;

use bytemuck::Pod;
use rgpu::{Backend, Buffer, Device, Error, Input, InputOutput};

pub use data::{Elements, Place, Source};
pub use gpu::{
    reduce_plan, scan_algorithm, sort_plan, LaunchHook, ReducePlan, ScanAlgorithm, SortAlgorithm,
    SortPlan,
};

use crate::key::{KeyKind, KeyMap, Order};
use crate::radix::RADIX_BITS;
use crate::reduce::ReduceParams;

/// The most elements one call takes (indices are `u32` on every backend).
pub const MAX_LEN: usize = 1 << 31;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for u64 {}
}

/// How the kernels see a key type.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyLayout {
    /// One `u32` word of this kind.
    Word(KeyKind),
    /// A `u64`: two words, the high one more significant.
    Wide,
}

/// A key type the sort orders: `u32`, `i32`, `f32` (IEEE 754 total order: `-NaN < -inf <
/// ... < -0.0 < +0.0 < ... < +inf < NaN`) and `u64`.
pub trait SortKey: Pod + Send + Sync + sealed::Sealed {
    #[doc(hidden)]
    const LAYOUT: KeyLayout;
}

impl SortKey for u32 {
    const LAYOUT: KeyLayout = KeyLayout::Word(KeyKind::U32);
}
impl SortKey for i32 {
    const LAYOUT: KeyLayout = KeyLayout::Word(KeyKind::I32);
}
impl SortKey for f32 {
    const LAYOUT: KeyLayout = KeyLayout::Word(KeyKind::F32);
}
impl SortKey for u64 {
    const LAYOUT: KeyLayout = KeyLayout::Wide;
}

/// A 32-bit key type (`u32`, `i32`, `f32`): the keys of [`sort_pairs`], what [`reduce`]
/// takes.
pub trait Word32: SortKey {
    #[doc(hidden)]
    const KIND: KeyKind;
}

impl Word32 for u32 {
    const KIND: KeyKind = KeyKind::U32;
}
impl Word32 for i32 {
    const KIND: KeyKind = KeyKind::I32;
}
impl Word32 for f32 {
    const KIND: KeyKind = KeyKind::F32;
}

/// A type the scans add: `u32` and `i32` (wrapping).
pub trait ScanItem: Word32 {}
impl ScanItem for u32 {}
impl ScanItem for i32 {}

/// What [`reduce`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// The sum: wrapping for `u32` and `i32`; for `f32` in one fixed order (each tile of
    /// 4096 by a fixed tree, then the tiles' sums the same way), so every backend gives
    /// the same bits (Vulkan drivers may flush subnormals to zero: then those may differ).
    Sum,
    /// The smallest (`f32`: in IEEE 754 total order, so `-0.0 < +0.0` and NaN is above
    /// `+inf`).
    Min,
    /// The largest (as `Min`).
    Max,
}

fn too_large(what: &str, len: usize) -> Error {
    Error::TooLarge {
        what: what.into(),
        len: len as u64,
        limit: MAX_LEN as u64,
    }
}

fn check_len(what: &str, len: usize) -> Result<(), Error> {
    if len > MAX_LEN {
        return Err(too_large(what, len));
    }
    Ok(())
}

fn argument(kernel: &'static str, param: &'static str, reason: String) -> Error {
    Error::Argument {
        kernel,
        param,
        reason,
    }
}

/// The elements in host memory (a host slice, or a cpu `Buffer`), for the cpu backend.
fn host_mut<T: Pod>(place: Place<'_, T>) -> Result<&mut [T], Error> {
    match place {
        Place::Host(slice) => Ok(slice),
        Place::Device(buffer) => InputOutput::host_mut(buffer),
    }
}

fn host_ref<T: Pod>(source: Source<'_, T>) -> Result<&[T], Error> {
    match source {
        Source::Host(slice) => Ok(slice),
        Source::Device(buffer) => Input::host(buffer),
    }
}

/// Runs `f` on the elements as a device buffer of words `W` (a type of `T`'s size): a
/// `Buffer` in place, host memory uploaded and (when `f` succeeds) read back.
fn on_device<T: Pod, W: Pod, R>(
    device: &Device,
    place: Place<'_, T>,
    f: impl FnOnce(&mut Buffer<W>) -> Result<R, Error>,
) -> Result<R, Error> {
    match place {
        Place::Device(buffer) => f(buffer.cast_mut::<W>()?),
        Place::Host(slice) => {
            let mut buffer = device.upload::<W>(bytemuck::cast_slice(slice))?;
            let result = f(&mut buffer)?;
            buffer.read_into(bytemuck::cast_slice_mut(slice))?;
            Ok(result)
        }
    }
}

/// Runs `f` on read-only elements as a device buffer of words `W`.
fn on_device_ref<T: Pod, W: Pod, R>(
    device: &Device,
    source: Source<'_, T>,
    f: impl FnOnce(&Buffer<W>) -> Result<R, Error>,
) -> Result<R, Error> {
    match source {
        Source::Device(buffer) => f(buffer.cast::<W>()?),
        Source::Host(slice) => f(&device.upload::<W>(bytemuck::cast_slice(slice))?),
    }
}

/// The primitives on one device, keeping their scratch buffers between calls (a call of
/// the same size allocates nothing). The free functions ([`sort_keys`], ...) make one per
/// call.
pub struct Primitives {
    scratch: gpu::Scratch,
    host_words: Vec<u32>,
    host_wide: Vec<u64>,
    kernels: bool,
    scan: Option<ScanAlgorithm>,
    reduce: Option<ReducePlan>,
    sort: Option<SortPlan>,
    fallbacks: u32,
}

impl Primitives {
    pub fn new(device: &Device) -> Self {
        Self {
            scratch: gpu::Scratch::new(device.clone()),
            host_words: Vec::new(),
            host_wide: Vec::new(),
            kernels: false,
            scan: None,
            reduce: None,
            sort: None,
            fallbacks: 0,
        }
    }

    /// The scans run `algorithm` instead of [`scan_algorithm`]'s choice for the device (the
    /// benchmark times both); `None` goes back to the choice.
    #[doc(hidden)]
    pub fn set_scan_algorithm(&mut self, algorithm: Option<ScanAlgorithm>) {
        self.scan = algorithm;
    }

    /// The sorts (and top-k) run `plan` instead of [`sort_plan`]'s for the device (the
    /// benchmark times both algorithms, the tests take both and Onesweep's fallback);
    /// `None` goes back to the choice.
    #[doc(hidden)]
    pub fn set_sort_plan(&mut self, plan: Option<SortPlan>) {
        self.sort = plan;
    }

    /// How many tiles Onesweep's workgroups counted for a predecessor in the last sort
    /// (counted with [`crate::onesweep::OnesweepParams::WITHHOLD`] in the plan only).
    #[doc(hidden)]
    pub fn sort_fallbacks(&self) -> u32 {
        self.fallbacks
    }

    fn sort_plan(&self) -> SortPlan {
        self.sort
            .unwrap_or_else(|| sort_plan(self.device().backend()))
    }

    /// The order-free reductions run `plan` instead of [`reduce_plan`]'s for the device (the
    /// tests take several, down to one workgroup of one load a thread); `None` goes back.
    #[doc(hidden)]
    pub fn set_reduce_plan(&mut self, plan: Option<ReducePlan>) {
        self.reduce = plan;
    }

    /// The single-pass scan's launches with `params` (flags and spins as the tests set
    /// them) on device buffers; returns how many tiles workgroups reduced for a
    /// predecessor (counted with [`crate::scan::ScanParams::WITHHOLD`] only).
    #[doc(hidden)]
    pub fn single_pass_scan(
        &mut self,
        input: &Buffer<u32>,
        output: &mut Buffer<u32>,
        params: crate::scan::ScanParams,
    ) -> Result<u32, Error> {
        gpu::scan_words_by(
            &mut self.scratch,
            input,
            output,
            params,
            ScanAlgorithm::SinglePass,
        )
    }

    /// Runs the kernels' launches on every device, the cpu backend's too (which runs them
    /// natively, slowly): how the kernels' logic is tested without a GPU.
    #[doc(hidden)]
    pub fn with_kernels(device: &Device) -> Self {
        Self {
            kernels: true,
            ..Self::new(device)
        }
    }

    pub fn device(&self) -> &Device {
        self.scratch.device()
    }

    fn on_cpu(&self) -> bool {
        self.device().backend() == Backend::Cpu && !self.kernels
    }

    /// Runs every kernel launch of the primitives through `hook` (the kernel's name and
    /// the launch, which the hook runs: inside `Device::timed`, say, to see each kernel's
    /// share of a primitive's time); `None` removes it. GPU devices only: the cpu backend
    /// runs no kernels.
    pub fn set_launch_hook(&mut self, hook: Option<LaunchHook>) {
        self.scratch.set_hook(hook);
    }

    /// Drops the kept scratch buffers.
    pub fn clear(&mut self) {
        self.scratch.clear();
        self.host_words = Vec::new();
        self.host_wide = Vec::new();
    }

    /// Sorts `keys` in `order` (a radix sort: stable, 4 passes over 8-bit digits; 8 for
    /// `u64`).
    pub fn sort_keys<K: SortKey>(
        &mut self,
        keys: &mut (impl Elements<K> + ?Sized),
        order: Order,
    ) -> Result<(), Error> {
        check_len("rgpu_primitives::sort_keys", keys.count())?;
        if self.on_cpu() {
            let keys = host_mut(keys.place())?;
            match K::LAYOUT {
                KeyLayout::Word(kind) => cpu::radix_sort(
                    bytemuck::cast_slice_mut::<K, u32>(keys),
                    &mut self.host_words,
                    KeyMap::new(kind, order),
                    &[0, 8, 16, 24],
                ),
                // Eight radix passes over 64-bit keys move more memory than rayon's
                // pattern-defeating quicksort does (BENCHMARKS.md): keys alone have no
                // order among equals to keep, so that sort gives the same result.
                KeyLayout::Wide => cpu::sort_wide(bytemuck::cast_slice_mut::<K, u64>(keys), order),
            }
            return Ok(());
        }
        let device = self.device().clone();
        let plan = self.sort_plan();
        let scratch = &mut self.scratch;
        match K::LAYOUT {
            KeyLayout::Word(kind) => {
                self.fallbacks = on_device(&device, keys.place(), |words: &mut Buffer<u32>| {
                    gpu::sort_words(scratch, words, kind, order, plan)
                })?;
                Ok(())
            }
            KeyLayout::Wide => on_device(&device, keys.place(), |wide: &mut Buffer<[u32; 2]>| {
                gpu::sort_wide(scratch, wide, order, plan)
            }),
        }
    }

    /// Sorts `keys` in `order` with `values` moving along: `values[i]` stays with
    /// `keys[i]`, and keys that compare equal keep their order (a stable sort). `V` is any
    /// 4-byte `Pod` (an index, an `f32`...).
    pub fn sort_pairs<K: Word32, V: Pod>(
        &mut self,
        keys: &mut (impl Elements<K> + ?Sized),
        values: &mut (impl Elements<V> + ?Sized),
        order: Order,
    ) -> Result<(), Error> {
        const NAME: &str = "rgpu_primitives::sort_pairs";
        if std::mem::size_of::<V>() != 4 {
            return Err(argument(
                NAME,
                "values",
                std::format!(
                    "values of {} bytes: the sort moves 4-byte values (u32, i32, f32, a \
                     4-byte Pod); sort u32 indices and gather larger values by them",
                    std::mem::size_of::<V>()
                ),
            ));
        }
        let len = keys.count();
        check_len(NAME, len)?;
        if values.count() != len {
            return Err(argument(
                NAME,
                "values",
                std::format!(
                    "{} values for {len} keys: pass one value per key",
                    values.count()
                ),
            ));
        }
        if self.on_cpu() {
            let keys = host_mut(keys.place())?;
            let values = host_mut(values.place())?;
            let keys: &mut [u32] = bytemuck::cast_slice_mut(keys);
            let values: &mut [u32] = bytemuck::cast_slice_mut(values);
            let mut packed: Vec<u64> = keys
                .iter()
                .zip(values.iter())
                .map(|(&k, &v)| (k as u64) << 32 | v as u64)
                .collect();
            cpu::radix_sort(
                &mut packed,
                &mut self.host_wide,
                cpu::HighWord(KeyMap::new(K::KIND, order)),
                &[32, 40, 48, 56],
            );
            for ((k, v), p) in keys.iter_mut().zip(values.iter_mut()).zip(packed) {
                *k = (p >> 32) as u32;
                *v = p as u32;
            }
            return Ok(());
        }
        let device = self.device().clone();
        let plan = self.sort_plan();
        let scratch = &mut self.scratch;
        // The values' buffer is taken first: one on another device fails before the keys
        // (which the first launch reads) go anywhere.
        self.fallbacks = on_device(&device, values.place(), |v: &mut Buffer<u32>| {
            on_device(&device, keys.place(), |k: &mut Buffer<u32>| {
                gpu::sort_pairs_words(scratch, k, v, K::KIND, order, false, plan)
            })
        })?;
        Ok(())
    }

    /// `output[i] = input[0] + .. + input[i - 1]` (wrapping; `output[0] = 0`).
    pub fn exclusive_scan<T: ScanItem>(
        &mut self,
        input: &(impl Elements<T> + ?Sized),
        output: &mut (impl Elements<T> + ?Sized),
    ) -> Result<(), Error> {
        self.scan(input, output, false, "rgpu_primitives::exclusive_scan")
    }

    /// `output[i] = input[0] + .. + input[i]` (wrapping).
    pub fn inclusive_scan<T: ScanItem>(
        &mut self,
        input: &(impl Elements<T> + ?Sized),
        output: &mut (impl Elements<T> + ?Sized),
    ) -> Result<(), Error> {
        self.scan(input, output, true, "rgpu_primitives::inclusive_scan")
    }

    fn scan<T: ScanItem>(
        &mut self,
        input: &(impl Elements<T> + ?Sized),
        output: &mut (impl Elements<T> + ?Sized),
        inclusive: bool,
        name: &'static str,
    ) -> Result<(), Error> {
        let len = input.count();
        check_len(name, len)?;
        if output.count() != len {
            return Err(argument(
                name,
                "output",
                std::format!(
                    "{} elements for an input of {len}: pass an output of the input's length",
                    output.count()
                ),
            ));
        }
        if self.on_cpu() {
            let input = host_ref(input.source())?;
            let output = host_mut(output.place())?;
            cpu::scan(
                bytemuck::cast_slice(input),
                bytemuck::cast_slice_mut(output),
                inclusive,
            );
            return Ok(());
        }
        let device = self.device().clone();
        let algorithm = self
            .scan
            .unwrap_or_else(|| scan_algorithm(device.backend()));
        let scratch = &mut self.scratch;
        on_device_ref(&device, input.source(), |input: &Buffer<u32>| {
            on_device(&device, output.place(), |output: &mut Buffer<u32>| {
                gpu::scan_words(scratch, input, output, inclusive, algorithm)
            })
        })
    }

    /// The reduction of `input` (see [`Reduction`]); `None` for the min or max of nothing
    /// (the sum of nothing is zero).
    pub fn reduce<T: Word32>(
        &mut self,
        input: &(impl Elements<T> + ?Sized),
        reduction: Reduction,
    ) -> Result<Option<T>, Error> {
        check_len("rgpu_primitives::reduce", input.count())?;
        let (kind, float) = (T::KIND, T::KIND == KeyKind::F32);
        let op = match reduction {
            Reduction::Sum if float => ReduceParams::SUM_F32,
            Reduction::Sum => ReduceParams::SUM,
            Reduction::Min => ReduceParams::MIN,
            Reduction::Max => ReduceParams::MAX,
        };
        let map = KeyMap::new(kind, Order::Ascending);
        let word: Option<u32> = if self.on_cpu() {
            let words: &[u32] = bytemuck::cast_slice(host_ref(input.source())?);
            match op {
                ReduceParams::SUM_F32 => {
                    (!words.is_empty()).then(|| cpu::sum_f32(bytemuck::cast_slice(words)).to_bits())
                }
                ReduceParams::SUM => Some(cpu::sum(words)),
                _ => cpu::min_max(words, map, op == ReduceParams::MAX).map(|w| map.decode(w)),
            }
        } else {
            let device = self.device().clone();
            let plan = self.reduce.unwrap_or_else(|| reduce_plan(device.backend()));
            let scratch = &mut self.scratch;
            let raw = on_device_ref(&device, input.source(), |words: &Buffer<u32>| {
                gpu::reduce_words(scratch, words, op, kind, plan)
            })?;
            match op {
                ReduceParams::MIN | ReduceParams::MAX => raw.map(|w| map.decode(w)),
                _ => raw,
            }
        };
        Ok(match (word, reduction) {
            (None, Reduction::Sum) => Some(T::zeroed()),
            (word, _) => word.map(|w| bytemuck::cast(w)),
        })
    }

    /// The sum of `input` ([`Reduction::Sum`]).
    pub fn sum<T: Word32>(&mut self, input: &(impl Elements<T> + ?Sized)) -> Result<T, Error> {
        Ok(self
            .reduce(input, Reduction::Sum)?
            .unwrap_or_else(T::zeroed))
    }

    /// `counts[b]` = how many of `values` are `b`, for every bin `b < counts.len()`
    /// (values of `counts.len()` or more are not counted; the counts are replaced).
    pub fn histogram(
        &mut self,
        values: &(impl Elements<u32> + ?Sized),
        counts: &mut (impl Elements<u32> + ?Sized),
    ) -> Result<(), Error> {
        const NAME: &str = "rgpu_primitives::histogram";
        check_len(NAME, values.count())?;
        check_len(NAME, counts.count())?;
        if counts.count() == 0 {
            return Err(argument(
                NAME,
                "counts",
                "0 bins: pass a counts buffer with one element per bin".into(),
            ));
        }
        if self.on_cpu() {
            let values = host_ref(values.source())?;
            let counts = host_mut(counts.place())?;
            cpu::histogram(values, counts);
            return Ok(());
        }
        let device = self.device().clone();
        let scratch = &mut self.scratch;
        on_device_ref(&device, values.source(), |values: &Buffer<u32>| {
            on_device(&device, counts.place(), |counts: &mut Buffer<u32>| {
                gpu::histogram_words(scratch, values, counts)
            })
        })
    }

    /// The first `k` of `keys` in `order` (the `k` smallest, or with `Order::Descending`
    /// the `k` largest, in that order); `keys` is not changed.
    pub fn top_k<K: SortKey>(
        &mut self,
        keys: &(impl Elements<K> + ?Sized),
        k: usize,
        order: Order,
    ) -> Result<Vec<K>, Error> {
        let len = keys.count();
        check_len("rgpu_primitives::top_k", len)?;
        let k = k.min(len);
        if self.on_cpu() {
            let mut copy = host_ref(keys.source())?.to_vec();
            self.sort_keys(&mut copy, order)?;
            copy.truncate(k);
            return Ok(copy);
        }
        if k == 0 {
            return Ok(Vec::new());
        }
        let device = self.device().clone();
        let plan = self.sort_plan();
        let scratch = &mut self.scratch;
        match K::LAYOUT {
            KeyLayout::Word(kind) => {
                let words = on_device_ref(&device, keys.source(), |w: &Buffer<u32>| {
                    gpu::top_words(scratch, w, k, kind, order, plan)
                })?;
                Ok(bytemuck::cast_slice(&words).to_vec())
            }
            KeyLayout::Wide => {
                let wide = on_device_ref(&device, keys.source(), |w: &Buffer<[u32; 2]>| {
                    gpu::top_wide(scratch, w, k, order, plan)
                })?;
                Ok(bytemuck::cast_slice(&wide).to_vec())
            }
        }
    }
}

const _: () = assert!(RADIX_BITS == 8);

#[cfg(test)]
mod tests;

#[cfg(test)]
mod multi_tests;

/// Sorts `keys` on `device` ([`Primitives::sort_keys`]).
pub fn sort_keys<K: SortKey>(
    device: &Device,
    keys: &mut (impl Elements<K> + ?Sized),
    order: Order,
) -> Result<(), Error> {
    Primitives::new(device).sort_keys(keys, order)
}

/// Sorts `keys` with `values` moving along, stably ([`Primitives::sort_pairs`]).
pub fn sort_pairs<K: Word32, V: Pod>(
    device: &Device,
    keys: &mut (impl Elements<K> + ?Sized),
    values: &mut (impl Elements<V> + ?Sized),
    order: Order,
) -> Result<(), Error> {
    Primitives::new(device).sort_pairs(keys, values, order)
}

/// [`Primitives::exclusive_scan`].
pub fn exclusive_scan<T: ScanItem>(
    device: &Device,
    input: &(impl Elements<T> + ?Sized),
    output: &mut (impl Elements<T> + ?Sized),
) -> Result<(), Error> {
    Primitives::new(device).exclusive_scan(input, output)
}

/// [`Primitives::inclusive_scan`].
pub fn inclusive_scan<T: ScanItem>(
    device: &Device,
    input: &(impl Elements<T> + ?Sized),
    output: &mut (impl Elements<T> + ?Sized),
) -> Result<(), Error> {
    Primitives::new(device).inclusive_scan(input, output)
}

/// [`Primitives::reduce`].
pub fn reduce<T: Word32>(
    device: &Device,
    input: &(impl Elements<T> + ?Sized),
    reduction: Reduction,
) -> Result<Option<T>, Error> {
    Primitives::new(device).reduce(input, reduction)
}

/// The sum of `input` ([`Reduction::Sum`]).
pub fn sum<T: Word32>(device: &Device, input: &(impl Elements<T> + ?Sized)) -> Result<T, Error> {
    Primitives::new(device).sum(input)
}

/// The smallest of `input` ([`Reduction::Min`]), `None` when it is empty.
pub fn min<T: Word32>(
    device: &Device,
    input: &(impl Elements<T> + ?Sized),
) -> Result<Option<T>, Error> {
    Primitives::new(device).reduce(input, Reduction::Min)
}

/// The largest of `input` ([`Reduction::Max`]), `None` when it is empty.
pub fn max<T: Word32>(
    device: &Device,
    input: &(impl Elements<T> + ?Sized),
) -> Result<Option<T>, Error> {
    Primitives::new(device).reduce(input, Reduction::Max)
}

/// [`Primitives::histogram`].
pub fn histogram(
    device: &Device,
    values: &(impl Elements<u32> + ?Sized),
    counts: &mut (impl Elements<u32> + ?Sized),
) -> Result<(), Error> {
    Primitives::new(device).histogram(values, counts)
}

/// [`Primitives::top_k`].
pub fn top_k<K: SortKey>(
    device: &Device,
    keys: &(impl Elements<K> + ?Sized),
    k: usize,
    order: Order,
) -> Result<Vec<K>, Error> {
    Primitives::new(device).top_k(keys, k, order)
}
