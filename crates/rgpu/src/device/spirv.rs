//! rust-gpu (rustc_codegen_spirv): the primitives through spirv-std's `arch` (0.11, the
//! version rgpu pins in toolchains/spirv.toml): `workgroup_memory_barrier_with_group_sync`
//! (OpControlBarrier, workgroup scope), the `atomic_*` functions (workgroup scope for
//! workgroup memory, queue-family scope for storage buffers; `spirv/atomic.rs`), and the GroupNonUniform subgroup operations
//! (rgpu's spirv build enables the GroupNonUniform, Ballot, Vote, Arithmetic, Shuffle and
//! ShuffleRelative capabilities; `subgroup_shuffle` is OpGroupNonUniformShuffle). Ids come from the entry point's builtins. NOT COMPILED TO SPIR-V on rgpu's
//! machines (rust-gpu needs a nightly's rustc-dev there): it is type-checked on the host
//! against spirv-std's source (feature `check-spirv`).

use core::marker::PhantomData;

use spirv_std::arch;
use spirv_std::arch::IndexUnchecked;
use spirv_std::memory::{Scope, Semantics};

use super::{LaneValue, Word};

mod atomic;
pub use atomic::{atomic_add_f32, fence, AtomicOps, Ptr};

const WORKGROUP: u32 = Scope::Workgroup as u32;
/// The scope of `Global`'s atomics: every invocation of the launch. rust-gpu's modules use
/// the Vulkan memory model, where `Device` scope needs the VulkanMemoryModelDeviceScope
/// capability (spirv-val refuses the module without it, and naga, wgpu's SPIR-V reader on
/// Metal, DX12 and WebGPU, reads no module that declares it); `QueueFamily` needs none and
/// holds every invocation of one dispatch.
const DEVICE: u32 = Scope::QueueFamily as u32;
const RELAXED: u32 = Semantics::NONE.bits();

#[inline(always)]
pub fn barrier() {
    arch::workgroup_memory_barrier_with_group_sync();
}

#[inline(always)]
pub fn ballot(predicate: bool) -> u32 {
    arch::subgroup_ballot(predicate).x
}

/// The ballot's set bits, all four words (every lane, also past 32), counted with `OpBitCount`:
/// naga's SPIR-V reader (wgpu's path to Metal, DX12 and WebGPU) has no
/// `OpGroupNonUniformBallotBitCount`.
#[inline(always)]
pub fn ballot_count(predicate: bool) -> u32 {
    let mask = arch::subgroup_ballot(predicate);
    mask.x.count_ones() + mask.y.count_ones() + mask.z.count_ones() + mask.w.count_ones()
}

#[inline(always)]
pub fn all(predicate: bool) -> bool {
    arch::subgroup_all(predicate)
}

#[inline(always)]
pub fn any(predicate: bool) -> bool {
    arch::subgroup_any(predicate)
}

/// Subgroup arithmetic for one type: GroupNonUniformArithmetic's instruction for it.
pub trait Lanes: LaneValue {
    fn subgroup_add(self) -> Self;
    fn subgroup_min(self) -> Self;
    fn subgroup_max(self) -> Self;
    fn subgroup_inclusive_add(self, lane: u32) -> Self;
    fn subgroup_exclusive_add(self, lane: u32) -> Self;
}

/// The bitwise reductions, for the integers.
pub trait BitLanes: Lanes {
    fn subgroup_and(self) -> Self;
    fn subgroup_or(self) -> Self;
    fn subgroup_xor(self) -> Self;
}

macro_rules! lanes {
    ($t:ty, $add:ident, $inclusive:ident, $exclusive:ident, $min:ident, $max:ident) => {
        impl Lanes for $t {
            #[inline(always)]
            fn subgroup_add(self) -> Self {
                arch::$add(self)
            }
            #[inline(always)]
            fn subgroup_min(self) -> Self {
                arch::$min(self)
            }
            #[inline(always)]
            fn subgroup_max(self) -> Self {
                arch::$max(self)
            }
            #[inline(always)]
            fn subgroup_inclusive_add(self, _lane: u32) -> Self {
                arch::$inclusive(self)
            }
            #[inline(always)]
            fn subgroup_exclusive_add(self, _lane: u32) -> Self {
                arch::$exclusive(self)
            }
        }
    };
}

