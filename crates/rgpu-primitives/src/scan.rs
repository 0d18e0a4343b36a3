//! The scan's kernels: prefix sums of `u32` words (wrapping; `i32` has the same bits).
//!
//! [`prim_scan`] is a single pass with *decoupled look-back* that needs no forward-progress
//! guarantee between workgroups ("Decoupled Fallback", Smith, Levien and Owens, SPAA 2025):
//! the input is read once and the output written once (2n words moved).
//!
//! - Each workgroup takes its tile from an atomic ticket counter, so tiles start in order.
//! - It reads its tile into registers, sums it, and publishes the tile's *aggregate* (tile 0
//!   its *inclusive prefix*) in `state`.
//! - It looks back over its predecessors, [`LOOK_WINDOW`] at a time: their published
//!   inclusive prefix ends the look-back, an aggregate is added and the look-back goes on.
//! - A predecessor that has published nothing after `params.spins` looks is not waited for:
//!   the workgroup reduces that tile from the input itself (the *fallback*), publishes the
//!   aggregate for it (the same bits its owner publishes) and goes on. So the look-back ends
//!   after at most `tile * (spins + 1)` steps whether or not the predecessor ever runs again:
//!   the scan finishes where workgroups run one at a time or are never rescheduled (the cpu
//!   backend, lavapipe, SwiftShader, Metal, WebGPU).
//! - It publishes its inclusive prefix and writes its tile's prefix sums.
//!
//! Memory ordering: every published value is one 16-bit half of the sum with a ready bit in
//! one 32-bit word ([`READY`]), so a word is either not yet written or final, and the value
//! travels with its flag. Nothing else is shared between workgroups (the fallback reads only
//! the input), so relaxed atomics suffice: no acquire/release pair is needed, and the kernel
//! keeps its meaning where naga writes every atomic relaxed (WGSL, MSL, HLSL).
//!
//! The reduce-then-scan kernels (three launches: [`prim_scan_upsweep`], [`prim_scan_partials`],
//! [`prim_scan_downsweep`]; the input read twice) are what every backend runs today: on the
//! H200 they are ahead of the single pass, untuned, at 2^24 and 2^26 (`ScanAlgorithm` in
//! the host code picks, in one table).
//!
//! 1. [`prim_scan_upsweep`], one workgroup per tile of [`TILE`] items: the tile's sum to
//!    `partials[tile]`.
//! 2. [`prim_scan_partials`], one workgroup: `partials` becomes its exclusive prefix sum.
//! 3. [`prim_scan_downsweep`], one workgroup per tile: the tile read striped into workgroup
//!    memory, each thread's run of 16 summed, the workgroup's exclusive scan of the runs
//!    plus the tile's partial, the runs' prefix sums back, written striped (exclusive, or
//!    inclusive with [`ScanParams::INCLUSIVE`]).

use rgpu::{Global, Group, Shared};

use crate::group::{padded, scan_row, workgroup_scan, Lanes, ITEMS, SCAN_WORDS, THREADS, TILE};

/// The parameters of a scan's three launches. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanParams {
    /// Items.
    pub len: u32,
    /// Tiles, `len.div_ceil(TILE)`: the length of `partials`.
    pub tiles: u32,
    /// [`ScanParams::INCLUSIVE`], [`ScanParams::WITHHOLD`].
    pub flags: u32,
    /// [`prim_scan`]: looks at a predecessor that has published nothing before the
    /// workgroup reduces its tile itself.
    pub spins: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern is valid.
unsafe impl bytemuck::Zeroable for ScanParams {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for ScanParams {}

impl ScanParams {
    /// Output `i` includes item `i`.
    pub const INCLUSIVE: u32 = 1;
    /// Tests only: in [`prim_scan`] tiles 1, 5, 9, .. publish nothing, as workgroups that
    /// never run again would, so the tiles after them must take the fallback.
    pub const WITHHOLD: u32 = 2;
    /// [`ScanParams::spins`] unless set otherwise.
    pub const SPINS: u32 = 64;

    pub const fn new(len: u32, inclusive: bool) -> Self {
        Self {
            len,
            tiles: crate::group::tiles(len),
            flags: if inclusive { Self::INCLUSIVE } else { 0 },
            spins: Self::SPINS,
        }
    }

