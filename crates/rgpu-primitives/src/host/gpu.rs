//! The primitives on a GPU device: the kernels' launches, on `u32` words in device buffers,
//! with the scratch buffers they need (kept between calls of one `Primitives`).

use std::boxed::Box;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::vec::Vec;

use bytemuck::Pod;
use rgpu::{Backend, Buffer, Device, Error};

use crate::group::tiles;
use crate::histogram::{prim_fill, prim_histogram, HistogramParams};
use crate::key::{KeyKind, Order};
use crate::merge::{prim_merge, prim_merge_wide, MergeParams};
use crate::onesweep::{
    fallbacks, head_len, look_len, prim_radix_histograms, prim_radix_onesweep,
    prim_radix_onesweep_pairs, OnesweepParams,
};
use crate::partition::{
    prim_sample, prim_sample_wide, prim_search, prim_search_wide, SampleParams, SearchParams,
};
use crate::radix::{
    counts_len, prim_radix_downsweep, prim_radix_downsweep_pairs, prim_radix_scan,
    prim_radix_upsweep, RadixParams, PASSES, RADIX, RADIX_BITS,
};
use crate::reduce::{prim_reduce, prim_reduce_unordered, ReduceParams, UnorderedParams};
use crate::scan::{
    prim_scan, prim_scan_downsweep, prim_scan_partials, prim_scan_upsweep, state_len, ScanParams,
    FALLBACKS,
};
use crate::words::{prim_copy, prim_join, prim_split};

/// Workgroups of a histogram launch at most: each takes every `groups`-th tile, and adds
/// its counts to the output once.
const HISTOGRAM_GROUPS: u32 = 1024;

/// What runs each launch of the primitives when set ([`crate::Primitives::set_launch_hook`]):
/// it gets the kernel's name and the launch, and runs it (inside `Device::timed`, for
/// example: each kernel's share of a primitive's time).
pub type LaunchHook =
    Box<dyn FnMut(&'static str, &mut dyn FnMut() -> Result<(), Error>) -> Result<(), Error> + Send>;

/// Runs the launches of one primitive, through the hook when there is one.
#[derive(Clone)]
pub struct Launcher {
    device: Device,
    hook: Arc<Mutex<Option<LaunchHook>>>,
}

impl Launcher {
    /// Runs `launch` (kernel `name`) on the device.
    fn run(
        &self,
        name: &'static str,
        launch: &mut dyn FnMut(&Device) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let device = &self.device;
        let mut hook = self
            .hook
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match hook.as_mut() {
            Some(hook) => hook(name, &mut || launch(device)),
            None => launch(device),
        }
    }
}

/// Device buffers the launches need besides the caller's, by purpose; a buffer is kept
/// until a call needs another length for that purpose.
pub struct Scratch {
    device: Device,
    kept: HashMap<&'static str, Buffer<u32>>,
    hook: Arc<Mutex<Option<LaunchHook>>>,
}

impl Scratch {
    pub fn new(device: Device) -> Self {
        Self {
            device,
            kept: HashMap::new(),
            hook: Arc::new(Mutex::new(None)),
        }
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn set_hook(&mut self, hook: Option<LaunchHook>) {
        *self
            .hook
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = hook;
    }

    fn launcher(&self) -> Launcher {
        Launcher {
            device: self.device.clone(),
            hook: Arc::clone(&self.hook),
        }
    }

    /// A buffer of exactly `len` words (at least one) for `purpose`; give it back with
    /// `give`. Its contents are whatever the last user left.
    fn take(&mut self, purpose: &'static str, len: usize) -> Result<Buffer<u32>, Error> {
        let len = len.max(1);
        match self.kept.remove(purpose) {
            Some(buffer) if buffer.len() == len => Ok(buffer),
            _ => self.device.zeros(len),
        }
    }

    fn give(&mut self, purpose: &'static str, buffer: Buffer<u32>) {
        self.kept.insert(purpose, buffer);
    }

    /// Drops every kept buffer.
    pub fn clear(&mut self) {
        self.kept.clear();
    }
}

/// The counts and totals of a radix pass over `len` keys.
struct Tables {
    counts: Buffer<u32>,
    totals: Buffer<u32>,
}

impl Tables {
    fn take(s: &mut Scratch, len: u32) -> Result<Self, Error> {
        Ok(Self {
            counts: s.take("radix counts", counts_len(len))?,
            totals: s.take("radix totals", RADIX as usize)?,
        })
    }

    fn give(self, s: &mut Scratch) {
        s.give("radix counts", self.counts);
        s.give("radix totals", self.totals);
    }
}

/// One radix pass's upsweep and scan.
fn count(
    l: &Launcher,
    params: RadixParams,
    keys: &Buffer<u32>,
    t: &mut Tables,
) -> Result<(), Error> {
    l.run("prim_radix_upsweep", &mut |d| {
        prim_radix_upsweep(d, params.tiles, params, keys, &mut t.counts)
    })?;
    l.run("prim_radix_scan", &mut |d| {
        prim_radix_scan(d, RADIX, params, &mut t.counts, &mut t.totals)
    })
}

/// How the radix sort runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortAlgorithm {
    /// Count-then-scatter (`prim_radix_upsweep`, `_scan`, `_downsweep`): three launches a
    /// pass, the keys read twice a pass.
    CountThenScatter,
    /// Onesweep (`prim_radix_histograms` once, then `prim_radix_onesweep` once a pass, with
    /// decoupled look-back and the fallback): the keys read once a pass and once more in
    /// all. Sorts of 2^30 keys or more take count-then-scatter (the look-back's counts are
    /// 30 bits).
    Onesweep,
}

/// How the radix sort runs on a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortPlan {
    pub algorithm: SortAlgorithm,
    /// Onesweep: workgroups of the histograms' launch at most (each strides over the
    /// tiles and adds its counts once).
    pub histogram_groups: u32,
    /// Onesweep: look-back rounds in which no digit advanced before a workgroup counts
    /// the awaited tile itself.
    pub spins: u32,
    /// Onesweep: `OnesweepParams` flags (the tests' `WITHHOLD`).
    pub flags: u32,
}

