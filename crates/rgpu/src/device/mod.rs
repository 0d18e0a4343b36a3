//! The device API on the GPU codegens: the kernel's context ([`Item`], [`Group`]) and its
//! memory ([`Shared`], [`Global`]). Each codegen has a module (`nvptx`, `nvvm`, `spirv`)
//! with the few primitives that differ (thread ids, the barrier, workgroup and global
//! memory access, atomics, subgroup operations); everything else, the grid-stride loops
//! included, is written once here. The cpu backend's versions of these types are in
//! rgpu-runtime, with the same methods.

#[cfg(rgpu_codegen = "nvptx")]
mod nvptx;
#[cfg(rgpu_codegen = "nvptx")]
use nvptx as arch;

#[cfg(rgpu_codegen = "nvvm")]
mod nvvm;
#[cfg(rgpu_codegen = "nvvm")]
use nvvm as arch;

#[cfg(rgpu_codegen = "spirv")]
mod spirv;
#[cfg(rgpu_codegen = "spirv")]
use spirv as arch;

pub use arch::{Global, Shared};

#[cfg(not(rgpu_codegen = "spirv"))]
pub use arch::ids;

mod word;
pub use word::{LaneValue, Word};

#[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
mod warp;

mod subgroup;
pub use subgroup::{SubgroupBits, SubgroupValue};

mod atomic;
pub use atomic::{fence, Atomic, AtomicScope, AtomicWord, DeviceScope, WorkgroupScope};

/// Where this invocation is, as the hardware says (before the grid-stride loops).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Ids {
    pub local: u32,
    pub group: u32,
    pub groups: u32,
    pub size: u32,
    pub lane: u32,
    pub subgroup_size: u32,
    pub subgroup: u32,
}

impl Ids {
    /// From rust-gpu's entry-point builtins (the `.x` of each vector).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn spirv(
        _global: u32,
        local: u32,
        group: u32,
        groups: u32,
        size: u32,
        lane: u32,
        subgroup_size: u32,
        subgroup: u32,
    ) -> Self {
        Self {
            local,
            group,
            groups,
            size,
            lane,
            subgroup_size,
            subgroup,
        }
    }
}

/// `x()` and `width()`, `y()` and `height()` in 2-D and 3-D, `z()` and `depth()` in 3-D, for
/// `Item` and `Group`
/// (which hold a `place`).
macro_rules! coordinates {
    ($ty:ident, $what:literal, $shape:literal) => {
        impl<const D: usize> $ty<D> {
            #[doc = concat!("The ", $what, "'s x coordinate, `0..width()` (in 1-D, its index).")]
            #[inline(always)]
            pub fn x(&self) -> u32 {
                self.place.x
            }

            #[doc = concat!("The ", $shape, "'s width (in 1-D, `count()`).")]
            #[inline(always)]
            pub fn width(&self) -> u32 {
                self.place.width
            }
        }

        impl $ty<2> {
            #[doc = concat!("The ", $what, "'s y coordinate, `0..height()`.")]
            #[inline(always)]
            pub fn y(&self) -> u32 {
                self.place.y
            }

            #[doc = concat!("The ", $shape, "'s height.")]
            #[inline(always)]
            pub fn height(&self) -> u32 {
                self.place.height
            }
        }

        impl $ty<3> {
            #[doc = concat!("The ", $what, "'s y coordinate, `0..height()`.")]
            #[inline(always)]
            pub fn y(&self) -> u32 {
                self.place.y
            }

            #[doc = concat!("The ", $what, "'s z coordinate, `0..depth()`.")]
            #[inline(always)]
            pub fn z(&self) -> u32 {
                self.place.z
            }

            #[doc = concat!("The ", $shape, "'s height.")]
            #[inline(always)]
            pub fn height(&self) -> u32 {
                self.place.height
            }

            #[doc = concat!("The ", $shape, "'s depth.")]
            #[inline(always)]
            pub fn depth(&self) -> u32 {
                self.place.depth
            }
        }
    };
}

