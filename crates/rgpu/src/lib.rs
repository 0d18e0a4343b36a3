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
//! `rgpu build --backend cuda|wgpu|ash` compiles the kernel crate to PTX (rustc's nvptx64
//! target or Rust-CUDA's nvvm) and SPIR-V (rust-gpu), and `embed_kernels!()` embeds what it
//! built; the cpu backend runs the same function natively.
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
    feature(stdarch_nvptx, asm_experimental_arch, allow_internal_unstable),
    allow(internal_features)
)]
#![deny(missing_docs)]

#[cfg(rgpu_codegen = "host")]
extern crate std;

pub use rgpu_macros::{embed_kernels, kernel};

#[cfg(not(rgpu_codegen = "host"))]
mod device;
#[cfg(not(rgpu_codegen = "host"))]
pub use device::{Global, Group, Item, Shared, Word};

#[cfg(rgpu_codegen = "host")]
mod host;
#[cfg(rgpu_codegen = "host")]
pub use host::*;

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

/// What `#[rgpu::kernel]` and `embed_kernels!()` expand to use. Not a stable API.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod __private {
    #[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
    pub use crate::device::ids;
    #[cfg(not(rgpu_codegen = "host"))]
    pub use crate::device::{run_groups, run_items, Ids};
    #[cfg(rgpu_codegen = "host")]
    pub use crate::host::private::*;
    #[cfg(feature = "nvvm")]
    pub use cuda_std;
    #[cfg(feature = "spirv")]
    pub use spirv_std;
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
