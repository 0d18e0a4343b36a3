//! The launch schedule of the sort and what one thread does in each kind of launch.
//!
//! The bitonic network (`network`) has log2(n) * (log2(n) + 1) / 2 steps. Run one launch per
//! step and every step reads and writes all keys in global memory. Instead:
//!
//! - `Pass::Tile` with `block == 0` (the first launch): each workgroup loads one tile of
//!   `TILE_KEYS` keys into workgroup memory (encoding them on the way in), runs every stage
//!   whose blocks fit in a tile, and writes the tile back.
//! - `Pass::Global(step)`: up to `FUSED_STEPS` consecutive steps of one stage whose
//!   distance does not fit in a tile, in one launch: each thread owns the 2^m keys those
//!   steps compare with each other, keeps them in registers, and runs all m steps on them.
//! - `Pass::Tile` with `block == B`: the rest of stage B (distances `TILE_KEYS / 2` down to
//!   1) in workgroup memory. The last launch of the sort decodes on its way out.
//!
//! The host turns `Passes` into launches; the entry points call `tile_pass` and
//! `global_pass`; the CPU backend runs the same passes. Every compare-exchange is the
//! network's, so every backend sorts exactly like `network::Steps` in order.

use crate::params::WORKGROUP_SIZE;
use crate::params::{Block, Distance, KeyKind, SortOrder, SortParams, FUSED_STEPS, TILE_KEYS};

use crate::key::{decode, encode};
use crate::network::{compare_exchange_of, fits_in_tile, padded_len, KeySlots, Step, Steps};

/// Compare pairs each thread of a workgroup takes in one tile step.
pub const PAIRS_PER_THREAD: u32 = TILE_KEYS / 2 / WORKGROUP_SIZE;

const _: () = assert!(PAIRS_PER_THREAD * 2 * WORKGROUP_SIZE == TILE_KEYS);

/// Keys each thread of a tile pass copies in and out.
const KEYS_PER_THREAD: u32 = TILE_KEYS / WORKGROUP_SIZE;
// `tile_step` unrolls this count (`rgpu::unroll!` takes a literal).
const _: () = assert!(PAIRS_PER_THREAD == 8);
const _: () = assert!(TILE_KEYS.is_power_of_two() && FUSED_STEPS >= 1 && FUSED_STEPS <= 4);

/// One launch of the sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// In workgroup memory, one workgroup per tile: `Block(0)` = encode and every stage
    /// that fits in a tile; `Block(B)` = the tile-sized tail of stage B.
    Tile(Block),
    /// `fused_steps(step)` global steps of one stage, from `step` on.
    Global(Step),
}

impl Pass {
    /// The launch's arguments: `SortParams` carries the pass (`block`, `distance`).
    pub fn params(self, len: u32, kind: KeyKind, order: SortOrder) -> SortParams {
        match self {
            Pass::Tile(block) => SortParams::new(len, block, Distance(0), kind, order),
            Pass::Global(step) => SortParams::new(len, step.block, step.distance, kind, order),
        }
    }

    /// Threads the pass needs (a tile pass: one workgroup per tile).
    pub fn threads(self, len: u32) -> u32 {
        match self {
            Pass::Tile(_) => tile_count(len) * WORKGROUP_SIZE,
            Pass::Global(step) => padded_len(len) >> fused_steps(step),
        }
    }
}

/// Tiles that hold at least one key.
#[inline]
pub fn tile_count(len: u32) -> u32 {
    len.div_ceil(TILE_KEYS)
}

/// How many global steps a `Pass::Global` starting at `step` runs: the stage's steps from
/// `step.distance` down to (but not including) the first one that fits in a tile, at most
/// `FUSED_STEPS`.
#[inline]
pub fn fused_steps(step: Step) -> u32 {
    // `max` then `-`: rust-gpu has no `saturating_sub`.
    let tile = (TILE_KEYS / 2).trailing_zeros();
    let global = step.distance.0.trailing_zeros().max(tile) - tile;
    if global < FUSED_STEPS {
        global
    } else {
        FUSED_STEPS
    }
}

/// The launches of one sort of `len` keys, in order (none for fewer than 2 keys).
#[derive(Clone, Debug)]
pub struct Passes {
    padded: u32,
    next: Option<Pass>,
}

impl Passes {
    pub fn new(len: u32) -> Self {
        Self {
            padded: padded_len(len),
            next: (len > 1).then_some(Pass::Tile(Block(0))),
        }
    }

    fn stage_start(&self, block: u32) -> Option<Pass> {
        (block <= self.padded).then_some(Pass::Global(Step {
            block: Block(block),
            distance: Distance(block / 2),
        }))
    }
}

