//! The kernels: plain Rust functions with `#[rgpu::kernel]`.
//!
//! `rgpu build --backend cuda|wgpu|ash` compiles them to PTX and SPIR-V; the cpu backend
//! runs the same functions natively. On the host each kernel is a launcher of the same
//! name, after the device and the item count: `kernel::saxpy(&device, n, a, &x, &mut y)`.
#![no_std]

// The PTX and SPIR-V that `rgpu build` made for this crate, for the host's launchers.
rgpu::embed_kernels!();

/// SAXPY: `y[i] = a * x[i] + y[i]` for every `i` in `0..n`, one invocation per item.
#[rgpu::kernel]
pub fn saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
    *y += a * *x;
}