impl SortPlan {
    /// `algorithm` with the default tuning.
    pub const fn new(algorithm: SortAlgorithm) -> Self {
        Self {
            algorithm,
            histogram_groups: 1024,
            spins: OnesweepParams::SPINS,
            flags: 0,
        }
    }
}

/// The radix sort each backend runs: the one table of the choice. Every backend takes
/// count-then-scatter (the cpu backend runs the host sort; its kernels' path, for the tests,
/// is count-then-scatter too). Onesweep, measured on the H200 against it (2^20-2^26, every
/// key type and the pairs), lost everywhere: cuda 1.28-2.21x CUB against 0.97-1.51x, ash and
/// wgpu 1.76-4.6x against 1.53-3.5x (its one pass kernel takes 0.83 ms for the four passes at
/// 2^24 where the three count-then-scatter kernels take 0.60). It stays, tested on every
/// backend and selectable (`Primitives::set_sort_plan`), until a tuned one wins.
pub fn sort_plan(backend: Backend) -> SortPlan {
    match backend {
        Backend::Cuda | Backend::Ash | Backend::Wgpu | Backend::WebGpu | Backend::Cpu => {
            SortPlan::new(SortAlgorithm::CountThenScatter)
        }
    }
}

/// The second word of a Onesweep sort's keys: a value moving along, or (`wide`) the high
/// word of a `u64` key.
struct Moving<'a> {
    values: &'a mut Buffer<u32>,
    wide: bool,
}