/// Where an item or a workgroup is in a launch of `D` dimensions (1, 2 or 3): its
/// coordinates and the launch's shape, row-major (x fastest).
#[derive(Clone, Copy, Debug)]
struct Place {
    x: u32,
    y: u32,
    z: u32,
    width: u32,
    height: u32,
    depth: u32,
}

impl Place {
    /// A 1-D launch of `count`: `index` is the x coordinate.
    #[inline(always)]
    fn line(index: u32, count: u32) -> Self {
        Self {
            x: index,
            y: 0,
            z: 0,
            width: count,
            height: 1,
            depth: 1,
        }
    }
}

/// The context of an item kernel: which item this invocation handles.
///
/// `Item` (= `Item<1>`) is a launch of `n` items; `Item<2>` of `(width, height)` and
/// `Item<3>` of `(width, height, depth)` items, launched with that tuple. [`Item::index`] is
/// the row-major index (`(z * height + y) * width + x`), the element `#[item]` buffers
/// hold; [`Item::x`], `y()`, `z()` are the coordinates.
#[derive(Clone, Copy, Debug)]
pub struct Item<const D: usize = 1> {
    index: u32,
    count: u32,
    place: Place,
}

impl<const D: usize> Item<D> {
    /// This invocation's item, `0..count()`: row-major in 2-D and 3-D.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The launch's item count (`n`, or the product of the shape).
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.count
    }
}

coordinates!(Item, "item", "launch");

/// The context of a group kernel: one invocation of one workgroup.
///
/// `Group` (= `Group<1>`) is a launch of `groups` workgroups; `Group<2>` of
/// `(width, height)` and `Group<3>` of `(width, height, depth)` workgroups, launched with
/// that tuple. [`Group::id`] is the row-major workgroup index; [`Group::x`], `y()`, `z()`
/// its coordinates in the grid. Threads within a workgroup stay 1-D ([`Group::thread`]).
#[derive(Clone, Copy, Debug)]
pub struct Group<const D: usize = 1> {
    id: u32,
    count: u32,
    place: Place,
    ids: Ids,
}

