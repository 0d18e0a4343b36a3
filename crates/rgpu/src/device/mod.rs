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
pub use word::Word;

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

/// The context of an item kernel: which item this invocation handles.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    index: u32,
    count: u32,
}

impl Item {
    /// This invocation's item, `0..count()`.
    #[inline(always)]
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The launch's item count (`n`).
    #[inline(always)]
    pub fn count(&self) -> u32 {
        self.count
    }
}

/// The context of a group kernel: one invocation of one workgroup.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    id: u32,
    count: u32,
    ids: Ids,
}

impl Group {
    /// The workgroup's index, `0..count()`.
    #[inline(always)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The launch's workgroup count (`groups`).
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

    /// The sum of `value` over the subgroup (wrapping).
    #[inline(always)]
    pub fn subgroup_add(&self, value: u32) -> u32 {
        arch::add(value)
    }

    /// The sum of `value` over the lanes below this one (wrapping).
    #[inline(always)]
    pub fn subgroup_exclusive_add(&self, value: u32) -> u32 {
        arch::exclusive_add(value, self.ids.lane)
    }

    /// Lane `lane`'s `value`; `lane` must be the same on every invocation of the subgroup
    /// (dynamically uniform: Vulkan requires it). See [`Group::subgroup_shuffle`].
    #[inline(always)]
    pub fn subgroup_broadcast(&self, value: u32, lane: u32) -> u32 {
        arch::broadcast(value, lane)
    }

    /// Lane `lane`'s `value`, where `lane` may differ between invocations (each reads the
    /// lane it names; a lane of the subgroup, `0..subgroup_size()`). CUDA: `shfl.sync.idx`;
    /// Vulkan: `OpGroupNonUniformShuffle`; cpu: the invocation's own value.
    #[inline(always)]
    pub fn subgroup_shuffle(&self, value: u32, lane: u32) -> u32 {
        arch::shuffle(value, lane)
    }
}

/// Every index `0..count` once, across the grid (the item kernels' loop).
#[doc(hidden)]
#[inline(always)]
pub fn run_items<F: FnMut(Item)>(ids: Ids, count: u32, mut f: F) {
    let stride = ids.groups.wrapping_mul(ids.size);
    let mut index = ids.group * ids.size + ids.local;
    while index < count {
        f(Item { index, count });
        // Overflow written out (rust-gpu has no `checked_add`).
        let next = index.wrapping_add(stride);
        if next < index {
            break;
        }
        index = next;
    }
}

/// Every workgroup `0..count` on every invocation of a hardware workgroup, with a barrier
/// between two workgroups' turns (the group kernels' loop; uniform across a workgroup).
#[doc(hidden)]
#[inline(always)]
pub fn run_groups<F: FnMut(Group)>(ids: Ids, count: u32, mut f: F) {
    let mut id = ids.group;
    while id < count {
        f(Group { id, count, ids });
        let next = id.wrapping_add(ids.groups);
        if next < id {
            break;
        }
        id = next;
        if id < count {
            arch::barrier();
        }
    }
}