/// A Onesweep sort of `keys` (and `moving`'s words) in place: the histograms, then one
/// launch a pass. Returns the fallbacks (counted with `WITHHOLD` only).
fn onesweep(
    s: &mut Scratch,
    keys: &mut Buffer<u32>,
    moving: Option<Moving<'_>>,
    kind: KeyKind,
    order: Order,
    plan: SortPlan,
) -> Result<u32, Error> {
    let len = keys.len() as u32;
    let wide = moving.as_ref().is_some_and(|m| m.wide);
    let passes = if wide { 2 * PASSES } else { PASSES };
    let tiles = tiles(len);
    let groups = tiles.clamp(1, plan.histogram_groups.max(1));
    let l = s.launcher();
    let mut head = s.take("onesweep head", head_len(passes) as usize)?;
    let mut look = s.take("onesweep look", look_len(tiles) as usize)?;
    let mut alt_keys = s.take("radix keys", len as usize)?;
    let mut alt_values = match moving {
        Some(_) => Some(s.take("radix values", len as usize)?),
        None => None,
    };
    let result = (|| {
        let params = |pass: u32| {
            let p = OnesweepParams::new(
                len,
                pass,
                passes,
                kind,
                order,
                pass == 0,
                pass + 1 == passes,
                groups,
            )
            .with_flags(plan.flags)
            .with_spins(plan.spins);
            if wide {
                p.with_flags(RadixParams::MAP_VALUES)
            } else {
                p
            }
        };
        l.run("prim_fill", &mut |d| {
            prim_fill(d, head_len(passes), 0, &mut head)
        })?;
        // Every pass's histogram of the raw keys (`u64`: the low words', then the high
        // words' as passes 4..8).
        let first = params(0);
        l.run("prim_radix_histograms", &mut |d| {
            prim_radix_histograms(d, groups, first, keys, &mut head, &mut look)
        })?;
        match moving {
            None => {
                let (mut src, mut dst) = (&mut *keys, &mut alt_keys);
                for pass in 0..passes {
                    let p = params(pass);
                    l.run("prim_radix_onesweep", &mut |d| {
                        prim_radix_onesweep(d, tiles, p, src, dst, &mut head, &mut look)
                    })?;
                    std::mem::swap(&mut src, &mut dst);
                }
            }
            Some(Moving { values, .. }) => {
                if wide {
                    let high = OnesweepParams {
                        pass: PASSES,
                        ..first
                    };
                    l.run("prim_radix_histograms", &mut |d| {
                        prim_radix_histograms(d, groups, high, values, &mut head, &mut look)
                    })?;
                }
                let alt_v = alt_values.as_mut().expect("taken for a moving word");
                // As in `sort_pairs_words`: the roles of the words swap for a wide key's
                // high passes.
                let (mut k, mut v) = (&mut *keys, &mut *values);
                let (mut alt_k, mut alt_v) = (&mut alt_keys, alt_v);
                for pass in 0..passes {
                    let p = params(pass);
                    let (src, src_v, dst, dst_v) = if wide && pass >= PASSES {
                        (&*v, &*k, &mut *alt_v, &mut *alt_k)
                    } else {
                        (&*k, &*v, &mut *alt_k, &mut *alt_v)
                    };
                    l.run("prim_radix_onesweep_pairs", &mut |d| {
                        prim_radix_onesweep_pairs(
                            d, tiles, p, src, src_v, dst, dst_v, &mut head, &mut look,
                        )
                    })?;
                    std::mem::swap(&mut k, &mut alt_k);
                    std::mem::swap(&mut v, &mut alt_v);
                }
            }
        }
        Ok(if plan.flags & OnesweepParams::WITHHOLD != 0 {
            head.read()?[fallbacks(passes) as usize]
        } else {
            0
        })
    })();
    s.give("onesweep head", head);
    s.give("onesweep look", look);
    s.give("radix keys", alt_keys);
    if let Some(alt_values) = alt_values {
        s.give("radix values", alt_values);
    }
    result
}

/// Whether `plan` sorts `len` keys by Onesweep.
fn by_onesweep(plan: SortPlan, len: u32) -> bool {
    plan.algorithm == SortAlgorithm::Onesweep && len <= crate::onesweep::MAX_LEN
}

/// Whether a Onesweep sort failed only because the device's module lacks one of its
/// kernels (a `--kernel-artifact` made for count-then-scatter): the launch was refused
/// before it ran, so nothing of the caller's was written, and count-then-scatter sorts.
fn lacks_onesweep(result: &Result<u32, Error>) -> bool {
    matches!(
        result,
        Err(Error::MissingArtifact {
            kernel: "prim_fill"
                | "prim_radix_histograms"
                | "prim_radix_onesweep"
                | "prim_radix_onesweep_pairs",
            ..
        })
    )
}

