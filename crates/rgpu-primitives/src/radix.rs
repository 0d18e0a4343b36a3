//! The radix sort's kernels: an LSD radix sort over 8-bit digits of `u32` key words,
//! stable, for any length; keys alone or with a `u32` word moving along (a value, or the
//! other word of a `u64` key).
//!
//! Each pass moves the words from one buffer to the other, ordered by one digit (`shift =
//! 0, 8, 16, 24`) of the key word, keeping the order of equal digits (stable), so after the
//! fourth pass they are ordered by the whole word (eight passes for a `u64`: four over the
//! low word, then four over the high one, each word moving with the other). A pass is three
//! launches of a portable *reduce-then-scan* scheme, which needs no forward progress between
//! workgroups (so the same Rust runs on Vulkan and WebGPU):
//!
//! 1. [`prim_radix_upsweep`], one workgroup per tile of [`TILE`] keys: the tile's digit
//!    histogram, to `counts[digit * tiles + tile]` (digit-major).
//! 2. [`prim_radix_scan`], one workgroup per digit: the exclusive prefix sum of the digit's
//!    row of `counts` in place, and the digit's total to `totals[digit]`.
//! 3. [`prim_radix_downsweep`] (keys) or [`prim_radix_downsweep_pairs`] (keys and a second
//!    word), one workgroup per tile: ranks the tile's keys by digit, stably, in workgroup
//!    memory, then writes each key to `digit_start[d] + counts[d][tile] + (its rank among
//!    the tile's keys of digit d)`, where `digit_start` is the exclusive prefix sum of
//!    `totals` (each workgroup computes it again: 256 values).
//!
//! The first pass's reads encode the keys ([`KeyMap`]: the order-preserving word of a
//! `u32`, `i32` or `f32`, ascending or descending) and the last pass's writes decode them.
//!
//! # Ranking a tile (the downsweep)
//!
//! The tile's 256 threads form 8 parts of 32 threads; part `p` holds the tile's keys `p *
//! 512 ..`, and in step `j` its threads hold 32 consecutive keys, thread `i` of the part key
//! `j * 32 + i`: loads are coalesced, and the order of the keys in the part is (step,
//! thread). Each part has a 256-digit counter array in workgroup memory. In each step, a
//! subgroup finds the lanes whose key has the same digit (8 ballots, one per digit bit), the
//! lowest of them adds their number to the part's counter of that digit (a workgroup-memory
//! atomic), and every lane takes the old value from it (`subgroup_shuffle`) plus the peers
//! below it: its rank among the part's keys of that digit so far. With subgroups smaller
//! than 32 (Vulkan on a CPU: 8, or 4; the cpu backend: 1) a part is `32 / subgroup_size`
//! subgroups that take turns in each step, a workgroup barrier between two turns. Then per
//! digit (one thread per digit): the parts' counts and the workgroup's exclusive scan give
//! each (part, digit) its first slot in the sorted tile; keys go to their slots in workgroup
//! memory, and the threads write the sorted tile out in index order, so keys of one digit
//! leave as one contiguous run.
//!
//! This is the design of rgpu's sort demo, which matched CUB's radix sort on an H100
//! (BENCHMARKS.md).

use rgpu::{Global, Group, Shared};

use crate::group::{scan_row, workgroup_scan, Lanes, PART_THREADS, SCAN_WORDS, THREADS, TILE};
use crate::key::{KeyKind, KeyMap, Order};

/// Bits per digit: 8 (4 passes over a `u32` word, 256 counters per histogram).
pub const RADIX_BITS: u32 = 8;
/// Digit values: counters per histogram.
pub const RADIX: u32 = 1 << RADIX_BITS;
/// Passes over one `u32` word.
pub const PASSES: u32 = 32 / RADIX_BITS;
/// Parts of a tile in the downsweep, histogram copies in the upsweep.
pub const PARTS: u32 = THREADS / PART_THREADS;
/// Keys per part of a tile.
pub const PART_KEYS: u32 = PART_THREADS * crate::group::ITEMS;
/// Words of the per-part histograms (8 KiB).
pub const HIST_WORDS: usize = (PARTS * RADIX) as usize;
/// Words of the sorted tile (16 KiB).
pub const TILE_WORDS: usize = TILE as usize;
/// Words of the workgroup scans' subgroup sums: up to 256 subgroups (of 1 invocation), two
/// scans at once.
pub const SUMS_WORDS: usize = 2 * THREADS as usize;

