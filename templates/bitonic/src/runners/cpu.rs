//! The CPU backend: the kernel's network run by rayon, tile by tile where it can.
//!
//! It is also the reference every other backend is checked against.

use std::sync::atomic::{AtomicU32, Ordering};

use kernel::key::{decode, encode};
use kernel::network::{compare_exchange, fits_in_tile, pair_count, KeySlots, Step, Steps};
use rayon::prelude::*;
use shared::{KeyKind, SortOrder};

use super::{Backend, RunnerError, SortRunner};

/// Keys per CPU tile: 32 KiB, so a tile's whole run of local steps stays in L1/L2 cache.
const CPU_TILE_KEYS: u32 = 1 << 13;
/// Fewest compare pairs a rayon task takes in a global step.
const MIN_PAIRS_PER_TASK: usize = 1 << 14;

/// Each position of a step is touched by exactly one pair, and rayon orders the steps, so
/// relaxed atomics are enough: they only make the sharing visible to the compiler.
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

pub struct CpuRunner;

impl CpuRunner {
    pub fn new() -> Self {
        Self
    }
}

impl Default for CpuRunner {
    fn default() -> Self {
        Self::new()
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

/// Sorts already-encoded keys ascending with the kernel's network.
pub fn sort_encoded(keys: &[AtomicU32]) {
    let len = keys.len() as u32;
    let steps: Vec<Step> = Steps::new(len).collect();
    let tile_pairs = CPU_TILE_KEYS / 2;
    let mut i = 0;
    while i < steps.len() {
        if fits_in_tile(steps[i], CPU_TILE_KEYS) {
            // A run of steps that stay inside tiles: each tile runs them all, in parallel.
            let run_end = steps[i..]
                .iter()
                .position(|s| !fits_in_tile(*s, CPU_TILE_KEYS))
                .map_or(steps.len(), |p| i + p);
            let run = &steps[i..run_end];
            let tiles = pair_count(len).div_ceil(tile_pairs);
            (0..tiles).into_par_iter().for_each(|tile| {
                let base = tile * CPU_TILE_KEYS;
                let end = (base + CPU_TILE_KEYS).min(len);
                if base >= end {
                    return;
                }
                let shared = &keys[base as usize..end as usize];
                let mut local: Vec<u32> =
                    shared.iter().map(|k| k.load(Ordering::Relaxed)).collect();
                let mut slots = TileSlots {
                    keys: &mut local,
                    base,
                };
                let first = tile * tile_pairs;
                for &step in run {
                    for pair in first..first + tile_pairs {
                        compare_exchange(&mut slots, len, step, pair);
                    }
                }
                for (k, v) in shared.iter().zip(local) {
                    k.store(v, Ordering::Relaxed);
                }
            });
            i = run_end;
        } else {
            let step = steps[i];
            (0..pair_count(len))
                .into_par_iter()
                .with_min_len(MIN_PAIRS_PER_TASK)
                .for_each(|pair| compare_exchange(&mut AtomicSlots(keys), len, step, pair));
            i += 1;
        }
    }
}

impl SortRunner for CpuRunner {
    fn backend(&self) -> Backend {
        Backend::Cpu
    }

    fn device(&self) -> String {
        format!("CPU, {} threads (rayon)", rayon::current_num_threads())
    }

    fn sort_bits(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), RunnerError> {
        if keys.len() > shared::MAX_KEYS as usize {
            return Err(RunnerError::TooManyKeys(keys.len()));
        }
        let encoded: Vec<AtomicU32> = keys
            .par_iter()
            .map(|&bits| AtomicU32::new(encode(bits, kind, order)))
            .collect();
        sort_encoded(&encoded);
        keys.par_iter_mut()
            .zip(encoded.into_par_iter())
            .for_each(|(out, key)| *out = decode(key.into_inner(), kind, order));
        Ok(())
    }
}
