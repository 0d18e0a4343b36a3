//! The primitives over keys spread across several devices: a sort whose result is spread
//! over the devices in order ([`Multi::sort_keys`]: each device sorts its shard, the sorted
//! shards are cut at common splitters, exchanged and merged), and reductions whose
//! per-device results are combined exactly ([`Multi::sum`], [`Multi::min`], [`Multi::max`]).
//!
//! The sort, over `p` devices holding one shard each:
//!
//! 1. each device sorts its shard in place with the single-device sort ([`Primitives`]),
//!    every device's sort queued at once;
//! 2. an evenly spaced sample of each sorted shard (`64 * p` keys at most, `prim_sample` /
//!    `prim_sample_wide` on a GPU) is read back, and the host chooses `p - 1` splitters from
//!    them in the keys' ordered bits ([`KeyMap`]), each sample weighted by its shard's length
//!    over its sample's;
//! 3. each device finds where every splitter falls in its sorted shard, a lower and an upper
//!    bound by binary search (`prim_search` / `prim_search_wide`, `2 * (p - 1)` searches),
//!    and the host reads them back. The host cuts every shard at `p - 1` points: cut `j`
//!    lies between splitter `j`'s two bounds (keys below the splitter before it, keys above
//!    after it), and of the keys equal to the splitter the devices in rank order put as many
//!    before it as bring the keys before cut `j` on all devices together to `j * n / p` (`n`
//!    keys in all), or as near as the equal keys allow. Equal keys are equal bits, so where
//!    they go changes no bit of the result; every key before cut `j` on any device is at
//!    most the splitter, every key after it at least the splitter: the result is exact;
//! 4. range `j` of every sorted shard (between cuts `j` and `j + 1`) goes to device `j`, in
//!    rank order: one [`Collective::all_to_all`] of the sorted shards themselves (one NCCL
//!    group of sends and receives over CUDA devices, through host memory otherwise);
//! 5. each device merges the `p` sorted runs it received (empty ones left out) by rounds of
//!    pairwise merges (`prim_merge` / `prim_merge_wide`, a merge path: one launch a round,
//!    between the received buffer and a second one; `p = 2` one round, `p = 4` two).
//!
//! The devices' shares are `n / p` keys each (within one) when the splitters' bounds allow
//! it, all keys equal too; otherwise they are as even as the sample made the splitters.
//! The cpu backend's host versions do the same steps on the host (a k-way merge).

use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use bytemuck::Pod;
use rgpu::{Buffer, Collective, Device, Error, Input, InputOutput};

use super::{argument, check_len, gpu, KeyLayout, Primitives, Reduction, SortKey, Word32};
use crate::key::{KeyKind, KeyMap, Order};
use crate::partition::{SampleParams, SearchParams, MAX_DEVICES};

/// Keys sampled from each shard per device: a shard gives `SAMPLES * p` keys at most.
pub const SAMPLES: usize = 64;

const NEW: &str = "rgpu_primitives::multi::Multi::new";
const SORT: &str = "rgpu_primitives::multi::sort_keys";
const REDUCE: &str = "rgpu_primitives::multi::reduce";

/// The primitives over several devices, one shard (a `Buffer` of that device) on each, in
/// rank order; it keeps a [`Primitives`] per device (their scratch buffers) and the
/// [`Collective`] that moves keys between them.
pub struct Multi {
    devices: Vec<Device>,
    collective: Collective,
    primitives: Vec<Primitives>,
}

/// A shard's sample: host words, or a device buffer queued to be read.
enum Sample {
    Host(Vec<u32>),
    One(Buffer<u32>),
    Two(Buffer<[u32; 2]>),
}

/// A shard's splitter bounds: known on the host, or a device buffer queued to be read.
enum Bounds {
    Host(Vec<u32>),
    Device(Buffer<u32>),
}

impl Multi {
    /// The primitives over `devices` (rank `i` is `devices[i]`): at least one, each once,
    /// at most [`MAX_DEVICES`]. Over CUDA devices the [`Collective`] is NCCL's (which must be
    /// installed); otherwise keys move through host memory.
    pub fn new(devices: &[Device]) -> Result<Self, Error> {
        if devices.is_empty() {
            return Err(argument(
                NEW,
                "devices",
                "no devices: pass one per shard, in rank order".into(),
            ));
        }
        if devices.len() > MAX_DEVICES as usize {
            return Err(argument(
                NEW,
                "devices",
                format!(
                    "{} devices: the sort spreads over {MAX_DEVICES} at most",
                    devices.len()
                ),
            ));
        }
        for (i, a) in devices.iter().enumerate() {
            if let Some(j) = devices[..i].iter().position(|b| a.is(b)) {
                return Err(argument(
                    NEW,
                    "devices",
                    format!("ranks {j} and {i} are the same device ({a:?}): pass each device once"),
                ));
            }
        }
        Ok(Self {
            collective: Collective::new(devices)?,
            primitives: devices.iter().map(Primitives::new).collect(),
            devices: devices.to_vec(),
        })
    }

