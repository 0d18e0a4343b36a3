#!/usr/bin/env bash
# A newcomer's first hour on a clean Debian 12 machine, run inside a container by
# tests/integration/test_newcomer.py: install rgpu the way README's quick start says, make
# the minimal template, build and run it for cpu, then for wgpu and cuda with `--yes`.
#
# Run as root in a container of the bare base image (debootstrap minbase: no Rust, no
# SPIRV-Tools, no ptxas, no Python). /src holds the rgpu checkout (read-only), /out receives
# what the test asserts on. Each step's wall time goes to /out/times.
set -euo pipefail

step() {
  STEP_NAME="$1"; STEP_START=$SECONDS
  echo "== $STEP_NAME"
}
done_step() { echo "$STEP_NAME $((SECONDS - STEP_START))" >>/out/times; }
trap 'echo "newcomer.sh: step \"${STEP_NAME:-}\" failed" >&2' ERR

if [ "$(id -u)" = 0 ]; then
  step "nothing there yet"
  for tool in cargo rustc rustup spirv-opt spirv-val ptxas python3 gcc; do
    if command -v "$tool" >/dev/null; then echo "not a clean machine: $tool is $(command -v "$tool")" >&2; exit 1; fi
  done
  done_step

  # What README's quick start has a Debian user install with apt: python3-venv (the venv
  # rgpu goes into), gcc and g++ (a linker; rust-gpu's C++). Rust comes through rustup,
  # whose instructions (https://rustup.rs) need curl.
  step "apt: python3-venv, gcc, g++, curl"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    python3 python3-venv ca-certificates curl gcc g++ libc6-dev >/dev/null
  done_step

  # Not a README step: the machine's GPU driver. There is no GPU here; Mesa's lavapipe (a
  # Vulkan driver on the CPU) stands in for one so that the wgpu build can run.
  step "the machine's Vulkan driver (lavapipe, stands in for a GPU)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    mesa-vulkan-drivers libvulkan1 >/dev/null
  done_step

  # The CI machine reaches crates.io and PyPI through a TLS-intercepting proxy: its CA (in
  # /ca when there is one) is the machine's, not a user's step.
  if compgen -G "/ca/*.crt" >/dev/null; then
    cp /ca/*.crt /usr/local/share/ca-certificates/ && update-ca-certificates >/dev/null
  fi
  useradd --create-home --shell /bin/bash newcomer
  cp -r /src /home/newcomer/rgpu && chown -R newcomer: /home/newcomer/rgpu
  chown -R newcomer: /out
  exec su newcomer -c "bash $0"
fi

cd "$HOME"
export SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt PIP_CERT=/etc/ssl/certs/ca-certificates.crt

step "rustup (https://rustup.rs), stable"
# rustup.rs's script downloads this same rustup-init (sh.rustup.rs is not reachable here).
curl -sSf -o rustup-init https://static.rust-lang.org/rustup/dist/x86_64-unknown-linux-gnu/rustup-init
chmod +x rustup-init && ./rustup-init -y --profile minimal --no-modify-path -q >/dev/null && rm rustup-init
# shellcheck disable=SC1091
. "$HOME/.cargo/env"
done_step

step "README: pip install into a venv"
cd "$HOME/rgpu"
python3 -m venv ~/.local/share/rgpu && ~/.local/share/rgpu/bin/pip install -q .
export PATH="$HOME/.local/share/rgpu/bin:$PATH"
cd "$HOME"
done_step

step "rgpu new hello --template minimal"
rgpu new hello --template minimal
done_step

step "rgpu build --backend cpu --yes"
rgpu build -C hello --backend cpu --yes
done_step

step "rgpu run (cpu)"
rgpu run -C hello -- --n 100000 --check >/out/run-cpu.txt
done_step

step "rgpu build --backend wgpu,cuda --arch sm_90 --yes"
rgpu build -C hello --backend wgpu,cuda --arch sm_90 --yes --json >/out/build.json
done_step

step "rgpu run --backend wgpu (lavapipe)"
rgpu run -C hello --backend wgpu -- --n 100000 --check >/out/run-wgpu.txt
done_step

cp hello/target/rgpu/kernels/manifest.json /out/manifest.json
echo "== all steps passed"