const _: () = assert!(
    RADIX == THREADS,
    "one thread per digit in the per-digit steps"
);
const _: () = assert!(PART_KEYS <= 1 << 16, "ranks are packed two per word");

/// The parameters of one pass, the same for its three launches.
///
/// 16 bytes: a CUDA by-value argument and a Vulkan push constant alike.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadixParams {
    /// Number of keys.
    pub len: u32,
    /// Number of tiles, `len.div_ceil(TILE)`: the row length of `counts`.
    pub tiles: u32,
    /// The pass's digit: `(key >> shift) & (RADIX - 1)`.
    pub shift: u32,
    /// `KeyKind` in bits 0..8, `Order` in bit 8, [`RadixParams::ENCODE`],
    /// [`RadixParams::DECODE`] and [`RadixParams::MAP_VALUES`].
    pub flags: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern (all-zero too) is valid.
unsafe impl bytemuck::Zeroable for RadixParams {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for RadixParams {}

impl RadixParams {
    /// The pass reads raw keys: encode them (the first pass).
    pub const ENCODE: u32 = 1 << 9;
    /// The pass writes the sorted keys: decode them (the last pass).
    pub const DECODE: u32 = 1 << 10;
    /// The moving word is mapped like the key (the other word of a `u64` key).
    pub const MAP_VALUES: u32 = 1 << 11;

    /// A pass over `len` keys by digit `shift` of the key word; `first`/`last`: it
    /// encodes / decodes.
    pub const fn new(
        len: u32,
        shift: u32,
        kind: KeyKind,
        order: Order,
        first: bool,
        last: bool,
    ) -> Self {
        let mut flags = kind as u32 | (order as u32) << 8;
        if first {
            flags |= Self::ENCODE;
        }
        if last {
            flags |= Self::DECODE;
        }
        Self {
            len,
            tiles: crate::group::tiles(len),
            shift,
            flags,
        }
    }

    /// The same pass with the moving word mapped like the key.
    pub const fn mapping_values(mut self) -> Self {
        self.flags |= Self::MAP_VALUES;
        self
    }

    pub const fn key_kind(&self) -> Option<KeyKind> {
        KeyKind::from_u32(self.flags & 0xff)
    }

    pub const fn order(&self) -> Option<Order> {
        Order::from_u32((self.flags >> 8) & 1)
    }

    pub const fn encodes(&self) -> bool {
        self.flags & Self::ENCODE != 0
    }

    pub const fn decodes(&self) -> bool {
        self.flags & Self::DECODE != 0
    }

    pub const fn maps_values(&self) -> bool {
        self.flags & Self::MAP_VALUES != 0
    }