impl Iterator for Passes {
    type Item = Pass;

    fn next(&mut self) -> Option<Pass> {
        let current = self.next?;
        self.next = match current {
            Pass::Tile(Block(0)) => self.stage_start(TILE_KEYS * 2),
            Pass::Tile(Block(b)) => self.stage_start(b * 2),
            Pass::Global(step) => {
                let d = step.distance.0 >> fused_steps(step);
                if d > TILE_KEYS / 2 {
                    Some(Pass::Global(Step {
                        block: step.block,
                        distance: Distance(d),
                    }))
                } else {
                    Some(Pass::Tile(step.block))
                }
            }
        };
        Some(current)
    }
}

/// The network steps a tile pass runs (`block` as in `Pass::Tile`), in order.
#[derive(Clone, Debug)]
pub struct TileSteps {
    all: Steps,
    merge: Option<Step>,
}

impl TileSteps {
    pub fn new(len: u32, block: u32) -> Self {
        let merge = (block != 0).then_some(Step {
            block: Block(block),
            distance: Distance(TILE_KEYS / 2),
        });
        // A stage's tail runs only its own steps; the first tile pass runs the network's
        // steps from the start for as long as they fit.
        let all = Steps::new(if block == 0 { len } else { 0 });
        Self { all, merge }
    }
}

impl Iterator for TileSteps {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        match self.merge {
            Some(step) => {
                self.merge = (step.distance.0 > 1).then_some(Step {
                    block: step.block,
                    distance: Distance(step.distance.0 / 2),
                });
                Some(step)
            }
            None => {
                let step = self.all.next()?;
                if fits_in_tile(step, TILE_KEYS) {
                    Some(step)
                } else {
                    self.all = Steps::new(0);
                    None
                }
            }
        }
    }
}

/// Whether a tile pass is the sort's last launch (it decodes on its way out).
#[inline]
pub fn is_last_tile_pass(len: u32, block: u32) -> bool {
    let covered = if block > TILE_KEYS { block } else { TILE_KEYS };
    covered >= padded_len(len)
}

/// A workgroup's barrier: every thread's workgroup-memory writes before it are seen by
/// every thread of the workgroup after it.
pub trait Workgroup {
    fn barrier(&self);
}

/// Workgroup memory seen at the positions of tile `base..base + TILE_KEYS`. It holds the
/// memory handle by value (no reference inside a struct: rust-gpu cannot keep a pointer to
/// workgroup memory in a local variable).
struct TileView<T: KeySlots> {
    memory: T,
    base: u32,
}

impl<T: KeySlots> KeySlots for TileView<T> {
    #[inline(always)]
    fn load(&self, index: u32) -> u32 {
        self.memory.load(index - self.base)
    }

    #[inline(always)]
    fn store(&mut self, index: u32, value: u32) {
        self.memory.store(index - self.base, value)
    }
}

/// Thread `local` of the workgroup that owns tile `tile`, in a `Pass::Tile`:
/// `keys` is global memory, `tile_memory` the workgroup's `TILE_KEYS` slots (indexed from 0).
/// Every thread of the workgroup must call it with the same `tile` (it has barriers), and
/// `local < WORKGROUP_SIZE`.
#[inline(always)]
pub fn tile_pass<G, T, W>(
    mut keys: G,
    tile_memory: T,
    workgroup: W,
    params: &SortParams,
    tile: u32,
    local: u32,
) where
    G: KeySlots,
    T: KeySlots,
    W: Workgroup,
{
    let (Some(kind), Some(order)) = (params.key_kind(), params.order()) else {
        return;
    };
    let len = params.len;
    let base = tile * TILE_KEYS;
    let first = params.block == 0;
    // The workgroup memory goes into the stepper before its first use and stays there
    // (rust-gpu 0.11 drops the stores made through a handle that is later moved into a
    // struct).
    let mut stepper = TileStepper {
        view: TileView {
            memory: tile_memory,
            base,
        },
        workgroup,
        len,
        first_pair: tile * (TILE_KEYS / 2) + local,
    };
    // `KEYS_PER_THREAD` iterations, a constant (`local < WORKGROUP_SIZE`): LLVM unrolls the
    // copy loops, so a thread's global loads are in flight together on CUDA. rust-gpu keeps
    // them loops; unrolling them in the source (`rgpu::unroll!`) made Vulkan 2% faster and
    // CUDA 5% slower on an H100 (BENCHMARKS.md issue 19, run 13), so they stay loops.
    let mut k = 0;
    while k < KEYS_PER_THREAD {
        let i = local + k * WORKGROUP_SIZE;
        k += 1;
        if base + i < len {
            let bits = keys.load(base + i);
            stepper.view.memory.store(
                i,
                if first {
                    encode(bits, kind, order)
                } else {
                    bits
                },
            );
        }
    }
    stepper.workgroup.barrier();
    for_each_tile_step(len, params.block, &mut stepper);
    let last = is_last_tile_pass(len, params.block);
    let mut k = 0;
    while k < KEYS_PER_THREAD {
        let i = local + k * WORKGROUP_SIZE;
        k += 1;
        if base + i < len {
            let key = stepper.view.memory.load(i);
            keys.store(base + i, if last { decode(key, kind, order) } else { key });
        }
    }
}

