"""Run plan steps inside a container, the way cross runs cargo (REFERENCE.md section 5).

- The engine comes from RGPU_CONTAINER_ENGINE, else docker, else podman; what it can do
  (rootless or not, --init) is found out once and kept in ``Engine``.
- Each step is one ``<engine> run --rm``: the workspace, rgpu's cache, $CARGO_HOME and a
  shared CARGO_TARGET_DIR are mounted at the SAME absolute paths, so paths in argv, env and
  compiler output mean the same thing inside and out; mount points are created beforehand
  (as the invoking user, not root); ``--user uid:gid`` (unless rootless) makes every file the
  build writes belong to the user who ran rgpu.
- The container has a unique name and is removed on error or Ctrl-C; RGPU_CONTAINER_KEEP=1
  keeps it for debugging.

Building ``argv`` is pure (``run_argv``); only ``ContainerRunner`` starts processes.
"""

from __future__ import annotations

import os
import secrets
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.errors import CommandFailedError, ContainerError, InterruptedByUser
from rgpu.plan import Step
from rgpu.util import cmd
from rgpu.util.output import reporter

ENGINE_ENV = "RGPU_CONTAINER_ENGINE"
KEEP_ENV = "RGPU_CONTAINER_KEEP"
# rgpu's own image: the Dockerfile's offline stage (scripts/setup-docker.sh builds it).
DEFAULT_IMAGE = f"rgpu-toolchain:{__version__}-offline"
BUILD_IMAGE_HINT = (
    "build it from an rgpu checkout: `docker build --network host --target offline "
    f"-t {DEFAULT_IMAGE} .` (scripts/setup-docker.sh does this), "
    "or pick another image with --image / RGPU_IMAGE, or build without a container: "
    "`rgpu build --no-docker`"
)
LABEL = "dev.rgpu.container"
# Environment passed from the host when set: cargo's own settings and log levels.
PASS_PREFIXES = ("CARGO_",)
PASS_NAMES = ("RUST_BACKTRACE", "RUST_LOG", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE")
# CARGO_* variables that name host programs or paths the container sees differently, or
# that rgpu sets itself (as cross does).
RESERVED = frozenset(
    {
        "CARGO_HOME",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_BUILD_RUSTC",
        "CARGO_BUILD_RUSTC_WRAPPER",
        "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_RUSTDOC",
        "CARGO_INSTALL_ROOT",
        "CARGO_MAKEFLAGS",
    }
)
ENGINE_HINT = (
    "install Docker (`sudo apt-get install docker.io`) or Podman, or set "
    f"{ENGINE_ENV} to the engine's path; or build without a container: `rgpu build --no-docker`"
)


@dataclass(frozen=True)
class Engine:
    """A container engine and what it can do, found out once."""

    program: str  # absolute path
    kind: str  # "docker" or "podman"
    rootless: bool

    @property
    def maps_user(self) -> bool:
        """Rootful engines run as root unless told otherwise; rootless ones already map the
        container's root to the invoking user, so --user there would be a stranger."""
        return not self.rootless

    @property
    def userns_flags(self) -> tuple[str, ...]:
        # A daemon with userns-remap would shift --user ids; host namespace keeps them.
        return ("--userns", "host") if self.kind == "docker" and not self.rootless else ()


def _kind_of(program: str) -> str:
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
    """Ask the engine whether it answers and whether it is rootless."""
    kind = _kind_of(program)
    fmt = "{{.Host.Security.Rootless}}" if kind == "podman" else "{{json .SecurityOptions}}"
    result = cmd.run(
        [program, "info", "--format", fmt], env=env, capture=True, check=False, echo=False
    )
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        detail = lines[-1] if lines else f"exit code {result.returncode}"
        raise ContainerError(
            f"the {kind} engine is not answering (`{Path(program).name} info` failed: {detail})",
            _daemon_hint(kind, detail),
        )
    out = result.stdout.strip().lower()
    rootless = out == "true" if kind == "podman" else "rootless" in out
    return Engine(program=program, kind=kind, rootless=rootless)


def detect(env: Mapping[str, str]) -> Engine:
    return probe(find_engine(env), env)


def require_image(engine: Engine, image: str, env: Mapping[str, str], hint: str) -> None:
    """A missing image fails here with how to get it, not deep inside `run`."""
    result = cmd.run(
        [engine.program, "image", "inspect", "--format", "{{.Id}}", image],
        env=env,
        capture=True,
        check=False,
        echo=False,
    )
    if result.returncode != 0:
        raise ContainerError(f"container image `{image}` is not available to {engine.kind}", hint)


@dataclass(frozen=True, kw_only=True)
class Mounts:
    """Host paths mounted at the same path inside; ``masked`` get an empty tmpfs over them."""

    paths: tuple[Path, ...]
    masked: tuple[Path, ...] = ()


def cargo_home(env: Mapping[str, str]) -> Path:
    if env.get("CARGO_HOME"):
        return Path(env["CARGO_HOME"])
    return Path(env.get("HOME", str(Path.home()))) / ".cargo"


def _dedupe(paths: Sequence[Path]) -> tuple[Path, ...]:
    """Drop paths inside another listed path (one mount covers them)."""
    resolved = sorted({Path(os.path.abspath(p)) for p in paths}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in resolved:
        if not any(path == k or path.is_relative_to(k) for k in kept):
            kept.append(path)
    return tuple(kept)


def plan_mounts(
    workspace: Path, cache: Path, env: Mapping[str, str], step: Step, *, as_root: bool = False
) -> Mounts:
    """The workspace, rgpu's cache, $CARGO_HOME, a shared CARGO_TARGET_DIR, the step's cwd.

    As the invoking user: all of $CARGO_HOME (registry, git checkouts, and the package-cache
    lock and config.toml at its top, which a non-root user could not create in an
    engine-made directory), with its host `bin` masked. As the image's root (Rust-CUDA's
    images keep rustup in /root/.cargo, which a root host's $CARGO_HOME would hide): only
    its `registry` and `git`."""
    home = cargo_home(env)
    cargo = [home / "registry", home / "git"] if as_root else [home]
    paths = [workspace, cache, *cargo, step.cwd]
    target = env.get("CARGO_TARGET_DIR")
    if target:
        paths.append(Path(target))
    masked = () if as_root else (home / "bin",)
    return Mounts(paths=_dedupe(paths), masked=masked)


def container_env(step: Step, host_env: Mapping[str, str], home: Path) -> dict[str, str]:
    """The allow-list: cargo's settings and log levels from the host, then the step's env."""
    passed = {
        k: v
        for k, v in host_env.items()
        if (k.startswith(PASS_PREFIXES) or k in PASS_NAMES) and k not in RESERVED
    }
    passed["CARGO_HOME"] = str(home)
    if host_env.get("CARGO_TARGET_DIR"):
        passed["CARGO_TARGET_DIR"] = host_env["CARGO_TARGET_DIR"]
    for name in step.unset_env:
        passed.pop(name, None)
    passed.update(step.env)
    return passed


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """Everything one `docker run` needs; plain data so tests can assert on it."""

    image: str
    name: str
    mounts: Mounts
    env: Mapping[str, str]
    cwd: Path
    uid: int
    gid: int
    tty: bool
    keep: bool
    labels: Mapping[str, str]
    # Run as the image's root (its tools live under /root), then give every mounted path
    # back to uid:gid, so the files still belong to the invoking user.
    chown_back: bool = False


def _user_flags(engine: Engine, spec: RunSpec) -> list[str]:
    if not engine.maps_user or spec.chown_back:
        return []
    return [*engine.userns_flags, "--user", f"{spec.uid}:{spec.gid}"]


def _mount_flags(mounts: Mounts) -> list[str]:
    flags: list[str] = []
    for path in mounts.paths:
        flags += ["--mount", f"type=bind,source={path},target={path}"]
    for path in mounts.masked:
        flags += ["--mount", f"type=tmpfs,target={path}"]
    return flags


def _env_flags(env: Mapping[str, str]) -> list[str]:
    flags: list[str] = []
    for key in sorted(env):
        flags += ["--env", f"{key}={env[key]}"]
    return flags


def run_argv(engine: Engine, spec: RunSpec, argv: Sequence[str]) -> list[str]:
    """`<engine> run ...` for one step. --network host: our CI reaches the package
    registries only through the host's network. --init: signals reach the build (a PID 1
    process ignores SIGINT unless it handles it)."""
    flags = [engine.program, "run", "--name", spec.name, "--init", "--network", "host"]
    if not spec.keep:
        flags.append("--rm")
    if spec.tty:
        flags.append("-t")
    for key, value in sorted(spec.labels.items()):
        flags += ["--label", f"{key}={value}"]
    flags += _user_flags(engine, spec)
    flags += _mount_flags(spec.mounts)
    flags += _env_flags(spec.env)
    flags += ["--workdir", str(spec.cwd), spec.image]
    return [*flags, *_chown_back(engine, spec, argv)]


def _chown_back(engine: Engine, spec: RunSpec, argv: Sequence[str]) -> list[str]:
    if not (spec.chown_back and engine.maps_user):
        return list(argv)
    owner = f"{spec.uid}:{spec.gid}"
    paths = " ".join(shlex.quote(str(p)) for p in spec.mounts.paths)
    script = f'status=0; "$@" || status=$?; chown -R {owner} {paths}; exit $status'
    return ["sh", "-c", script, "rgpu-step", *argv]


def container_name(step: Step) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in step.name)
    return f"rgpu-{safe}-{os.getpid()}-{secrets.token_hex(4)}"


def _keep(env: Mapping[str, str]) -> bool:
    return env.get(KEEP_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _create_mount_points(mounts: Mounts) -> None:
    """Create missing mount sources, and the mount points of masks inside them, as the
    invoking user: the engine would make them root-owned (on the host, for a mask point)."""
    for path in (*mounts.paths, *mounts.masked):
        path.mkdir(parents=True, exist_ok=True)


@dataclass
class ContainerRunner:
    """Runs steps in containers of one image, for one workspace."""

    engine: Engine
    image: str
    workspace: Path
    cache: Path
    env: Mapping[str, str]
    as_root: bool = False

    def spec(self, step: Step) -> RunSpec:
        mounts = plan_mounts(self.workspace, self.cache, self.env, step, as_root=self.as_root)
        return RunSpec(
            image=self.image,
            name=container_name(step),
            mounts=mounts,
            env=container_env(step, self.env, cargo_home(self.env)),
            cwd=step.cwd,
            uid=os.getuid(),
            gid=os.getgid(),
            tty=sys.stdout.isatty() and sys.stdin.isatty(),
            keep=_keep(self.env),
            labels={LABEL: "1", f"{LABEL}.workspace": str(self.workspace)},
            chown_back=self.as_root,
        )

    def run(self, step: Step) -> cmd.Result:
        spec = self.spec(step)
        _create_mount_points(spec.mounts)
        argv = run_argv(self.engine, spec, step.argv)
        try:
            return cmd.run(argv, env=self.env)
        except (CommandFailedError, InterruptedByUser, KeyboardInterrupt):
            self.cleanup(spec)
            raise

    def cleanup(self, spec: RunSpec) -> None:
        if spec.keep:
            reporter().warn(
                f"kept container {spec.name} ({KEEP_ENV}=1); remove it with "
                f"`{Path(self.engine.program).name} rm -f {spec.name}`"
            )
            return
        # --rm removes a container that exited; this stops and removes one still running
        # (Ctrl-C) and is a no-op for one already gone.
        cmd.run(
            [self.engine.program, "rm", "--force", spec.name],
            env=self.env,
            capture=True,
            check=False,
            echo=False,
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
