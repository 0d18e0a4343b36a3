//! An LSD radix sort on the kernel API: 8-bit digits, 4 passes, stable, for any length.
//!
//! Each pass moves the keys from one buffer to the other, ordered by one digit
//! (`shift = 0, 8, 16, 24`), keeping the order of the keys with equal digits (stable), so
//! after the fourth pass they are ordered by the whole key. A pass is three launches of a
//! portable *reduce-then-scan* scheme, which needs no forward progress between workgroups
//! (so the same Rust runs on Vulkan):
//!
//! 1. [`radix_upsweep`], one workgroup per tile of [`RADIX_TILE`] keys: the tile's digit
//!    histogram, to `counts[digit * tiles + tile]` (digit-major).
//! 2. [`radix_scan`], one workgroup per digit: the exclusive prefix sum of the digit's row
//!    of `counts` in place (how many keys with this digit earlier tiles hold), and the
//!    digit's total to `totals[digit]`.
//! 3. [`radix_downsweep`], one workgroup per tile: ranks the tile's keys by digit, stably,
//!    in workgroup memory, then writes each key to
//!    `digit_start[d] + counts[d][tile] + (its rank among the tile's keys of digit d)`,
//!    where `digit_start` is the exclusive prefix sum of `totals` (each workgroup computes
//!    it again: 256 values).
//!
//! The first pass's reads encode the keys with [`crate::key::encode`] (the order-preserving
//! `u32`; its branch-free form [`KeyMap`]) and the last pass's writes decode them.
//!
//! # Ranking a tile (the downsweep)
//!
//! The tile's 256 threads form [`PARTS`] parts of [`PART_THREADS`] threads; part `p` holds
//! the tile's keys `p * PART_KEYS ..`, and in step `j` its threads hold 32 consecutive keys,
//! thread `i` of the part key `j * 32 + i`: loads are coalesced, and the order of the keys
//! in the part is (step, thread). Each part has a 256-digit counter array in workgroup
//! memory. In each step, a subgroup finds the lanes whose key has the same digit (8
//! ballots, one per digit bit), the lowest of them adds their number to the part's counter
//! of that digit (a workgroup-memory atomic), and every lane takes the old value from it
//! (`subgroup_shuffle`) plus the peers below it: its rank among the part's keys of that
//! digit so far. A part of 32 threads is 1 subgroup on CUDA; with smaller subgroups (Vulkan
//! on a CPU: 8, or 4; the cpu backend: 1) a part is `32 / subgroup_size` subgroups that
//! take turns in each step, a workgroup barrier between two turns, so the counters always
//! see the part's keys in order. Then per digit (one thread per digit): the parts' counts
//! in turn and the workgroup's exclusive scan give each (part, digit) its first slot in the
//! sorted tile; keys go to their slots in workgroup memory, and the threads write the
//! sorted tile out in index order, so keys of one digit leave as one contiguous run.
//!
//! Subgroups must be 1 to 32 lanes (ballots are 32-bit), full, and `subgroup_id *
//! subgroup_size + lane` must number the workgroup's invocations `0..256`: true on CUDA,
//! the cpu backend and the Vulkan drivers we know.

use rgpu::{Global, Group, Shared};

use crate::key::KeyMap;
use crate::params::{KeyKind, SortOrder};

// --- tunables: every size of the radix sort is one of these --------------------------------

/// Bits per digit: 8 (4 passes over `u32` keys, 256 counters per histogram).
pub const RADIX_BITS: u32 = 8;
/// Threads per workgroup of every radix kernel (the kernels' `threads = 256`; rust-gpu takes
/// a literal there, asserted below). The per-digit steps give each thread one digit.
pub const RADIX_THREADS: u32 = 256;
/// Keys each thread of the upsweep and the downsweep holds in registers.
pub const KEYS_PER_THREAD: u32 = 16;
/// Counters a part of the downsweep (and a copy of the upsweep's histogram) serves:
/// the widest subgroup the 32-bit ballots cover.
pub const PART_THREADS: u32 = 32;
/// Prefix-sum entries each thread of `radix_scan` takes per round.
pub const SCAN_ENTRIES_PER_THREAD: u32 = 16;