/// Sorts `len` key words in `keys` (kind, order), stably, by `plan`: count-then-scatter is
/// 4 passes of 3 launches, through a second buffer; the sorted keys end in `keys`. Returns
/// Onesweep's fallbacks (counted with `WITHHOLD` only).
pub fn sort_words(
    s: &mut Scratch,
    keys: &mut Buffer<u32>,
    kind: KeyKind,
    order: Order,
    plan: SortPlan,
) -> Result<u32, Error> {
    let len = keys.len() as u32;
    if len < 2 {
        return Ok(0);
    }
    if by_onesweep(plan, len) {
        let result = onesweep(s, keys, None, kind, order, plan);
        if !lacks_onesweep(&result) {
            return result;
        }
    }
    let l = s.launcher();
    let mut alt = s.take("radix keys", len as usize)?;
    let mut t = Tables::take(s, len)?;
    let result = (|| {
        let (mut src, mut dst) = (&mut *keys, &mut alt);
        for pass in 0..PASSES {
            let params = RadixParams::new(
                len,
                pass * RADIX_BITS,
                kind,
                order,
                pass == 0,
                pass + 1 == PASSES,
            );
            count(&l, params, src, &mut t)?;
            l.run("prim_radix_downsweep", &mut |d| {
                prim_radix_downsweep(d, params.tiles, params, src, dst, &t.counts, &t.totals)
            })?;
            std::mem::swap(&mut src, &mut dst);
        }
        Ok(0)
    })();
    s.give("radix keys", alt);
    t.give(s);
    result
}

/// Pass `pass` of a sort moving two words per key: `keys`' words ordered by one digit, with
/// `values` moving along, into `alt_keys` and `alt_values`.
#[allow(clippy::too_many_arguments)]
fn pair_pass(
    l: &Launcher,
    params: RadixParams,
    keys: &Buffer<u32>,
    values: &Buffer<u32>,
    alt_keys: &mut Buffer<u32>,
    alt_values: &mut Buffer<u32>,
    t: &mut Tables,
) -> Result<(), Error> {
    count(l, params, keys, t)?;
    l.run("prim_radix_downsweep_pairs", &mut |d| {
        prim_radix_downsweep_pairs(
            d,
            params.tiles,
            params,
            keys,
            values,
            alt_keys,
            alt_values,
            &t.counts,
            &t.totals,
        )
    })
}

/// Sorts `len` key words in `keys` with `values` moving along (a stable key-value sort),
/// by `plan`; `wide`: the words are the low (`keys`) and high (`values`) halves of `u64`
/// keys, sorted by both (8 passes, the high word last). Returns Onesweep's fallbacks
/// (counted with `WITHHOLD` only).
pub fn sort_pairs_words(
    s: &mut Scratch,
    keys: &mut Buffer<u32>,
    values: &mut Buffer<u32>,
    kind: KeyKind,
    order: Order,
    wide: bool,
    plan: SortPlan,
) -> Result<u32, Error> {
    let len = keys.len() as u32;
    if len < 2 {
        return Ok(0);
    }
    if by_onesweep(plan, len) {
        let result = onesweep(s, keys, Some(Moving { values, wide }), kind, order, plan);
        if !lacks_onesweep(&result) {
            return result;
        }
    }
    let l = s.launcher();
    let mut alt_keys = s.take("radix keys", len as usize)?;
    let mut alt_values = s.take("radix values", len as usize)?;
    let mut t = Tables::take(s, len)?;
    let passes = if wide { 2 * PASSES } else { PASSES };
    let result = (|| {
        // The key and value words and their second buffers, swapped after each pass; for
        // a wide key the roles swap after the low word's passes (an even number: the
        // words are back in place).
        let (mut k, mut v) = (&mut *keys, &mut *values);
        let (mut alt_k, mut alt_v) = (&mut alt_keys, &mut alt_values);
        for pass in 0..passes {
            let mut params = RadixParams::new(
                len,
                (pass % PASSES) * RADIX_BITS,
                kind,
                order,
                pass == 0,
                pass + 1 == passes,
            );
            if wide {
                params = params.mapping_values();
            }
            if wide && pass >= PASSES {
                pair_pass(&l, params, v, k, alt_v, alt_k, &mut t)?;
            } else {
                pair_pass(&l, params, k, v, alt_k, alt_v, &mut t)?;
            }
            std::mem::swap(&mut k, &mut alt_k);
            std::mem::swap(&mut v, &mut alt_v);
        }
        Ok(0)
    })();
    s.give("radix keys", alt_keys);
    s.give("radix values", alt_values);
    t.give(s);
    result
}

