//! The sort on the cpu backend: the kernels' launch schedule (`kernel::schedule::Passes`)
//! run by rayon, sort-specific and vectorized. Tile passes run each
//! 16 KiB tile (it stays in L1/L2) with the network's own steps (full tiles as slice-wise
//! min/max, which vectorizes); global passes call the same `schedule::global_pass` a GPU
//! thread runs, over the keys in place.

use std::sync::atomic::{AtomicU32, Ordering};

use kernel::key::{decode, encode};
use kernel::network::{compare_exchange, KeySlots, Step};
use kernel::schedule::{fused_steps, global_pass, is_last_tile_pass, Pass, Passes, TileSteps};
use kernel::{Block, KeyKind, SortOrder, SortParams, TILE_KEYS};
use rayon::prelude::*;

/// Fewest global-pass threads (2 to 16 keys each) a rayon task takes.
const MIN_THREADS_PER_TASK: usize = 1 << 10;

/// Each position of a pass is touched by exactly one thread, and rayon orders the passes,
/// so relaxed atomics are enough: they only make the sharing visible to the compiler.
#[derive(Clone, Copy)]
struct AtomicSlots<'a>(&'a [AtomicU32]);

impl KeySlots for AtomicSlots<'_> {
    fn load(&self, index: u32) -> u32 {
        self.0[index as usize].load(Ordering::Relaxed)
    }

    fn store(&mut self, index: u32, value: u32) {
        self.0[index as usize].store(value, Ordering::Relaxed);
    }
}

/// One tile's keys copied out of the shared array: plain memory for the local steps.
struct TileSlots<'a> {
    keys: &'a mut [u32],
    base: u32,
}

impl KeySlots for TileSlots<'_> {
    fn load(&self, index: u32) -> u32 {
        self.keys[(index - self.base) as usize]
    }

    fn store(&mut self, index: u32, value: u32) {
        self.keys[(index - self.base) as usize] = value;
    }
}

/// A `Pass::Tile` over every tile, in parallel (what one workgroup per tile does on a GPU).
fn tile_pass(keys: &mut [u32], block: u32, kind: KeyKind, order: SortOrder) {
    let len = keys.len() as u32;
    let (first, last) = (block == 0, is_last_tile_pass(len, block));
    keys.par_chunks_mut(TILE_KEYS as usize)
        .enumerate()
        .for_each(|(tile, chunk)| {
            if first {
                chunk.iter_mut().for_each(|k| *k = encode(*k, kind, order));
            }
            let base = tile as u32 * TILE_KEYS;
            if chunk.len() == TILE_KEYS as usize {
                // A full tile: every pair is real, so each step is a min/max over slices
                // (the compiler vectorizes it).
                TileSteps::new(len, block).for_each(|step| full_tile_step(chunk, step));
            } else {
                let mut slots = TileSlots { keys: chunk, base };
                let pairs = base / 2..(base + TILE_KEYS) / 2;
                for step in TileSteps::new(len, block) {
                    for pair in pairs.clone() {
                        compare_exchange(&mut slots, len, step, pair);
                    }
                }
            }
            if last {
                chunk.iter_mut().for_each(|k| *k = decode(*k, kind, order));
            }
        });
}

/// One network step on a full tile (no virtual padding inside it): exactly
/// `network::compare_exchange` for every pair, written as slice-wise min/max.
fn full_tile_step(tile: &mut [u32], step: Step) {
    let half = step.distance.0 as usize;
    for group in tile.chunks_exact_mut(half * 2) {
        let (lo, hi) = group.split_at_mut(half);
        if step.is_flip() {
            // A flip pairs position i of the block with its mirror.
            for (a, b) in lo.iter_mut().zip(hi.iter_mut().rev()) {
                (*a, *b) = ((*a).min(*b), (*a).max(*b));
            }
        } else {
            for (a, b) in lo.iter_mut().zip(hi.iter_mut()) {
                (*a, *b) = ((*a).min(*b), (*a).max(*b));
            }
        }
    }
}

