//! The primitives over keys spread across several devices: a sort whose result is spread
//! over the devices in order ([`Multi::sort_keys`], a sample sort), and reductions whose
//! per-device results are combined exactly ([`Multi::sum`], [`Multi::min`],
//! [`Multi::max`]).
//!
//! The sort, over `p` devices holding one shard each:
//!
//! 1. an evenly spaced sample of each shard (`64 * p` keys at most, `prim_sample` on a GPU)
//!    is read back, and the host chooses `p - 1` splitters from them in the keys' ordered
//!    bits ([`KeyMap`]), each sample weighted by its shard's length over its sample's;
//! 2. each device moves its shard's keys into buckets (bucket = the number of splitters
//!    below the key, `prim_bucket`) with one stable radix pass over the bucket words (the
//!    sort's own kernels), and the `p x p` bucket sizes are read back;
//! 3. bucket `j` of every shard goes to device `j`, in rank order: one
//!    [`Collective::all_to_all`] (one NCCL group of sends and receives over CUDA devices,
//!    through host memory otherwise);
//! 4. each device sorts what it received with the single-device sort ([`Primitives`]).
//!
//! Keys equal to a splitter all go to one bucket: the result is exact whatever the keys, but
//! many equal keys make one device's share larger (all keys equal: one device gets all).

use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use bytemuck::Pod;
use rgpu::{Buffer, Collective, Device, Error, Input, InputOutput};

use super::{argument, check_len, gpu, KeyLayout, Primitives, Reduction, SortKey, Word32};
use crate::key::{KeyKind, KeyMap, Order};
use crate::partition::{BucketParams, SampleParams, MAX_BUCKETS};

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

/// A shard's keys as the partition reads them.
enum Words<'a> {
    /// In host memory (the cpu backend's host versions): `width` words a key.
    Host(&'a [u32]),
    /// A device buffer of 32-bit keys.
    One(&'a Buffer<u32>),
    /// A device buffer of `u64` keys, and their words apart.
    Two {
        keys: &'a Buffer<[u32; 2]>,
        low: Buffer<u32>,
        high: Buffer<u32>,
    },
}

impl Words<'_> {
    fn len(&self, width: usize) -> usize {
        match self {
            Words::Host(keys) => keys.len() / width,
            Words::One(keys) => keys.len(),
            Words::Two { keys, .. } => keys.len(),
        }
    }
}

/// A shard's bucket sizes: counted on the host, or a partition queued on its device.
enum Counts {
    Known(Vec<u32>),
    Queued(gpu::Partitioned),
}

/// A shard's sample: host words, or device buffers queued to be read.
enum Sample {
    Host(Vec<u32>),
    One(Buffer<u32>),
    Two(Buffer<u32>, Buffer<u32>),
}

