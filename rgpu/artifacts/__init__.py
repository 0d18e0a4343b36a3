"""Kernel artifacts: the PTX and SPIR-V files the host embeds. `manifest` lists and checks
them, `ptx` reads and validates PTX (rgpu.spirv.module does SPIR-V), `external` takes the files a
user gives with --kernel-artifact, `kernels` finds the workspace's own kernels in source."""
