//! The bitonic sorting network over `u32`s, for any length.
//!
//! The network sorts `padded_len(len)` positions, a power of two. Positions at or past
//! `len` are never read or written: they act as keys larger than every real key, which is
//! exactly where padding belongs in an ascending sort, so no padding is stored. Every stage
//! starts with a "flip" step (compare `i` with its mirror in the block), so every block is
//! sorted ascending and the virtual padding never has to move.
//!
//! One pair of positions per thread: pair `p` of a step is compared by thread `p`, and a
//! step has `pair_count(len)` pairs.

use crate::params::{Block, Distance};

/// Reads and writes the keys a compare-exchange works on. The CPU backend implements it
/// over atomics, GPU entry points over their global or workgroup memory.
pub trait KeySlots {
    fn load(&self, index: u32) -> u32;
    fn store(&mut self, index: u32, value: u32);
}

impl<S: KeySlots + ?Sized> KeySlots for &mut S {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        (**self).load(index)
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        (**self).store(index, value)
    }
}

/// One compare-exchange step of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub block: Block,
    pub distance: Distance,
}

impl Step {
    /// The first step of a stage compares mirrored positions of each block.
    #[inline]
    pub fn is_flip(self) -> bool {
        self.distance.0 * 2 == self.block.0
    }
}

/// The power of two the network is built for (at least 2).
#[inline]
pub fn padded_len(len: u32) -> u32 {
    if len <= 2 {
        2
    } else {
        len.next_power_of_two()
    }
}

/// Threads (compare pairs) per step.
#[inline]
pub fn pair_count(len: u32) -> u32 {
    padded_len(len) / 2
}

/// The two positions `(lo, hi)` that pair `pair` of `step` compares; `lo < hi`.
#[inline]
pub fn pair_indices(step: Step, pair: u32) -> (u32, u32) {
    if step.is_flip() {
        pair_indices_of::<true>(step, pair)
    } else {
        pair_indices_of::<false>(step, pair)
    }
}

/// `pair_indices` with `step.is_flip() == FLIP` known at compile time: a GPU thread's loop
/// over its pairs then computes no per-pair select (the tile kernels split on it per step).
#[inline(always)]
pub fn pair_indices_of<const FLIP: bool>(step: Step, pair: u32) -> (u32, u32) {
    let d = step.distance.0;
    let lo = ((pair & !(d - 1)) << 1) | (pair & (d - 1));
    let hi = if FLIP {
        lo ^ (step.block.0 - 1)
    } else {
        lo + d
    };
    (lo, hi)
}

/// Compare-exchange of one pair: afterwards the smaller key is at the lower position.
/// Pairs that reach past `len` are left alone (the missing key is the larger one).
#[inline]
pub fn compare_exchange<S: KeySlots + ?Sized>(slots: &mut S, len: u32, step: Step, pair: u32) {
    if step.is_flip() {
        compare_exchange_of::<S, true>(slots, len, step, pair)
    } else {
        compare_exchange_of::<S, false>(slots, len, step, pair)
    }
}

/// `compare_exchange` with `step.is_flip() == FLIP` known at compile time.
#[inline(always)]
pub fn compare_exchange_of<S: KeySlots + ?Sized, const FLIP: bool>(
    slots: &mut S,
    len: u32,
    step: Step,
    pair: u32,
) {
    let (lo, hi) = pair_indices_of::<FLIP>(step, pair);
    if hi < len {
        let a = slots.load(lo);
        let b = slots.load(hi);
        if a > b {
            slots.store(lo, b);
            slots.store(hi, a);
        }
    }
}

/// The steps of the network for `len` keys, in order.
#[derive(Clone, Debug)]
pub struct Steps {
    padded: u32,
    next: Option<Step>,
}

impl Steps {
    pub fn new(len: u32) -> Self {
        let padded = padded_len(len);
        let next = (len > 1).then_some(Step {
            block: Block(2),
            distance: Distance(1),
        });
        Self { padded, next }
    }
}

impl Iterator for Steps {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        let current = self.next?;
        self.next = if current.distance.0 > 1 {
            Some(Step {
                block: current.block,
                distance: Distance(current.distance.0 / 2),
            })
        } else if current.block.0 < self.padded {
            let block = current.block.0 * 2;
            Some(Step {
                block: Block(block),
                distance: Distance(block / 2),
            })
        } else {
            None
        };
        Some(current)
    }
}

/// Whether every pair of `step` stays inside one aligned tile of `tile_keys` positions,
/// so a workgroup (or a CPU thread) can run it on its tile alone.
#[inline]
pub fn fits_in_tile(step: Step, tile_keys: u32) -> bool {
    if step.is_flip() {
        step.block.0 <= tile_keys
    } else {
        step.distance.0 * 2 <= tile_keys
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::test_slots::VecSlots;
    use std::vec::Vec;

    fn sort_sequentially(keys: Vec<u32>) -> Vec<u32> {
        let len = keys.len() as u32;
        let mut slots = VecSlots(keys);
        for step in Steps::new(len) {
            for pair in 0..pair_count(len) {
                compare_exchange(&mut slots, len, step, pair);
            }
        }
        slots.0
    }

    fn pseudo_random(len: usize, seed: u32) -> Vec<u32> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x % 97
            })
            .collect()
    }

    #[test]
    fn sorts_every_length_up_to_130() {
        for len in 0..130 {
            let keys = pseudo_random(len, len as u32 + 1);
            let mut expected = keys.clone();
            expected.sort_unstable();
            assert_eq!(sort_sequentially(keys), expected, "len {len}");
        }
    }

    #[test]
    fn pairs_of_a_step_cover_each_position_once() {
        for step in Steps::new(64) {
            let mut seen = [0u8; 64];
            for pair in 0..pair_count(64) {
                let (lo, hi) = pair_indices(step, pair);
                assert!(lo < hi);
                seen[lo as usize] += 1;
                seen[hi as usize] += 1;
            }
            assert!(seen.iter().all(|&n| n == 1), "{step:?}");
        }
    }

    #[test]
    fn step_count_is_log_squared() {
        // log2(1024) = 10 stages, 10 * 11 / 2 steps.
        assert_eq!(Steps::new(1024).count(), 55);
        assert_eq!(Steps::new(1).count(), 0);
        assert_eq!(Steps::new(2).count(), 1);
    }

    #[test]
    fn tile_steps_stay_in_their_tile() {
        for step in Steps::new(1 << 12).filter(|s| fits_in_tile(*s, 256)) {
            for pair in 0..pair_count(1 << 12) {
                let (lo, hi) = pair_indices(step, pair);
                assert_eq!(lo / 256, hi / 256, "{step:?} pair {pair}");
            }
        }
    }
}