    /// Runs the kernels' launches on every device, the cpu backend's too (which runs them
    /// natively): how the GPU path is tested without a GPU.
    #[doc(hidden)]
    pub fn with_kernels(devices: &[Device]) -> Result<Self, Error> {
        let mut multi = Self::new(devices)?;
        multi.primitives = devices.iter().map(Primitives::with_kernels).collect();
        Ok(multi)
    }

    /// The devices, in rank order.
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }

    /// What moves keys between the devices (`Collective::engine` says how).
    pub fn collective(&self) -> &Collective {
        &self.collective
    }

    /// Rank `rank`'s single-device primitives (its sort plan, launch hook...).
    pub fn primitives(&mut self, rank: usize) -> Option<&mut Primitives> {
        self.primitives.get_mut(rank)
    }

    /// Sorts the keys of all `shards` (shard `i` a buffer of rank `i`'s device; empty ones
    /// too) in `order`: returns one **new** buffer per device, whose concatenation in rank
    /// order is the sorted whole. Their lengths differ from the shards' (`n / p` keys each
    /// where the splitters allow it: the module's doc); the shards are consumed. One device:
    /// its shard, sorted in place.
    pub fn sort_keys<K: SortKey>(
        &mut self,
        shards: Vec<Buffer<K>>,
        order: Order,
    ) -> Result<Vec<Buffer<K>>, Error> {
        let total = self.check_shards(SORT, &shards)?;
        let p = self.devices.len();
        let mut shards = shards;
        // 1. Each shard sorted on its device, every device's sort queued at once.
        let jobs = self.primitives.iter_mut().zip(&mut shards);
        each_device(jobs.collect(), |(primitives, shard)| {
            primitives.sort_keys(shard, order)
        })?;
        if p == 1 || total == 0 {
            return Ok(shards);
        }
        let (width, kind) = match K::LAYOUT {
            KeyLayout::Word(kind) => (1usize, kind),
            KeyLayout::Wide => (2, KeyKind::U32),
        };
        let map = KeyMap::new(kind, order);
        // 2. The splitters.
        let samples = self.samples(&shards, width, map)?;
        let splitters = splitters(samples, total, p);
        // 3. Each splitter's bounds in each sorted shard, and the cuts.
        let bounds = self.bounds(&shards, &splitters, width, kind, order, map)?;
        let lens: Vec<usize> = shards.iter().map(Buffer::len).collect();
        let cuts = cuts(&bounds, &lens, total);
        let counts: Vec<Vec<usize>> = cuts
            .iter()
            .map(|c| c.windows(2).map(|w| w[1] - w[0]).collect())
            .collect();
        // 4. Range j of every shard to device j, in rank order.
        let mut received = Vec::with_capacity(p);
        for (j, device) in self.devices.iter().enumerate() {
            let len: usize = counts.iter().map(|c| c[j]).sum();
            check_len(SORT, len)?;
            received.push(device.zeros::<K>(len)?);
        }
        self.collective
            .all_to_all(&shards, &counts, &mut received)?;
        drop(shards);
        // 5. Each device's runs merged, every device's merge queued at once.
        let runs: Vec<Vec<u32>> = (0..p)
            .map(|j| {
                let mut at = 0;
                let mut runs = std::vec![0u32];
                runs.extend(counts.iter().map(|c| {
                    at += c[j] as u32;
                    at
                }));
                runs
            })
            .collect();
        let jobs = self.primitives.iter_mut().zip(received).zip(&runs);
        each_device(jobs.collect(), |((primitives, mut keys), runs)| {
            if primitives.on_cpu() {
                let words = bytemuck::cast_slice_mut(InputOutput::host_mut(&mut keys)?);
                merge_host(words, width, runs, map);
                Ok(keys)
            } else {
                gpu::merge(&mut primitives.scratch, keys, runs, kind, order)
            }
        })
    }

    /// The sample of each sorted shard as `(ordered key, weight)` pairs: `SAMPLES * p`
    /// evenly spaced keys at most, each weighing its shard's length over its sample's.
    fn samples<K: SortKey>(
        &mut self,
        shards: &[Buffer<K>],
        width: usize,
        map: KeyMap,
    ) -> Result<Vec<(u64, f64)>, Error> {
        let p = self.devices.len();
        let mut queued = Vec::with_capacity(p);
        for (primitives, shard) in self.primitives.iter_mut().zip(shards) {
            let len = shard.len();
            let count = len.min(SAMPLES * p);
            let step = len.checked_div(count).unwrap_or(1);
            let params = SampleParams {
                first: (step / 2) as u32,
                step: step as u32,
                width: 1,
                len: len as u32,
            };
            let picked = |i: usize| params.first as usize + i * step;
            let on_cpu = primitives.on_cpu();
            let scratch = &mut primitives.scratch;
            let sample = if on_cpu {
                let keys: &[u32] = bytemuck::cast_slice(Input::host(shard)?);
                let keys =
                    (0..count).flat_map(|i| &keys[picked(i) * width..(picked(i) + 1) * width]);
                Sample::Host(keys.copied().collect())
            } else if width == 2 {
                let keys = shard.cast::<[u32; 2]>()?;
                Sample::Two(gpu::sample_wide(scratch, keys, params, count as u32)?)
            } else {
                let keys = shard.cast::<u32>()?;
                Sample::One(gpu::sample(scratch, keys, 1, params, count as u32)?)
            };
            queued.push((sample, len, count));
        }
        let mut samples = Vec::new();
        for (sample, len, count) in queued {
            let keys: Vec<u32> = match sample {
                Sample::Host(keys) => keys,
                Sample::One(buffer) => buffer.read()?,
                Sample::Two(buffer) => buffer.read()?.concat(),
            };
            let weight = len as f64 / count.max(1) as f64;
            samples.extend(keys.chunks(width).map(|key| (ordered(key, map), weight)));
        }
        Ok(samples)
    }

    /// Each sorted shard's `[lower, upper]` bounds of every splitter (ordered bits,
    /// ascending), `2 * (p - 1)` positions a shard: searched on every device at once, then
    /// read.
    fn bounds<K: SortKey>(
        &mut self,
        shards: &[Buffer<K>],
        splitters: &[u64],
        width: usize,
        kind: KeyKind,
        order: Order,
        map: KeyMap,
    ) -> Result<Vec<Vec<u32>>, Error> {
        // The kernels' splitters: a word each, or a u64's `[low, high]`.
        let words: Vec<u32> = if width == 2 {
            splitters
                .iter()
                .flat_map(|&s| [s as u32, (s >> 32) as u32])
                .collect()
        } else {
            splitters.iter().map(|&s| s as u32).collect()
        };
        let mut queued = Vec::with_capacity(shards.len());
        for ((primitives, device), shard) in
            self.primitives.iter_mut().zip(&self.devices).zip(shards)
        {
            queued.push(if shard.is_empty() {
                Bounds::Host(std::vec![0; 2 * splitters.len()])
            } else if primitives.on_cpu() {
                let keys: &[u32] = bytemuck::cast_slice(Input::host(shard)?);
                let ordered: Vec<u64> = keys.chunks(width).map(|k| ordered(k, map)).collect();
                let found = splitters.iter().flat_map(|&s| {
                    let lower = ordered.partition_point(|&k| k < s) as u32;
                    let upper = ordered.partition_point(|&k| k <= s) as u32;
                    [lower, upper]
                });
                Bounds::Host(found.collect())
            } else {
                let params =
                    SearchParams::new(shard.len() as u32, splitters.len() as u32, kind, order);
                let splitters = device.upload(&words)?;
                Bounds::Device(gpu::search(
                    &mut primitives.scratch,
                    shard,
                    &splitters,
                    params,
                )?)
            });
        }
        queued
            .into_iter()
            .map(|bounds| match bounds {
                Bounds::Host(found) => Ok(found),
                Bounds::Device(buffer) => buffer.read(),
            })
            .collect()
    }

    /// The reduction of every shard's keys together ([`Reduction`]): each device reduces
    /// its shard, and the host combines the results in rank order, exactly (`u32` and
    /// `i32` sums wrapping; `f32` sums added in rank order, `((s0 + s1) + s2) + ...` over
    /// the non-empty shards, so the bits depend on how the keys are spread, not on the
    /// devices; min and max in `Reduction`'s order). `None` for the min or max of nothing.
    pub fn reduce<T: Word32>(
        &mut self,
        shards: &[Buffer<T>],
        reduction: Reduction,
    ) -> Result<Option<T>, Error> {
        self.check_shards(REDUCE, shards)?;
        let mut parts = Vec::with_capacity(shards.len());
        for (primitives, shard) in self.primitives.iter_mut().zip(shards) {
            if !shard.is_empty() {
                parts.extend(primitives.reduce(shard, reduction)?);
            }
        }
        let map = KeyMap::new(T::KIND, Order::Ascending);
        let word = |t: &T| -> u32 { bytemuck::cast(*t) };
        let combined = parts.into_iter().reduce(|a, b| match reduction {
            Reduction::Sum if T::KIND == KeyKind::F32 => {
                let (a, b): (f32, f32) = (bytemuck::cast(word(&a)), bytemuck::cast(word(&b)));
                bytemuck::cast((a + b).to_bits())
            }
            Reduction::Sum => bytemuck::cast(word(&a).wrapping_add(word(&b))),
            Reduction::Min if map.encode(word(&b)) < map.encode(word(&a)) => b,
            Reduction::Max if map.encode(word(&b)) > map.encode(word(&a)) => b,
            _ => a,
        });
        Ok(match (combined, reduction) {
            (None, Reduction::Sum) => Some(T::zeroed()),
            (combined, _) => combined,
        })
    }

    /// The sum of every shard ([`Multi::reduce`] with [`Reduction::Sum`]).
    pub fn sum<T: Word32>(&mut self, shards: &[Buffer<T>]) -> Result<T, Error> {
        Ok(self
            .reduce(shards, Reduction::Sum)?
            .unwrap_or_else(T::zeroed))
    }

    /// The smallest key of every shard, `None` when all are empty.
    pub fn min<T: Word32>(&mut self, shards: &[Buffer<T>]) -> Result<Option<T>, Error> {
        self.reduce(shards, Reduction::Min)
    }

    /// The largest key of every shard, `None` when all are empty.
    pub fn max<T: Word32>(&mut self, shards: &[Buffer<T>]) -> Result<Option<T>, Error> {
        self.reduce(shards, Reduction::Max)
    }

    /// One shard per device, shard `i` on rank `i`'s device, each at most `MAX_LEN`: the
    /// keys in all.
    fn check_shards<T: Pod>(
        &self,
        what: &'static str,
        shards: &[Buffer<T>],
    ) -> Result<usize, Error> {
        let p = self.devices.len();
        if shards.len() != p {
            let reason = match shards.len() {
                0 => format!("no shards: pass one buffer per device ({p}), in rank order (an empty one for a device without keys)"),
                n => format!("{n} shards for {p} devices: pass one buffer per device, in rank order (an empty one for a device without keys)"),
            };
            return Err(argument(what, "shards", reason));
        }
        let mut total = 0;
        for (rank, (shard, device)) in shards.iter().zip(&self.devices).enumerate() {
            if !device.owns(shard) {
                let reason: String = match self.devices.iter().position(|d| d.owns(shard)) {
                    Some(other) => format!(
                        "shard {rank} is a buffer of rank {other}'s device ({:?}), not of \
                         rank {rank}'s ({device:?}): pass shard i on devices[i], each device's \
                         shard once",
                        self.devices[other]
                    ),
                    None => format!(
                        "shard {rank} is a buffer of a device outside this Multi's (rank \
                         {rank} is {device:?}): make it on that device, or copy it there \
                         (Device::copy_from)"
                    ),
                };
                return Err(argument(what, "shards", reason));
            }
            check_len(what, shard.len())?;
            total += shard.len();
        }
        Ok(total)
    }
}