lanes!(
    u32,
    subgroup_i_add,
    subgroup_inclusive_i_add,
    subgroup_exclusive_i_add,
    subgroup_u_min,
    subgroup_u_max
);
lanes!(
    i32,
    subgroup_i_add,
    subgroup_inclusive_i_add,
    subgroup_exclusive_i_add,
    subgroup_s_min,
    subgroup_s_max
);
lanes!(
    f32,
    subgroup_f_add,
    subgroup_inclusive_f_add,
    subgroup_exclusive_f_add,
    subgroup_f_min,
    subgroup_f_max
);

macro_rules! bit_lanes {
    ($t:ty) => {
        impl BitLanes for $t {
            #[inline(always)]
            fn subgroup_and(self) -> Self {
                arch::subgroup_and(self)
            }
            #[inline(always)]
            fn subgroup_or(self) -> Self {
                arch::subgroup_or(self)
            }
            #[inline(always)]
            fn subgroup_xor(self) -> Self {
                arch::subgroup_xor(self)
            }
        }
    };
}

lanes!(
    u64,
    subgroup_i_add,
    subgroup_inclusive_i_add,
    subgroup_exclusive_i_add,
    subgroup_u_min,
    subgroup_u_max
);
lanes!(
    i64,
    subgroup_i_add,
    subgroup_inclusive_i_add,
    subgroup_exclusive_i_add,
    subgroup_s_min,
    subgroup_s_max
);
lanes!(
    f64,
    subgroup_f_add,
    subgroup_inclusive_f_add,
    subgroup_exclusive_f_add,
    subgroup_f_min,
    subgroup_f_max
);

bit_lanes!(u32);
bit_lanes!(i32);
bit_lanes!(u64);
bit_lanes!(i64);

#[inline(always)]
pub fn broadcast(value: u32, lane: u32) -> u32 {
    // SAFETY: `lane` is a lane of the subgroup (the caller's contract, as on every codegen).
    unsafe { arch::subgroup_broadcast(value, lane) }
}

/// `OpGroupNonUniformShuffle`: unlike `OpGroupNonUniformBroadcast`, the lane may differ
/// between invocations (the Shuffle capability, which rgpu's spirv build enables).
#[inline(always)]
pub fn shuffle(value: u32, lane: u32) -> u32 {
    arch::subgroup_shuffle(value, lane)
}

/// `OpGroupNonUniformShuffleXor` (the Shuffle capability).
#[inline(always)]
pub fn shuffle_xor(value: u32, lane_mask: u32) -> u32 {
    arch::subgroup_shuffle_xor(value, lane_mask)
}

/// `OpGroupNonUniformShuffleUp` (ShuffleRelative), whose result is undefined below
/// `delta`: those lanes keep their own value, as CUDA's `shfl.sync.up` does.
#[inline(always)]
pub fn shuffle_up(value: u32, delta: u32, lane: u32) -> u32 {
    let other = arch::subgroup_shuffle_up(value, delta);
    if lane >= delta {
        other
    } else {
        value
    }
}

/// `OpGroupNonUniformShuffleDown` (ShuffleRelative), undefined past the subgroup's end:
/// those lanes keep their own value, as CUDA's `shfl.sync.down` does.
#[inline(always)]
pub fn shuffle_down(value: u32, delta: u32, lane: u32, size: u32) -> u32 {
    let other = arch::subgroup_shuffle_down(value, delta);
    if lane + delta < size {
        other
    } else {
        value
    }
}

/// Workgroup memory: the entry point's `#[spirv(workgroup)]` array.
#[derive(Clone, Copy)]
pub struct Shared<T: Word, const N: usize> {
    array: *mut [T; N],
    _type: PhantomData<T>,
}

impl<T: Word, const N: usize> Shared<T, N> {
    /// Elements.
    pub const LEN: usize = N;

    #[doc(hidden)]
    #[inline(always)]
    pub fn from_array(array: &mut [T; N]) -> Self {
        Self {
            array,
            _type: PhantomData,
        }
    }

