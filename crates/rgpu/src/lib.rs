//! GPU kernels in plain Rust: one function, every backend.
//!
//! ```ignore
//! // kernel/src/lib.rs (a `#![no_std]` crate)
//! rgpu::embed_kernels!();
//!
//! #[rgpu::kernel]
//! pub fn saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
//!     *y += a * *x;
//! }
//!
//! // on the host
//! let device = rgpu::Device::select()?.0;          // RGPU_BACKEND, else the best one here
//! kernel::saxpy(&device, n, 2.0, &x, &mut y)?;     // host slices or device Buffers
//! ```
//!
//! `rgpu build --backend cuda|wgpu|ash|webgpu` compiles the kernel crate to PTX for cuda
//! (rustc's nvptx64 target or Rust-CUDA's nvvm), SPIR-V for wgpu and ash (rust-gpu), and
//! WGSL written from that SPIR-V for webgpu (a browser), and `embed_kernels!()` embeds what
//! it built; the cpu backend runs the same function natively.
//!
//! # Kernels
//!
//! A kernel is a plain, non-generic function with `#[rgpu::kernel]` (or
//! `#[rgpu::kernel(threads = N)]`, N threads per workgroup, default 256). Its parameters:
//! - optionally first, the context: [`Item`] (an *item kernel*: one invocation per index
//!   `0..n`) or [`Group`] (a *group kernel*: every invocation of `groups` workgroups, with
//!   barriers and workgroup memory);
//! - `#[item] x: &T` / `#[item] y: &mut T`: element `i` of a buffer (item kernels);
//! - `x: &[T]`: a read-only buffer; `y: Global<T>`: a read-write buffer every invocation sees;
//! - `s: Shared<T, N>`: workgroup memory (group kernels);
//! - anything else: a value, copied to every invocation (`#[repr(C)]`, `bytemuck::Pod`, no
//!   `bool`: it travels as a CUDA argument and a Vulkan push constant).
//!
//! The launcher has the kernel's name and its parameters minus the context and workgroup
//! memory, after the device and the count: `kernel(&device, n, ...)` for item kernels,
//! `kernel(&device, groups, ...)` for group kernels. Buffers are host slices (copied for
//! the launch) or [`Buffer`]s (device memory, kept between launches).
//!
//! # What each codegen has
//!
//! Every helper here exists on every codegen with the same meaning. Subgroup operations
//! must be reached by every invocation of the workgroup (uniform control flow); on CUDA the
//! subgroup is the 32-thread warp, on Vulkan the device's subgroup, on the cpu backend a
//! single invocation.
#![no_std]
#![cfg_attr(
    rgpu_codegen = "nvptx",
    feature(
        stdarch_nvptx,
        asm_experimental_arch,
        allow_internal_unstable,
        link_llvm_intrinsics
    ),
    allow(internal_features)
)]
// `MulAdd` on rust-gpu and nvvm: `core::intrinsics::fmaf32`/`fmaf64` (math.rs).
#![cfg_attr(
    all(
        any(rgpu_codegen = "nvvm", rgpu_codegen = "spirv"),
        any(target_arch = "nvptx64", target_arch = "spirv")
    ),
    feature(core_intrinsics),
    allow(internal_features)
)]
// `Float::rsqrt` on rust-gpu: GLSL.std.450 `InverseSqrt` as SPIR-V assembly (math/spirv.rs).
#![cfg_attr(target_arch = "spirv", feature(asm_experimental_arch))]
#![deny(missing_docs)]

#[cfg(rgpu_codegen = "host")]
extern crate std;

pub use rgpu_macros::{embed_kernels, kernel};

#[cfg(not(rgpu_codegen = "host"))]
mod device;
#[cfg(not(rgpu_codegen = "host"))]
pub use device::{
    fence, Atomic, AtomicScope, AtomicWord, DeviceScope, Global, Group, Item, LaneValue, Shared,
    SubgroupBits, SubgroupValue, Word, WorkgroupScope,
};