/// An evenly spaced sample of `keys` (`width` words each, `len` keys): `count` keys,
/// key `first + i * step` for `i < count`, as `width * count` words in a new buffer. Queued;
/// read it when every device's is queued.
pub fn sample(
    s: &mut Scratch,
    keys: &Buffer<u32>,
    width: u32,
    params: SampleParams,
    count: u32,
) -> Result<Buffer<u32>, Error> {
    let mut out = s.device.zeros::<u32>((width * count) as usize)?;
    if count > 0 {
        s.launcher().run("prim_sample", &mut |d| {
            prim_sample(d, width * count, params, keys, &mut out)
        })?;
    }
    Ok(out)
}

/// [`sample`] of `u64` keys (`params.width` is not read): `count` keys in a new buffer.
/// Queued.
pub fn sample_wide(
    s: &mut Scratch,
    keys: &Buffer<[u32; 2]>,
    params: SampleParams,
    count: u32,
) -> Result<Buffer<[u32; 2]>, Error> {
    let mut out = s.device.zeros::<[u32; 2]>(count as usize)?;
    if count > 0 {
        s.launcher().run("prim_sample_wide", &mut |d| {
            prim_sample_wide(d, count, params, keys, &mut out)
        })?;
    }
    Ok(out)
}

/// Where each of `params.splitters` splitters (`splitters`: ordered words, ascending; a
/// `u64`'s `[low, high]`) falls in `keys`, sorted: a new buffer of a lower and an upper
/// bound per splitter (`prim_search`, `prim_search_wide`). Queued; read it when every
/// device's is queued.
pub fn search<K: Pod>(
    s: &mut Scratch,
    keys: &Buffer<K>,
    splitters: &Buffer<u32>,
    params: SearchParams,
) -> Result<Buffer<u32>, Error> {
    let count = 2 * params.splitters;
    let mut out = s.device.zeros::<u32>(count as usize)?;
    let l = s.launcher();
    if std::mem::size_of::<K>() == 8 {
        let keys = keys.cast::<[u32; 2]>()?;
        l.run("prim_search_wide", &mut |d| {
            prim_search_wide(d, count, params, keys, splitters, &mut out)
        })?;
    } else {
        let keys = keys.cast::<u32>()?;
        l.run("prim_search", &mut |d| {
            prim_search(d, count, params, keys, splitters, &mut out)
        })?;
    }
    Ok(out)
}