// --- derived ---------------------------------------------------------------------------------

/// Digit values: counters per histogram.
pub const RADIX: u32 = 1 << RADIX_BITS;
/// Passes over a `u32` key.
pub const PASSES: u32 = 32 / RADIX_BITS;
/// Keys per tile (one upsweep or downsweep workgroup): 4096.
pub const RADIX_TILE: u32 = RADIX_THREADS * KEYS_PER_THREAD;
/// Parts of a tile in the downsweep, histogram copies in the upsweep.
pub const PARTS: u32 = RADIX_THREADS / PART_THREADS;
/// Keys per part of a tile.
pub const PART_KEYS: u32 = PART_THREADS * KEYS_PER_THREAD;
/// Entries of a `counts` row one `radix_scan` round takes.
pub const SCAN_CHUNK: u32 = RADIX_THREADS * SCAN_ENTRIES_PER_THREAD;
/// Words of the per-part histograms (8 KiB).
pub const HIST_WORDS: usize = (PARTS * RADIX) as usize;
/// Words of the sorted tile (16 KiB).
pub const TILE_WORDS: usize = RADIX_TILE as usize;
/// Words of a `radix_scan` round in workgroup memory, one word of padding per 32 (16.5 KiB).
pub const SCAN_WORDS: usize = (SCAN_CHUNK + SCAN_CHUNK / 32) as usize;
/// Words of the workgroup scans' subgroup sums: up to 256 subgroups (of 1 invocation), two
/// scans at once.
pub const SUMS_WORDS: usize = 2 * RADIX_THREADS as usize;

const _: () = assert!(
    RADIX_THREADS == 256,
    "RADIX_THREADS changed: update threads = 256 in radix.rs"
);
const _: () = assert!(
    RADIX == RADIX_THREADS,
    "one thread per digit in the per-digit steps"
);
const _: () = assert!(32 % RADIX_BITS == 0 && RADIX_BITS <= 8);
const _: () = assert!(RADIX_THREADS.is_multiple_of(PART_THREADS) && PART_THREADS == 32);
const _: () = assert!(PART_KEYS <= 1 << 16, "ranks are packed two per word");

/// The parameters of one pass, the same for its three launches.
///
/// 16 bytes: a CUDA by-value argument and a Vulkan push constant alike.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RadixParams {
    /// Number of keys.
    pub len: u32,
    /// Number of tiles, `len.div_ceil(RADIX_TILE)`: the row length of `counts`.
    pub tiles: u32,
    /// The pass's digit: `(key >> shift) & (RADIX - 1)`.
    pub shift: u32,
    /// `KeyKind` in bits 0..8, `SortOrder` in bit 8, [`RadixParams::ENCODE`] and
    /// [`RadixParams::DECODE`].
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

    /// Pass `pass` (`0..PASSES`) of a sort of `len` keys.
    pub const fn new(len: u32, pass: u32, kind: KeyKind, order: SortOrder) -> Self {
        let mut flags = kind as u32 | (order as u32) << 8;
        if pass == 0 {
            flags |= Self::ENCODE;
        }
        if pass + 1 == PASSES {
            flags |= Self::DECODE;
        }
        Self {
            len,
            tiles: tile_count(len),
            shift: pass * RADIX_BITS,
            flags,
        }
    }

    pub const fn key_kind(&self) -> Option<KeyKind> {
        KeyKind::from_u32(self.flags & 0xff)
    }

    pub const fn order(&self) -> Option<SortOrder> {
        SortOrder::from_u32((self.flags >> 8) & 1)
    }

    pub const fn encodes(&self) -> bool {
        self.flags & Self::ENCODE != 0
    }

    pub const fn decodes(&self) -> bool {
        self.flags & Self::DECODE != 0
    }
}

