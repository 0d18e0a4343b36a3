//! The types subgroup arithmetic takes: `u32`, `i32` (wrapping) and `f32`, and of those the
//! integers for the bitwise reductions. Each codegen implements its `Lanes` and `BitLanes`
//! for them (the instructions differ by type on SPIR-V: `IAdd`/`FAdd`, `UMin`/`SMin`/`FMin`);
//! shuffles move any [`Word`]'s bits and are written once, in `Group`'s methods.

use super::{arch, Word};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
}

/// A value of subgroup arithmetic ([`Group::subgroup_add`](super::Group::subgroup_add),
/// `subgroup_min`, `subgroup_max`, the scans): `u32`, `i32` (both wrapping) and `f32`.
pub trait SubgroupValue: Word + arch::Lanes + sealed::Sealed {}
impl SubgroupValue for u32 {}
impl SubgroupValue for i32 {}
impl SubgroupValue for f32 {}

/// An integer of the bitwise subgroup reductions (`subgroup_and`, `subgroup_or`,
/// `subgroup_xor`): `u32` and `i32`.
pub trait SubgroupBits: SubgroupValue + arch::BitLanes {}
impl SubgroupBits for u32 {}
impl SubgroupBits for i32 {}