    /// The pass's key map, or `None` for flags no host writes.
    #[inline(always)]
    pub(crate) fn key_map(&self) -> Option<KeyMap> {
        match (self.key_kind(), self.order()) {
            (Some(kind), Some(order)) => Some(KeyMap::new(kind, order)),
            _ => None,
        }
    }
}

/// Elements of the `counts` buffer for `len` keys: one row of `tiles` per digit (at least
/// one element, so a buffer can hold it).
pub const fn counts_len(len: u32) -> usize {
    let n = RADIX as usize * crate::group::tiles(len) as usize;
    if n == 0 {
        1
    } else {
        n
    }
}

/// The pass's digit of an (encoded) key.
#[inline(always)]
pub fn digit(key: u32, shift: u32) -> u32 {
    (key >> shift) & (RADIX - 1)
}

/// One pass's tile histograms: `counts[digit * tiles + tile]` = keys of the tile with that
/// digit. One workgroup per tile (`groups = params.tiles`).
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_upsweep(
    group: Group,
    params: RadixParams,
    keys: &[u32],
    counts: Global<u32>,
    hist: Shared<u32, HIST_WORDS>,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    if keys.len() < params.len as usize {
        return; // not the host's launch: it passes `len` keys
    }
    let lanes = Lanes::of(&group);
    let tile = group.id();
    let start = tile * TILE;
    let full = params.len - start >= TILE;
    // All the thread's loads first (coalesced: key j * 256 + place), so they are in flight
    // together.
    let mut bits = [0u32; 16];
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        if full || index < params.len {
            // SAFETY: index < len <= keys.len() (checked above).
            bits[J] = unsafe { *keys.get_unchecked(index as usize) };
        }
    });
    for p in 0..PARTS {
        // SAFETY: p * RADIX + place < PARTS * RADIX = HIST_WORDS.
        unsafe { hist.store_unchecked(p * RADIX + lanes.place, 0) };
    }
    group.barrier();
    // Each part counts into its own copy: atomics of different parts never collide (and
    // ptxas turns increments of one into warp-aggregated ones).
    let copy = lanes.part * RADIX;
    let encoding = params.encodes().then_some(map);
    if full {
        rgpu::unroll!(J in 0..16 => {
            let d = digit(encoding.map_or(bits[J], |map| map.encode(bits[J])), params.shift);
            // SAFETY: copy + d < PARTS * RADIX = HIST_WORDS (d is a digit, below RADIX).
            unsafe { hist.atomic_add_unchecked(copy + d, 1) };
        });
    } else {
        rgpu::unroll!(J in 0..16 => {
            let d = digit(encoding.map_or(bits[J], |map| map.encode(bits[J])), params.shift);
            if start + J as u32 * THREADS + lanes.place < params.len {
                // SAFETY: as above.
                unsafe { hist.atomic_add_unchecked(copy + d, 1) };
            }
        });
    }
    group.barrier();
    let d = lanes.place;
    let mut count = 0;
    for p in 0..PARTS {
        // SAFETY: p * RADIX + d < HIST_WORDS.
        count += unsafe { hist.load_unchecked(p * RADIX + d) };
    }
    // SAFETY: d < RADIX and tile < tiles: inside the digit-major `counts` (the host sizes it
    // `counts_len`); this workgroup alone writes its tile's entries.
    unsafe { counts.write(d * params.tiles + tile, count) };
}

/// One pass's scan: row `digit` of `counts` (the tiles' counts of that digit) becomes its
/// exclusive prefix sum, in place, and `totals[digit]` the row's sum. One workgroup per
/// digit (`groups = RADIX`).
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_scan(
    group: Group,
    params: RadixParams,
    counts: Global<u32>,
    totals: Global<u32>,
    entries: Shared<u32, SCAN_WORDS>,
    sums: Shared<u32, { THREADS as usize }>,
) {
    let lanes = Lanes::of(&group);
    let d = group.id();
    let tiles = params.tiles;
    if (counts.len() as usize) < RADIX as usize * tiles as usize || totals.len() < RADIX {
        return; // not the host's launch
    }
    let total = scan_row(&group, &lanes, counts, d * tiles, tiles, &entries, &sums);
    if lanes.place == 0 {
        // SAFETY: d < RADIX <= totals.len() (checked above); one invocation writes it.
        unsafe { totals.write(d, total) };
    }
}

/// Loads the tile's words of `src` into `words` in the downsweep's order (part-major, step,
/// lane); past the end they keep what the caller put there. Written into the caller's array
/// element by element: an array returned by value becomes whole-array values in rust-gpu's
/// SPIR-V, which browsers' shader compilers take far longer to compile.
#[inline(always)]
fn load_part(words: &mut [u32; 16], src: &[u32], lanes: &Lanes, start: u32, len: u32) {
    let full = len - start >= TILE;
    let first = start + lanes.part * PART_KEYS + lanes.in_part;
    rgpu::unroll!(J in 0..16 => {
        let index = first + J as u32 * PART_THREADS;
        if full || index < len {
            // SAFETY: index < len <= src.len() (the kernels check it first).
            words[J] = unsafe { *src.get_unchecked(index as usize) };
        }
    });
}

