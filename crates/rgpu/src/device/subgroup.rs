//! The types subgroup arithmetic takes: `u32`, `i32`, `u64`, `i64` (wrapping), `f32` and
//! `f64`, and of those the integers for the bitwise reductions. Each codegen implements its
//! `Lanes` and `BitLanes` for them (the instructions differ by type on SPIR-V: `IAdd`/`FAdd`,
//! `UMin`/`SMin`/`FMin`; CUDA's 64-bit lanes shuffle two words); shuffles move any
//! [`LaneValue`]'s words and are written once, in `Group`'s methods.

use super::{arch, LaneValue};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f64 {}
}

/// A value of subgroup arithmetic ([`Group::subgroup_add`](super::Group::subgroup_add),
/// `subgroup_min`, `subgroup_max`, the scans): `u32`, `i32`, `u64`, `i64` (wrapping), `f32` and
/// `f64` (the 64-bit types where the platform has them: SPIR-V's Int64/Float64, not WebGPU).
pub trait SubgroupValue: LaneValue + arch::Lanes + sealed::Sealed {}
impl SubgroupValue for u32 {}
impl SubgroupValue for i32 {}
impl SubgroupValue for f32 {}
impl SubgroupValue for u64 {}
impl SubgroupValue for i64 {}
impl SubgroupValue for f64 {}

/// An integer of the bitwise subgroup reductions (`subgroup_and`, `subgroup_or`,
/// `subgroup_xor`): `u32`, `i32`, `u64` and `i64`.
pub trait SubgroupBits: SubgroupValue + arch::BitLanes {}
impl SubgroupBits for u32 {}
impl SubgroupBits for i32 {}
impl SubgroupBits for u64 {}
impl SubgroupBits for i64 {}