impl Multi {
    /// The primitives over `devices` (rank `i` is `devices[i]`): at least one, each once,
    /// at most [`MAX_BUCKETS`]. Over CUDA devices the [`Collective`] is NCCL's (which must be
    /// installed); otherwise keys move through host memory.
    pub fn new(devices: &[Device]) -> Result<Self, Error> {
        if devices.is_empty() {
            return Err(argument(
                NEW,
                "devices",
                "no devices: pass one per shard, in rank order".into(),
            ));
        }
        if devices.len() > MAX_BUCKETS as usize {
            return Err(argument(
                NEW,
                "devices",
                format!(
                    "{} devices: the sort spreads over {MAX_BUCKETS} at most",
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
    /// order is the sorted whole. Their lengths differ from the shards' (each device gets
    /// the keys between two splitters; keys equal to a splitter all go to one device, so
    /// many equal keys load one device more); the shards are consumed. One device: its
    /// shard, sorted in place.
    pub fn sort_keys<K: SortKey>(
        &mut self,
        shards: Vec<Buffer<K>>,
        order: Order,
    ) -> Result<Vec<Buffer<K>>, Error> {
        let total = self.check_shards(SORT, &shards)?;
        let p = self.devices.len();
        let mut shards = shards;
        if p == 1 || total == 0 {
            for (primitives, shard) in self.primitives.iter_mut().zip(&mut shards) {
                primitives.sort_keys(shard, order)?;
            }
            return Ok(shards);
        }
        let (width, kind) = match K::LAYOUT {
            KeyLayout::Word(kind) => (1u32, kind),
            KeyLayout::Wide => (2, KeyKind::U32),
        };
        let map = KeyMap::new(kind, order);
        // The keys as the kernels take them: words, or a u64's words also apart.
        let mut words = Vec::with_capacity(p);
        for (rank, shard) in shards.iter().enumerate() {
            let primitives = &mut self.primitives[rank];
            words.push(if primitives.on_cpu() {
                Words::Host(bytemuck::cast_slice(Input::host(shard)?))
            } else if width == 1 {
                Words::One(shard.cast::<u32>()?)
            } else {
                let keys = shard.cast::<[u32; 2]>()?;
                let device = &self.devices[rank];
                let mut low = device.zeros::<u32>(shard.len())?;
                let mut high = device.zeros::<u32>(shard.len())?;
                gpu::split(&mut primitives.scratch, keys, &mut low, &mut high)?;
                Words::Two { keys, low, high }
            });
        }
        // 1. The splitters.
        let samples = self.samples(&words, width, map)?;
        let splitters = splitters(samples, total, p);
        // The kernels' splitters: a word each, or a u64's `[low, high]`.
        let splitter_words: Vec<u32> = if width == 2 {
            splitters
                .iter()
                .flat_map(|&s| [s as u32, (s >> 32) as u32])
                .collect()
        } else {
            splitters.iter().map(|&s| s as u32).collect()
        };
        let params = BucketParams::new((p - 1) as u32, kind, order);
        // 2. The partition: queued on every device at once, then the bucket sizes read.
        let jobs = self
            .primitives
            .iter_mut()
            .zip(&self.devices)
            .zip(shards.iter().zip(&words));
        let queued = each_device(jobs.collect(), |((primitives, device), (shard, words))| {
            let mut part = device.zeros::<K>(shard.len())?;
            let scratch = &mut primitives.scratch;
            let pending = match words {
                Words::Host(keys) => {
                    let out = bytemuck::cast_slice_mut(InputOutput::host_mut(&mut part)?);
                    Counts::Known(partition_host(keys, width, &splitters, map, out))
                }
                Words::One(keys) => {
                    let splitters = device.upload(&splitter_words)?;
                    let out = part.cast_mut::<u32>()?;
                    Counts::Queued(gpu::partition(scratch, keys, &splitters, params, out)?)
                }
                Words::Two { keys, low, high } => {
                    let splitters = device.upload(&splitter_words)?;
                    let out = part.cast_mut::<[u32; 2]>()?;
                    let keys = gpu::WideKeys { keys, low, high };
                    Counts::Queued(gpu::partition_wide(scratch, keys, &splitters, params, out)?)
                }
            };
            Ok((part, pending))
        })?;
        let (parts, pending): (Vec<Buffer<K>>, Vec<Counts>) = queued.into_iter().unzip();
        let mut counts = Vec::with_capacity(p);
        for ((primitives, pending), shard) in self.primitives.iter_mut().zip(pending).zip(&shards) {
            counts.push(match pending {
                Counts::Known(host) => host,
                Counts::Queued(queued) => queued.counts(&mut primitives.scratch, shard.len())?,
            });
        }
        drop(words);
        drop(shards);
        // 3. Bucket j of every shard to device j, in rank order.
        let mut received = Vec::with_capacity(p);
        for (j, device) in self.devices.iter().enumerate() {
            let len: usize = counts.iter().map(|c| c[j] as usize).sum();
            check_len(SORT, len)?;
            received.push(device.zeros::<K>(len)?);
        }
        let counts: Vec<Vec<usize>> = counts
            .iter()
            .map(|row| row.iter().map(|&c| c as usize).collect())
            .collect();
        self.collective.all_to_all(&parts, &counts, &mut received)?;
        drop(parts);
        // 4. Each device's keys sorted, every device's sort queued at once.
        let jobs = self.primitives.iter_mut().zip(&mut received);
        each_device(jobs.collect(), |(primitives, keys)| {
            primitives.sort_keys(keys, order)
        })?;
        Ok(received)
    }

    /// The sample of each shard as `(ordered key, weight)` pairs: `SAMPLES * p` evenly
    /// spaced keys at most, each weighing its shard's length over its sample's.
    fn samples(
        &mut self,
        words: &[Words<'_>],
        width: u32,
        map: KeyMap,
    ) -> Result<Vec<(u64, f64)>, Error> {
        let p = self.devices.len();
        let w = width as usize;
        let mut queued = Vec::with_capacity(p);
        for (primitives, words) in self.primitives.iter_mut().zip(words) {
            let len = words.len(w);
            let count = len.min(SAMPLES * p);
            let step = len.checked_div(count).unwrap_or(1);
            let params = SampleParams {
                first: (step / 2) as u32,
                step: step as u32,
                width: 1,
                len: len as u32,
            };
            let picked = |i: usize| params.first as usize + i * step;
            let scratch = &mut primitives.scratch;
            queued.push(match words {
                Words::Host(keys) => {
                    let keys = (0..count).flat_map(|i| &keys[picked(i) * w..(picked(i) + 1) * w]);
                    (Sample::Host(keys.copied().collect()), len, count)
                }
                Words::One(keys) => {
                    let sample = gpu::sample(scratch, keys, 1, params, count as u32)?;
                    (Sample::One(sample), len, count)
                }
                Words::Two { low, high, .. } => {
                    let low = gpu::sample(scratch, low, 1, params, count as u32)?;
                    let high = gpu::sample(scratch, high, 1, params, count as u32)?;
                    (Sample::Two(low, high), len, count)
                }
            });
        }
        let mut samples = Vec::new();
        for (sample, len, count) in queued {
            let keys = match sample {
                Sample::Host(keys) => keys,
                Sample::One(buffer) => buffer.read()?,
                Sample::Two(low, high) => {
                    let (low, high) = (low.read()?, high.read()?);
                    low.iter().zip(&high).flat_map(|(&l, &h)| [l, h]).collect()
                }
            };
            let weight = len as f64 / count.max(1) as f64;
            samples.extend(keys.chunks(w).map(|key| (ordered(key, map), weight)));
        }
        Ok(samples)
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

/// The host partition of the cpu backend: `keys` (`width` words each) into `out` by
/// bucket (the number of `splitters` below the key's ordered bits), stably; the buckets'
/// sizes.
fn partition_host(
    keys: &[u32],
    width: u32,
    splitters: &[u64],
    map: KeyMap,
    out: &mut [u32],
) -> Vec<u32> {
    let w = width as usize;
    let buckets: Vec<u32> = keys
        .chunks(w)
        .map(|key| {
            let k = ordered(key, map);
            splitters.partition_point(|&s| s < k) as u32
        })
        .collect();
    let mut counts = vec![0u32; splitters.len() + 1];
    for &b in &buckets {
        counts[b as usize] += 1;
    }
    let mut next: Vec<usize> = counts
        .iter()
        .scan(0usize, |at, &c| {
            let start = *at;
            *at += c as usize;
            Some(start)
        })
        .collect();
    for (key, &b) in keys.chunks(w).zip(&buckets) {
        let at = next[b as usize] * w;
        out[at..at + w].copy_from_slice(key);
        next[b as usize] += 1;
    }
    counts
}
