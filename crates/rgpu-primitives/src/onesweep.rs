//! The Onesweep radix sort's kernels (Adinets and Merrill, "Onesweep: A Faster Least
//! Significant Digit Radix Sort for GPUs", 2022): the same stable LSD sort over 8-bit digits
//! as [`crate::radix`], with one launch per digit pass instead of three, and the keys read
//! once less per pass.
//!
//! 1. [`prim_radix_histograms`], once per sort (twice for `u64` keys: the low words, then the
//!    high ones): every pass's digit histogram at once, one read of the keys, added to
//!    `head[pass * RADIX + digit]` (the host zeroed `head`). Each workgroup takes every
//!    `groups`-th tile and also zeroes the first pass's look-back entries of its tiles.
//! 2. [`prim_radix_onesweep`] (keys) or [`prim_radix_onesweep_pairs`] (a second word moving
//!    along), once per pass, one workgroup per tile:
//!    - the workgroup takes its tile from the pass's ticket counter (`head`), so tiles start
//!      in order;
//!    - it ranks the tile's keys by digit in workgroup memory (the downsweep's ranking,
//!      `radix::rank_keys`) and publishes each digit's count in the tile, its *aggregate*
//!      (tile 0: its *inclusive prefix*), in `look[region][tile * RADIX + digit]`;
//!    - each of its 256 invocations looks back over the predecessors for its own digit,
//!      adding aggregates until an inclusive prefix ends the look-back, then publishes its
//!      digit's inclusive prefix;
//!    - a predecessor that has published nothing for any waiting digit after `spins` rounds
//!      is not waited for: the workgroup counts that tile's digits from the source keys
//!      itself (the *fallback*, as the single-pass scan's, [`crate::scan`]) and goes on. So
//!      the look-back ends whether or not a predecessor ever runs again: no forward-progress
//!      guarantee is needed (the cpu backend, lavapipe, SwiftShader, Metal, WebGPU);
//!    - the digit's place in the pass's output is the exclusive scan of the pass's
//!      histogram (each workgroup scans the 256 counts itself) plus the look-back's sum, and
//!      the tile scatters as the downsweep does.
//!
//! Each pass zeroes, tile by tile, the other of two look-back regions for the next pass.
//!
//! Memory ordering: a look-back entry is one 32-bit word, the status in its top two bits
//! ([`AGGREGATE`], [`INCLUSIVE`]) and the count below ([`VALUE`]), so a word is either
//! unwritten or final and the count travels with its flag: relaxed atomics suffice (as in
//! the single-pass scan), and the kernels keep their meaning where naga writes every atomic
//! relaxed. A count must fit 30 bits: the host takes this path for fewer than 2^30 keys.

use rgpu::{Global, Group, Shared};

use crate::group::{Lanes, THREADS, TILE};
use crate::key::{KeyKind, KeyMap, Order};
use crate::radix::{
    digit, digit_counts, load_tile, place_tile, rank_keys, write_keys, write_pairs, RadixParams,
    Tile, HIST_WORDS, PASSES, RADIX, RADIX_BITS, SUMS_WORDS, TILE_WORDS,
};

/// Status of a look-back entry: the tile's count of the digit.
pub const AGGREGATE: u32 = 1 << 30;
/// Status of a look-back entry: the count of the digit in the tile and all before it.
pub const INCLUSIVE: u32 = 2 << 30;
/// The count's bits of a look-back entry.
pub const VALUE: u32 = (1 << 30) - 1;
/// The most keys this path sorts (every count fits [`VALUE`]).
pub const MAX_LEN: u32 = VALUE;
/// Look-back entries an invocation reads in one round before the workgroup compares notes.
pub const LOOK_STEPS: u32 = 8;
/// Words of the workgroup's notes in one round of the look-back: the largest count of
/// predecessors still uncounted, and whether anyone advanced.
const NOTE_WORDS: u32 = 2;
/// Where in the `sorted` workgroup memory (free until the tile is placed) the look-back
/// keeps the ticket, its notes (three rounds' worth) and the fallback's counts.
const TICKET: u32 = 0;
const NOTES: u32 = 1;
const FALLBACK: u32 = 16;

