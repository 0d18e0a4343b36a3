//! The histogram's kernel, and a fill kernel (the counts start at zero).
//!
//! [`prim_histogram`] counts each value `v < bins` in `counts[v]` (values `>= bins` are not
//! counted). A workgroup takes every `groups`-th tile of [`TILE`] values; with at most
//! [`LOCAL_BINS`] bins it counts in workgroup memory and adds its counts to `counts` once
//! (one atomic per non-empty bin), with more it adds each value to `counts` directly.

use rgpu::{Global, Group, Shared};

use crate::group::{Lanes, THREADS, TILE};

/// Bins a workgroup counts in its own memory (16 KiB).
pub const LOCAL_BINS: u32 = 4096;

/// The parameters of a histogram launch. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramParams {
    /// Values.
    pub len: u32,
    /// Bins: `counts`' length.
    pub bins: u32,
    /// Tiles of `len`.
    pub tiles: u32,
    /// Workgroups of the launch (each takes tiles `id, id + groups, ..`).
    pub groups: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern is valid.
unsafe impl bytemuck::Zeroable for HistogramParams {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for HistogramParams {}

impl HistogramParams {
    pub const fn new(len: u32, bins: u32, groups: u32) -> Self {
        Self {
            len,
            bins,
            tiles: crate::group::tiles(len),
            groups,
        }
    }
}

/// Adds each value's count to `counts` (which the host zeroed). `groups = params.groups`.
#[rgpu::kernel(threads = 256)]
pub fn prim_histogram(
    group: Group,
    params: HistogramParams,
    values: &[u32],
    counts: Global<u32>,
    local: Shared<u32, { LOCAL_BINS as usize }>,
) {
    let (len, bins) = (params.len, params.bins);
    if values.len() < len as usize || counts.len() < bins || params.groups == 0 {
        return; // not the host's launch
    }
    let lanes = Lanes::of(&group);
    let shared = bins <= LOCAL_BINS;
    if shared {
        let mut b = lanes.place;
        while b < bins {
            local.store(b, 0);
            b += THREADS;
        }
        group.barrier();
    }
    let mut tile = group.id();
    while tile < params.tiles {
        let start = tile * TILE;
        let full = len - start >= TILE;
        // Past the end: `bins`, which is not counted (one store per element, from a scalar
        // `if`: see reduce.rs).
        let mut words = [0u32; 16];
        rgpu::unroll!(J in 0..16 => {
            let index = start + J as u32 * THREADS + lanes.place;
            words[J] = if full || index < len {
                // SAFETY: index < len <= values.len() (checked above).
                unsafe { *values.get_unchecked(index as usize) }
            } else {
                bins
            };
        });
        rgpu::unroll!(J in 0..16 => {
            let v = words[J];
            if v < bins {
                if shared {
                    // SAFETY: v < bins <= LOCAL_BINS.
                    unsafe { local.atomic_add_unchecked(v, 1) };
                } else {
                    counts.atomic_add(v, 1);
                }
            }
        });
        tile += params.groups;
    }
    if shared {
        group.barrier();
        let mut b = lanes.place;
        while b < bins {
            let count = local.load(b);
            if count != 0 {
                counts.atomic_add(b, count);
            }
            b += THREADS;
        }
    }
}

/// `x[i] = value` for every item.
#[rgpu::kernel]
pub fn prim_fill(value: u32, #[item] x: &mut u32) {
    *x = value;
}
