"""libm inside a kernel's dependencies on nvptx: `rgpu build --backend cuda` patches
crates.io's libm with rgpu-libm (crates/rgpu-libm) for the kernel build only, so glam's
`length` is `sqrt.rn.f32`, not libm's software square root (its `RSQRT_TAB`), and libm's
other functions are libm's own code from `core`'s compiler-builtins. The workspace's
Cargo.lock never sees the patch. rgpu-libm's own functions are compared with libm's on the
host (tests/fixtures/libm_exact)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.workspace import target_dir
from tests.conftest import has_nvidia_gpu, run_rgpu
from tests.integration.conftest import kernels_dir

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "libm_kernel"
EXACT = REPO / "tests" / "fixtures" / "libm_exact"
DEPENDENCIES = (
    'glam = { version = "0.30", default-features = false, features = ["libm"] }\n'
    'libm = { version = "0.2", default-features = false }\n'
)


@pytest.fixture(scope="module")
def glam_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A minimal workspace whose kernel uses glam (libm feature) and libm, built for the
    cpu first (Cargo.lock as the user's host build leaves it), then for cuda."""
    parent = tmp_path_factory.mktemp("libm")
    run_rgpu("new", "glamws", "--dir", str(parent), "--template", "minimal", "-q")
    root = parent / "glamws"
    manifest = root / "kernel" / "Cargo.toml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace("rgpu.workspace = true\n", "rgpu.workspace = true\n" + DEPENDENCIES, 1),
        encoding="utf-8",
    )
    lib = root / "kernel" / "src" / "lib.rs"
    lib.write_text(
        lib.read_text(encoding="utf-8") + (FIXTURE / "kernel.rs").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    shutil.copy(FIXTURE / "glam.rs", root / "examples" / "glam.rs")
    run_rgpu("build", "--backend", "cpu", cwd=root)
    return root


def test_glam_length_is_one_ptx_instruction_and_the_lock_is_the_users(glam_ws: Path) -> None:
    lock_before = (glam_ws / "Cargo.lock").read_bytes()
    proc = run_rgpu("build", "--backend", "cpu,cuda", "--arch", "sm_90", cwd=glam_ws)
    ptx = (kernels_dir(glam_ws) / "glamws_kernel-sm_90.ptx").read_text(encoding="utf-8")
    entry = ptx[ptx.index(".entry glam_lengths") :]
    entry = entry[: entry.index("\n}\n")]
    assert "RSQRT_TAB" not in ptx, "libm's software square root is still in the PTX"
    assert entry.count("sqrt.rn.f32") >= 1, entry
    # libm's other functions: libm's own code, defined in the module (not an extern).
    for name in ("sinf", "expf"):
        assert f"call.uni (retval0), {name}," in entry
        assert f".func  (.param .b32 func_retval0) {name}(" in ptx
    assert ".extern" not in ptx
    # The patch resolved against a copy: the user's lock is byte for byte as it was.
    assert (glam_ws / "Cargo.lock").read_bytes() == lock_before
    assert "Cargo.lock" not in proc.stderr.split("built ")[-1]
    copy = target_dir(glam_ws, os.environ) / "rgpu-nvptx" / "sm_90" / "Cargo.lock"
    assert (
        'source = "registry'
        not in copy.read_text(encoding="utf-8").split('name = "libm"')[1].split("[[package]]")[0]
    )


def test_the_cpu_runs_the_same_kernel(glam_ws: Path) -> None:
    proc = run_rgpu("run", "--backend", "cpu", "--example", "glam", cwd=glam_ws)
    assert "glam_lengths on cpu: 65536 values" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.gpu
@pytest.mark.skipif(not has_nvidia_gpu(), reason="needs an NVIDIA GPU")
def test_on_the_gpu_glam_matches_the_cpu(glam_ws: Path) -> None:
    run_rgpu("build", "--backend", "cuda", "--arch", "native", cwd=glam_ws)
    proc = run_rgpu("run", "--backend", "cuda", "--example", "glam", cwd=glam_ws)
    assert "glam_lengths on cuda" in proc.stdout, proc.stdout + proc.stderr


def test_rgpu_libms_own_functions_match_libm(tmp_path: Path) -> None:
    """frexp, ilogb, modf, nextafter, remainder, remquo, scalbn, rounding and sqrt
    bit-identical to crates.io's libm 0.2.16 over 20,022 values (x 52 for two-argument
    functions); exp10 and atanh within two ulp."""
    work = tmp_path / "libm_exact"
    shutil.copytree(EXACT, work)
    manifest = work / "Cargo.toml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace(
            "../../../crates/rgpu-libm", (REPO / "crates" / "rgpu-libm").as_posix()
        ),
        encoding="utf-8",
    )
    # rgpu-libm uses `core::f32::math` (nightly): the stable toolchain with the bootstrap
    # switch, as rgpu's nvptx route builds it.
    env = {**os.environ, "RUSTC_BOOTSTRAP": "1"}
    proc = subprocess.run(
        ["cargo", "run", "--release", "-q"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if ": " in line and "differ" in line]
    assert len(lines) == 21, proc.stdout
    assert all(" 0 of " in line for line in lines), proc.stdout
