# shellcheck shell=bash
# Sourced by the scripts that run on the GPU machine (scripts/gpu-tier.sh,
# benchmarks/user_kernels.sh) with R set to the repository root: the Vulkan loader from
# .gl/*.deb when the machine has none (docs/reference.md), NVIDIA's ICD, a runtime dir, and
# the GPU and driver on one line.
if ! ldconfig -p | grep -q libvulkan.so.1 && ls "$R"/.gl/*.deb >/dev/null 2>&1; then
  for f in "$R"/.gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
fi
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; break; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