const _: () = assert!(FALLBACK + RADIX <= TILE);
const _: () = assert!(NOTES + 3 * NOTE_WORDS <= FALLBACK);

/// The parameters of the histograms' and the passes' launches. 32 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnesweepParams {
    /// Number of keys.
    pub len: u32,
    /// Number of tiles, `len.div_ceil(TILE)`.
    pub tiles: u32,
    /// The pass's digit: `(key >> shift) & (RADIX - 1)`.
    pub shift: u32,
    /// [`RadixParams`]' flags, and [`OnesweepParams::WITHHOLD`].
    pub flags: u32,
    /// The pass (its histogram and ticket in `head`); for the histograms, the first pass
    /// whose histogram the launch adds to (0, or 4 for the high words of `u64` keys).
    pub pass: u32,
    /// Passes of the sort: 4, or 8 for `u64` keys.
    pub passes: u32,
    /// Rounds of the look-back in which no waiting digit advanced before the workgroup
    /// counts the awaited tile itself.
    pub spins: u32,
    /// Workgroups of the histograms' launch.
    pub groups: u32,
}

// SAFETY: `#[repr(C)]`, eight `u32`s: no padding, every bit pattern is valid.
unsafe impl bytemuck::Zeroable for OnesweepParams {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for OnesweepParams {}

impl OnesweepParams {
    /// Tests only: tiles 1, 5, 9, .. publish nothing, as workgroups that never run again
    /// would, so the tiles after them must take the fallback.
    pub const WITHHOLD: u32 = 1 << 12;
    /// [`OnesweepParams::spins`] unless set otherwise.
    pub const SPINS: u32 = 64;

    /// Pass `pass` of `passes` over `len` keys, its digit at `shift`; `first`/`last`: it
    /// encodes / decodes.
    #[allow(clippy::too_many_arguments)]
    pub const fn new(
        len: u32,
        pass: u32,
        passes: u32,
        kind: KeyKind,
        order: Order,
        first: bool,
        last: bool,
        groups: u32,
    ) -> Self {
        let radix = RadixParams::new(len, (pass % PASSES) * RADIX_BITS, kind, order, first, last);
        Self {
            len,
            tiles: radix.tiles,
            shift: radix.shift,
            flags: radix.flags,
            pass,
            passes,
            spins: Self::SPINS,
            groups,
        }
    }

    /// The same launch with `flags` added.
    pub const fn with_flags(mut self, flags: u32) -> Self {
        self.flags |= flags;
        self
    }

    /// The same launch with `spins` rounds before a fallback.
    pub const fn with_spins(mut self, spins: u32) -> Self {
        self.spins = spins;
        self
    }

    /// The pass as the count-then-scatter kernels' parameters (the shared ranking and
    /// scatter read these).
    pub const fn radix(&self) -> RadixParams {
        RadixParams {
            len: self.len,
            tiles: self.tiles,
            shift: self.shift,
            flags: self.flags & !Self::WITHHOLD,
        }
    }