/// Loads tile `tile`'s keys of `src` into `keys` in the downsweep's order (encoded with
/// `encoding`; past the end `u32::MAX`, the largest key, which sorts after every key of the
/// tile, so the ranking needs no exceptions for it and the tile's writes stop before it).
/// Returns whether the tile is full, and its first key's index.
#[inline(always)]
pub(crate) fn load_tile(
    lanes: &Lanes,
    len: u32,
    encoding: Option<KeyMap>,
    src: &[u32],
    tile: u32,
    keys: &mut [u32; 16],
) -> (bool, u32) {
    let start = tile * TILE;
    let full = len - start >= TILE;
    // The part's keys: step j holds keys j * 32 .. j * 32 + 32 of the part. All loads first,
    // then the encoding, so the loads are in flight together.
    load_part(keys, src, lanes, start, len);
    let first = start + lanes.part * PART_KEYS + lanes.in_part;
    if let Some(map) = encoding {
        rgpu::unroll!(J in 0..16 => {
            keys[J] = map.encode(keys[J]);
        });
    }
    if !full {
        rgpu::unroll!(J in 0..16 => {
            if first + J as u32 * PART_THREADS >= len {
                keys[J] = u32::MAX;
            }
        });
    }
    (full, start)
}

/// Ranks each of the tile's `keys` among its part's keys of its digit, in (step, lane)
/// order, into `ranks`; `hist` ends with each (part, digit)'s count. The whole workgroup
/// calls it; it ends with a barrier.
#[inline(always)]
pub(crate) fn rank_keys<const H: usize>(
    group: &Group,
    lanes: &Lanes,
    hist: &Shared<u32, H>,
    keys: &[u32; 16],
    ranks: &mut [u32; 8],
    shift: u32,
) {
    let own = lanes.place;
    for p in 0..PARTS {
        // SAFETY: p * RADIX + own < HIST_WORDS.
        unsafe { hist.store_unchecked(p * RADIX + own, 0) };
    }
    group.barrier();

    let counters = lanes.part * RADIX;
    // Two ranks (each below PART_KEYS <= 2^16) per word: half the registers, and the sums
    // are made here.
    rgpu::unroll!(J in 0..16 => {
        let d = digit(keys[J], shift);
        // The lanes holding a key with this key's digit (its own lane included): one
        // ballot per digit bit, unrolled without a branch (rust-gpu keeps a `for` over a
        // range as a loop, and `if set { votes } else { !votes }` as a branch and a phi).
        let mut peers = lanes.lanes;
        rgpu::unroll!(BIT in 0..8 => {
            let set = (d >> BIT) & 1;
            let votes = group.subgroup_ballot(set != 0);
            peers &= votes ^ set.wrapping_sub(1);
        });
        let below = (peers & lanes.below).count_ones();
        let leader = below == 0;
        let mut old = 0;
        if lanes.turns == 1 {
            if leader {
                // SAFETY: counters + d < PARTS * RADIX = HIST_WORDS.
                old = unsafe { hist.atomic_add_unchecked(counters + d, peers.count_ones()) };
            }
        } else {
            // The part's subgroups take turns, in order.
            for turn in 0..lanes.turns {
                if leader && turn == lanes.turn {
                    // SAFETY: as above.
                    old = unsafe { hist.atomic_add_unchecked(counters + d, peers.count_ones()) };
                }
                group.barrier();
            }
        }
        // The lowest peer added for all of them (`peers` has this lane's bit: the top bit
        // only spares the compiler a zero test).
        let from = (peers | 1 << 31).trailing_zeros();
        ranks[J / 2] |= (group.subgroup_shuffle(old, from) + below) << (16 * (J as u32 % 2));
    });
    group.barrier();
}