/// Merges the sorted runs of `keys` (run `r` is `keys[bounds[r]..bounds[r + 1]]`, `bounds`
/// from 0 to `keys.len()`) into one sorted run, by rounds of pairwise merges (`prim_merge`,
/// `prim_merge_wide`: one launch a round, between `keys` and a second buffer of the
/// device). Returns the buffer that holds the result: `keys` itself when there is at most
/// one run (or the rounds are even), else the second buffer. Queued.
pub fn merge<K: Pod>(
    s: &mut Scratch,
    keys: Buffer<K>,
    bounds: &[u32],
    kind: KeyKind,
    order: Order,
) -> Result<Buffer<K>, Error> {
    let len = keys.len() as u32;
    // Every round's bounds, one round after another: a round keeps every other bound of
    // the one before (and its last).
    let mut first = bounds.to_vec();
    first.dedup(); // empty runs
    let mut rounds: Vec<Vec<u32>> = std::vec![first];
    while let Some(last) = rounds.last().filter(|r| r.len() > 2) {
        let mut next: Vec<u32> = last.iter().copied().step_by(2).collect();
        if (last.len() - 1) % 2 == 1 {
            next.push(len);
        }
        rounds.push(next);
    }
    rounds.pop();
    if rounds.is_empty() {
        return Ok(keys);
    }
    let all: Vec<u32> = rounds.concat();
    let device = s.device.clone();
    let table = device.upload(&all)?;
    let l = s.launcher();
    let (mut src, mut dst) = (keys, device.zeros::<K>(len as usize)?);
    let mut at = 0u32;
    for round in &rounds {
        let runs = round.len() as u32 - 1;
        let params = MergeParams::new(len, runs, at, kind, order);
        let n = MergeParams::invocations(len);
        if std::mem::size_of::<K>() == 8 {
            let (from, to) = (src.cast::<[u32; 2]>()?, dst.cast_mut::<[u32; 2]>()?);
            l.run("prim_merge_wide", &mut |d| {
                prim_merge_wide(d, n, params, from, &table, &mut *to)
            })?;
        } else {
            let (from, to) = (src.cast::<u32>()?, dst.cast_mut::<u32>()?);
            l.run("prim_merge", &mut |d| {
                prim_merge(d, n, params, from, &table, &mut *to)
            })?;
        }
        std::mem::swap(&mut src, &mut dst);
        at += round.len() as u32;
    }
    Ok(src)
}

/// Sorts `u64` keys, each two words (`[low, high]`), in `wide`.
pub fn sort_wide(
    s: &mut Scratch,
    wide: &mut Buffer<[u32; 2]>,
    order: Order,
    plan: SortPlan,
) -> Result<(), Error> {
    let len = wide.len() as u32;
    if len < 2 {
        return Ok(());
    }
    let l = s.launcher();
    let mut lo = s.take("wide low", len as usize)?;
    let mut hi = s.take("wide high", len as usize)?;
    let result = (|| {
        l.run("prim_split", &mut |d| {
            prim_split(d, len, &*wide, &mut lo, &mut hi)
        })?;
        sort_pairs_words(s, &mut lo, &mut hi, KeyKind::U32, order, true, plan)?;
        l.run("prim_join", &mut |d| prim_join(d, len, &lo, &hi, wide))
    })();
    s.give("wide low", lo);
    s.give("wide high", hi);
    result
}

/// The first `k` keys of `len` sorted ones: the sort on a copy, then `k` words copied out.
pub fn top_words(
    s: &mut Scratch,
    keys: &Buffer<u32>,
    k: usize,
    kind: KeyKind,
    order: Order,
    plan: SortPlan,
) -> Result<Vec<u32>, Error> {
    let l = s.launcher();
    let len = keys.len() as u32;
    let mut copy = s.take("top copy", len as usize)?;
    let mut first = l.device.zeros::<u32>(k.max(1))?;
    let result = (|| {
        l.run("prim_copy", &mut |d| prim_copy(d, len, keys, &mut copy))?;
        sort_words(s, &mut copy, kind, order, plan)?;
        l.run("prim_copy", &mut |d| {
            prim_copy(d, k as u32, &copy, &mut first)
        })?;
        first.read()
    })();
    s.give("top copy", copy);
    let mut out = result?;
    out.truncate(k);
    Ok(out)
}

/// [`top_words`] for `u64` keys.
pub fn top_wide(
    s: &mut Scratch,
    wide: &Buffer<[u32; 2]>,
    k: usize,
    order: Order,
    plan: SortPlan,
) -> Result<Vec<[u32; 2]>, Error> {
    let l = s.launcher();
    let len = wide.len() as u32;
    let mut lo = s.take("wide low", len as usize)?;
    let mut hi = s.take("wide high", len as usize)?;
    let mut first = l.device.zeros::<[u32; 2]>(k.max(1))?;
    let result = (|| {
        l.run("prim_split", &mut |d| {
            prim_split(d, len, wide, &mut lo, &mut hi)
        })?;
        sort_pairs_words(s, &mut lo, &mut hi, KeyKind::U32, order, true, plan)?;
        l.run("prim_join", &mut |d| {
            prim_join(d, k as u32, &lo, &hi, &mut first)
        })?;
        first.read()
    })();
    s.give("wide low", lo);
    s.give("wide high", hi);
    let mut out = result?;
    out.truncate(k);
    Ok(out)
}