    /// The same launch with `flags` added.
    pub const fn with_flags(mut self, flags: u32) -> Self {
        self.flags |= flags;
        self
    }

    /// The same launch with `spins` looks before a fallback.
    pub const fn with_spins(mut self, spins: u32) -> Self {
        self.spins = spins;
        self
    }

    pub const fn inclusive(&self) -> bool {
        self.flags & Self::INCLUSIVE != 0
    }

    pub const fn withholds(&self, tile: u32) -> bool {
        self.flags & Self::WITHHOLD != 0 && tile % 4 == 1
    }
}

/// Predecessors one look-back step reads (one invocation each).
pub const LOOK_WINDOW: u32 = 32;
/// `state[COUNTER]`: the ticket counter (zero before the launch).
pub const COUNTER: u32 = 0;
/// `state[FALLBACKS]`: how many tiles workgroups reduced for a predecessor.
pub const FALLBACKS: u32 = 1;
/// Words of `state` before the tiles' four: aggregate low and high half, inclusive prefix
/// low and high half.
pub const STATE_HEAD: u32 = 2;
/// The ready bit of a published half (the half is the low 16 bits).
pub const READY: u32 = 1 << 16;
/// Words of `look`: each window entry's status and value, and the tile's ticket.
pub const LOOK_WORDS: usize = 2 * LOOK_WINDOW as usize + 1;
const TICKET: u32 = 2 * LOOK_WINDOW;
const AGGREGATE: u32 = 0;
const INCLUSIVE: u32 = 2;

/// The words of [`prim_scan`]'s `state` for `tiles` tiles; zero them before each launch.
pub const fn state_len(tiles: u32) -> u32 {
    STATE_HEAD + 4 * tiles
}

/// Publishes `value` as tile `tile`'s aggregate or inclusive prefix (`slot`).
#[inline(always)]
fn publish(state: Global<u32>, tile: u32, slot: u32, value: u32) {
    let at = STATE_HEAD + 4 * tile + slot;
    state.atomic_store(at, READY | (value & 0xFFFF));
    state.atomic_store(at + 1, READY | (value >> 16));
}

/// What tile `tile` has published: (2, its inclusive prefix), (1, its aggregate) or (0, 0).
#[inline(always)]
fn published(state: Global<u32>, tile: u32) -> (u32, u32) {
    let at = STATE_HEAD + 4 * tile;
    let (lo, hi) = (
        state.atomic_load(at + INCLUSIVE),
        state.atomic_load(at + INCLUSIVE + 1),
    );
    if lo & hi & READY != 0 {
        return (2, (lo & 0xFFFF) | ((hi & 0xFFFF) << 16));
    }
    let (lo, hi) = (
        state.atomic_load(at + AGGREGATE),
        state.atomic_load(at + AGGREGATE + 1),
    );
    if lo & hi & READY != 0 {
        return (1, (lo & 0xFFFF) | ((hi & 0xFFFF) << 16));
    }
    (0, 0)
}

/// This invocation's share (16 striped items) of tile `tile`'s sum.
#[inline(always)]
fn tile_share(input: &[u32], len: u32, tile: u32, place: u32) -> u32 {
    let start = tile * TILE;
    let full = len - start >= TILE;
    let mut sum = 0u32;
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + place;
        if full || index < len {
            // SAFETY: index < len <= input.len() (the kernel checked).
            sum = sum.wrapping_add(unsafe { *input.get_unchecked(index as usize) });
        }
    });
    sum
}

