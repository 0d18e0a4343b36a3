"""rgpu: build plain-Rust GPU kernels once for every backend: the CPU, CUDA, Vulkan (wgpu,
ash; wgpu also Metal and DX12) and WebGPU in a browser (the table: rgpu/backends.py)."""

__version__ = "0.2.0"