impl<const D: usize> Group<D> {
    /// The workgroup's index, `0..count()`: row-major in 2-D and 3-D.
    #[inline(always)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The launch's workgroup count (`groups`, or the product of the shape).
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.count
    }

    /// This invocation's index in its workgroup, `0..size()`.
    #[inline(always)]
    pub fn thread(&self) -> u32 {
        self.ids.local
    }

    /// Invocations per workgroup (the kernel's `threads`).
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.ids.size
    }

    /// `id() * size() + thread()`.
    #[inline(always)]
    pub fn global_thread(&self) -> u32 {
        self.id * self.ids.size + self.ids.local
    }

    /// Waits until every invocation of the workgroup arrives; orders their workgroup and
    /// global memory accesses. Every invocation must reach the same barriers.
    #[inline(always)]
    pub fn barrier(&self) {
        arch::barrier();
    }

    /// Invocations per subgroup (CUDA: the 32-thread warp; Vulkan: the device's).
    #[inline(always)]
    pub fn subgroup_size(&self) -> u32 {
        self.ids.subgroup_size
    }

    /// This invocation's subgroup within the workgroup.
    #[inline(always)]
    pub fn subgroup_id(&self) -> u32 {
        self.ids.subgroup
    }

    /// This invocation's lane in its subgroup, `0..subgroup_size()`.
    #[inline(always)]
    pub fn subgroup_lane(&self) -> u32 {
        self.ids.lane
    }

    /// Bit `l` set when lane `l`'s `predicate` is true (lanes below 32).
    #[inline(always)]
    pub fn subgroup_ballot(&self, predicate: bool) -> u32 {
        arch::ballot(predicate)
    }

    /// How many lanes of the subgroup have `predicate` true (every lane, also past 32).
    #[inline(always)]
    pub fn subgroup_count(&self, predicate: bool) -> u32 {
        arch::ballot_count(predicate)
    }

    /// Whether `predicate` is true on every lane of the subgroup.
    #[inline(always)]
    pub fn subgroup_all(&self, predicate: bool) -> bool {
        arch::all(predicate)
    }

    /// Whether `predicate` is true on some lane of the subgroup.
    #[inline(always)]
    pub fn subgroup_any(&self, predicate: bool) -> bool {
        arch::any(predicate)
    }

    /// The sum of `value` over the subgroup, on every lane (integers wrap). The order of a
    /// float sum is the codegen's (CUDA: a butterfly; Vulkan: the driver's), so an `f32` sum
    /// may differ in its last bits between backends.
    #[inline(always)]
    pub fn subgroup_add<T: SubgroupValue>(&self, value: T) -> T {
        value.subgroup_add()
    }

    /// The smallest `value` of the subgroup, on every lane (`f32`: as `f32::min`).
    #[inline(always)]
    pub fn subgroup_min<T: SubgroupValue>(&self, value: T) -> T {
        value.subgroup_min()
    }

    /// The largest `value` of the subgroup, on every lane (`f32`: as `f32::max`).
    #[inline(always)]
    pub fn subgroup_max<T: SubgroupValue>(&self, value: T) -> T {
        value.subgroup_max()
    }

    /// The bitwise AND of `value` over the subgroup, on every lane.
    #[inline(always)]
    pub fn subgroup_and<T: SubgroupBits>(&self, value: T) -> T {
        value.subgroup_and()
    }

    /// The bitwise OR of `value` over the subgroup, on every lane.
    #[inline(always)]
    pub fn subgroup_or<T: SubgroupBits>(&self, value: T) -> T {
        value.subgroup_or()
    }

    /// The bitwise XOR of `value` over the subgroup, on every lane.
    #[inline(always)]
    pub fn subgroup_xor<T: SubgroupBits>(&self, value: T) -> T {
        value.subgroup_xor()
    }

    /// The sum of `value` over lanes `0..=subgroup_lane()` (integers wrap).
    #[inline(always)]
    pub fn subgroup_inclusive_add<T: SubgroupValue>(&self, value: T) -> T {
        value.subgroup_inclusive_add(self.ids.lane)
    }

    /// The sum of `value` over the lanes below this one (zero on lane 0; integers wrap).
    #[inline(always)]
    pub fn subgroup_exclusive_add<T: SubgroupValue>(&self, value: T) -> T {
        value.subgroup_exclusive_add(self.ids.lane)
    }

    /// Lane `lane`'s `value`; `lane` must be the same on every invocation of the subgroup
    /// (dynamically uniform: Vulkan requires it). See [`Group::subgroup_shuffle`].
    #[inline(always)]
    pub fn subgroup_broadcast<T: LaneValue>(&self, value: T, lane: u32) -> T {
        value.map_words(|w| arch::broadcast(w, lane))
    }

    /// Lane `lane`'s `value`, where `lane` may differ between invocations (each reads the
    /// lane it names; a lane of the subgroup, `0..subgroup_size()`). CUDA: `shfl.sync.idx`;
    /// Vulkan: `OpGroupNonUniformShuffle`; cpu: the invocation's own value.
    #[inline(always)]
    pub fn subgroup_shuffle<T: LaneValue>(&self, value: T, lane: u32) -> T {
        value.map_words(|w| arch::shuffle(w, lane))
    }

    /// Lane `subgroup_lane() ^ mask`'s `value` (a butterfly step; `mask <
    /// subgroup_size()`). CUDA: `shfl.sync.bfly`; Vulkan: `OpGroupNonUniformShuffleXor`.
    #[inline(always)]
    pub fn subgroup_shuffle_xor<T: LaneValue>(&self, value: T, mask: u32) -> T {
        value.map_words(|w| arch::shuffle_xor(w, mask))
    }

    /// Lane `subgroup_lane() - delta`'s `value`; the lanes below `delta` get their own.
    /// CUDA: `shfl.sync.up`; Vulkan: `OpGroupNonUniformShuffleUp`.
    #[inline(always)]
    pub fn subgroup_shuffle_up<T: LaneValue>(&self, value: T, delta: u32) -> T {
        value.map_words(|w| arch::shuffle_up(w, delta, self.ids.lane))
    }

    /// Lane `subgroup_lane() + delta`'s `value`; the lanes where that is past the subgroup
    /// get their own. CUDA: `shfl.sync.down`; Vulkan: `OpGroupNonUniformShuffleDown`.
    #[inline(always)]
    pub fn subgroup_shuffle_down<T: LaneValue>(&self, value: T, delta: u32) -> T {
        let (lane, size) = (self.ids.lane, self.ids.subgroup_size);
        value.map_words(|w| arch::shuffle_down(w, delta, lane, size))
    }
}