#[cfg(rgpu_codegen = "host")]
mod host;
#[cfg(rgpu_codegen = "host")]
pub use host::*;

mod math;
mod slice;
pub use math::{Float, MulAdd};
pub use slice::LoadUnchecked;

/// What a kernel crate imports: `use rgpu::prelude::*;`. The contexts ([`Item`], [`Group`]),
/// workgroup and global memory ([`Shared`], [`Global`], [`Word`]), the atomic handle
/// ([`Atomic`], whose methods take `core::sync::atomic::Ordering`), `x.mul_add(y, z)` and
/// std's float functions (`x.sqrt()`, `x.exp()`, ...) on `f32`/`f64` ([`MulAdd`],
/// [`Float`]) and `unsafe { x.load_unchecked(i) }` on read-only buffers
/// ([`LoadUnchecked`]).
///
/// On the host, `f32::mul_add` is std's own method (the same result), so a module whose
/// kernels use nothing else from the prelude would see the import as unused there; the
/// `#[rgpu::kernel]` expansion counts it as used, so a module with a kernel needs no
/// `allow`. A module of plain helpers that only calls `mul_add` imports the trait by
/// itself: `#[allow(unused_imports)] use rgpu::MulAdd;`.
pub mod prelude {
    #[doc(hidden)]
    pub use crate::__private::UsePrelude as _;
    pub use crate::{
        Atomic, Float, Global, Group, Item, LaneValue, LoadUnchecked, MulAdd, Shared, SubgroupBits,
        SubgroupValue, Word,
    };
}