/// This invocation's digit's count in each part of the tile (as `rank_keys` left `hist`),
/// and in the whole tile (the padding past the end counted, as digit `RADIX - 1`).
#[inline(always)]
pub(crate) fn digit_counts<const H: usize>(
    hist: &Shared<u32, H>,
    lanes: &Lanes,
) -> ([u32; PARTS as usize], u32) {
    let own = lanes.place;
    let mut in_tile = 0u32;
    let mut part_counts = [0u32; PARTS as usize];
    for p in 0..PARTS {
        // SAFETY: p * RADIX + own < HIST_WORDS.
        let count = unsafe { hist.load_unchecked(p * RADIX + own) };
        part_counts[p as usize] = count;
        in_tile += count;
    }
    (part_counts, in_tile)
}

/// From the tile's digit counts and this invocation's digit's `earlier` (keys of earlier
/// tiles with it) and `total` (keys in all with it): each (part, digit)'s first slot in the
/// sorted tile (`hist`), each digit's first place in `dst` less the tile's first slot of it
/// (`base`), and the keys in their sorted order (`sorted`). Ends with a barrier.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn place_tile<const H: usize, const B: usize, const S: usize, const T: usize>(
    group: &Group,
    lanes: &Lanes,
    hist: &Shared<u32, H>,
    base: &Shared<u32, B>,
    sums: &Shared<u32, S>,
    sorted: &Shared<u32, T>,
    keys: &[u32; 16],
    ranks: &[u32; 8],
    shift: u32,
    (part_counts, in_tile): ([u32; PARTS as usize], u32),
    earlier: u32,
    total: u32,
) {
    let own = lanes.place;
    // The tile's exclusive scan over digits gives each (part, digit) its first slot in the
    // sorted tile.
    let ([tile_start, digit_start], _) = workgroup_scan(group, lanes, sums, [in_tile, total]);
    let mut slot = tile_start;
    for p in 0..PARTS {
        // SAFETY: p * RADIX + own < HIST_WORDS.
        unsafe { hist.store_unchecked(p * RADIX + own, slot) };
        slot += part_counts[p as usize];
    }
    // Sorted slot i of the tile, with digit d, goes to base[d] + i.
    // SAFETY: own < RADIX.
    unsafe {
        base.store_unchecked(
            own,
            digit_start.wrapping_add(earlier).wrapping_sub(tile_start),
        )
    };
    group.barrier();
    rgpu::unroll!(J in 0..16 => {
        // SAFETY: `hist` as just left; the slot is the key's rank in the tile, below TILE.
        unsafe { sorted.store_unchecked(slot_of(hist, lanes, keys, ranks, J, shift), keys[J]) };
    });
    group.barrier();
}

/// What the downsweeps share up to the sorted tile: the tile's keys into `keys` (encoded,
/// past the end `u32::MAX`), their ranks into `ranks`, and in workgroup memory what
/// [`place_tile`] leaves. Returns whether the tile is full, and its first key's index.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sort_tile<const H: usize, const B: usize, const S: usize, const T: usize>(
    group: &Group,
    lanes: &Lanes,
    params: &RadixParams,
    map: KeyMap,
    src: &[u32],
    counts: &[u32],
    totals: &[u32],
    hist: &Shared<u32, H>,
    base: &Shared<u32, B>,
    sums: &Shared<u32, S>,
    sorted: &Shared<u32, T>,
    keys: &mut [u32; 16],
    ranks: &mut [u32; 8],
) -> (bool, u32) {
    let tile = group.id();
    let shift = params.shift;
    let (full, start) = load_tile(
        lanes,
        params.len,
        params.encodes().then_some(map),
        src,
        tile,
        keys,
    );
    // This invocation's digit in the per-digit steps: how many keys of earlier tiles have
    // it, and how many keys in all.
    let own = lanes.place;
    // SAFETY: own < RADIX and tile < tiles: inside `counts` and `totals` (checked by the
    // kernels).
    let (earlier, total) = unsafe {
        (
            *counts.get_unchecked((own * params.tiles + tile) as usize),
            *totals.get_unchecked(own as usize),
        )
    };
    rank_keys(group, lanes, hist, keys, ranks, shift);
    let counted = digit_counts(hist, lanes);
    place_tile(
        group, lanes, hist, base, sums, sorted, keys, ranks, shift, counted, earlier, total,
    );
    (full, start)
}