/// Sorts keys spread over `devices` ([`Multi::sort_keys`]: returns new buffers, one per
/// device, whose concatenation in rank order is the sorted whole).
pub fn sort_keys<K: SortKey>(
    devices: &[Device],
    shards: Vec<Buffer<K>>,
    order: Order,
) -> Result<Vec<Buffer<K>>, Error> {
    Multi::new(devices)?.sort_keys(shards, order)
}

/// The sum of the keys spread over `devices` ([`Multi::sum`]).
pub fn sum<T: Word32>(devices: &[Device], shards: &[Buffer<T>]) -> Result<T, Error> {
    Multi::new(devices)?.sum(shards)
}

/// `job` of every item, each on its own thread (the calling thread takes the first): the
/// host queues each device's launches at the same time as the others' (queueing a sort's
/// launches takes the host ~0.3 ms on CUDA, during which the device would wait). The
/// first error, in item order.
fn each_device<I: Send, R: Send>(
    items: Vec<I>,
    job: impl Fn(I) -> Result<R, Error> + Sync,
) -> Result<Vec<R>, Error> {
    let job = &job;
    std::thread::scope(|scope| {
        let mut items = items.into_iter();
        let first = items.next();
        let others: Vec<_> = items.map(|item| scope.spawn(move || job(item))).collect();
        let mut results = Vec::with_capacity(others.len() + 1);
        results.extend(first.map(job));
        for other in others {
            results.push(
                other
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        results.into_iter().collect()
    })
}

/// A key's ordered bits (`u64`: the high word's above the low one's).
fn ordered(key: &[u32], map: KeyMap) -> u64 {
    match key {
        [word] => map.encode(*word) as u64,
        [lo, hi] => (map.encode(*hi) as u64) << 32 | map.encode(*lo) as u64,
        _ => unreachable!("keys are one or two words"),
    }
}

/// `p - 1` splitters (ordered bits, non-decreasing): splitter `j` is the first sampled key
/// at which the samples' weight reaches `j / p` of the keys.
fn splitters(mut samples: Vec<(u64, f64)>, total: usize, p: usize) -> Vec<u64> {
    samples.sort_unstable_by_key(|&(key, _)| key);
    let mut splitters = Vec::with_capacity(p - 1);
    let mut sum = 0.0;
    let mut next = samples.iter();
    let mut last = samples.first().map_or(0, |s| s.0);
    for j in 1..p {
        let target = (j * total) as f64 / p as f64;
        while sum < target {
            match next.next() {
                Some(&(key, weight)) => {
                    sum += weight;
                    last = key;
                }
                None => break,
            }
        }
        splitters.push(last);
    }
    splitters
}

/// Each shard's `p + 1` cuts (`0`, ..., its length): cut `j` between splitter `j - 1`'s
/// `[lower, upper]` bounds in `bounds` (`2 * (p - 1)` a shard), the keys equal to the
/// splitter put before it in rank order until the keys before cut `j` on all shards number
/// `j * total / p` (or all equal keys are before it). Non-decreasing along each shard, as
/// the splitters are.
fn cuts(bounds: &[Vec<u32>], lens: &[usize], total: usize) -> Vec<Vec<usize>> {
    let p = lens.len();
    let mut cuts: Vec<Vec<usize>> = lens
        .iter()
        .map(|&len| {
            let mut c = vec![0; p + 1];
            c[p] = len;
            c
        })
        .collect();
    for j in 1..p {
        let target = j * total / p;
        let below: usize = bounds.iter().map(|b| b[2 * (j - 1)] as usize).sum();
        let mut equal_before = target.saturating_sub(below);
        for (c, b) in cuts.iter_mut().zip(bounds) {
            let (lower, upper) = (b[2 * (j - 1)] as usize, b[2 * (j - 1) + 1] as usize);
            let take = equal_before.min(upper - lower);
            c[j] = lower + take;
            equal_before -= take;
        }
    }
    cuts
}

/// The host merge of the cpu backend: `keys` (`width` words each) holds sorted runs between
/// `runs` (key positions, from 0 to the end); merges them in place (a k-way merge by the
/// keys' ordered bits, the lower rank first of equal keys).
fn merge_host(keys: &mut [u32], width: usize, runs: &[u32], map: KeyMap) {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let src = keys.to_vec();
    let key = |i: usize| ordered(&src[i * width..(i + 1) * width], map);
    let mut next: Vec<(usize, usize)> = runs
        .windows(2)
        .map(|w| (w[0] as usize, w[1] as usize))
        .collect();
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = next
        .iter()
        .enumerate()
        .filter(|(_, (at, end))| at < end)
        .map(|(r, &(at, _))| Reverse((key(at), r)))
        .collect();
    let mut out = keys.chunks_mut(width);
    while let Some(Reverse((_, r))) = heap.pop() {
        let (at, end) = &mut next[r];
        out.next()
            .expect("as many keys out as in")
            .copy_from_slice(&src[*at * width..(*at + 1) * width]);
        *at += 1;
        if *at < *end {
            heap.push(Reverse((key(*at), r)));
        }
    }
}