/// Tiles of `len` keys: the workgroups of the upsweep and the downsweep.
pub const fn tile_count(len: u32) -> u32 {
    len.div_ceil(RADIX_TILE)
}

/// Elements of the `counts` buffer for `len` keys: one row of `tiles` per digit (at least
/// one element, so a buffer can hold it).
pub const fn counts_len(len: u32) -> usize {
    let n = RADIX as usize * tile_count(len) as usize;
    if n == 0 {
        1
    } else {
        n
    }
}

// The downsweep keeps a thread's keys and ranks in `[u32; KEYS_PER_THREAD]` arrays across
// loops with barriers between them: those stay in registers only when every index is known
// at compile time, so the loops over a thread's steps are `rgpu::unroll!(J in 0..16)` (LLVM
// does not unroll a body this large by itself: nvptx made a 128-byte local-memory frame).
const _: () = assert!(
    KEYS_PER_THREAD == 16 && SCAN_ENTRIES_PER_THREAD == 16,
    "the kernels unroll 0..16 for a thread's steps"
);

/// The pass's digit of an (encoded) key.
#[inline(always)]
pub fn digit(key: u32, shift: u32) -> u32 {
    (key >> shift) & (RADIX - 1)
}

/// Where this invocation is, in the terms of the radix kernels.
#[derive(Clone, Copy)]
struct Lanes {
    /// `subgroup_id * subgroup_size + lane`: the invocation's place in the tile.
    place: u32,
    /// The invocation's subgroup and lane.
    subgroup: u32,
    lane: u32,
    /// Subgroups in the workgroup.
    subgroups: u32,
    /// The invocation's part (`place / PART_THREADS`), its place in the part, and which of
    /// the part's subgroups it is in (its turn).
    part: u32,
    in_part: u32,
    turn: u32,
    /// Subgroups per part: the turns of one step.
    turns: u32,
    /// Bits of the subgroup's lanes, and of the lanes below this one.
    lanes: u32,
    below: u32,
}

impl Lanes {
    #[inline(always)]
    fn of(group: &Group) -> Self {
        let size = group.subgroup_size().clamp(1, PART_THREADS);
        let (subgroup, lane) = (group.subgroup_id(), group.subgroup_lane());
        // (Below RADIX_THREADS anyway; the mask lets the compiler see that every index
        // derived from it is in bounds.)
        let place = (subgroup * size + lane) % RADIX_THREADS;
        let in_part = place % PART_THREADS;
        Self {
            place,
            subgroup,
            lane,
            subgroups: RADIX_THREADS / size,
            part: place / PART_THREADS,
            in_part,
            turn: in_part / size,
            turns: PART_THREADS / size,
            lanes: if size == 32 {
                u32::MAX
            } else {
                (1 << size) - 1
            },
            below: (1 << lane) - 1,
        }
    }
}

/// Exclusive prefix sums of `K` values at once over the workgroup, in `place` order, and
/// their totals. `sums` holds `K` words per subgroup. One barrier inside; the caller puts a
/// barrier between this and the next write of `sums`.
#[inline(always)]
fn workgroup_scan<const K: usize, const N: usize>(
    group: &Group,
    lanes: &Lanes,
    sums: &Shared<u32, N>,
    values: [u32; K],
) -> ([u32; K], [u32; K]) {
    let mut before = [0u32; K];
    let mut totals = [0u32; K];
    for k in 0..K {
        before[k] = group.subgroup_exclusive_add(values[k]);
        let sum = group.subgroup_add(values[k]);
        if lanes.lane == 0 {
            sums.store(k as u32 * RADIX_THREADS + lanes.subgroup, sum);
        }
    }
    group.barrier();
    for s in 0..lanes.subgroups {
        for k in 0..K {
            // SAFETY: s < subgroups <= RADIX_THREADS, k < K, and `sums` holds K of those.
            let sum = unsafe { sums.load_unchecked(k as u32 * RADIX_THREADS + s) };
            if s < lanes.subgroup {
                before[k] = before[k].wrapping_add(sum);
            }
            totals[k] = totals[k].wrapping_add(sum);
        }
    }
    (before, totals)
}

