# rgpu's toolchain image, for `rgpu build --docker`. Two stages:
#
#   offline  Debian's rustc-web 1.96 (+ cargo-web, rust-web-src) and llvm-22, ptxas from
#            PyPI's nvidia-cuda-nvcc wheel, and rgpu itself: everything the nvptx codegen
#            needs. It reaches only the Debian, PyPI and crates.io registries (the last for
#            llvm-bitcode-linker's crates), so it is the stage rgpu's CI builds and uses
#            (scripts/setup-docker.sh):
#              docker build --network host --target offline -t rgpu-toolchain:0.2.0-offline .
#   full     offline + rustup with the pinned nightlies and components of the spirv and nvvm
#            codegens, LLVM 7 (for rustc_codegen_nvvm) and CUDA's libNVVM. It downloads from
#            static.rust-lang.org, github.com and developer.download.nvidia.com; rgpu's CI
#            machines cannot reach the last two: THIS STAGE CANNOT BE BUILT ON OUR CI
#            MACHINES and is not tested there. With internet access:
#              docker build --target full -t rgpu-toolchain:0.2.0-full .
#
# Build from a checkout of rgpu (the build context): the image installs that rgpu.
# `rgpu build --docker` runs each kernel-compile step in a container of this image as the
# invoking user, with the workspace, rgpu's cache and $CARGO_HOME mounted at the same paths.

FROM debian:bookworm-slim AS offline

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# rustc-web 1.96 and llvm-22 come from bookworm-security; a base image made with debootstrap
# lists only the main suite, so write the same sources the official image has.
RUN printf '%s\n' \
        'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm bookworm-updates' \
        'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' '' \
        'Types: deb' 'URIs: http://deb.debian.org/debian-security' 'Suites: bookworm-security' \
        'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
        > /etc/apt/sources.list.d/debian.sources \
    && rm -f /etc/apt/sources.list

# Versions are not pinned by default: Debian's security suite replaces them, and a fixed pin
# would stop building as soon as the pinned version leaves the mirror. scripts/setup-docker.sh
# passes the versions this machine has (RUST_WEB_VERSION: rustc-web, cargo-web and
# rust-web-src, one source package; LLVM_22_VERSION), so that `rgpu build --docker` and the
# system route here (RGPU_NVPTX_TOOLCHAIN=system) compile with the same rustc and LLVM.
ARG RUST_WEB_VERSION=""
ARG LLVM_22_VERSION=""
# hadolint ignore=DL3008
RUN rust="${RUST_WEB_VERSION:+=$RUST_WEB_VERSION}" llvm="${LLVM_22_VERSION:+=$LLVM_22_VERSION}" \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        ca-certificates "rustc-web$rust" "cargo-web$rust" "rust-web-src$rust" "llvm-22$llvm" \
        python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*

# Extra CA certificates (PEM) for a TLS-intercepting proxy in front of the registries, as on
# rgpu's CI machines: scripts/setup-docker.sh passes the host's
# /usr/local/share/ca-certificates. Empty elsewhere. pip reads the system bundle via PIP_CERT
# (its own certifi bundle would not hold such a CA); cargo uses the system bundle anyway.
ARG EXTRA_CA_CERTS=""
ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
        printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/rgpu-extra.crt \
        && update-ca-certificates; \
    fi

# Python tools live in one virtualenv on PATH. nvidia-cuda-nvcc ships ptxas (checks PTX
# without a GPU or a CUDA install).
ENV VIRTUAL_ENV=/opt/rgpu \
    PATH=/opt/rgpu/bin:/opt/rgpu/lib/python3.11/site-packages/nvidia/cu13/bin:/usr/lib/llvm-22/bin:$PATH
RUN python3 -m venv /opt/rgpu \
    && /opt/rgpu/bin/pip install --no-cache-dir nvidia-cuda-nvcc==13.5.37

# llvm-bitcode-linker, the nvptx target's linker: Debian does not package it, but its source
# ships in rust-web-src. Built here once (it is what rgpu's nvptx codegen would otherwise build
# into rgpu's cache), copied out of the rustc tree first (inside it cargo sees rustc's
# workspace). Its crates come from crates.io.
RUN version="$(rustc --version | cut -d' ' -f2)" \
    && cp -r "/usr/src/rustc-${version}/src/tools/llvm-bitcode-linker" /tmp/bitcode-linker \
    && CARGO_HOME=/tmp/cargo-home cargo install --quiet --path /tmp/bitcode-linker \
        --root /usr/local --target-dir /tmp/bitcode-linker-target \
    && rm -rf /tmp/bitcode-linker /tmp/bitcode-linker-target /tmp/cargo-home \
    && llvm-bitcode-linker --help >/dev/null