/// How the scan runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanAlgorithm {
    /// One pass with decoupled look-back and the fallback (`prim_scan`): two launches (the
    /// state's fill, the scan), the input read once.
    SinglePass,
    /// Reduce-then-scan (`prim_scan_upsweep`, `_partials`, `_downsweep`): three launches,
    /// the input read twice.
    ReduceThenScan,
}

/// The scan each backend runs: the one table of the choice. Measured on the H200
/// (BENCHMARKS.md, "rgpu-primitives: the single-pass scan"), reduce-then-scan is ahead on
/// every backend at 2^24 and 2^26 (cuda 0.219 against 0.342 ms at 2^26, ash 0.440 against
/// 0.685) and level at 2^20: the single pass, untuned (its window, spins and 4096-item
/// tiles), stays selectable and tested until a tuned one wins somewhere.
pub fn scan_algorithm(backend: Backend) -> ScanAlgorithm {
    match backend {
        Backend::Cpu | Backend::Cuda | Backend::Wgpu | Backend::Ash | Backend::WebGpu => {
            ScanAlgorithm::ReduceThenScan
        }
    }
}

/// Prefix sums of `input`'s words into `output` (the same length), by `algorithm`; `params`
/// gives the single pass's flags and spins (the tests'). Returns the single pass's
/// fallbacks (tiles a workgroup reduced for a predecessor that had published nothing).
pub fn scan_words_by(
    s: &mut Scratch,
    input: &Buffer<u32>,
    output: &mut Buffer<u32>,
    params: ScanParams,
    algorithm: ScanAlgorithm,
) -> Result<u32, Error> {
    if params.len == 0 {
        return Ok(0);
    }
    let l = s.launcher();
    match algorithm {
        ScanAlgorithm::SinglePass => {
            let words = state_len(params.tiles);
            let mut state = s.take("scan state", words as usize)?;
            let result = (|| {
                // (A buffer of another device fails the scan's launch, before it writes.)
                l.run("prim_fill", &mut |d| prim_fill(d, words, 0, &mut state))?;
                l.run("prim_scan", &mut |d| {
                    prim_scan(d, params.tiles, params, input, &mut state, output)
                })?;
                Ok(if params.flags & ScanParams::WITHHOLD != 0 {
                    state.read()?[FALLBACKS as usize]
                } else {
                    0
                })
            })();
            s.give("scan state", state);
            result
        }
        ScanAlgorithm::ReduceThenScan => {
            let mut partials = s.take("scan partials", params.tiles as usize)?;
            let result = (|| {
                l.run("prim_scan_upsweep", &mut |d| {
                    prim_scan_upsweep(d, params.tiles, params, input, &mut partials)
                })?;
                l.run("prim_scan_partials", &mut |d| {
                    prim_scan_partials(d, 1, params, &mut partials)
                })?;
                l.run("prim_scan_downsweep", &mut |d| {
                    prim_scan_downsweep(d, params.tiles, params, input, &partials, output)
                })
            })();
            s.give("scan partials", partials);
            result.map(|()| 0)
        }
    }
}

/// Prefix sums of `input`'s words into `output` (the same length), by `algorithm`.
pub fn scan_words(
    s: &mut Scratch,
    input: &Buffer<u32>,
    output: &mut Buffer<u32>,
    inclusive: bool,
    algorithm: ScanAlgorithm,
) -> Result<(), Error> {
    let params = ScanParams::new(input.len() as u32, inclusive);
    scan_words_by(s, input, output, params, algorithm).map(|_| ())
}

/// How the order-free reduction (`prim_reduce_unordered`: integer SUM, MIN, MAX) runs on a
/// backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    /// Workgroups of the first launch at most (fewer when the input has fewer blocks of
    /// `256 * items` words); each strides over the input, and the second launch (one
    /// workgroup) reduces their words.
    pub groups: u32,
    /// Loads in flight per thread and round, 1 to `reduce::MAX_ITEMS`.
    pub items: u32,
}

