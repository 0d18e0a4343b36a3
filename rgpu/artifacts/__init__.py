"""Kernel artifacts: the PTX and SPIR-V files the host embeds. `manifest` lists and checks
them, `ptx` and `spirv_module` read and validate each format, `external` takes the files a
user gives with --kernel-artifact, `kernels` finds the workspace's own kernels in source."""
