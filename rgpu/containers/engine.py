"""The container engine (docker or podman): which one, whether it answers, what it can do.

One `Engine` for the whole program: `rgpu build --docker` runs with it and `rgpu doctor`
reports it, so they cannot disagree. The engine comes from RGPU_CONTAINER_ENGINE, else
docker, else podman; what it can do (rootless or not) is found out once, in `probe`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from rgpu import __version__
from rgpu.errors import ContainerError, RgpuError
from rgpu.util import cmd

ENGINE_ENV = "RGPU_CONTAINER_ENGINE"
LABEL = "dev.rgpu.container"
# rgpu's own image: the Dockerfile's offline stage (scripts/setup-docker.sh builds it).
DEFAULT_IMAGE = f"rgpu-toolchain:{__version__}-offline"
BUILD_IMAGE_HINT = (
    "build it from an rgpu checkout: `docker build --network host --target offline "
    f"-t {DEFAULT_IMAGE} .` (scripts/setup-docker.sh does this), "
    "or pick another image with --image / RGPU_IMAGE, or build without a container: "
    "`rgpu build --no-docker`"
)
ENGINE_HINT = (
    "install Docker (`sudo apt-get install docker.io`) or Podman, or set "
    f"{ENGINE_ENV} to the engine's path; or build without a container: `rgpu build --no-docker`"
)
# A daemon that does not answer within this many seconds is reported as not answering.
PROBE_TIMEOUT = 15


class Engine(NamedTuple):
    """A container engine whose daemon answered, and what it can do."""

    program: str  # absolute path
    kind: str  # "docker" or "podman"
    rootless: bool
    version: str

    @property
    def name(self) -> str:
        return Path(self.program).name

    @property
    def maps_user(self) -> bool:
        """Rootful engines run as root unless told otherwise; rootless ones already map the
        container's root to the invoking user, so --user there would be a stranger."""
        return not self.rootless

    @property
    def userns_flags(self) -> tuple[str, ...]:
        # A daemon with userns-remap would shift --user ids; host namespace keeps them.
        return ("--userns", "host") if self.kind == "docker" and not self.rootless else ()


def kind_of(program: str) -> str:
    return "podman" if "podman" in Path(program).name else "docker"


def find_engine(env: Mapping[str, str]) -> str:
    """The engine program: RGPU_CONTAINER_ENGINE, else docker, else podman."""
    chosen = env.get(ENGINE_ENV)
    if chosen:
        found = cmd.which(chosen, env) if os.sep not in chosen else chosen
        if found is None or not os.access(found, os.X_OK):
            raise ContainerError(
                f"container engine `{chosen}` (from {ENGINE_ENV}) was not found", ENGINE_HINT
            )
        return found
    for name in ("docker", "podman"):
        found = cmd.which(name, env)
        if found is not None:
            return found
    raise ContainerError(
        "no container engine found: neither docker nor podman is on PATH", ENGINE_HINT
    )


def _daemon_hint(kind: str, detail: str) -> str:
    if "permission denied" in detail.lower():
        return (
            f"let your user use {kind}: `sudo usermod -aG {kind} $USER`, then log in again; "
            "or build without a container: `rgpu build --no-docker`"
        )
    if kind == "podman":
        return "check `podman info`; or build without a container: `rgpu build --no-docker`"
    return (
        "start the Docker daemon: `sudo systemctl start docker` (without systemd: "
        "`sudo setsid dockerd >/tmp/dockerd.log 2>&1 &`); or build without a container: "
        "`rgpu build --no-docker`"
    )


def probe(program: str, env: Mapping[str, str]) -> Engine:
    """Ask the engine's daemon for its version and whether it is rootless; a daemon that
    does not answer is a ContainerError with how to start it."""
    kind = kind_of(program)
    fmt = (
        "{{.Version.Version}}|{{.Host.Security.Rootless}}"
        if kind == "podman"
        else "{{.ServerVersion}}|{{json .SecurityOptions}}"
    )
    try:
        result = cmd.run(
            [program, "info", "--format", fmt],
            env=env,
            capture=True,
            check=False,
            echo=False,
            timeout=PROBE_TIMEOUT,
        )
    except RgpuError as exc:  # a timeout, or a program that cannot start
        raise ContainerError(
            f"the {kind} engine is not answering: {exc.message}", _daemon_hint(kind, exc.message)
        ) from exc
    version, _, options = result.stdout.strip().partition("|")
    if result.returncode != 0 or not version.strip():
        detail = cmd.error_line(result.stderr or result.stdout, result.returncode)
        raise ContainerError(
            f"the {kind} engine is not answering (`{Path(program).name} info` failed: {detail})",
            _daemon_hint(kind, detail),
        )
    options = options.strip().lower()
    rootless = options == "true" if kind == "podman" else "rootless" in options
    return Engine(program=program, kind=kind, rootless=rootless, version=version.strip())


def detect(env: Mapping[str, str]) -> Engine:
    """The engine builds use, checked to answer."""
    return probe(find_engine(env), env)


def image_present(engine: Engine, image: str, env: Mapping[str, str]) -> bool:
    result = cmd.run(
        [engine.program, "image", "inspect", "--format", "{{.Id}}", image],
        env=env,
        capture=True,
        check=False,
        echo=False,
        timeout=PROBE_TIMEOUT,
    )
    return result.returncode == 0


def require_image(
    engine: Engine, image: str, env: Mapping[str, str], hint: str, *, pull: bool = False
) -> None:
    """A missing image fails here with how to get it, not deep inside `run`. With `pull`
    (the user's consent: --yes / RGPU_YES) a missing image other than rgpu's own is pulled
    first, as the codegens' toolchains are installed."""
    if image_present(engine, image, env):
        return
    if pull and image != DEFAULT_IMAGE:
        cmd.run([engine.program, "pull", image], env=env, hint=hint)
        if image_present(engine, image, env):
            return
    raise ContainerError(f"container image `{image}` is not available to {engine.kind}", hint)


def image_hint(engine: Engine, image: str) -> str:
    """How to get `image`: rgpu's own is built from the Dockerfile, others are pulled."""
    if image == DEFAULT_IMAGE:
        return BUILD_IMAGE_HINT
    return (
        f"fetch it: `{engine.name} pull {image}`, or pick another image with --image / "
        "RGPU_IMAGE, or build without a container: `rgpu build --no-docker`"
    )


def leftover_containers(engine: Engine, workspace: Path, env: Mapping[str, str]) -> Iterator[str]:
    """Names of rgpu's containers for this workspace that still exist (for tests, doctor)."""
    result = cmd.run(
        [
            engine.program,
            "ps",
            "--all",
            "--filter",
            f"label={LABEL}.workspace={workspace}",
            "--format",
            "{{.Names}}",
        ],
        env=env,
        capture=True,
        check=False,
        echo=False,
    )
    yield from (line for line in result.stdout.split() if line)
