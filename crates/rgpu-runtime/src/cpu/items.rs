//! `Mode::Items` on the cpu: every index of a launch once, in parallel on rayon.

use rayon::prelude::*;

use super::place::{coordinates, Place};

/// Fewest indices one rayon task takes: enough to amortise a task, small enough to balance.
pub const MIN_ITEMS_PER_TASK: usize = 4096;

/// One item of an items launch: the index this invocation handles (the same methods as the
/// GPU codegens' `rgpu::Item`). `Item` is `Item<1>`; `Item<2>` and `Item<3>` are items of a
/// 2-D or 3-D launch, with coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item<const D: usize = 1> {
    index: u32,
    count: u32,
    place: Place,
}

impl<const D: usize> Item<D> {
    /// This item's index, `0..count()`: row-major in 2-D and 3-D.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Items in the launch.
    pub fn count(&self) -> u32 {
        self.count
    }
}

coordinates!(Item, "item", "launch");

/// Calls `f` once for every index in `0..count`, in parallel. `threads` (the kernel's
/// workgroup size on a GPU) does not change what runs on the cpu.
pub fn run_items(count: u32, threads: u32, f: &(dyn Fn(Item) + Sync)) {
    run_items_grid(count, [count, 1, 1], threads, f);
}

/// `run_items` for a launch of `shape` (`count` = the product): each item with its
/// coordinates.
pub fn run_items_grid<const D: usize>(
    count: u32,
    shape: [u32; 3],
    threads: u32,
    f: &(dyn Fn(Item<D>) + Sync),
) {
    let _ = threads;
    run_items_until(count, shape, None, f);
}

/// `run_items_grid` whose kernel stops at `deadline` (`watch.rs`): each task sets it on
/// its thread first.
pub(crate) fn run_items_until<const D: usize>(
    count: u32,
    shape: [u32; 3],
    deadline: Option<super::watch::Deadline>,
    f: &(dyn Fn(Item<D>) + Sync),
) {
    (0..count)
        .into_par_iter()
        .with_min_len(MIN_ITEMS_PER_TASK)
        .for_each_init(
            || super::watch::enter(deadline),
            |(), index| {
                f(Item {
                    index,
                    count,
                    place: Place::of(index, shape),
                })
            },
        );
}
