//! `Mode::Groups` on the cpu: workgroups in parallel on rayon; the invocations of one
//! workgroup are stackful coroutines (corosensei) on one worker thread, so
//! `Group::barrier()` is a suspend and the worker resumes them round-robin.
//!
//! Each worker thread keeps its coroutine stacks and its workgroup scratch between
//! workgroups and launches. The invocations of a workgroup never run at the same time, so
//! they never race on workgroup memory.

#[cfg(not(target_arch = "wasm32"))]
use std::cell::{Cell, RefCell};
#[cfg(not(target_arch = "wasm32"))]
use std::ptr;

#[cfg(not(target_arch = "wasm32"))]
use corosensei::stack::DefaultStack;
#[cfg(not(target_arch = "wasm32"))]
use corosensei::{Coroutine, CoroutineResult, Yielder};
#[cfg(not(target_arch = "wasm32"))]
use rayon::prelude::*;

use super::place::{coordinates, Place};
use super::shared::{LaneValue, SubgroupBits, SubgroupValue};

/// Stack of one invocation. Kernels keep little on the stack; a kernel that overflows it
/// hits the guard page (SIGSEGV), so raise this if a debug build needs more.
pub const STACK_BYTES: usize = 64 * 1024;

/// Alignment of the workgroup scratch (`Shared` arrays of 4-byte words, up to 16-byte
/// vector types).
pub const SCRATCH_ALIGN: usize = 16;

/// What a kernel's name is when the launcher did not give one (`run_groups`).
const UNNAMED: &str = "(unnamed)";

#[cfg(not(target_arch = "wasm32"))]
type Invocation = Coroutine<(), (), (), DefaultStack>;

#[cfg(not(target_arch = "wasm32"))]
thread_local! {
    /// The yielder of the invocation running on this thread; null outside one.
    static CURRENT: Cell<*const Yielder<(), ()>> = const { Cell::new(ptr::null()) };
    /// Finished invocations' stacks, for the next workgroup on this thread.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
    /// Workgroup scratch, kept at the largest size used on this thread.
    static SCRATCH: RefCell<Vec<u128>> = const { RefCell::new(Vec::new()) };
}

/// One invocation of one workgroup (the same methods as the GPU codegens' `rgpu::Group`).
/// `Group` is `Group<1>`; `Group<2>` and `Group<3>` are workgroups of a 2-D or 3-D grid,
/// with coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group<const D: usize = 1> {
    id: u32,
    count: u32,
    place: Place,
    thread: u32,
    size: u32,
}

coordinates!(Group, "workgroup", "grid");

impl<const D: usize> Group<D> {
    /// This workgroup's index, `0..count()`: row-major in 2-D and 3-D.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Workgroups in the launch.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// This invocation's index in its workgroup, `0..size()`.
    pub fn thread(&self) -> u32 {
        self.thread
    }

    /// Invocations per workgroup (the kernel's `threads`).
    pub fn size(&self) -> u32 {
        self.size
    }

    /// `id() * size() + thread()`.
    pub fn global_thread(&self) -> u32 {
        self.id.wrapping_mul(self.size).wrapping_add(self.thread)
    }

