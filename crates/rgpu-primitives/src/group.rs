//! What the primitives' group kernels share: where an invocation is (`Lanes`), the
//! workgroup's exclusive prefix sums (`workgroup_scan`), and one row's scan in place
//! (`scan_row`, the radix sort's counts and the scan's tile sums).
//!
//! Every kernel here has 256 invocations per workgroup ([`THREADS`]) and holds 16 items per
//! invocation ([`ITEMS`]): a tile of 4096. Subgroups must be 1 to 32 lanes, full, and
//! `subgroup_id * subgroup_size + lane` must number the workgroup's invocations `0..256`:
//! true on CUDA, the cpu backend and the Vulkan drivers we know.

use rgpu::{Global, Group, Shared};

/// Invocations per workgroup of every primitive's kernel (their `threads = 256`).
pub const THREADS: u32 = 256;
/// Items each invocation holds in registers.
pub const ITEMS: u32 = 16;
/// Items per tile: one workgroup's share.
pub const TILE: u32 = THREADS * ITEMS;
/// The widest subgroup the 32-bit ballots cover.
pub const PART_THREADS: u32 = 32;
/// Words of a scan round in workgroup memory, one word of padding per 32 (16.5 KiB).
pub const SCAN_WORDS: usize = (TILE + TILE / 32) as usize;

const _: () = assert!(ITEMS == 16, "the kernels unroll 0..16 for a thread's items");

/// Tiles of `len` items.
pub const fn tiles(len: u32) -> u32 {
    len.div_ceil(TILE)
}

/// Where this invocation is.
#[derive(Clone, Copy)]
pub struct Lanes {
    /// `subgroup_id * subgroup_size + lane`: the invocation's place in the tile.
    pub place: u32,
    pub subgroup: u32,
    pub lane: u32,
    /// Subgroups in the workgroup.
    pub subgroups: u32,
    /// The invocation's 32-thread part (`place / PART_THREADS`), its place in the part,
    /// and which of the part's subgroups it is in (its turn).
    pub part: u32,
    pub in_part: u32,
    pub turn: u32,
    /// Subgroups per part.
    pub turns: u32,
    /// Bits of the subgroup's lanes, and of the lanes below this one.
    pub lanes: u32,
    pub below: u32,
}

impl Lanes {
    #[inline(always)]
    pub fn of(group: &Group) -> Self {
        let size = group.subgroup_size().clamp(1, PART_THREADS);
        let (subgroup, lane) = (group.subgroup_id(), group.subgroup_lane());
        // (Below THREADS anyway; the mask lets the compiler see that every index derived
        // from it is in bounds.)
        let place = (subgroup * size + lane) % THREADS;
        let in_part = place % PART_THREADS;
        Self {
            place,
            subgroup,
            lane,
            subgroups: THREADS / size,
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
/// their totals (wrapping). `sums` holds `K * THREADS` words. One barrier inside; the
/// caller puts a barrier between this and the next write of `sums`.
#[inline(always)]
pub fn workgroup_scan<const K: usize, const N: usize>(
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
            sums.store(k as u32 * THREADS + lanes.subgroup, sum);
        }
    }
    group.barrier();
    for s in 0..lanes.subgroups {
        for k in 0..K {
            // SAFETY: s < subgroups <= THREADS, k < K, and `sums` holds K of those.
            let sum = unsafe { sums.load_unchecked(k as u32 * THREADS + s) };
            if s < lanes.subgroup {
                before[k] = before[k].wrapping_add(sum);
            }
            totals[k] = totals[k].wrapping_add(sum);
        }
    }
    (before, totals)
}

/// Where entry `i` of a tile sits in workgroup memory: one word of padding per 32, so
/// neither the striped accesses nor a thread's run of 16 hit one bank twice.
#[inline(always)]
pub fn padded(i: u32) -> u32 {
    i + i / 32
}

/// Entries `row .. row + len` of `table` become their exclusive prefix sum (wrapping), in
/// place; returns their sum. The whole workgroup calls it; it alone touches the row.
/// [`TILE`] entries a round: read striped into workgroup memory, each thread sums a run of
/// [`ITEMS`], a workgroup scan of the runs, the runs' prefix sums back, written striped.
#[inline(always)]
pub fn scan_row<const W: usize, const S: usize>(
    group: &Group,
    lanes: &Lanes,
    table: Global<u32>,
    row: u32,
    len: u32,
    entries: &Shared<u32, W>,
    sums: &Shared<u32, S>,
) -> u32 {
    let run = lanes.place * ITEMS;
    let mut carry = 0u32;
    let mut chunk = 0;
    while chunk < len {
        let mut values = [0u32; ITEMS as usize];
        rgpu::unroll!(J in 0..16 => {
            let t = chunk + J as u32 * THREADS + lanes.place;
            if t < len {
                // SAFETY: inside the row (t < len; the caller sized the table); this
                // workgroup alone touches the row, and this invocation alone entry `t`.
                values[J] = unsafe { table.read(row + t) };
            }
        });
        rgpu::unroll!(J in 0..16 => {
            // SAFETY: J * 256 + place < TILE; padded below SCAN_WORDS <= W.
            unsafe { entries.store_unchecked(padded(J as u32 * THREADS + lanes.place), values[J]) };
        });
        group.barrier();
        let mut sum = 0u32;
        rgpu::unroll!(J in 0..16 => {
            // SAFETY: run + J < TILE.
            values[J] = unsafe { entries.load_unchecked(padded(run + J as u32)) };
            sum = sum.wrapping_add(values[J]);
        });
        let ([before], [total]) = workgroup_scan(group, lanes, sums, [sum]);
        let mut running = carry.wrapping_add(before);
        rgpu::unroll!(J in 0..16 => {
            // SAFETY: as above.
            unsafe { entries.store_unchecked(padded(run + J as u32), running) };
            running = running.wrapping_add(values[J]);
        });
        group.barrier();
        rgpu::unroll!(J in 0..16 => {
            let t = chunk + J as u32 * THREADS + lanes.place;
            if t < len {
                // SAFETY: as for the reads; the entry is below SCAN_WORDS.
                unsafe {
                    let value = entries.load_unchecked(padded(J as u32 * THREADS + lanes.place));
                    table.write(row + t, value);
                }
            }
        });
        carry = carry.wrapping_add(total);
        chunk += TILE;
        group.barrier(); // `entries` and `sums` are read before the next round writes them
    }
    carry
}