/// Runs one tile step, knowing at compile time whether it is a stage's flip step.
pub trait TileStep {
    fn step<const FLIP: bool>(&mut self, step: Step);
}

/// The steps of `TileSteps::new(len, block)`, in order, as plain nested loops with each
/// stage's flip step peeled off: no iterator state and no per-step `is_flip` test on the
/// GPU (the steps a tile pass runs are every step of the stages 2..=min(padded,
/// TILE_KEYS) for `block == 0`, else the non-flip tail of stage `block` from TILE_KEYS/2).
#[inline(always)]
pub fn for_each_tile_step<S: TileStep + ?Sized>(len: u32, block: u32, stepper: &mut S) {
    let step = |block, distance| Step {
        block: Block(block),
        distance: Distance(distance),
    };
    if block == 0 {
        let top = padded_len(len).min(TILE_KEYS);
        let mut b = 2;
        while b <= top {
            stepper.step::<true>(step(b, b / 2));
            let mut d = b / 4;
            while d >= 1 {
                stepper.step::<false>(step(b, d));
                d /= 2;
            }
            b *= 2;
        }
    } else {
        let mut d = TILE_KEYS / 2;
        while d >= 1 {
            stepper.step::<false>(step(block, d));
            d /= 2;
        }
    }
}

/// One GPU thread's share of each tile step, and the workgroup barrier after it (by value,
/// like `TileView`).
struct TileStepper<T: KeySlots, W: Workgroup> {
    view: TileView<T>,
    workgroup: W,
    len: u32,
    first_pair: u32,
}

impl<T: KeySlots, W: Workgroup> TileStep for TileStepper<T, W> {
    #[inline(always)]
    fn step<const FLIP: bool>(&mut self, step: Step) {
        tile_step::<TileView<T>, FLIP>(&mut self.view, self.len, step, self.first_pair);
        self.workgroup.barrier();
    }
}

/// One thread's `PAIRS_PER_THREAD` compare-exchanges of one tile step (`step.is_flip() ==
/// FLIP`), unrolled in the source: rust-gpu and spirv-opt unroll no loop and NVIDIA's
/// Vulkan compiler left this one a loop (bitonic_tile: 19 registers against the GLSL twin's
/// 63); unrolled, the bitonic sort is 15% faster on Vulkan on an H100, and CUDA's speed is
/// unchanged (BENCHMARKS.md issue 19, run 13).
#[inline(always)]
fn tile_step<T: KeySlots + ?Sized, const FLIP: bool>(
    view: &mut T,
    len: u32,
    step: Step,
    first_pair: u32,
) {
    rgpu::unroll!(K in 0..8 => {
        compare_exchange_of::<T, FLIP>(view, len, step, first_pair + K as u32 * WORKGROUP_SIZE);
    });
}

/// Thread `thread` of a `Pass::Global` (`params.block`, `params.distance`); threads at or
/// past `Pass::threads` do nothing.
#[inline(always)]
pub fn global_pass<S: KeySlots + ?Sized>(keys: &mut S, params: &SortParams, thread: u32) {
    let step = Step {
        block: Block(params.block),
        distance: Distance(params.distance),
    };
    if step.distance.0 == 0 || thread >= padded_len(params.len) >> fused_steps(step) {
        return;
    }
    // One instance per step count and flip, so every array index and every compare
    // direction is a constant: the keys stay in registers and each compare-exchange is a
    // min and a max. (With `flip` a runtime value, rustc's nvptx code selected each pair's
    // order with `selp` and ptxas needed 80 registers where nvcc's, unswitched, needs 40.)
    let (len, flip) = (params.len, step.is_flip());
    match (fused_steps(step), flip) {
        (1, false) => fused::<S, 1, 2, false>(keys, len, step, thread),
        (1, true) => fused::<S, 1, 2, true>(keys, len, step, thread),
        (2, false) => fused::<S, 2, 4, false>(keys, len, step, thread),
        (2, true) => fused::<S, 2, 4, true>(keys, len, step, thread),
        (3, false) => fused::<S, 3, 8, false>(keys, len, step, thread),
        (3, true) => fused::<S, 3, 8, true>(keys, len, step, thread),
        (_, false) => fused::<S, 4, 16, false>(keys, len, step, thread),
        (_, true) => fused::<S, 4, 16, true>(keys, len, step, thread),
    }
}