/// The slot of key `j` of `keys` in the sorted tile.
///
/// # Safety
/// `hist` holds the (part, digit) slots `sort_tile` left for these keys and ranks.
#[inline(always)]
unsafe fn slot_of<const H: usize>(
    hist: &Shared<u32, H>,
    lanes: &Lanes,
    keys: &[u32; 16],
    ranks: &[u32; 8],
    j: usize,
    shift: u32,
) -> u32 {
    // The digit again, computed another way so it is not kept from the ranking (fewer
    // live registers).
    let d = keys[j].rotate_right(shift) & (RADIX - 1);
    let rank = (ranks[j / 2] >> (16 * (j as u32 % 2))) & 0xffff;
    // SAFETY: counters + d < HIST_WORDS.
    unsafe { hist.load_unchecked(lanes.part * RADIX + d) + rank }
}

/// A sorted tile's keys and ranks in registers, whether it is full, and its first index.
#[derive(Clone, Copy)]
pub(crate) struct Tile<'a> {
    pub keys: &'a [u32; 16],
    pub ranks: &'a [u32; 8],
    pub full: bool,
    pub start: u32,
}

/// The sorted tile out of workgroup memory to `dst`, in index order: each digit's keys
/// leave as one run (decoded by the pass that decodes).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn write_keys<const B: usize, const T: usize>(
    lanes: &Lanes,
    params: &RadixParams,
    map: KeyMap,
    dst: Global<u32>,
    sorted: &Shared<u32, T>,
    base: &Shared<u32, B>,
    full: bool,
    start: u32,
) {
    let shift = params.shift;
    let in_tile = if full { TILE } else { params.len - start };
    let decoding = params.decodes().then_some(map);
    rgpu::unroll!(J in 0..16 => {
        let i = J as u32 * THREADS + lanes.place;
        if full || i < in_tile {
            // SAFETY: i < TILE, digit < RADIX; base[d] + i is this key's place in the pass's
            // order (< len); the places of one pass are distinct, so no other invocation
            // writes it.
            unsafe {
                let key = sorted.load_unchecked(i);
                let place = base.load_unchecked(digit(key, shift)).wrapping_add(i);
                dst.write(place, decoding.map_or(key, |map| map.decode(key)));
            }
        }
    });
}

/// The sorted tile's keys out to `dst` and their values (`src_values`' words of the tile,
/// through the sorted tile's memory once the keys have left it) to `dst_values`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn write_pairs<const H: usize, const B: usize, const T: usize>(
    group: &Group,
    lanes: &Lanes,
    params: &RadixParams,
    map: KeyMap,
    src_values: &[u32],
    dst: Global<u32>,
    dst_values: Global<u32>,
    hist: &Shared<u32, H>,
    sorted: &Shared<u32, T>,
    base: &Shared<u32, B>,
    tile: Tile<'_>,
) {
    let (full, start, shift) = (tile.full, tile.start, params.shift);
    let in_tile = if full { TILE } else { params.len - start };
    let decoding = params.decodes().then_some(map);
    // Each sorted slot's place in `dst`, kept for the values.
    let mut places = [0u32; 16];
    rgpu::unroll!(J in 0..16 => {
        let i = J as u32 * THREADS + lanes.place;
        // SAFETY: as in `write_keys` (every slot of the sorted tile holds a key, those past
        // the end `u32::MAX`).
        unsafe {
            let key = sorted.load_unchecked(i);
            places[J] = base.load_unchecked(digit(key, shift)).wrapping_add(i);
            if full || i < in_tile {
                dst.write(places[J], decoding.map_or(key, |map| map.decode(key)));
            }
        }
    });
    // The values, in the keys' order: loaded now (fewer live registers during the
    // ranking), through the sorted tile's memory once the keys have left it.
    let mut values = [0u32; 16];
    load_part(&mut values, src_values, lanes, start, params.len);
    if params.maps_values() && params.encodes() {
        rgpu::unroll!(J in 0..16 => {
            values[J] = map.encode(values[J]);
        });
    }
    group.barrier();
    rgpu::unroll!(J in 0..16 => {
        // SAFETY: as for the keys.
        unsafe { sorted.store_unchecked(slot_of(hist, lanes, tile.keys, tile.ranks, J, shift), values[J]) };
    });
    group.barrier();
    let decoding = (params.maps_values() && params.decodes()).then_some(map);
    rgpu::unroll!(J in 0..16 => {
        let i = J as u32 * THREADS + lanes.place;
        if full || i < in_tile {
            // SAFETY: the key's place, as above.
            unsafe {
                let value = sorted.load_unchecked(i);
                dst_values.write(places[J], decoding.map_or(value, |map| map.decode(value)));
            }
        }
    });
}

