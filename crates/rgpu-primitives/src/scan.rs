//! The scan's kernels: prefix sums of `u32` words (wrapping; `i32` has the same bits), by
//! *reduce-then-scan* in three launches, which needs no forward progress between
//! workgroups (so the same Rust runs on Vulkan and WebGPU):
//!
//! 1. [`prim_scan_upsweep`], one workgroup per tile of [`TILE`] items: the tile's sum to
//!    `partials[tile]`.
//! 2. [`prim_scan_partials`], one workgroup: `partials` becomes its exclusive prefix sum.
//! 3. [`prim_scan_downsweep`], one workgroup per tile: the tile read striped into workgroup
//!    memory, each thread's run of 16 summed, the workgroup's exclusive scan of the runs
//!    plus the tile's partial, the runs' prefix sums back, written striped (exclusive, or
//!    inclusive with [`ScanParams::INCLUSIVE`]).
//!
//! The input is read twice and the output written once (CUB's single-pass scan reads it
//! once: that needs workgroups to wait on each other, which the kernel API does not offer).

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
    /// [`ScanParams::INCLUSIVE`].
    pub flags: u32,
    pub unused: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern is valid.
unsafe impl bytemuck::Zeroable for ScanParams {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for ScanParams {}

impl ScanParams {
    /// Output `i` includes item `i`.
    pub const INCLUSIVE: u32 = 1;

    pub const fn new(len: u32, inclusive: bool) -> Self {
        Self {
            len,
            tiles: crate::group::tiles(len),
            flags: if inclusive { Self::INCLUSIVE } else { 0 },
            unused: 0,
        }
    }

    pub const fn inclusive(&self) -> bool {
        self.flags & Self::INCLUSIVE != 0
    }
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