    pub const fn withholds(&self, tile: u32) -> bool {
        self.flags & Self::WITHHOLD != 0 && tile % 4 == 1
    }
}

/// `head[COUNTERS + pass]`: pass `pass`'s ticket counter.
pub const fn counter(passes: u32, pass: u32) -> u32 {
    passes * RADIX + pass
}

/// `head[fallbacks(passes)]`: how many tiles workgroups counted for a predecessor.
pub const fn fallbacks(passes: u32) -> u32 {
    passes * RADIX + passes
}

/// Words of `head` (the histograms, the ticket counters, the fallbacks' count); zero them
/// before the histograms' launch.
pub const fn head_len(passes: u32) -> u32 {
    fallbacks(passes) + 1
}

/// Words of `look` for `tiles` tiles: two regions of `tiles * RADIX` entries.
pub const fn look_len(tiles: u32) -> u32 {
    2 * tiles * RADIX
}

/// The first entry of pass `pass`'s look-back region.
const fn region(pass: u32, tiles: u32) -> u32 {
    (pass % 2) * tiles * RADIX
}

/// Every pass's digit histogram of one key word, added to `head` (zeroed by the host), and
/// the first pass's look-back entries zeroed. `groups = params.groups`; each workgroup takes
/// tiles `id, id + groups, ..`. Keys are raw (encoded here when `ENCODE` is set).
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_histograms(
    group: Group,
    params: OnesweepParams,
    keys: &[u32],
    head: Global<u32>,
    look: Global<u32>,
    hist: Shared<u32, { (PASSES * RADIX) as usize }>,
) {
    let radix = params.radix();
    let Some(map) = radix.key_map() else {
        return;
    };
    let len = params.len;
    if keys.len() < len as usize
        || head.len() < head_len(params.passes)
        || look.len() < look_len(params.tiles)
        || params.pass + PASSES > params.passes
        || params.groups == 0
    {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let own = lanes.place;
    for k in 0..PASSES {
        hist.store(k * RADIX + own, 0);
    }
    group.barrier();
    let encoding = radix.encodes().then_some(map);
    let mut tile = group.id();
    while tile < params.tiles {
        // The first pass's look-back region (region 0) starts zeroed.
        look.atomic_store(tile * RADIX + own, 0);
        let start = tile * TILE;
        let full = len - start >= TILE;
        let mut bits = [0u32; 16];
        rgpu::unroll!(J in 0..16 => {
            let index = start + J as u32 * THREADS + own;
            if full || index < len {
                // SAFETY: index < len <= keys.len() (checked above).
                bits[J] = unsafe { *keys.get_unchecked(index as usize) };
            }
        });
        rgpu::unroll!(J in 0..16 => {
            if full || start + J as u32 * THREADS + own < len {
                let key = encoding.map_or(bits[J], |map| map.encode(bits[J]));
                rgpu::unroll!(K in 0..4 => {
                    let d = digit(key, K as u32 * RADIX_BITS);
                    // SAFETY: K * RADIX + d < PASSES * RADIX.
                    unsafe { hist.atomic_add_unchecked(K as u32 * RADIX + d, 1) };
                });
            }
        });
        tile += params.groups;
    }
    group.barrier();
    for k in 0..PASSES {
        let count = hist.load(k * RADIX + own);
        if count != 0 {
            head.atomic_add((params.pass + k) * RADIX + own, count);
        }
    }
}

/// Takes the workgroup's tile from the pass's ticket counter (into the workgroup's
/// `notes`, which it also readies for the look-back).
#[inline(always)]
fn ticket<const T: usize>(
    group: &Group,
    lanes: &Lanes,
    params: &OnesweepParams,
    head: Global<u32>,
    notes: &Shared<u32, T>,
) -> u32 {
    if lanes.place == 0 {
        notes.store(
            TICKET,
            head.atomic_add(counter(params.passes, params.pass), 1),
        );
        for i in 0..3 * NOTE_WORDS {
            notes.store(NOTES + i, 0);
        }
    }
    group.barrier();
    notes.load(TICKET)
}

/// How many keys of the tiles before `tile` (> 0) have this invocation's digit, from what
/// they published or, for a tile that has published nothing after `params.spins` rounds in
/// which no waiting digit advanced, from its keys in `src`. The whole workgroup calls it
/// (its control flow is uniform: every decision comes from workgroup memory after a
/// barrier); `notes` is the `sorted` memory, unused until the tile is placed.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn look_back<const T: usize>(
    group: &Group,
    lanes: &Lanes,
    params: &OnesweepParams,
    encoding: Option<KeyMap>,
    src: &[u32],
    look: Global<u32>,
    head: Global<u32>,
    notes: &Shared<u32, T>,
    tile: u32,
) -> u32 {
    let own = lanes.place;
    let at = region(params.pass, params.tiles) + own;
    let mut carry = 0u32;
    // The tiles below `left` are not counted yet (none once an inclusive prefix is read).
    let mut left = tile;
    let mut spins = 0u32;
    let mut round = 0u32;
    loop {
        let mut advanced = false;
        let mut steps = 0;
        while left > 0 && steps < LOOK_STEPS {
            let entry = look.atomic_load(at + (left - 1) * RADIX);
            if entry & (AGGREGATE | INCLUSIVE) == 0 {
                break;
            }
            carry = carry.wrapping_add(entry & VALUE);
            advanced = true;
            steps += 1;
            left = if entry & INCLUSIVE != 0 { 0 } else { left - 1 };
        }
        // This round's notes; the next round's are zeroed now (they were last read two
        // rounds ago, before the barrier below's predecessor).
        let note = NOTES + (round % 3) * NOTE_WORDS;
        if own == 0 {
            let next = NOTES + ((round + 1) % 3) * NOTE_WORDS;
            notes.store(next, 0);
            notes.store(next + 1, 0);
        }
        if left > 0 {
            notes.atomic_max(note, left);
        }
        if advanced {
            notes.atomic_or(note + 1, 1);
        }
        group.barrier();
        let (most_left, anyone) = (notes.load(note), notes.load(note + 1));
        if most_left == 0 {
            break;
        }
        round += 1;
        if anyone != 0 {
            spins = 0;
        } else if spins < params.spins {
            spins += 1;
        } else {
            // The fallback: every waiting digit waits on a tile that has published nothing
            // for it; the latest of those, `most_left - 1`, counted from its keys.
            let missing = most_left - 1;
            let counts = FALLBACK;
            notes.store(counts + own, 0);
            group.barrier();
            let start = missing * TILE;
            rgpu::unroll!(J in 0..16 => {
                let index = start + J as u32 * THREADS + own;
                // Not the last tile: every index is below len.
                // SAFETY: index < (missing + 1) * TILE <= tile * TILE < len <= src.len().
                let key = unsafe { *src.get_unchecked(index as usize) };
                let key = encoding.map_or(key, |map| map.encode(key));
                notes.atomic_add(counts + digit(key, params.shift), 1);
            });
            group.barrier();
            if left == most_left {
                carry = carry.wrapping_add(notes.load(counts + own));
                left -= 1;
            }
            if own == 0 {
                head.atomic_add(fallbacks(params.passes), 1);
            }
            spins = 0;
            group.barrier(); // the counts are read before the next fallback zeroes them
        }
    }
    carry
}

/// What both pass kernels do up to the sorted tile of `tile` (from [`ticket`]): the
/// ranking, the look-back and the placing. Returns whether the tile is full and its first
/// index.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sweep_tile<const H: usize, const B: usize, const S: usize, const T: usize>(
    group: &Group,
    lanes: &Lanes,
    params: &OnesweepParams,
    map: KeyMap,
    tile: u32,
    src: &[u32],
    head: Global<u32>,
    look: Global<u32>,
    hist: &Shared<u32, H>,
    base: &Shared<u32, B>,
    sums: &Shared<u32, S>,
    sorted: &Shared<u32, T>,
    keys: &mut [u32; 16],
    ranks: &mut [u32; 8],
) -> (bool, u32) {
    let encoding = params.radix().encodes().then_some(map);
    let own = lanes.place;
    let shift = params.shift;
    let (full, start) = load_tile(lanes, params.len, encoding, src, tile, keys);
    // How many keys in all have this invocation's digit (the histograms' launch wrote it).
    let total = head.atomic_load(params.pass * RADIX + own);
    rank_keys(group, lanes, hist, keys, ranks, shift);
    let counted = digit_counts(hist, lanes);
    // The tile's own count of the digit, less the padding past the end (all `u32::MAX`).
    let mut in_tile = counted.1;
    if !full && own == RADIX - 1 {
        in_tile -= TILE - (params.len - start);
    }
    // The next pass's look-back entries of this tile start zeroed (no one reads them in
    // this pass).
    look.atomic_store(
        region(params.pass + 1, params.tiles) + tile * RADIX + own,
        0,
    );
    let at = region(params.pass, params.tiles) + tile * RADIX + own;
    let publishes = !params.withholds(tile);
    if publishes {
        let status = if tile == 0 { INCLUSIVE } else { AGGREGATE };
        look.atomic_store(at, status | in_tile);
    }
    let mut earlier = 0;
    if tile > 0 {
        earlier = look_back(
            group, lanes, params, encoding, src, look, head, sorted, tile,
        );
        if publishes {
            look.atomic_store(at, INCLUSIVE | earlier.wrapping_add(in_tile));
        }
        group.barrier(); // the notes are read before the tile is placed over them
    }
    place_tile(
        group, lanes, hist, base, sums, sorted, keys, ranks, shift, counted, earlier, total,
    );
    (full, start)
}