/// The sum of the tiles before `tile` (> 0), from what they published or, for one that has
/// published nothing after `params.spins` looks, from the input. The whole workgroup calls
/// it (its control flow is uniform: every decision comes from workgroup memory after a
/// barrier); a barrier separates the caller's last `workgroup_scan` from it.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn look_back<const S: usize, const L: usize>(
    group: &Group,
    lanes: &Lanes,
    params: &ScanParams,
    input: &[u32],
    state: Global<u32>,
    sums: &Shared<u32, S>,
    look: &Shared<u32, L>,
    tile: u32,
) -> u32 {
    let mut carry = 0u32;
    // The tiles below `next` are not counted yet.
    let mut next = tile;
    let mut spins = 0u32;
    loop {
        if lanes.place < LOOK_WINDOW {
            // Below tile 0: the end (an inclusive prefix of 0).
            let (status, value) = if lanes.place < next {
                published(state, next - 1 - lanes.place)
            } else {
                (2, 0)
            };
            look.store(lanes.place, status);
            look.store(LOOK_WINDOW + lanes.place, value);
        }
        group.barrier();
        let (mut counted, mut done) = (0u32, false);
        while counted < LOOK_WINDOW {
            let status = look.load(counted);
            if status == 0 {
                break;
            }
            carry = carry.wrapping_add(look.load(LOOK_WINDOW + counted));
            counted += 1;
            if status == 2 {
                done = true;
                break;
            }
        }
        group.barrier(); // `look` is read before the next step writes it
        if done {
            break;
        }
        next -= counted;
        if counted > 0 {
            spins = 0;
        } else if spins < params.spins {
            spins += 1;
        } else {
            // The fallback: tile `next - 1` from the input.
            let missing = next - 1;
            let share = tile_share(input, params.len, missing, lanes.place);
            let (_, [total]) = workgroup_scan(group, lanes, sums, [share]);
            if lanes.place == 0 {
                publish(state, missing, AGGREGATE, total);
                state.atomic_add(FALLBACKS, 1);
            }
            carry = carry.wrapping_add(total);
            next = missing;
            spins = 0;
            group.barrier(); // `sums` is read before the next fallback writes it
        }
    }
    carry
}

/// Prefix sums of `input` (exclusive, or inclusive with [`ScanParams::INCLUSIVE`]) to
/// `output`, in one pass. `state` holds [`state_len`] words, zero before the launch. One
/// workgroup per tile.
#[rgpu::kernel(threads = 256)]
pub fn prim_scan(
    group: Group,
    params: ScanParams,
    input: &[u32],
    state: Global<u32>,
    output: Global<u32>,
    entries: Shared<u32, SCAN_WORDS>,
    sums: Shared<u32, { THREADS as usize }>,
    look: Shared<u32, LOOK_WORDS>,
) {
    let len = params.len;
    if input.len() < len as usize || state.len() < state_len(params.tiles) || output.len() < len {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    if lanes.place == 0 {
        look.store(TICKET, state.atomic_add(COUNTER, 1));
    }
    group.barrier();
    let tile = look.load(TICKET);
    if tile >= params.tiles {
        return; // more workgroups than tiles: not the host's launch
    }
    let start = tile * TILE;
    let full = len - start >= TILE;
    let mut values = [0u32; ITEMS as usize];
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        if full || index < len {
            // SAFETY: index < len <= input.len() (checked above).
            values[J] = unsafe { *input.get_unchecked(index as usize) };
        }
    });
    rgpu::unroll!(J in 0..16 => {
        // SAFETY: J * 256 + place < TILE; padded below SCAN_WORDS.
        unsafe { entries.store_unchecked(padded(J as u32 * THREADS + lanes.place), values[J]) };
    });
    group.barrier();
    let run = lanes.place * ITEMS;
    let mut sum = 0u32;
    rgpu::unroll!(J in 0..16 => {
        // SAFETY: run + J < TILE.
        values[J] = unsafe { entries.load_unchecked(padded(run + J as u32)) };
        sum = sum.wrapping_add(values[J]);
    });
    let ([before], [total]) = workgroup_scan(&group, &lanes, &sums, [sum]);
    let publishes = lanes.place == 0 && !params.withholds(tile);
    if publishes {
        publish(
            state,
            tile,
            if tile == 0 { INCLUSIVE } else { AGGREGATE },
            total,
        );
    }
    let mut carry = 0u32;
    if tile > 0 {
        group.barrier(); // `sums` is read before a fallback writes it
        carry = look_back(&group, &lanes, &params, input, state, &sums, &look, tile);
        if publishes {
            publish(state, tile, INCLUSIVE, carry.wrapping_add(total));
        }
    }
    let mut running = carry.wrapping_add(before);
    let inclusive = params.inclusive();
    rgpu::unroll!(J in 0..16 => {
        let before = running;
        running = running.wrapping_add(values[J]);
        // SAFETY: as above.
        unsafe { entries.store_unchecked(padded(run + J as u32), if inclusive { running } else { before }) };
    });
    group.barrier();
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        if full || index < len {
            // SAFETY: index < len <= output.len(); this tile's workgroup alone writes it.
            unsafe {
                output.write(index, entries.load_unchecked(padded(J as u32 * THREADS + lanes.place)));
            }
        }
    });
}