/// The positions thread `thread` owns in a fused pass of `M` steps from `step` (`K = 2^M`):
/// `base + j * low` for the M distances `low..=step.distance`. When `step` is a flip, the
/// upper half are the mirrors of the lower half (`p ^ (block - 1)`), which keeps the set
/// closed under the flip and the M - 1 steps after it.
#[inline(always)]
pub fn fused_position<const M: u32, const K: usize>(step: Step, thread: u32, j: usize) -> u32 {
    if step.is_flip() {
        position::<M, K, true>(step, thread, j)
    } else {
        position::<M, K, false>(step, thread, j)
    }
}

/// `fused_position` with the flip known at compile time.
#[inline(always)]
fn position<const M: u32, const K: usize, const FLIP: bool>(
    step: Step,
    thread: u32,
    j: usize,
) -> u32 {
    let low = step.distance.0 >> (M - 1);
    let base = ((thread & !(low - 1)) << M) | (thread & (low - 1));
    if FLIP && j >= K / 2 {
        (base + (j - K / 2) as u32 * low) ^ (step.block.0 - 1)
    } else {
        base + j as u32 * low
    }
}

// A fused pass holds at most `2^FUSED_STEPS` slots; its loops unroll `0..16` and test
// `J < K` (a constant in each copy).
const _: () = assert!(FUSED_STEPS <= 4, "fused unrolls 16 slots");