/// One pass of keys: the tile ranked, its digits' places found by look-back, the keys
/// scattered to `dst`. One workgroup per tile (`groups = params.tiles`); `head` and `look`
/// as the histograms' launch (and the previous pass) left them.
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_onesweep(
    group: Group,
    params: OnesweepParams,
    src: &[u32],
    dst: Global<u32>,
    head: Global<u32>,
    look: Global<u32>,
    hist: Shared<u32, HIST_WORDS>,
    sorted: Shared<u32, TILE_WORDS>,
    base: Shared<u32, { RADIX as usize }>,
    sums: Shared<u32, SUMS_WORDS>,
) {
    let radix = params.radix();
    let Some(map) = radix.key_map() else {
        return;
    };
    if src.len() < params.len as usize
        || dst.len() < params.len
        || head.len() < head_len(params.passes)
        || look.len() < look_len(params.tiles)
        || params.pass >= params.passes
    {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let mut keys = [u32::MAX; 16];
    let mut ranks = [0u32; 8];
    let tile = ticket(&group, &lanes, &params, head, &sorted);
    if tile >= params.tiles {
        return; // more workgroups than tiles: not the host's launch
    }
    let (full, start) = sweep_tile(
        &group, &lanes, &params, map, tile, src, head, look, &hist, &base, &sums, &sorted,
        &mut keys, &mut ranks,
    );
    write_keys(&lanes, &radix, map, dst, &sorted, &base, full, start);
}

/// [`prim_radix_onesweep`] with a second word per key moving along (`src_values` to
/// `dst_values`), as [`crate::radix::prim_radix_downsweep_pairs`].
#[rgpu::kernel(threads = 256)]
pub fn prim_radix_onesweep_pairs(
    group: Group,
    params: OnesweepParams,
    src: &[u32],
    src_values: &[u32],
    dst: Global<u32>,
    dst_values: Global<u32>,
    head: Global<u32>,
    look: Global<u32>,
    hist: Shared<u32, HIST_WORDS>,
    sorted: Shared<u32, TILE_WORDS>,
    base: Shared<u32, { RADIX as usize }>,
    sums: Shared<u32, SUMS_WORDS>,
) {
    let radix = params.radix();
    let Some(map) = radix.key_map() else {
        return;
    };
    let len = params.len;
    if src.len() < len as usize
        || src_values.len() < len as usize
        || dst.len() < len
        || dst_values.len() < len
        || head.len() < head_len(params.passes)
        || look.len() < look_len(params.tiles)
        || params.pass >= params.passes
    {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let mut keys = [u32::MAX; 16];
    let mut ranks = [0u32; 8];
    let tile = ticket(&group, &lanes, &params, head, &sorted);
    if tile >= params.tiles {
        return; // more workgroups than tiles: not the host's launch
    }
    let (full, start) = sweep_tile(
        &group, &lanes, &params, map, tile, src, head, look, &hist, &base, &sums, &sorted,
        &mut keys, &mut ranks,
    );
    let tile = Tile {
        keys: &keys,
        ranks: &ranks,
        full,
        start,
    };
    write_pairs(
        &group, &lanes, &radix, map, src_values, dst, dst_values, &hist, &sorted, &base, tile,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_thirty_two_bytes_and_the_state_fits() {
        assert_eq!(core::mem::size_of::<OnesweepParams>(), 32);
        let p = OnesweepParams::new(5000, 5, 8, KeyKind::U32, Order::Ascending, false, false, 2);
        assert_eq!((p.tiles, p.shift), (2, 8));
        assert!(!p.withholds(1));
        let w = p.with_flags(OnesweepParams::WITHHOLD);
        assert!(w.withholds(1) && !w.withholds(2));
        assert_eq!(w.radix().flags, p.radix().flags);
        assert_eq!(head_len(4), 4 * RADIX + 5);
        assert_eq!(region(3, 7), 7 * RADIX);
    }
}