/// Each tile's sum (wrapping) to `partials[tile]`. One workgroup per tile.
#[rgpu::kernel(threads = 256)]
pub fn prim_scan_upsweep(
    group: Group,
    params: ScanParams,
    input: &[u32],
    partials: Global<u32>,
    sums: Shared<u32, { THREADS as usize }>,
) {
    if input.len() < params.len as usize || partials.len() < params.tiles {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let tile = group.id();
    let start = tile * TILE;
    let full = params.len - start >= TILE;
    let mut sum = 0u32;
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        if full || index < params.len {
            // SAFETY: index < len <= input.len() (checked above).
            sum = sum.wrapping_add(unsafe { *input.get_unchecked(index as usize) });
        }
    });
    let (_, [total]) = workgroup_scan(&group, &lanes, &sums, [sum]);
    if lanes.place == 0 {
        // SAFETY: tile < tiles <= partials.len(); one invocation writes it.
        unsafe { partials.write(tile, total) };
    }
}

/// `partials` (the tiles' sums) becomes its exclusive prefix sum. One workgroup.
#[rgpu::kernel(threads = 256)]
pub fn prim_scan_partials(
    group: Group,
    params: ScanParams,
    partials: Global<u32>,
    entries: Shared<u32, SCAN_WORDS>,
    sums: Shared<u32, { THREADS as usize }>,
) {
    if partials.len() < params.tiles {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    scan_row(&group, &lanes, partials, 0, params.tiles, &entries, &sums);
}

/// Each tile's prefix sums, from its partial, to `output`. One workgroup per tile.
#[rgpu::kernel(threads = 256)]
pub fn prim_scan_downsweep(
    group: Group,
    params: ScanParams,
    input: &[u32],
    partials: &[u32],
    output: Global<u32>,
    entries: Shared<u32, SCAN_WORDS>,
    sums: Shared<u32, { THREADS as usize }>,
) {
    let len = params.len;
    if input.len() < len as usize || partials.len() < params.tiles as usize || output.len() < len {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let tile = group.id();
    let start = tile * TILE;
    let full = len - start >= TILE;
    let mut values = [0u32; ITEMS as usize];
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        if full || index < len {
            // SAFETY: index < len <= input.len() (checked above).
            values[J] = unsafe { *input.get_unchecked(index as usize) };
        }
    });
    rgpu::unroll!(J in 0..16 => {
        // SAFETY: J * 256 + place < TILE; padded below SCAN_WORDS.
        unsafe { entries.store_unchecked(padded(J as u32 * THREADS + lanes.place), values[J]) };
    });
    group.barrier();
    let run = lanes.place * ITEMS;
    let mut sum = 0u32;
    rgpu::unroll!(J in 0..16 => {
        // SAFETY: run + J < TILE.
        values[J] = unsafe { entries.load_unchecked(padded(run + J as u32)) };
        sum = sum.wrapping_add(values[J]);
    });
    let ([before], _) = workgroup_scan(&group, &lanes, &sums, [sum]);
    // SAFETY: tile < tiles <= partials.len() (checked above).
    let carry = unsafe { *partials.get_unchecked(tile as usize) };
    let mut running = carry.wrapping_add(before);
    let inclusive = params.inclusive();
    rgpu::unroll!(J in 0..16 => {
        let before = running;
        running = running.wrapping_add(values[J]);
        // SAFETY: as above.
        unsafe { entries.store_unchecked(padded(run + J as u32), if inclusive { running } else { before }) };
    });
    group.barrier();
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        if full || index < len {
            // SAFETY: index < len <= output.len(); this tile's workgroup alone writes it.
            unsafe {
                output.write(index, entries.load_unchecked(padded(J as u32 * THREADS + lanes.place)));
            }
        }
    });
}