// `J >= K / 2` in the copy with `J == 0` is always false: meant (each copy's test is a
// constant).
#[allow(clippy::absurd_extreme_comparisons)]
#[inline(always)]
fn fused<S: KeySlots + ?Sized, const M: u32, const K: usize, const FLIP: bool>(
    keys: &mut S,
    len: u32,
    step: Step,
    thread: u32,
) {
    let mut pos = [0u32; K];
    // Positions at or past `len` hold the network's virtual padding: larger than any key,
    // never moved, never stored (see `network`). Every loop over `j` is unrolled
    // (`rgpu::unroll!`), so each index is a constant and the arrays stay in registers on
    // every codegen (rust-gpu and spirv-opt unroll no loop by themselves).
    let mut key = [u32::MAX; K];
    rgpu::unroll!(J in 0..16 => {
        if J < K {
            pos[J] = position::<M, K, FLIP>(step, thread, J);
            if pos[J] < len {
                key[J] = keys.load(pos[J]);
            }
        }
    });
    // Distances K/2, K/4, .., 1.
    rgpu::unroll!(BIT in [8, 4, 2, 1] => {
        if BIT < K {
            rgpu::unroll!(J in 0..16 => {
                if J < K && J & BIT == 0 {
                    // In a flip pass's mirrored upper half, `J | BIT` is the lower position.
                    let (a, b) = if FLIP && J >= K / 2 {
                        (J | BIT, J)
                    } else {
                        (J, J | BIT)
                    };
                    let (x, y) = (key[a], key[b]);
                    key[a] = x.min(y);
                    key[b] = x.max(y);
                }
            });
        }
    });
    rgpu::unroll!(J in 0..16 => {
        if J < K && pos[J] < len {
            keys.store(pos[J], key[J]);
        }
    });
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::network::compare_exchange;
    use crate::test_slots::VecSlots;
    use std::vec::Vec;

    /// The network steps a pass runs, for checking the schedule against `Steps`.
    fn steps_of(len: u32, pass: Pass) -> Vec<Step> {
        match pass {
            Pass::Tile(Block(b)) => TileSteps::new(len, b).collect(),
            Pass::Global(step) => {
                let m = fused_steps(step);
                (0..m)
                    .map(|i| Step {
                        block: step.block,
                        distance: Distance(step.distance.0 >> i),
                    })
                    .collect()
            }
        }
    }

    #[test]
    fn passes_run_every_network_step_once_in_order() {
        for len in [2, 3, 1000, 4096, 4097, 1 << 16, (1 << 20) + 7, 1 << 24] {
            let from_passes: Vec<Step> = Passes::new(len).flat_map(|p| steps_of(len, p)).collect();
            let network: Vec<Step> = Steps::new(len).collect();
            assert_eq!(from_passes, network, "len {len}");
        }
        assert_eq!(Passes::new(0).count(), 0);
        assert_eq!(Passes::new(1).count(), 0);
    }

    #[test]
    fn the_last_pass_is_a_tile_pass_that_decodes() {
        for len in [2, 4096, 4097, 1 << 20] {
            let passes: Vec<Pass> = Passes::new(len).collect();
            let Some(Pass::Tile(Block(b))) = passes.last().copied() else {
                panic!("len {len}: {passes:?}");
            };
            assert!(is_last_tile_pass(len, b));
            let decoding = passes
                .iter()
                .filter(|p| matches!(p, Pass::Tile(Block(b)) if is_last_tile_pass(len, *b)));
            assert_eq!(decoding.count(), 1, "len {len}");
        }
    }

    struct Recorder(Vec<Step>);

    impl TileStep for Recorder {
        fn step<const FLIP: bool>(&mut self, step: Step) {
            assert_eq!(FLIP, step.is_flip(), "{step:?}");
            self.0.push(step);
        }
    }

    #[test]
    fn the_gpu_tile_loops_run_exactly_tile_steps() {
        for len in [
            2,
            3,
            1000,
            4095,
            4096,
            4097,
            1 << 16,
            (1 << 20) + 7,
            1 << 24,
        ] {
            for pass in Passes::new(len) {
                let Pass::Tile(Block(b)) = pass else { continue };
                let mut recorder = Recorder(Vec::new());
                for_each_tile_step(len, b, &mut recorder);
                let expected: Vec<Step> = TileSteps::new(len, b).collect();
                assert_eq!(recorder.0, expected, "len {len}, block {b}");
            }
        }
    }

    #[test]
    fn two_to_the_24_needs_37_launches_not_300() {
        assert_eq!(Steps::new(1 << 24).count(), 300);
        assert_eq!(Passes::new(1 << 24).count(), 37);
    }

    #[test]
    fn fused_threads_cover_each_position_once() {
        for pass in Passes::new(1 << 16).filter(|p| matches!(p, Pass::Global(_))) {
            let Pass::Global(step) = pass else { continue };
            let mut seen = std::vec![0u8; 1 << 16];
            for t in 0..pass.threads(1 << 16) {
                for j in 0..(1usize << fused_steps(step)) {
                    let p = match fused_steps(step) {
                        1 => fused_position::<1, 2>(step, t, j),
                        2 => fused_position::<2, 4>(step, t, j),
                        3 => fused_position::<3, 8>(step, t, j),
                        _ => fused_position::<4, 16>(step, t, j),
                    };
                    seen[p as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{step:?}");
        }
    }

    /// Runs the schedule sequentially: tile passes as one workgroup whose threads run in
    /// turn between barriers (each thread's step work, then the next thread's).
    fn sort_with_passes(keys: Vec<u32>) -> Vec<u32> {
        let len = keys.len() as u32;
        let mut global = VecSlots(keys);
        for pass in Passes::new(len) {
            let params = pass.params(len, KeyKind::U32, SortOrder::Ascending);
            match pass {
                Pass::Tile(Block(b)) => {
                    for tile in 0..tile_count(len) {
                        let mut memory = VecSlots(std::vec![0; TILE_KEYS as usize]);
                        let base = tile * TILE_KEYS;
                        for i in 0..TILE_KEYS.min(len - base) {
                            memory.0[i as usize] = global.0[(base + i) as usize];
                        }
                        let mut view = TileView {
                            memory: &mut memory,
                            base,
                        };
                        for step in TileSteps::new(len, b) {
                            for local in 0..WORKGROUP_SIZE {
                                for k in 0..PAIRS_PER_THREAD {
                                    let pair = tile * (TILE_KEYS / 2) + local + k * WORKGROUP_SIZE;
                                    compare_exchange(&mut view, len, step, pair);
                                }
                            }
                        }
                        for i in 0..TILE_KEYS.min(len - base) {
                            global.0[(base + i) as usize] = memory.0[i as usize];
                        }
                    }
                }
                Pass::Global(_) => {
                    for t in 0..pass.threads(len) {
                        global_pass(&mut global, &params, t);
                    }
                }
            }
        }
        global.0
    }

    #[test]
    fn the_schedule_sorts() {
        let mut x = 12345u32;
        for len in [0usize, 1, 2, 3, 1000, 4095, 4097, 9000, 40_000, 1 << 16] {
            let keys: Vec<u32> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    if x.is_multiple_of(7) {
                        u32::MAX
                    } else {
                        x % 100_000
                    }
                })
                .collect();
            let mut expected = keys.clone();
            expected.sort_unstable();
            assert_eq!(sort_with_passes(keys), expected, "len {len}");
        }
    }
}
