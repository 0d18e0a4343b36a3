//! Helpers that several backends share, and that import no backend: the parallel host copy
//! into and out of staging memory, the SPIR-V artifact lookup, Vulkan buffer padding and
//! device ranking, waiting for the GPU by polling first.

#[cfg(any(feature = "cuda", feature = "wgpu", feature = "ash"))]
pub(crate) mod copy;
#[cfg(any(feature = "wgpu", feature = "ash"))]
pub(crate) mod spirv;
#[cfg(any(feature = "wgpu", feature = "ash"))]
pub(crate) mod vulkan;
#[cfg(any(feature = "wgpu", feature = "ash"))]
pub(crate) mod wait;