/// `value`, hidden from the compiler's value numbering: a code-generation hint for hot
/// kernels, with no effect on the result. On rustc's nvptx target (an empty `mov` that
/// ptxas removes) it keeps LLVM from reusing a 64-bit address computed earlier (e.g. by a
/// load) where recomputing it from a 32-bit index is cheaper than keeping it live: the
/// bitonic demo's fused pass went from 80 to 48 registers. Elsewhere it returns `value`.
#[inline(always)]
pub fn opaque(value: u32) -> u32 {
    #[cfg(rgpu_codegen = "nvptx")]
    {
        let out: u32;
        // SAFETY: a register move; touches no memory.
        unsafe {
            core::arch::asm!(
                "mov.u32 {o}, {i};",
                o = out(reg32) out,
                i = in(reg32) value,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        out
    }
    #[cfg(not(rgpu_codegen = "nvptx"))]
    {
        value
    }
}

/// Runs `body` once for each value of a constant list, with that value as a constant in
/// each copy: a loop unrolled in the source, the same on every codegen.
///
/// ```ignore
/// let mut key = [0u32; 16];
/// rgpu::unroll!(J in 0..16 => {
///     key[J] = keys.load(base + J as u32);
/// });
/// rgpu::unroll!(BIT in [8, 4, 2, 1] => {
///     step(&mut key, BIT);
/// });
/// ```
///
/// In each copy `J` is a `const J: usize`, so every index into a per-thread array is known
/// at compile time. That is what keeps such an array in registers: rust-gpu and spirv-opt
/// unroll no loop (a loop over a `[T; N]` leaves it in Function memory: local memory on
/// Vulkan drivers), and LLVM (nvptx) does not unroll a large loop body by itself. A
/// `for` over a range is also a loop carrying an `Option` on rust-gpu (a branch and a phi
/// more than a `while`).
///
/// Forms: `J in 0..N` with `N` an integer literal from 1 to 32, and `J in [a, b, ..]` with
/// integer literals in any order. The count must be written as a literal (a macro cannot
/// evaluate a constant); where it stands for a constant, assert that they agree:
/// `const _: () = assert!(KEYS_PER_THREAD == 16);`. A body that depends on a const
/// generic tests it with the constant (`if J < K { .. }`): each test folds away.
#[macro_export]
macro_rules! unroll {
    ($j:ident in [$($n:literal),* $(,)?] => $body:block) => {
        $({
            const $j: usize = $n;
            $body
        })*
    };
    ($j:ident in 0..$n:tt => $body:block) => {
        $crate::__unroll_range!($j $body $n)
    };
}

/// `unroll!(J in 0..N)`: the list `0..N` for each literal `N` from 1 to 32 (a macro cannot
/// count). `N` arrives as a `tt`, which a literal pattern can match.
#[doc(hidden)]
#[macro_export]
macro_rules! __unroll_range {
    ($j:ident $body:block 1) => { $crate::unroll!($j in [0] => $body) };
    ($j:ident $body:block 2) => { $crate::unroll!($j in [0, 1] => $body) };
    ($j:ident $body:block 3) => { $crate::unroll!($j in [0, 1, 2] => $body) };
    ($j:ident $body:block 4) => { $crate::unroll!($j in [0, 1, 2, 3] => $body) };
    ($j:ident $body:block 5) => { $crate::unroll!($j in [0, 1, 2, 3, 4] => $body) };
    ($j:ident $body:block 6) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5] => $body) };
    ($j:ident $body:block 7) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6] => $body) };
    ($j:ident $body:block 8) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7] => $body) };
    ($j:ident $body:block 9) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8] => $body) };
    ($j:ident $body:block 10) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] => $body) };
    ($j:ident $body:block 11) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] => $body) };
    ($j:ident $body:block 12) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] => $body) };
    ($j:ident $body:block 13) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] => $body) };
    ($j:ident $body:block 14) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13] => $body) };
    ($j:ident $body:block 15) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] => $body) };
    ($j:ident $body:block 16) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] => $body) };
    ($j:ident $body:block 17) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] => $body) };
    ($j:ident $body:block 18) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17] => $body) };
    ($j:ident $body:block 19) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18] => $body) };
    ($j:ident $body:block 20) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19] => $body) };
    ($j:ident $body:block 21) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20] => $body) };
    ($j:ident $body:block 22) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21] => $body) };
    ($j:ident $body:block 23) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22] => $body) };
    ($j:ident $body:block 24) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23] => $body) };
    ($j:ident $body:block 25) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24] => $body) };
    ($j:ident $body:block 26) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25] => $body) };
    ($j:ident $body:block 27) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26] => $body) };
    ($j:ident $body:block 28) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27] => $body) };
    ($j:ident $body:block 29) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28] => $body) };
    ($j:ident $body:block 30) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29] => $body) };
    ($j:ident $body:block 31) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30] => $body) };
    ($j:ident $body:block 32) => { $crate::unroll!($j in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31] => $body) };
    ($j:ident $body:block $n:tt) => {
        ::core::compile_error!(::core::concat!(
            "rgpu::unroll!(",
            ::core::stringify!($j),
            " in 0..",
            ::core::stringify!($n),
            "): the count must be an integer literal from 1 to 32; for others list the values: `",
            ::core::stringify!($j),
            " in [0, 1, ..]`"
        ))
    };
}

/// What `#[rgpu::kernel]` and `embed_kernels!()` expand to use. Not a stable API.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod __private {
    #[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
    pub use crate::device::ids;
    #[cfg(not(rgpu_codegen = "host"))]
    pub use crate::device::{run_groups, run_items, run_items_grid, Ids};
    #[cfg(rgpu_codegen = "host")]
    pub use crate::host::private::*;
    #[cfg(feature = "nvvm")]
    pub use cuda_std;
    #[cfg(feature = "spirv")]
    pub use spirv_std;

    /// Marks `use rgpu::prelude::*` used in a module with a kernel (see `prelude`): the
    /// host launcher calls `PreludeProbe.__rgpu_prelude()`, which resolves to
    /// `UsePrelude`'s method (by value) when the prelude is imported, and to the inherent
    /// one (by reference) otherwise. Both do nothing.
    pub struct PreludeProbe;

    impl PreludeProbe {
        #[inline(always)]
        pub fn __rgpu_prelude(&self) {}
    }

    pub trait UsePrelude {
        fn __rgpu_prelude(self);
    }

    impl UsePrelude for PreludeProbe {
        #[inline(always)]
        fn __rgpu_prelude(self) {}
    }
}