coordinates!(Group, "workgroup", "grid");

/// The row-major id of workgroup `(x, y)` in a CUDA grid `width` workgroups wide
/// (rgpu-runtime's `covering_grid` adds rows past 2^31 - 1 workgroups), `u32::MAX` past the
/// ids a launch indexes (the last row's workgroups beyond the launch's count).
#[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
#[inline(always)]
fn grid_id(x: u32, y: u32, width: u32) -> u32 {
    let id = u64::from(y) * u64::from(width) + u64::from(x);
    if id > u64::from(u32::MAX) {
        u32::MAX
    } else {
        id as u32
    }
}

/// This invocation's index among `count` when the launch has a hardware workgroup for each
/// `size` of them, `None` past the end. CUDA launches cover every workgroup (rgpu-runtime's
/// `covering_grid`: one grid row up to 2^31 - 1 workgroups, more rows past it; `ids` gives
/// the row-major workgroup id), so the CUDA kernels have no grid-stride loop: the loop's
/// registers and its barrier between turns measured as the cost of a workgroup-memory
/// kernel on the H200 (BENCHMARKS.md, "Launches that cover the grid").
#[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
#[inline(always)]
fn covered(ids: Ids, count: u32) -> Option<u32> {
    let index = u64::from(ids.group) * u64::from(ids.size) + u64::from(ids.local);
    if index < u64::from(count) {
        Some(index as u32)
    } else {
        None
    }
}

/// Every index `0..count` once, across the grid (the 1-D item kernels' loop).
#[doc(hidden)]
#[inline(always)]
pub fn run_items<F: FnMut(Item)>(ids: Ids, count: u32, mut f: F) {
    #[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
    {
        // The CUDA launch covers every item: no grid-stride loop (`covered`).
        if let Some(index) = covered(ids, count) {
            f(Item {
                index,
                count,
                place: Place::line(index, count),
            });
        }
    }
    #[cfg(rgpu_codegen = "spirv")]
    run_items_strided(ids, count, &mut f);
}

/// `run_items` where the grid may have fewer workgroups than the items need (SPIR-V: the
/// launch stops at the device's `maxComputeWorkGroupCount`): each invocation strides.
#[cfg(rgpu_codegen = "spirv")]
#[inline(always)]
fn run_items_strided<F: FnMut(Item)>(ids: Ids, count: u32, mut f: F) {
    let stride = ids.groups.wrapping_mul(ids.size);
    // The hardware grid has at most ceil(count / size) workgroups, so `base` stays below
    // `count` (or is 0); `base + local` may not fit a u32 when `count` is near u32::MAX.
    let base = ids.group * ids.size;
    if base >= count || ids.local >= count - base {
        return;
    }
    let mut index = base + ids.local;
    loop {
        f(Item {
            index,
            count,
            place: Place::line(index, count),
        });
        // Overflow written out (rust-gpu has no `checked_add`).
        let next = index.wrapping_add(stride);
        if next < index || next >= count {
            break;
        }
        index = next;
    }
}