/// The order-free reduction's plan on each backend: the one table of the choice (SUM_F32
/// keeps its fixed-order kernel everywhere). The GPUs: 1024 workgroups of 256 threads fill
/// an H200 (132 SMs of 2048 threads: 1056) and are few enough that the second launch is
/// one workgroup's 1024 words; 8 loads a thread keep 32 bytes a thread in flight (the
/// kernel issues 8 loads a round whatever `items` is: fewer only means fewer words a
/// round). WebGPU (SwiftShader in the tests) the same; the cpu backend (kernels run
/// natively, with `Primitives::with_kernels`) 64 workgroups, a few per core. Measured on
/// the H200 (BENCHMARKS.md, "rgpu-primitives on the final tree"): at 2^26 the two launches
/// read at 100-131% of a copy's bandwidth on cuda, ash and wgpu, 82-92% at 2^24; no other
/// plan has been tried there.
pub fn reduce_plan(backend: Backend) -> ReducePlan {
    match backend {
        Backend::Cuda | Backend::Ash | Backend::Wgpu | Backend::WebGpu => ReducePlan {
            groups: 1024,
            items: 8,
        },
        Backend::Cpu => ReducePlan {
            groups: 64,
            items: 8,
        },
    }
}

/// The reduction of `input`'s words by `op` (raw: MIN/MAX give the encoded word), or None
/// for no words: SUM_F32 in its fixed order, the others by `plan`.
pub fn reduce_words(
    s: &mut Scratch,
    input: &Buffer<u32>,
    op: u32,
    kind: KeyKind,
    plan: ReducePlan,
) -> Result<Option<u32>, Error> {
    let mut len = input.len() as u32;
    if len == 0 {
        return Ok(None);
    }
    let l = s.launcher();
    // Level by level: the workgroups' results of one level are the next level's words.
    let mut levels: Vec<Buffer<u32>> = Vec::new();
    let names = [
        "reduce level 0",
        "reduce level 1",
        "reduce level 2",
        "reduce level 3",
    ];
    let result = (|| {
        let mut first = true;
        while first || len > 1 {
            let name = names[levels.len() % names.len()];
            let from = levels.last().unwrap_or(input);
            let fixed = ReduceParams::new(len, op, kind, first);
            let free = UnorderedParams::new(len, plan.groups, plan.items, op, kind, first);
            let f32_sum = op == ReduceParams::SUM_F32;
            let groups = if f32_sum { fixed.tiles } else { free.groups };
            let mut out = s.take(name, groups as usize)?;
            let launched = if f32_sum {
                l.run("prim_reduce", &mut |d| {
                    prim_reduce(d, groups, fixed, from, &mut out)
                })
            } else {
                l.run("prim_reduce_unordered", &mut |d| {
                    prim_reduce_unordered(d, groups, free, from, &mut out)
                })
            };
            levels.push(out);
            launched?;
            len = groups;
            first = false;
        }
        let last = levels.last().expect("one level at least");
        Ok(Some(last.read()?[0]))
    })();
    for (i, level) in levels.into_iter().enumerate() {
        s.give(names[i % names.len()], level);
    }
    result
}

/// `counts[v] = ` how many of `values` are `v`, for `v < counts.len()`.
pub fn histogram_words(
    s: &mut Scratch,
    values: &Buffer<u32>,
    counts: &mut Buffer<u32>,
) -> Result<(), Error> {
    let l = s.launcher();
    let (len, bins) = (values.len() as u32, counts.len() as u32);
    let groups = tiles(len).clamp(1, HISTOGRAM_GROUPS);
    let params = HistogramParams::new(len, bins, groups);
    // The values are checked against this device first: a buffer of another device fails
    // before the counts are zeroed.
    l.run("prim_histogram", &mut |d| {
        prim_histogram(d, 0, params, values, counts)
    })?;
    l.run("prim_fill", &mut |d| prim_fill(d, bins, 0, counts))?;
    if len == 0 {
        return Ok(());
    }
    l.run("prim_histogram", &mut |d| {
        prim_histogram(d, groups, params, values, counts)
    })
}