// The gates: each passes its tokens through on its codegen only, so the expansions need no
// cfg of the user's crate.

/// Host-only items (launchers, the artifact table).
#[cfg(rgpu_codegen = "host")]
#[doc(hidden)]
#[macro_export]
macro_rules! __host { ($($t:tt)*) => { $($t)* }; }
#[cfg(not(rgpu_codegen = "host"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __host {
    ($($t:tt)*) => {};
}

/// rustc's nvptx64 entry points.
#[cfg(rgpu_codegen = "nvptx")]
#[doc(hidden)]
#[macro_export]
macro_rules! __nvptx { ($($t:tt)*) => { $($t)* }; }
#[cfg(not(rgpu_codegen = "nvptx"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __nvptx {
    ($($t:tt)*) => {};
}

/// A kernel's nvptx entry point: `#[no_mangle] pub unsafe extern "ptx-kernel" fn`. Written
/// here, not in the expansion, so that no crate holding kernels needs the `abi_ptx` feature
/// of its own: rustc allows the ABI inside this macro's expansion (its gate honours
/// `allow_internal_unstable`), and a kernel may live in a library crate, which the nvptx
/// build compiles as a dependency (a `-Zcrate-attr` reaches only the final crate).
#[cfg(rgpu_codegen = "nvptx")]
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(abi_ptx)]
macro_rules! __nvptx_entry {
    ($(#[$meta:meta])* fn $name:ident ($($params:tt)*) $body:block) => {
        $(#[$meta])*
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn $name($($params)*) $body
    };
}

/// A `.shared` array of `$bytes` bytes for a `Shared` parameter, declared in the kernel
/// crate. Written here, not in the expansion, so that the kernel crate needs no
/// `asm_experimental_arch` of its own (rustc allows it inside this macro's expansion; a
/// crate-level feature would be "declared but not used" in crates without workgroup memory).
#[cfg(rgpu_codegen = "nvptx")]
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __nvptx_shared_decl {
    ($decl:literal, $bytes:expr) => {
        ::core::arch::global_asm!($decl, bytes = const $bytes);
    };
}

/// A line of module-level PTX from the kernel crate (rgpu's per-entry directives).
#[cfg(rgpu_codegen = "nvptx")]
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __nvptx_module_asm {
    ($line:literal) => {
        ::core::arch::global_asm!($line);
    };
}

/// The 32-bit shared-window address of a `.shared` symbol (`mov.u32 {0}, SYMBOL;`).
#[cfg(rgpu_codegen = "nvptx")]
#[doc(hidden)]
#[macro_export]
#[allow_internal_unstable(asm_experimental_arch)]
macro_rules! __nvptx_shared_addr {
    ($mov:literal) => {{
        let __address: u32;
        // SAFETY: `mov` of a `.shared` symbol yields its shared-window address.
        unsafe {
            ::core::arch::asm!($mov, out(reg32) __address, options(pure, nomem, nostack));
        }
        __address
    }};
}

/// Rust-CUDA (nvvm) entry points.
#[cfg(rgpu_codegen = "nvvm")]
#[doc(hidden)]
#[macro_export]
macro_rules! __nvvm { ($($t:tt)*) => { $($t)* }; }
#[cfg(not(rgpu_codegen = "nvvm"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __nvvm {
    ($($t:tt)*) => {};
}

/// rust-gpu entry points.
#[cfg(rgpu_codegen = "spirv")]
#[doc(hidden)]
#[macro_export]
macro_rules! __spirv { ($($t:tt)*) => { $($t)* }; }
#[cfg(not(rgpu_codegen = "spirv"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __spirv {
    ($($t:tt)*) => {};
}