# rgpu itself, from the build context (last, so that editing rgpu rebuilds only this layer).
COPY . /src/rgpu
RUN /opt/rgpu/bin/pip install --no-cache-dir /src/rgpu \
    && rm -rf /src/rgpu \
    && rgpu --version

# Containers run as the invoking user (`--user uid:gid`), who has no home in the image.
ENV HOME=/tmp
WORKDIR /tmp
CMD ["rgpu", "--help"]


# ---------------------------------------------------------------------------------------
# NOT BUILDABLE ON rgpu's CI MACHINES (they reach the Debian, PyPI and crates.io registries
# and rustup's server, not GitHub or NVIDIA). Needs static.rust-lang.org (rustup), github.com (LLVM 7 source) and
# developer.download.nvidia.com (CUDA). Pins follow toolchains/*.toml; keep them in step.
FROM offline AS full

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

ARG SPIRV_TOOLCHAIN=nightly-2026-08-15
ARG NVVM_TOOLCHAIN=nightly-2026-04-02
ARG LLVM7_VERSION=7.1.0
ARG CUDA_VERSION=12.8
ARG CUDA_PACKAGE_VERSION=12-8

ENV RUSTUP_HOME=/opt/rustup \
    CARGO_HOME=/opt/cargo \
    CUDA_PATH=/usr/local/cuda \
    LLVM_CONFIG=/opt/llvm-7/bin/llvm-config
ENV PATH=/opt/cargo/bin:/opt/llvm-7/bin:/usr/local/cuda/bin:$PATH \
    LD_LIBRARY_PATH=/usr/local/cuda/nvvm/lib64 \
    LLVM_LINK_STATIC=1

# Build tools for LLVM 7 and for cust_raw's bindgen (libclang).
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        build-essential cmake curl git gnupg libclang-dev libssl-dev libtinfo-dev \
        libxml2-dev ninja-build pkg-config xz-utils zlib1g-dev \
    && rm -rf /var/lib/apt/lists/*

# rustup with both pinned nightlies and the components their codegens load.
RUN curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
        | sh -s -- -y --no-modify-path --profile minimal --default-toolchain none \
    && rustup toolchain install "$SPIRV_TOOLCHAIN" \
        --component rust-src,rustc-dev,llvm-tools,clippy \
    && rustup toolchain install "$NVVM_TOOLCHAIN" \
        --component rust-src,rustc-dev,llvm-tools-preview,clippy,rustfmt \
    && chmod -R a+rwX "$RUSTUP_HOME" "$CARGO_HOME"

# LLVM 7.1 (rustc_codegen_nvvm needs exactly 7.x; no current distribution packages it),
# built with the flags of Rust-CUDA's own images (container/ubuntu24-cuda12/Dockerfile at
# rev 946c91f0): host + NVPTX targets, libLLVM dylib, zlib and terminfo on.
RUN curl -sSfL "https://github.com/llvm/llvm-project/releases/download/llvmorg-${LLVM7_VERSION}/llvm-${LLVM7_VERSION}.src.tar.xz" \
        | tar -xJ -C /tmp \
    && cmake -S "/tmp/llvm-${LLVM7_VERSION}.src" -B /tmp/llvm-build -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/opt/llvm-7 \
        -DLLVM_TARGETS_TO_BUILD="X86;NVPTX" -DLLVM_BUILD_LLVM_DYLIB=ON -DLLVM_LINK_LLVM_DYLIB=ON \
        -DLLVM_ENABLE_ASSERTIONS=OFF -DLLVM_ENABLE_BINDINGS=OFF -DLLVM_INCLUDE_TESTS=OFF \
        -DLLVM_INCLUDE_EXAMPLES=OFF -DLLVM_INCLUDE_BENCHMARKS=OFF -DLLVM_ENABLE_ZLIB=ON \
        -DLLVM_ENABLE_TERMINFO=ON \
    && cmake --build /tmp/llvm-build --target install \
    && rm -rf /tmp/llvm-build "/tmp/llvm-${LLVM7_VERSION}.src"

# CUDA's compiler pieces from NVIDIA's Debian 12 repository: nvcc, libNVVM (nvvm/lib64,
# libdevice) and the runtime headers cust_raw's bindgen reads.
# hadolint ignore=DL3008
RUN curl -sSfLO https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
    && dpkg -i cuda-keyring_1.1-1_all.deb \
    && rm cuda-keyring_1.1-1_all.deb \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "cuda-nvcc-${CUDA_PACKAGE_VERSION}" "cuda-cudart-dev-${CUDA_PACKAGE_VERSION}" \
        "cuda-nvrtc-dev-${CUDA_PACKAGE_VERSION}" \
    && ln -sfn "/usr/local/cuda-${CUDA_VERSION}" /usr/local/cuda \
    && rm -rf /var/lib/apt/lists/*
