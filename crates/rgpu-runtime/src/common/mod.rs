//! Helpers that several backends share, and that import no backend: the checks and
//! temporaries around every GPU launch (`launch.rs`: limits, word-sized buffers, host-slice
//! arguments), the parallel host copy into and out of staging memory (`copy.rs`), the SPIR-V
//! artifact lookup (`spirv.rs`), what the Vulkan backends share (`vulkan.rs`), what the wgpu
//! and webgpu backends share (`wgpu_device.rs`: the device, its buffers and pipelines), and
//! waiting for a future (`wait.rs`: blocking natively, JSPI in a browser), and waiting for the GPU on
//! the Vulkan and CUDA backends by polling first (`spin.rs`), and launch timeouts and lost devices
//! (`deadline.rs`), and how a process whose kernel timed out still exits (`runaway.rs`), and
//! checked launches' fault records on the SPIR-V backends (`fault.rs`).

#[cfg(any(feature = "cuda", feature = "wgpu", feature = "ash"))]
pub(crate) mod copy;
pub(crate) mod deadline;
#[cfg(any(
    feature = "wgpu",
    feature = "ash",
    all(feature = "webgpu", target_arch = "wasm32")
))]
pub(crate) mod fault;
#[cfg(any(
    feature = "cuda",
    feature = "wgpu",
    feature = "ash",
    all(feature = "webgpu", target_arch = "wasm32")
))]
pub(crate) mod launch;
#[cfg(any(feature = "wgpu", feature = "ash", feature = "cuda"))]
pub(crate) mod runaway;
#[cfg(any(feature = "wgpu", feature = "ash", feature = "cuda"))]
pub(crate) mod spin;
#[cfg(any(feature = "wgpu", feature = "ash"))]
pub(crate) mod spirv;
#[cfg(any(feature = "wgpu", feature = "ash"))]
pub(crate) mod vulkan;
#[cfg(any(feature = "wgpu", all(feature = "webgpu", target_arch = "wasm32")))]
pub(crate) mod wait;
#[cfg(any(feature = "wgpu", all(feature = "webgpu", target_arch = "wasm32")))]
pub(crate) mod wgpu_device;