impl RadixParams {
    /// The pass's key map, or `None` for flags no host writes.
    #[inline(always)]
    fn key_map(&self) -> Option<KeyMap> {
        match (self.key_kind(), self.order()) {
            (Some(kind), Some(order)) => Some(KeyMap::new(kind, order)),
            _ => None,
        }
    }
}

/// Key `index` of `keys`, encoded when the pass reads raw keys.
///
/// # Safety
/// `index < keys.len()`.
#[inline(always)]
unsafe fn load_key(keys: &[u32], index: u32, encoding: Option<KeyMap>) -> u32 {
    // SAFETY: the caller's contract.
    let bits = unsafe { *keys.get_unchecked(index as usize) };
    match encoding {
        Some(map) => map.encode(bits),
        None => bits,
    }
}

/// One pass's tile histograms: `counts[digit * tiles + tile]` = keys of the tile with that
/// digit. One workgroup per tile (`groups = params.tiles`).
#[rgpu::kernel(threads = 256)]
pub fn radix_upsweep(
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
    let start = tile * RADIX_TILE;
    let full = params.len - start >= RADIX_TILE;
    // All the thread's loads first (coalesced: key j * 256 + place), so they are in flight
    // together.
    let mut bits = [0u32; KEYS_PER_THREAD as usize];
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * RADIX_THREADS + lanes.place;
        if full || index < params.len {
            // SAFETY: index < len <= keys.len() (checked above).
            bits[J] = unsafe { load_key(keys, index, None) };
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
            if start + J as u32 * RADIX_THREADS + lanes.place < params.len {
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

/// Where entry `i` of a scan chunk sits in workgroup memory: one word of padding per 32, so
/// neither the coalesced (striped) accesses nor a thread's run of 16 hit one bank twice.
#[inline(always)]
fn padded(i: u32) -> u32 {
    i + i / 32
}

/// One pass's scan: row `digit` of `counts` (the tiles' counts of that digit) becomes its
/// exclusive prefix sum, in place, and `totals[digit]` the row's sum. One workgroup per
/// digit (`groups = RADIX`), [`SCAN_CHUNK`] entries a round: read coalesced into workgroup
/// memory, each thread sums a run of [`SCAN_ENTRIES_PER_THREAD`], a workgroup scan of the
/// runs, the runs' prefix sums back, written coalesced.
#[rgpu::kernel(threads = 256)]
pub fn radix_scan(
    group: Group,
    params: RadixParams,
    counts: Global<u32>,
    totals: Global<u32>,
    entries: Shared<u32, SCAN_WORDS>,
    sums: Shared<u32, { RADIX_THREADS as usize }>,
) {
    let lanes = Lanes::of(&group);
    let d = group.id();
    let (row, tiles) = (d * params.tiles, params.tiles);
    if (counts.len() as usize) < RADIX as usize * tiles as usize || totals.len() < RADIX {
        return; // not the host's launch
    }
    let run = lanes.place * SCAN_ENTRIES_PER_THREAD;
    let mut carry = 0u32;
    let mut chunk = 0;
    while chunk < tiles {
        let mut values = [0u32; SCAN_ENTRIES_PER_THREAD as usize];
        rgpu::unroll!(J in 0..16 => {
            let t = chunk + J as u32 * RADIX_THREADS + lanes.place;
            if t < tiles {
                // SAFETY: inside row `d` (t < tiles); this workgroup alone touches the row,
                // and this invocation alone entry `t` of it.
                values[J] = unsafe { counts.read(row + t) };
            }
        });
        rgpu::unroll!(J in 0..16 => {
            // SAFETY: J * 256 + place < SCAN_CHUNK; padded below SCAN_WORDS.
            unsafe { entries.store_unchecked(padded(J as u32 * RADIX_THREADS + lanes.place), values[J]) };
        });
        group.barrier();
        let mut sum = 0u32;
        rgpu::unroll!(J in 0..16 => {
            // SAFETY: run + J < SCAN_CHUNK.
            values[J] = unsafe { entries.load_unchecked(padded(run + J as u32)) };
            sum = sum.wrapping_add(values[J]);
        });
        let ([before], [total]) = workgroup_scan(&group, &lanes, &sums, [sum]);
        let mut running = carry.wrapping_add(before);
        rgpu::unroll!(J in 0..16 => {
            // SAFETY: as above.
            unsafe { entries.store_unchecked(padded(run + J as u32), running) };
            running = running.wrapping_add(values[J]);
        });
        group.barrier();
        rgpu::unroll!(J in 0..16 => {
            let t = chunk + J as u32 * RADIX_THREADS + lanes.place;
            if t < tiles {
                // SAFETY: as for the reads; the entry is below SCAN_WORDS.
                unsafe {
                    let value = entries.load_unchecked(padded(J as u32 * RADIX_THREADS + lanes.place));
                    counts.write(row + t, value);
                }
            }
        });
        carry = carry.wrapping_add(total);
        chunk += SCAN_CHUNK;
        group.barrier(); // `entries` and `sums` are read before the next round writes them
    }
    if lanes.place == 0 {
        // SAFETY: d < RADIX <= totals.len() (checked above); one invocation writes it.
        unsafe { totals.write(d, carry) };
    }
}

/// One pass's scatter: each tile's keys ranked by digit (stably) in workgroup memory, then
/// written to their place in `dst`. One workgroup per tile (`groups = params.tiles`);
/// `counts` and `totals` as `radix_scan` left them.
#[rgpu::kernel(threads = 256)]
pub fn radix_downsweep(
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
    let tile = group.id();
    let start = tile * RADIX_TILE;
    let full = params.len - start >= RADIX_TILE;
    let shift = params.shift;

    // The part's keys: step j holds keys j * 32 .. j * 32 + 32 of the part. All loads first,
    // then the encoding, so the loads are in flight together.
    let first = start + lanes.part * PART_KEYS + lanes.in_part;
    let mut keys = [u32::MAX; KEYS_PER_THREAD as usize];
    rgpu::unroll!(J in 0..16 => {
        let index = first + J as u32 * PART_THREADS;
        if full || index < params.len {
            // SAFETY: index < len <= src.len() (checked above).
            keys[J] = unsafe { load_key(src, index, None) };
        }
    });
    if params.encodes() {
        rgpu::unroll!(J in 0..16 => {
            keys[J] = map.encode(keys[J]);
        });
    }
    if !full {
        // Past the last key: the largest key, which sorts after every key of the tile
        // (its digit is the largest, and its places are the last), so the ranking needs no
        // exceptions for it; the tile's writes stop before it.
        rgpu::unroll!(J in 0..16 => {
            if first + J as u32 * PART_THREADS >= params.len {
                keys[J] = u32::MAX;
            }
        });
    }

    // This invocation's digit in the per-digit steps: how many keys of earlier tiles have
    // it, and how many keys in all.
    let own = lanes.place;
    // SAFETY: own < RADIX and tile < tiles: inside `counts` and `totals` (checked above).
    let (earlier, total) = unsafe {
        (
            *counts.get_unchecked((own * params.tiles + tile) as usize),
            *totals.get_unchecked(own as usize),
        )
    };
    for p in 0..PARTS {
        // SAFETY: p * RADIX + own < HIST_WORDS.
        unsafe { hist.store_unchecked(p * RADIX + own, 0) };
    }
    group.barrier();

    // Rank each key among the part's keys of its digit, in (step, lane) order.
    let counters = lanes.part * RADIX;
    // Two ranks (each below PART_KEYS <= 2^16) per word: half the registers, and the sums
    // are made here (ptxas would otherwise keep both terms of each until their use).
    let mut ranks = [0u32; KEYS_PER_THREAD as usize / 2];
    rgpu::unroll!(J in 0..16 => {
        let d = digit(keys[J], shift);
        // The lanes holding a key with this key's digit (its own lane included).
        let mut peers = lanes.lanes;
        // One ballot per digit bit (RADIX_BITS = 8), unrolled with a constant BIT in each copy
        // and without a branch: rust-gpu keeps a `for` over a range as a loop carrying an
        // `Option`, and `if set { votes } else { !votes }` as a branch and a phi per ballot
        // (issue 19: radix on Vulkan -43% on an H100). Going further here (`while` for every
        // range loop, `|`/`&` for `||`/`&&`: 3.5% more on the H100) made the downsweep one
        // that SwiftShader's WebGPU never finishes compiling, so that was left out.
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
        // only spares the compiler a zero test). Every lane waits here for the value that
        // add returned, so one subgroup's adds of consecutive steps stay in order.
        let from = (peers | 1 << 31).trailing_zeros();
        ranks[J / 2] |= (group.subgroup_shuffle(old, from) + below) << (16 * (J as u32 % 2));
    });
    group.barrier();

    // Per digit: the parts' counts in turn, then the tile's exclusive scan over digits,
    // give each (part, digit) its first slot in the sorted tile.
    let mut in_tile = 0u32;
    let mut part_counts = [0u32; PARTS as usize];
    // Index loops, not slice iterators: rust-gpu cannot turn an array into a slice.
    for p in 0..PARTS {
        // SAFETY: p * RADIX + own < HIST_WORDS.
        let count = unsafe { hist.load_unchecked(p * RADIX + own) };
        part_counts[p as usize] = count;
        in_tile += count;
    }
    let ([tile_start, digit_start], _) = workgroup_scan(&group, &lanes, &sums, [in_tile, total]);
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
        // The digit again, computed another way so it is not kept from the ranking
        // (fewer live registers).
        let d = keys[J].rotate_right(shift) & (RADIX - 1);
        let rank = (ranks[J / 2] >> (16 * (J as u32 % 2))) & 0xffff;
        // SAFETY: counters + d < HIST_WORDS; the slot is the key's rank in the tile, below
        // RADIX_TILE.
        unsafe {
            let slot = hist.load_unchecked(counters + d) + rank;
            sorted.store_unchecked(slot, keys[J]);
        }
    });
    group.barrier();

    // The sorted tile out, in index order: each digit's keys leave as one run.
    let in_tile = if full { RADIX_TILE } else { params.len - start };
    let decoding = params.decodes().then_some(map);
    rgpu::unroll!(J in 0..16 => {
        let i = J as u32 * RADIX_THREADS + lanes.place;
        if full || i < in_tile {
            // SAFETY: i < RADIX_TILE, digit < RADIX; base[d] + i is this key's place in the
            // pass's order (< len); the places of one pass are distinct, so no other
            // invocation writes it.
            unsafe {
                let key = sorted.load_unchecked(i);
                let place = base.load_unchecked(digit(key, shift)).wrapping_add(i);
                dst.write(place, decoding.map_or(key, |map| map.decode(key)));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_sixteen_bytes_and_mark_the_first_and_last_pass() {
        assert_eq!(core::mem::size_of::<RadixParams>(), 16);
        let first = RadixParams::new(5000, 0, KeyKind::F32, SortOrder::Descending);
        assert_eq!((first.tiles, first.shift), (2, 0));
        assert!(first.encodes() && !first.decodes());
        assert_eq!(first.key_kind(), Some(KeyKind::F32));
        assert_eq!(first.order(), Some(SortOrder::Descending));
        let last = RadixParams::new(5000, PASSES - 1, KeyKind::I32, SortOrder::Ascending);
        assert!(!last.encodes() && last.decodes());
        assert_eq!(last.shift, 24);
        assert_eq!(counts_len(0), 1);
        assert_eq!(counts_len(RADIX_TILE + 1), 2 * RADIX as usize);
    }
}
