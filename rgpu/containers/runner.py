"""Run plan steps inside a container, the way cross runs cargo.

- The engine (containers/engine.py) is found and probed once.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu.containers.engine import LABEL, Engine
from rgpu.errors import CommandFailedError, InterruptedByUser
from rgpu.plan import Step
from rgpu.util import cmd
from rgpu.util.output import reporter

KEEP_ENV = "RGPU_CONTAINER_KEEP"
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


@dataclass(frozen=True, kw_only=True)
class Mounts:
    """Host paths mounted at the same path inside; ``masked`` get an empty tmpfs over them."""

    paths: tuple[Path, ...]
    masked: tuple[Path, ...] = ()


def cargo_home(env: Mapping[str, str]) -> Path:
    if env.get("CARGO_HOME"):
        return Path(env["CARGO_HOME"])
    # start-up: <1 ms to import util.platform; only this path pays it
    from rgpu.util.platform import home

    return home(env) / ".cargo"


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
            # Docker Desktop on Windows has no users to map to: its containers' root.
            uid=os.getuid() if hasattr(os, "getuid") else 0,
            gid=os.getgid() if hasattr(os, "getgid") else 0,
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
            # Its steps are kernel builds: their stdout is progress (see runner.run_plan).
            return cmd.run(argv, env=self.env, stdout_to_stderr=True)
        except CommandFailedError as error:
            self.cleanup(spec)
            # The step's own command, not the whole `docker run` (echoed above).
            raise CommandFailedError(
                f"`{cmd.format_argv(step.argv)}` failed with exit code {error.returncode} in a "
                f"container of {self.image}",
                error.hint,
                returncode=error.returncode,
            ) from error
        except (InterruptedByUser, KeyboardInterrupt):
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