/// The coordinates of row-major index `index` in a `width x height x depth` launch. Called
/// with values uniform across a workgroup (a workgroup's first item, a workgroup's id): the
/// divisions happen once per workgroup, not per item.
#[inline(always)]
fn place<const D: usize>(index: u32, width: u32, height: u32, depth: u32) -> Place {
    let row = index / width;
    let (y, z) = if D == 3 {
        let z = row / height;
        (row - z * height, z)
    } else {
        (row, 0)
    };
    Place {
        x: index - row * width,
        y,
        z,
        width,
        height,
        depth,
    }
}

/// Every index `0..count` of a 2-D or 3-D launch once (`count` = the shape's product, at
/// least 1 in each dimension when non-zero). The grid walks virtual workgroups of `size`
/// consecutive items; each workgroup's first item is placed once (uniform divisions), and an
/// invocation steps from it along x, carrying into y and z only where the workgroup spans
/// the end of a row.
#[doc(hidden)]
#[inline(always)]
pub fn run_items_grid<const D: usize, F: FnMut(Item<D>)>(
    ids: Ids,
    count: u32,
    width: u32,
    height: u32,
    depth: u32,
    mut f: F,
) {
    let size = ids.size;
    let groups = count / size + (count % size != 0) as u32;
    each_group(ids, groups, false, |group| {
        let base = group * size;
        if ids.local < count - base {
            let mut at = place::<D>(base, width, height, depth);
            let rest = width - at.x;
            if ids.local < rest {
                at.x += ids.local;
            } else {
                let past = ids.local - rest;
                let rows = past / width;
                at.x = past - rows * width;
                at.y += rows + 1;
                if D == 3 && at.y >= height {
                    let planes = at.y / height;
                    at.y -= planes * height;
                    at.z += planes;
                }
            }
            f(Item {
                index: base + ids.local,
                count,
                place: at,
            });
        }
    });
}

/// Calls `turn` with each workgroup id of `0..groups` this hardware workgroup takes. On CUDA
/// that is its own id (the launch covers every workgroup, as in `covered`); on SPIR-V its own and
/// every `ids.groups`-th after it, with a barrier between two turns when `barrier` (the
/// grid-stride loop; uniform across a workgroup).
#[inline(always)]
fn each_group(ids: Ids, groups: u32, barrier: bool, mut turn: impl FnMut(u32)) {
    #[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
    {
        let _ = barrier;
        if ids.group < groups {
            turn(ids.group);
        }
    }
    #[cfg(rgpu_codegen = "spirv")]
    {
        let mut id = ids.group;
        while id < groups {
            turn(id);
            let next = id.wrapping_add(ids.groups);
            if next < id {
                break;
            }
            id = next;
            if barrier && id < groups {
                arch::barrier();
            }
        }
    }
}

/// Every workgroup `0..count` on every invocation of a hardware workgroup, with a barrier
/// between two workgroups' turns (the group kernels' loop; uniform across a workgroup). In
/// 2-D and 3-D, `count` is the shape's product and each workgroup's coordinates are
/// computed once per turn; in 1-D the shape is `(count, 1, 1)` and `x` is the id.
#[doc(hidden)]
#[inline(always)]
pub fn run_groups<const D: usize, F: FnMut(Group<D>)>(
    ids: Ids,
    count: u32,
    width: u32,
    height: u32,
    depth: u32,
    mut f: F,
) {
    each_group(ids, count, true, |id| {
        let place = if D == 1 {
            Place::line(id, count)
        } else {
            place::<D>(id, width, height, depth)
        };
        f(Group {
            id,
            count,
            place,
            ids,
        });
    });
}