    /// Element `index` (past `N`: the invocation stops).
    #[inline(always)]
    pub fn load(&self, index: u32) -> T {
        // SAFETY: the array lives as long as the workgroup; the index is bounds-checked.
        unsafe { (*self.array)[index as usize] }
    }

    /// Stores element `index` (past `N`: the invocation stops).
    #[inline(always)]
    pub fn store(&self, index: u32, value: T) {
        // SAFETY: as for `load`.
        unsafe { (*self.array)[index as usize] = value }
    }

    /// Element `index`, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn load_unchecked(&self, index: u32) -> T {
        // SAFETY: the caller's contract (index < N). spirv-std's `index_unchecked` is one
        // OpAccessChain: rust-gpu lowers a checked index to a branch out of the entry point
        // (and refuses `get_unchecked`), which costs the radix sort 2.9x on NVIDIA.
        unsafe { *(*self.array).index_unchecked(index as usize) }
    }

    /// Stores element `index`, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub unsafe fn store_unchecked(&self, index: u32, value: T) {
        // SAFETY: as for `load_unchecked`.
        unsafe { *(*self.array).index_unchecked_mut(index as usize) = value }
    }
}

impl<T: Word, const N: usize> Shared<T, N> {
    /// Element `index` (past `N`: the invocation stops).
    #[inline(always)]
    pub(super) fn element(&self, index: u32) -> Ptr<T> {
        // SAFETY: the array lives as long as the workgroup; the index is bounds-checked.
        unsafe { &mut (*self.array)[index as usize] }
    }

    /// Element `index`, unchecked.
    ///
    /// # Safety
    /// `index < N`.
    #[inline(always)]
    pub(super) unsafe fn element_unchecked(&self, index: u32) -> Ptr<T> {
        // SAFETY: the caller's contract (one OpAccessChain, as for `load_unchecked`).
        unsafe { (*self.array).index_unchecked_mut(index as usize) }
    }
}

/// A read-write buffer that every invocation of the launch sees whole (a storage buffer).
#[derive(Clone, Copy)]
pub struct Global<T> {
    slice: *mut [T],
    len: u32,
}

impl<T: Copy> Global<T> {
    #[doc(hidden)]
    #[inline(always)]
    pub fn from_slice(slice: &mut [T], len: u32) -> Self {
        Self { slice, len }
    }

    /// Elements.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether it has no element.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `index`.
    ///
    /// # Safety
    /// `index < len()`, and no other invocation of the launch writes it meanwhile.
    #[inline(always)]
    pub unsafe fn read(&self, index: u32) -> T {
        // SAFETY: the caller's contract; the storage buffer outlives the invocation. No bounds
        // check (spirv-std's IndexUnchecked, as for `Shared::load_unchecked`).
        unsafe { *(*self.slice).index_unchecked(index as usize) }
    }

    /// Stores element `index`.
    ///
    /// # Safety
    /// `index < len()`, and no other invocation of the launch reads or writes it meanwhile.
    #[inline(always)]
    pub unsafe fn write(&self, index: u32, value: T) {
        // SAFETY: the caller's contract.
        unsafe { *(*self.slice).index_unchecked_mut(index as usize) = value }
    }
}

impl<T: Copy> Global<T> {
    /// Element `index` (past `len()`: the invocation stops).
    #[inline(always)]
    #[cfg_attr(rgpu_checked, track_caller)]
    pub(super) fn element(&self, index: u32) -> Ptr<T> {
        if index >= self.len {
            #[cfg(not(rgpu_checked))]
            panic!("Global index out of bounds");
            // A checked build says what (rust-gpu's DebugPrintf, recorded by rgpu's SPIR-V
            // pass: rgpu/spirv/faults.py).
            #[cfg(rgpu_checked)]
            panic!(
                "Global: index {index} is past the {} elements of the buffer",
                self.len
            );
        }
        // SAFETY: in bounds; every access to it through `atomic*` is atomic.
        unsafe { &mut (&mut (*self.slice))[index as usize] }
    }
}