/// One pass's scatter of keys: each tile's keys ranked by digit (stably) in workgroup
/// memory, then written to their place in `dst`. One workgroup per tile (`groups =
/// params.tiles`); `counts` and `totals` as [`prim_radix_scan`] left them.
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_downsweep(
    group: Group,
    params: RadixParams,
    src: &[u32],
    dst: Global<u32>,
    counts: &[u32],
    totals: &[u32],
    hist: Shared<u32, HIST_WORDS>,
    sorted: Shared<u32, TILE_WORDS>,
    base: Shared<u32, { RADIX as usize }>,
    sums: Shared<u32, SUMS_WORDS>,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let (len, tiles) = (params.len as usize, params.tiles as usize);
    if src.len() < len || counts.len() < RADIX as usize * tiles || totals.len() < RADIX as usize {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let mut keys = [u32::MAX; 16];
    let mut ranks = [0u32; 8];
    let (full, start) = sort_tile(
        &group, &lanes, &params, map, src, counts, totals, &hist, &base, &sums, &sorted, &mut keys,
        &mut ranks,
    );

    write_keys(&lanes, &params, map, dst, &sorted, &base, full, start);
}

/// [`prim_radix_downsweep`] with a second word per key moving along (`src_values` to
/// `dst_values`): a value of a key-value sort, or the other word of a `u64` key
/// (`MAP_VALUES`: mapped like the key). The sorted tile's workgroup memory holds the keys,
/// then the values (the same 27 KiB as the keys-only kernel: WebGPU's limits).
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_downsweep_pairs(
    group: Group,
    params: RadixParams,
    src: &[u32],
    src_values: &[u32],
    dst: Global<u32>,
    dst_values: Global<u32>,
    counts: &[u32],
    totals: &[u32],
    hist: Shared<u32, HIST_WORDS>,
    sorted: Shared<u32, TILE_WORDS>,
    base: Shared<u32, { RADIX as usize }>,
    sums: Shared<u32, SUMS_WORDS>,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let (len, tiles) = (params.len as usize, params.tiles as usize);
    if src.len() < len
        || src_values.len() < len
        || counts.len() < RADIX as usize * tiles
        || totals.len() < RADIX as usize
    {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let mut keys = [u32::MAX; 16];
    let mut ranks = [0u32; 8];
    let (full, start) = sort_tile(
        &group, &lanes, &params, map, src, counts, totals, &hist, &base, &sums, &sorted, &mut keys,
        &mut ranks,
    );

    let tile = Tile {
        keys: &keys,
        ranks: &ranks,
        full,
        start,
    };
    write_pairs(
        &group, &lanes, &params, map, src_values, dst, dst_values, &hist, &sorted, &base, tile,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_sixteen_bytes_and_say_what_the_pass_does() {
        assert_eq!(core::mem::size_of::<RadixParams>(), 16);
        let first = RadixParams::new(5000, 0, KeyKind::F32, Order::Descending, true, false);
        assert_eq!((first.tiles, first.shift), (2, 0));
        assert!(first.encodes() && !first.decodes() && !first.maps_values());
        assert_eq!(first.key_kind(), Some(KeyKind::F32));
        assert_eq!(first.order(), Some(Order::Descending));
        let last = RadixParams::new(5000, 24, KeyKind::I32, Order::Ascending, false, true);
        assert!(!last.encodes() && last.decodes());
        assert!(last.mapping_values().maps_values());
        assert_eq!(counts_len(0), 1);
        assert_eq!(counts_len(TILE + 1), 2 * RADIX as usize);
    }
}
