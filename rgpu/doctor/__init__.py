"""`rgpu doctor`: what this machine has for each backend, and the command that fixes the rest.

`check` holds the Check record every probe returns; `checks` probes what is not a codegen's
business (Python, cargo, the NVIDIA driver, Vulkan, the container engine, disk); each codegen
reports its own toolchain (`Codegen.checks`); `report` runs them all and renders the verdicts.
"""
