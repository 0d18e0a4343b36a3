//! `Mode::Items` on the cpu: every index of a launch once, in parallel on rayon.

use rayon::prelude::*;

/// Fewest indices one rayon task takes: enough to amortise a task, small enough to balance.
pub const MIN_ITEMS_PER_TASK: usize = 4096;

/// One item of an items launch: the index this invocation handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    index: u32,
    count: u32,
}

impl Item {
    /// This item's index, `0..count()`.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Items in the launch.
    pub fn count(&self) -> u32 {
        self.count
    }
}

/// Calls `f` once for every index in `0..count`, in parallel. `threads` (the kernel's
/// workgroup size on a GPU) does not change what runs on the cpu.
pub fn run_items(count: u32, threads: u32, f: &(dyn Fn(Item) + Sync)) {
    let _ = threads;
    (0..count)
        .into_par_iter()
        .with_min_len(MIN_ITEMS_PER_TASK)
        .for_each(|index| f(Item { index, count }));
}
