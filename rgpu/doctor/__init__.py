"""`rgpu doctor`: what this machine has for each backend, and the command that fixes the rest.

The Check record every probe returns is rgpu/check.py (the codegens make them too);
`checks` probes what is not a codegen's business (Python, cargo, the NVIDIA driver, Vulkan,
the container engine, disk); each codegen reports its own toolchain (`Codegen.checks`);
`report` runs them all and renders the verdicts.
"""
