#!/usr/bin/env bash
# Makes the Docker engine usable for rgpu's container tests on a fresh Debian machine where no
# image registry is reachable (only Debian, PyPI and crates.io are):
#   1. start dockerd when it is not answering (CI machines start with nothing running);
#   2. make the base image `debian:bookworm-slim` with debootstrap + `docker import` when it
#      is missing (cached by tag: later runs on the same machine skip it);
#   3. build the Dockerfile's `offline` stage as rgpu's default image (docker's layer cache
#      makes a rebuild with nothing changed take seconds).
# Times of each part are printed so that CI time can be budgeted.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
BASE_IMAGE="debian:bookworm-slim"
VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' rgpu/__init__.py)"
# Keep in step with rgpu/containers/engine.py (DEFAULT_IMAGE).
OFFLINE_IMAGE="${RGPU_IMAGE:-rgpu-toolchain:${VERSION}-offline}"

timed() {
  local label="$1"; shift
  local start=$SECONDS
  "$@"
  echo "setup-docker: ${label} took $((SECONDS - start)) s"
}

# A dockerd that was killed (a machine's processes stopped, not the machine) leaves its
# containerd's pid file behind; when that pid now belongs to another process, dockerd says
# "containerd is still running", waits for its socket and gives up. Seen 2026-11-25.
clear_stale_containerd_pid() {
  local pidfile=/var/run/docker/containerd/containerd.pid pid
  $SUDO test -f "$pidfile" || return 0
  pid="$($SUDO cat "$pidfile" 2>/dev/null || true)"
  if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null || true)" != "containerd" ]; then
    echo "+ rm $pidfile (pid ${pid:-none} is not containerd)"
    $SUDO rm -f "$pidfile"
  fi
}

start_dockerd() {
  if $SUDO docker info >/dev/null 2>&1; then return 0; fi
  clear_stale_containerd_pid
  echo "+ setsid dockerd (log: /tmp/dockerd.log)"
  $SUDO sh -c 'setsid dockerd >/tmp/dockerd.log 2>&1 < /dev/null &'
  for _ in $(seq 1 60); do
    if $SUDO docker info >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "setup-docker: dockerd did not answer within 60 s; see /tmp/dockerd.log" >&2
  tail -n 20 /tmp/dockerd.log >&2 || true
  return 1
}

make_base_image() {
  if $SUDO docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then return 0; fi
  local root
  root="$(mktemp -d /tmp/rgpu-debootstrap.XXXXXX)"
  echo "+ debootstrap --variant=minbase bookworm $root"
  $SUDO debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/tmp/debootstrap.log 2>&1 \
    || { tail -n 20 /tmp/debootstrap.log >&2; return 1; }
  # Like the official slim image: no apt caches or package lists in the base layer.
  $SUDO rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  echo "+ tar -C $root -c . | docker import - $BASE_IMAGE"
  $SUDO tar -C "$root" -c . | $SUDO docker import - "$BASE_IMAGE" >/dev/null
  $SUDO rm -rf "$root"
}

build_offline_image() {
  # A TLS-intercepting proxy's CA (CI reaches PyPI and crates.io through one) must be
  # trusted inside the image too; certificates are public, so a build argument is fine.
  local extra_ca=""
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    extra_ca="$(cat /usr/local/share/ca-certificates/*.crt)"
  fi
  # The image's rustc and LLVM are this machine's system ones (the same Debian versions), so
  # a container build and the system route here make the same PTX (tests/integration/
  # test_docker_build.py compares them).
  local rust_web="" llvm_22=""
  rust_web="$(dpkg-query -W -f='${Version}' rustc-web 2>/dev/null || true)"
  llvm_22="$(dpkg-query -W -f='${Version}' llvm-22 2>/dev/null || true)"
  echo "+ docker build --network host --target offline -t $OFFLINE_IMAGE . (rustc-web ${rust_web:-latest}, llvm-22 ${llvm_22:-latest})"
  $SUDO docker build --force-rm --network host --build-arg EXTRA_CA_CERTS="$extra_ca" \
    --build-arg RUST_WEB_VERSION="$rust_web" --build-arg LLVM_22_VERSION="$llvm_22" \
    --target offline -t "$OFFLINE_IMAGE" . >/tmp/docker-build.log 2>&1 \
    || { tail -n 40 /tmp/docker-build.log >&2
         echo "setup-docker: if apt-get found no such version, this machine's rustc-web or llvm-22 is older than Debian's: apt-get install --only-upgrade rustc-web cargo-web rust-web-src llvm-22" >&2
         return 1; }
}

timed "starting dockerd" start_dockerd
timed "base image $BASE_IMAGE" make_base_image
timed "image $OFFLINE_IMAGE (Dockerfile, target offline)" build_offline_image