    /// Waits until every invocation of the workgroup has arrived here; what they wrote to
    /// workgroup (and global) memory before it is visible to all of them after it.
    ///
    /// # Panics
    /// Outside a workgroup launch (`Mode::Groups`) on the cpu backend.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn barrier(&self) {
        super::watch::tick();
        let yielder = CURRENT.with(Cell::get);
        assert!(
            !yielder.is_null(),
            "Group::barrier() was called outside a workgroup launch: only a Mode::Groups \
             kernel's invocations can wait for each other"
        );
        // SAFETY: `CURRENT` is set by the running invocation itself (when it starts and
        // after each suspend, below) and restored by the executor when it gets control
        // back, so a non-null value is the live yielder of the coroutine running this code.
        unsafe { (*yielder).suspend(()) };
        CURRENT.with(|c| c.set(yielder));
    }

    /// The cpu's subgroups have one invocation (a valid Vulkan subgroup size).
    pub fn subgroup_size(&self) -> u32 {
        1
    }

    /// This invocation's subgroup: every invocation is its own.
    pub fn subgroup_id(&self) -> u32 {
        self.thread
    }

    /// This invocation's lane in its subgroup: always 0.
    pub fn subgroup_lane(&self) -> u32 {
        0
    }

    /// Bit `l` set when lane `l`'s `predicate` is true (lanes below 32). Every invocation of
    /// the subgroup must reach a subgroup operation together (uniform control flow); on the
    /// cpu backend a subgroup is one invocation (bit 0 only).
    pub fn subgroup_ballot(&self, predicate: bool) -> u32 {
        u32::from(predicate)
    }

    /// How many lanes of the subgroup have `predicate` true (cpu: 1 or 0).
    pub fn subgroup_count(&self, predicate: bool) -> u32 {
        u32::from(predicate)
    }

    /// Whether `predicate` is true on every lane of the subgroup (cpu: this one's).
    pub fn subgroup_all(&self, predicate: bool) -> bool {
        predicate
    }

    /// Whether `predicate` is true on some lane of the subgroup (cpu: this one's).
    pub fn subgroup_any(&self, predicate: bool) -> bool {
        predicate
    }

    /// The sum of `value` over the subgroup, on every lane (integers wrap; the order of an
    /// `f32` sum is the codegen's). `T`: `u32`, `i32`, `f32`. cpu: the value itself.
    pub fn subgroup_add<T: SubgroupValue>(&self, value: T) -> T {
        value
    }

    /// The smallest `value` of the subgroup, on every lane. cpu: the value itself.
    pub fn subgroup_min<T: SubgroupValue>(&self, value: T) -> T {
        value
    }

    /// The largest `value` of the subgroup, on every lane. cpu: the value itself.
    pub fn subgroup_max<T: SubgroupValue>(&self, value: T) -> T {
        value
    }

    /// The bitwise AND of `value` over the subgroup (`u32`, `i32`). cpu: the value itself.
    pub fn subgroup_and<T: SubgroupBits>(&self, value: T) -> T {
        value
    }

    /// The bitwise OR of `value` over the subgroup (`u32`, `i32`). cpu: the value itself.
    pub fn subgroup_or<T: SubgroupBits>(&self, value: T) -> T {
        value
    }

    /// The bitwise XOR of `value` over the subgroup (`u32`, `i32`). cpu: the value itself.
    pub fn subgroup_xor<T: SubgroupBits>(&self, value: T) -> T {
        value
    }

    /// The sum of `value` over lanes `0..=subgroup_lane()`. cpu: the value itself.
    pub fn subgroup_inclusive_add<T: SubgroupValue>(&self, value: T) -> T {
        value
    }

    /// The sum of `value` over the lanes below this one (zero on lane 0). cpu: zero.
    pub fn subgroup_exclusive_add<T: SubgroupValue>(&self, value: T) -> T {
        let _ = value;
        T::ZERO
    }

    /// Lane `lane`'s `value`; `lane` must be the same on every invocation of the subgroup.
    /// cpu: lane 0 is this invocation.
    pub fn subgroup_broadcast<T: LaneValue>(&self, value: T, lane: u32) -> T {
        let _ = lane;
        value
    }

    /// Lane `lane`'s `value`, `lane` chosen per invocation (`0..subgroup_size()`). cpu:
    /// lane 0 is this invocation.
    pub fn subgroup_shuffle<T: LaneValue>(&self, value: T, lane: u32) -> T {
        let _ = lane;
        value
    }

    /// Lane `subgroup_lane() ^ mask`'s `value` (`mask < subgroup_size()`). cpu: `mask` is 0,
    /// this invocation.
    pub fn subgroup_shuffle_xor<T: LaneValue>(&self, value: T, mask: u32) -> T {
        let _ = mask;
        value
    }

    /// Lane `subgroup_lane() - delta`'s `value`; lanes below `delta` keep their own. cpu: this
    /// invocation's own.
    pub fn subgroup_shuffle_up<T: LaneValue>(&self, value: T, delta: u32) -> T {
        let _ = delta;
        value
    }

    /// Lane `subgroup_lane() + delta`'s `value`; lanes where that is past the subgroup keep
    /// their own. cpu: this invocation's own.
    pub fn subgroup_shuffle_down<T: LaneValue>(&self, value: T, delta: u32) -> T {
        let _ = delta;
        value
    }
}

/// Restores `CURRENT` when the executor gets control back (also when an invocation
/// panics), so a nested launch on this thread cannot leave a stale yielder behind.
#[cfg(not(target_arch = "wasm32"))]
struct RestoreCurrent(*const Yielder<(), ()>);

#[cfg(not(target_arch = "wasm32"))]
impl Drop for RestoreCurrent {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.0));
    }
}

/// Runs `f(group, shared)` for every invocation of `groups` workgroups of `threads`
/// invocations. `shared` points at the workgroup's `shared_bytes` of zeroed scratch
/// (16-byte aligned). Panics when an invocation panics, or when some invocations of a
/// workgroup return while others wait at a barrier.
pub fn run_groups(
    groups: u32,
    threads: u32,
    shared_bytes: usize,
    f: &(dyn Fn(Group, *mut u8) + Sync),
) {
    run_groups_named(UNNAMED, groups, threads, shared_bytes, f);
}

/// On wasm32 (a browser) there are no coroutines: group kernels run on the webgpu backend
/// only, and `run_groups` panics with that message.
#[cfg(target_arch = "wasm32")]
impl<const D: usize> Group<D> {
    pub fn barrier(&self) {
        unreachable!("no cpu workgroup runs on wasm32")
    }
}