/// A `Pass::Global`: every GPU thread's work, rayon tasks of contiguous threads.
fn global_pass_all(keys: &mut [u32], pass: Pass, params: SortParams) {
    let len = keys.len() as u32;
    // SAFETY: `AtomicU32` has the size and alignment of `u32`, and `keys` is borrowed
    // mutably for the whole view, so nothing else touches it meanwhile.
    let atomics: &[AtomicU32] =
        unsafe { &*(std::ptr::from_mut::<[u32]>(keys) as *const [AtomicU32]) };
    (0..pass.threads(len))
        .into_par_iter()
        .with_min_len(MIN_THREADS_PER_TASK)
        .for_each(|thread| global_pass(&mut AtomicSlots(atomics), &params, thread));
}

/// Keys per row piece a rayon task takes in `global_pass_rows` (16 rows: 64 KiB in cache).
const COLUMN_KEYS: usize = 1024;
// Global distances are at least TILE_KEYS, so rows split into whole pieces.
const _: () = assert!((TILE_KEYS as usize).is_multiple_of(COLUMN_KEYS));

/// `a[i], b[i] = min, max` for every i: one network step's compare-exchanges between two
/// runs of positions (the lower run first).
fn min_max(a: &mut [u32], b: &mut [u32]) {
    for (x, y) in a.iter_mut().zip(b.iter_mut()) {
        (*x, *y) = ((*x).min(*y), (*x).max(*y));
    }
}

/// A `Pass::Global` when every position is a real key (`len` is a power of two): the same
/// compare-exchanges as `schedule::global_pass`, as slice-wise min/max. A flip step first
/// (lower half against the mirrored upper half), then the pass's other steps: a GPU
/// thread's keys sit in one column of `2^m` rows `low` apart, so a task takes a strip of
/// columns of every row and runs the steps there, in cache.
fn global_pass_rows(keys: &mut [u32], step: Step) {
    let m = fused_steps(step);
    let (d, low) = (
        step.distance.0 as usize,
        (step.distance.0 >> (m - 1)) as usize,
    );
    let mut top = d;
    if step.is_flip() {
        keys.par_chunks_mut(2 * d).for_each(|block| {
            let (lo, hi) = block.split_at_mut(d);
            lo.par_chunks_mut(COLUMN_KEYS)
                .zip(hi.par_rchunks_mut(COLUMN_KEYS))
                .for_each(|(a, b)| {
                    for (x, y) in a.iter_mut().zip(b.iter_mut().rev()) {
                        (*x, *y) = ((*x).min(*y), (*x).max(*y));
                    }
                });
        });
        top = d / 2;
    }
    if top < low {
        return;
    }
    let rows = 2 * top / low;
    let mut tasks: Vec<Vec<&mut [u32]>> = Vec::new();
    for region in keys.chunks_mut(2 * top) {
        let first = tasks.len();
        tasks.extend((0..low / COLUMN_KEYS).map(|_| Vec::with_capacity(rows)));
        for row in region.chunks_mut(low) {
            for (c, piece) in row.chunks_mut(COLUMN_KEYS).enumerate() {
                tasks[first + c].push(piece);
            }
        }
    }
    tasks.into_par_iter().for_each(|mut strip| {
        let mut bit = rows / 2;
        while bit > 0 {
            for j in (0..rows).filter(|j| j & bit == 0) {
                let (a, b) = strip.split_at_mut(j | bit);
                min_max(a[j], b[0]);
            }
            bit /= 2;
        }
    });
}

/// Sorts raw key bits: every pass of the schedule, encode and decode folded into the tile
/// passes as on the GPU.
pub fn sort_in_place(keys: &mut [u32], kind: KeyKind, order: SortOrder) {
    let len = keys.len() as u32;
    for pass in Passes::new(len) {
        match pass {
            Pass::Tile(Block(block)) => tile_pass(keys, block, kind, order),
            Pass::Global(step) if len.is_power_of_two() => global_pass_rows(keys, step),
            Pass::Global(_) => global_pass_all(keys, pass, pass.params(len, kind, order)),
        }
    }
}
