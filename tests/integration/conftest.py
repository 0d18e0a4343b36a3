"""Shared workspaces and helpers for the integration tier.

Compiles are the slow part (2 cores): the CUDA workspace is built once per session and only
read by the tests that use it; tests that change a workspace make their own (cheap: the
shared CARGO_TARGET_DIR keeps every dependency, and rustc's `core` per CUDA arch, compiled).
Each workspace has its own name, so their binaries in the shared target dir never collide.

Fakes are used only for what cannot exist on this machine, and are named as such:
`fake_toolchain` writes a rustup toolchain directory (the real rustup reads it), `fake_tool`
writes a small program that stands in for a broken tool or one that cannot be installed
here (a failing rustup, a broken ptxas, LLVM 7's llvm-config).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from rgpu.artifacts.manifest import Artifact, read_manifest
from tests.conftest import REPO, TARGET_DIR, run_rgpu

HOST = "x86_64-unknown-linux-gnu"
CUDA_ARCHS = ("sm_75", "sm_80", "sm_90")
# Mesa's lavapipe (mesa-vulkan-drivers, from bookworm-backports: scripts/setup-test-env.sh):
# a Vulkan device on the CPU, and the environment that makes the loader use it alone. Mesa 25
# names the file lvp_icd.json, Mesa 22 lvp_icd.x86_64.json. RGPU_TEST_LAVAPIPE_ICD names
# another one (a lavapipe unpacked beside the system's, on a machine shared with others).
LAVAPIPE_ICD = Path(
    os.environ.get("RGPU_TEST_LAVAPIPE_ICD")
    or next(
        (
            str(path)
            for path in (
                Path("/usr/share/vulkan/icd.d/lvp_icd.json"),
                Path("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"),
            )
            if path.is_file()
        ),
        "/usr/share/vulkan/icd.d/lvp_icd.json",
    )
)
LAVAPIPE = {"VK_ICD_FILENAMES": str(LAVAPIPE_ICD), "VK_DRIVER_FILES": str(LAVAPIPE_ICD)}
# Variables of the machine that would change what these tests see: GitHub Actions output
# (the CI tests set it themselves), a toolchain override, Vulkan driver choices, the wgpu
# backend's shader path.
UNSET_FOR_TESTS = (
    "GITHUB_ACTIONS",
    "GITHUB_STEP_SUMMARY",
    "RUSTUP_TOOLCHAIN",
    "RGPU_BACKEND",
    "RGPU_WGPU_SHADER",
)


@pytest.fixture(scope="session", autouse=True)
def plain_environment() -> Iterator[None]:
    saved = {k: os.environ.pop(k) for k in UNSET_FOR_TESTS if k in os.environ}
    yield
    os.environ.update(saved)


# A cold spirv build installs rust-gpu's nightly and codegen and rgpu-naga first.
COLD_BUILD_TIMEOUT = 3600


def build_json(ws: Path, *args: str) -> dict[str, Any]:
    """`rgpu build ARGS --json` in `ws`, which must succeed (the tests that use it install
    what they need with --yes and never skip); its JSON result, with its stderr added."""
    proc = run_rgpu("build", *args, "--json", cwd=ws, check=False, timeout=COLD_BUILD_TIMEOUT)
    if proc.returncode != 0:
        pytest.fail(
            f"rgpu build {' '.join(args)} failed (exit {proc.returncode}); this test installs "
            f"what it needs and must not skip:\n{proc.stderr[-6000:]}",
            pytrace=False,
        )
    result: dict[str, Any] = json.loads(proc.stdout)
    result["stderr"] = proc.stderr
    return result


def new_workspace(parent: Path, name: str) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    run_rgpu("new", name, "--dir", str(parent))
    return parent / name


def kernels_dir(ws: Path) -> Path:
    return ws / "target" / "rgpu" / "kernels"


def manifest_of(ws: Path) -> list[Artifact]:
    return read_manifest(kernels_dir(ws))


def ptx_of(ws: Path) -> list[Artifact]:
    """The manifest's PTX (each arch's cubin, its SASS, beside it is left out)."""
    return [a for a in manifest_of(ws) if a.kind == "ptx"]


def binary(ws: Path) -> Path:
    return TARGET_DIR / "release" / ws.name


def files_with_mtimes(directory: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `directory`: its bytes and its mtime in ns."""
    return {
        str(p.relative_to(directory)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def started_commands(stderr: str) -> list[str]:
    """The commands rgpu echoed as it started them (`+ argv`)."""
    return [line[2:] for line in stderr.splitlines() if line.startswith("+ ")]


def assert_clean_failure(proc: subprocess.CompletedProcess[str], code: int) -> None:
    """One message with its fix, the documented exit code, no traceback."""
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    assert "error: " in proc.stderr and "fix: " in proc.stderr, proc.stderr


def rgpu_in(
    env: Mapping[str, str], *args: str, cwd: Path | None = None, timeout: float = 1800
) -> subprocess.CompletedProcess[str]:
    """Run rgpu with exactly `env` (run_rgpu can add variables; this can also leave some
    out)."""
    return subprocess.run(
        [sys.executable, "-m", "rgpu", *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )


DOCTOR_SCHEMA = json.loads((REPO / "rgpu/schemas/doctor.schema.json").read_text(encoding="utf-8"))


def doctor_json(env: Mapping[str, str], *args: str, code: int = 0) -> dict[str, Any]:
    """`rgpu doctor --json ARGS` with exactly `env`; its exit code, and its report checked
    against rgpu's published schema."""
    proc = rgpu_in(env, "doctor", "--json", *args)
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.validate(report, DOCTOR_SCHEMA, cls=jsonschema.Draft202012Validator)
    return report


def json_result(
    proc: subprocess.CompletedProcess[str], schema: str, code: int = 0
) -> dict[str, Any]:
    """A command's `--json` result on stdout, checked against rgpu/schemas/SCHEMA."""
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    assert "Traceback" not in proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    published = json.loads((REPO / "rgpu/schemas" / schema).read_text(encoding="utf-8"))
    jsonschema.validate(data, published, cls=jsonschema.Draft202012Validator)
    return data


def check_named(report: Mapping[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in report["checks"] if c["name"] == name)
    return found


def assemble(ptxas: str, file: Path, arch: str) -> None:
    """ptxas, run by the test itself, assembles ``file`` for ``arch``."""
    proc = subprocess.run(
        [ptxas, f"-arch={arch}", str(file), "-o", os.devnull],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"ptxas rejects {file.name} for {arch}:\n{proc.stderr}"


def environ(*, drop: Sequence[str] = (), **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def python_without_ptxas(tmp_path: Path) -> Path:
    """A Python like this one without the nvidia-cuda-nvcc wheel (the state of a machine
    with no ptxas): a venv of its own whose site-packages has this one's packages but
    nvidia's, linked, and this checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    mine = Path(sysconfig.get_paths()["purelib"])
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    theirs = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", where], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    for entry in mine.iterdir():
        if entry.name.startswith(("nvidia", "_editable_impl_rgpu", "__editable__")):
            continue
        (theirs / entry.name).symlink_to(entry)
    (theirs / "rgpu-checkout.pth").write_text(f"{REPO}\n", encoding="utf-8")
    return venv / "bin" / "python"


def path_without(names: Sequence[str], where: Path) -> str:
    """PATH with none of the programs `names`: each directory of PATH that holds one is
    replaced by a directory (under `where`) of links to everything else it holds. The state
    of a machine without those programs, the rest of PATH as it is."""
    dirs = []
    for index, entry in enumerate(os.environ["PATH"].split(os.pathsep)):
        directory = Path(entry)
        if not any((directory / n).exists() for n in names):
            dirs.append(entry)
            continue
        links = where / f"path-{index}"
        links.mkdir(parents=True, exist_ok=True)
        for program in directory.iterdir():
            if program.name not in names and not (links / program.name).exists():
                (links / program.name).symlink_to(program)
        dirs.append(str(links))
    return os.pathsep.join(dirs)


@pytest.fixture(scope="session")
def cuda_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rgpu build --backend cuda` once, default archs: PTX for sm_75/80/90 by the real
    nvptx codegen, checked by ptxas, and the host with the cuda feature. Tests only read it
    (and run rgpu commands that must leave it as it is)."""
    ws = new_workspace(tmp_path_factory.mktemp("cuda"), "cudademo")
    run_rgpu("build", "--backend", "cuda", cwd=ws)
    return ws


@pytest.fixture(scope="session")
def built_ptx(cuda_ws: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Copies of cuda_ws's PTX (arch -> file) outside any workspace: what a user would
    pass to --kernel-artifact."""
    out = tmp_path_factory.mktemp("ptx")
    found = {}
    for artifact in ptx_of(cuda_ws):
        copy = out / f"from-ci-{artifact.target}.ptx"
        shutil.copyfile(kernels_dir(cuda_ws) / artifact.path, copy)
        found[artifact.target] = copy
    assert sorted(found) == list(CUDA_ARCHS)
    return found


# --- stand-ins for what cannot exist here ------------------------------------------------


def fake_tool(directory: Path, name: str, script: str) -> Path:
    """A FAKE program `name` in `directory` (a shell script), for a tool that cannot be
    installed here or a broken one."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(0o755)
    return path


def real_rustup() -> str | None:
    return shutil.which("rustup")


@dataclass(frozen=True)
class RustupState:
    """A rustup home of the test's own: the real rustup, toolchains the test put there."""

    home: Path  # RUSTUP_HOME
    cargo_home: Path  # CARGO_HOME

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env.pop("RUSTUP_TOOLCHAIN", None)
        env["RUSTUP_HOME"] = str(self.home)
        env["CARGO_HOME"] = str(self.cargo_home)
        return env

    def rustup(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["rustup", *args], env=self.env(), capture_output=True, text=True, check=False
        )

    def link_system(self) -> None:
        """The system toolchain (/usr: Debian's rustc-web and cargo-web) as this home's
        default, through `rustup toolchain link`: cargo and rustc work, and no pin matches
        it (its name is `system`)."""
        if not (Path("/usr/bin/rustc").is_file() and Path("/usr/bin/cargo").is_file()):
            pytest.skip("no system rustc/cargo in /usr/bin (rustc-web, cargo-web)")
        for args in (("toolchain", "link", "system", "/usr"), ("default", "system")):
            done = self.rustup(*args)
            assert done.returncode == 0, done.stderr

    def toolchains(self) -> list[str]:
        out = self.rustup("toolchain", "list").stdout
        names = [line.split()[0] for line in out.splitlines() if line.strip()]
        return [] if out.startswith("no installed toolchains") else names


def rustup_state(root: Path) -> RustupState:
    if real_rustup() is None:
        pytest.skip("rustup is not installed")
    state = RustupState(root / "rustup-home", root / "cargo-home")
    state.home.mkdir(parents=True, exist_ok=True)
    state.cargo_home.mkdir(parents=True, exist_ok=True)
    return state


RUSTC_VV = """\
rustc {release} ({short} {date})
binary: rustc
commit-hash: {commit}
commit-date: {date}
host: {host}
release: {release}
LLVM version: 22.1.0
"""


def fake_toolchain(
    state: RustupState,
    channel: str,
    components: Sequence[str],
    *,
    commit: str = "0123456789abcdef0123456789abcdef01234567",
    release: str = "1.96.0-nightly",
) -> str:
    """A FAKE installed rustup toolchain: the files rustup itself reads (a channel manifest
    that offers the usual components, the installed-components list) and a `rustc` that
    answers `-vV` with `commit` and runs the system rustc otherwise. Returns its full name."""
    name = f"{channel}-{HOST}"
    root = state.home / "toolchains" / name
    rustlib = root / "lib" / "rustlib"
    rustlib.mkdir(parents=True, exist_ok=True)
    date = channel.removeprefix("nightly-") if channel.startswith("nightly-") else "2026-04-01"
    vv = RUSTC_VV.format(release=release, short=commit[:9], date=date, commit=commit, host=HOST)
    fake_tool(
        root / "bin",
        "rustc",
        f'if [ "$1" = "-vV" ]; then cat <<\'EOF\'\n{vv}EOF\nexit 0; fi\nexec /usr/bin/rustc "$@"\n',
    )
    base = ("rustc", "rust-std", "cargo")
    extensions = ("rust-src", "rustc-dev", "llvm-tools", "llvm-bitcode-linker", "miri")

    def target_of(pkg: str) -> str:
        return "*" if pkg == "rust-src" else HOST

    def entry(pkg: str, ext: bool) -> str:
        return (
            f'{{ pkg = "{pkg}", target = "{target_of(pkg)}", is_extension = {str(ext).lower()} }}'
        )

    lines = ['manifest-version = "2"', f'date = "{date}"', ""]
    lines += ["[pkg.rust]", f'version = "{release}"', f'[pkg.rust.target."{HOST}"]']
    lines += ["available = true", 'url = "https://example.invalid/rust.tar.gz"', 'hash = "0"']
    lines += ["components = [" + ", ".join(entry(p, False) for p in base) + "]"]
    lines += ["extensions = [" + ", ".join(entry(p, True) for p in extensions) + "]", ""]
    for pkg in (*base, *extensions):
        lines += [
            f"[pkg.{pkg}]",
            f'version = "{release}"',
            f'[pkg.{pkg}.target."{target_of(pkg)}"]',
        ]
        lines += ["available = true", 'url = "https://example.invalid/x.tar.gz"', 'hash = "0"', ""]
    (rustlib / "multirust-channel-manifest.toml").write_text("\n".join(lines), encoding="utf-8")
    installed = ['config_version = "1"', ""]
    for pkg in (*base, *components):
        installed += ["[[components]]", f'pkg = "{pkg}"', f'target = "{target_of(pkg)}"']
        installed += ["is_extension = false", ""]
    (rustlib / "multirust-config.toml").write_text("\n".join(installed), encoding="utf-8")
    listed = state.rustup("component", "list", "--installed", "--toolchain", name)
    assert listed.returncode == 0, listed.stderr
    return name