/// `run_groups_grid`: none on wasm32.
#[cfg(target_arch = "wasm32")]
pub fn run_groups_grid<const D: usize>(
    kernel: &str,
    _groups: u32,
    _shape: [u32; 3],
    _threads: u32,
    _shared_bytes: usize,
    _f: &(dyn Fn(Group<D>, *mut u8) + Sync),
) {
    panic!(
        "kernel `{kernel}` is a group kernel, which the cpu backend cannot run in a browser \
         (wasm32 has no coroutines): open the webgpu backend"
    )
}

/// `run_groups`, with the kernel's name for the panic messages.
pub fn run_groups_named(
    kernel: &str,
    groups: u32,
    threads: u32,
    shared_bytes: usize,
    f: &(dyn Fn(Group, *mut u8) + Sync),
) {
    run_groups_grid(kernel, groups, [groups, 1, 1], threads, shared_bytes, f);
}

/// `run_groups_until`: none on wasm32 (`run_groups_grid` says so).
#[cfg(target_arch = "wasm32")]
pub(crate) fn run_groups_until<const D: usize>(
    kernel: &str,
    groups: u32,
    shape: [u32; 3],
    threads: u32,
    shared_bytes: usize,
    _deadline: Option<super::watch::Deadline>,
    f: &(dyn Fn(Group<D>, *mut u8) + Sync),
) {
    run_groups_grid(kernel, groups, shape, threads, shared_bytes, f)
}

/// `run_groups_named` for a grid of `shape` workgroups (`groups` = the product): each
/// workgroup with its coordinates.
#[cfg(not(target_arch = "wasm32"))]
pub fn run_groups_grid<const D: usize>(
    kernel: &str,
    groups: u32,
    shape: [u32; 3],
    threads: u32,
    shared_bytes: usize,
    f: &(dyn Fn(Group<D>, *mut u8) + Sync),
) {
    let _ = threads;
    run_groups_until(kernel, groups, shape, threads, shared_bytes, None, f);
}

/// `run_groups_grid` whose kernel stops at `deadline` (`watch.rs`): each workgroup sets it
/// on its thread first.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn run_groups_until<const D: usize>(
    kernel: &str,
    groups: u32,
    shape: [u32; 3],
    threads: u32,
    shared_bytes: usize,
    deadline: Option<super::watch::Deadline>,
    f: &(dyn Fn(Group<D>, *mut u8) + Sync),
) {
    (0..groups).into_par_iter().for_each(|id| {
        super::watch::enter(deadline);
        let group = Group {
            id,
            count: groups,
            place: Place::of(id, shape),
            thread: 0,
            size: threads,
        };
        run_group(kernel, group, shared_bytes, f)
    });
}

#[cfg(not(target_arch = "wasm32"))]
fn new_stack() -> DefaultStack {
    DefaultStack::new(STACK_BYTES).unwrap_or_else(|e| {
        panic!("cannot map a {STACK_BYTES}-byte stack for a cpu workgroup invocation: {e}")
    })
}

/// Runs one workgroup to completion on this thread.
#[cfg(not(target_arch = "wasm32"))]
fn run_group<const D: usize>(
    kernel: &str,
    first: Group<D>,
    shared_bytes: usize,
    f: &(dyn Fn(Group<D>, *mut u8) + Sync),
) {
    let (id, size) = (first.id, first.size);
    // Declared before the invocations, so it outlives them even while unwinding.
    let mut scratch = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    scratch.clear();
    scratch.resize(shared_bytes.div_ceil(SCRATCH_ALIGN), 0);
    let shared = scratch.as_mut_ptr().cast::<u8>();
    let mut stacks = STACKS.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let mut invocations: Vec<Invocation> = Vec::with_capacity(size as usize);
    for thread in 0..size {
        let group = Group { thread, ..first };
        let stack = stacks.pop().unwrap_or_else(new_stack);
        let body = move |yielder: &Yielder<(), ()>, ()| {
            CURRENT.with(|c| c.set(yielder));
            f(group, shared);
        };
        // SAFETY: `body` borrows `f` (which outlives this call) and points into `scratch`
        // (declared before `invocations`); every coroutine is run to completion or dropped
        // (which unwinds it) before this function returns or finishes unwinding.
        invocations.push(unsafe { Coroutine::with_stack_unchecked(stack, body) });
    }
    STACKS.with(|s| s.borrow_mut().append(&mut stacks));
    loop {
        let (mut waiting, mut returned) = (0u32, 0u32);
        for invocation in &mut invocations {
            let _restore = RestoreCurrent(CURRENT.with(Cell::get));
            match invocation.resume(()) {
                CoroutineResult::Yield(()) => waiting += 1,
                CoroutineResult::Return(()) => returned += 1,
            }
        }
        if waiting == 0 {
            break;
        }
        assert!(
            returned == 0,
            "kernel `{kernel}`: workgroup {id}: a barrier was not reached by every invocation"
        );
    }
    STACKS.with(|s| {
        s.borrow_mut()
            .extend(invocations.into_iter().map(Coroutine::into_stack))
    });
    SCRATCH.with(|s| *s.borrow_mut() = scratch);
}
