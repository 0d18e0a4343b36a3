"""rgpu: build plain-Rust GPU kernels for CUDA, Vulkan (wgpu/ash) and the CPU."""

__version__ = "0.2.0"
