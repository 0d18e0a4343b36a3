"""rgpu-primitives and kernels from library crates, as a user meets them: a workspace made by
`rgpu new --template minimal` whose kernel crate depends on rgpu-primitives (vendored by
rgpu), on a library of kernels inside the workspace and on one outside its directory (as a
crate from cargo's registry is), with `.cargo/config.toml` setting RGPU_WORKSPACE.

One session workspace, built for the cpu and then for every GPU backend at once (2 cores:
minutes each): the FIXTURE
program and test (tests/fixtures/primitives/) run every primitive at several sizes against
plain Rust and the library kernels, on the cpu, on wgpu and ash on Mesa lavapipe (rust-gpu's
SPIR-V, passthrough and through naga), in headless Chromium (rgpu-naga's WGSL), and CUDA is
built (PTX through ptxas, the host compiled). Float sums are compared with the cpu
backend's bits.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu import __version__
from rgpu.artifacts.manifest import read_kernels
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import REPO, run_rgpu
from tests.integration.conftest import LAVAPIPE, assert_clean_failure, kernels_dir, manifest_of

FIXTURE = REPO / "tests" / "fixtures" / "primitives"
NAME = "primws"
LIBRARY_KERNELS = {"inner_triple": "inner-kernels", "outer_xor": "outer-kernels"}
CONFIG = '[env]\nRGPU_WORKSPACE = { value = ".", relative = true }\n'
USES = "rgpu-primitives.workspace = true\n"


def add_libraries(ws: Path, outer: Path) -> None:
    """The kernel crate depends on rgpu-primitives and the two libraries of kernels; the
    host uses the primitives; `.cargo/config.toml` names the workspace."""
    vendored = f"vendor/rgpu-{__version__}"
    shutil.copytree(FIXTURE / "inner", ws / "inner")
    shutil.copytree(FIXTURE / "outer", outer)
    manifest = outer / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        .replace("RGPU_PATH", str(ws / vendored / "rgpu"))
        .replace("=0.2.0", f"={__version__}")
    )
    for rel in ("src/lib.rs", "src/main.rs", "tests/primitives.rs"):
        shutil.copy(FIXTURE / rel, ws / rel)
    root = ws / "Cargo.toml"
    text = root.read_text()
    text = text.replace('members = ["kernel"]', 'members = ["kernel", "inner"]')
    dependency = f'{{ version = "={__version__}", path = "{vendored}/rgpu-primitives" }}'
    text = text.replace(
        "[workspace.dependencies]\n", f"[workspace.dependencies]\nrgpu-primitives = {dependency}\n"
    )
    text = text.replace("rgpu.workspace = true\n", f"rgpu.workspace = true\n{USES}")
    root.write_text(text)
    kernel = ws / "kernel" / "Cargo.toml"
    kernel.write_text(
        kernel.read_text().replace(
            "rgpu.workspace = true\n",
            f"rgpu.workspace = true\n{USES}"
            'inner-kernels = { path = "../inner" }\n'
            f'outer-kernels = {{ path = "{outer}" }}\n',
        )
    )
    lib = ws / "kernel" / "src" / "lib.rs"
    reexports = (
        "pub use inner_kernels::inner_triple;\npub use outer_kernels::outer_xor;\n"
        "use rgpu_primitives as _; // its kernels, linked into this crate's modules\n"
    )
    lib.write_text(lib.read_text() + "\n" + reexports)
    (ws / ".cargo").mkdir()
    (ws / ".cargo" / "config.toml").write_text(CONFIG)


@pytest.fixture(scope="session")
def primws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("primitives")
    run_rgpu("new", NAME, "--template", "minimal", "--dir", str(parent))
    ws = parent / NAME
    add_libraries(ws, parent / "outer-kernels")
    return ws


def passed(stderr: str, backend: str) -> set[str]:
    """The checks `rgpu test` says passed on `backend` (its `passed  BACKEND: a, b` line)."""
    found = re.search(rf"passed  {backend}: (.*)", stderr)
    return set(found.group(1).split(", ")) if found else set()


def test_on_the_cpu_every_primitive_and_library_kernel_matches_plain_rust(primws: Path) -> None:
    run_rgpu("build", "-C", str(primws), "--backend", "cpu")
    proc = run_rgpu("test", "-C", str(primws), "--backend", "cpu")
    # "multi": the multi-device sort and reductions over two openings of the device.
    assert {"primitives", "multi"} <= passed(proc.stderr, "cpu"), proc.stdout + proc.stderr[-3000:]
    run = run_rgpu("run", "-C", str(primws), "--backend", "cpu", "--", "--quick")
    assert "all checks passed" in run.stdout, run.stderr[-3000:]


@pytest.fixture(scope="session")
def built(primws: Path) -> Path:
    """Every GPU backend in one build (one rust-gpu run, one native host build, one wasm
    build, the nvptx PTX): the slow part of this file, once."""
    backends = "cuda,wgpu,ash,webgpu"
    run_rgpu("build", "-C", str(primws), "--backend", backends, "--yes", env=LAVAPIPE)
    return primws


def test_the_manifest_names_each_kernels_crate(built: Path) -> None:
    owners = {k.name: k.package for k in read_kernels(kernels_dir(built)) or ()}
    for name, crate in LIBRARY_KERNELS.items():
        assert owners[name] == crate
    assert owners["saxpy"] == f"{NAME}-kernel"
    assert owners["prim_radix_downsweep"] == "rgpu-primitives"
    (spv,) = [a for a in manifest_of(built) if a.kind == "spirv"]
    assert set(owners) <= set(spv.entry_points)
    wgsl = {e for a in manifest_of(built) if a.kind == "wgsl" for e in a.entry_points}
    assert set(LIBRARY_KERNELS) <= wgsl and "prim_scan_downsweep" in wgsl


def test_on_lavapipe_every_primitive_matches_plain_rust_through_wgpu_and_ash(built: Path) -> None:
    env = {**LAVAPIPE, "RGPU_REQUIRE_BACKENDS": "wgpu,ash"}
    proc = run_rgpu("test", "-C", str(built), "--backend", "wgpu", "--backend", "ash", env=env)
    for backend in ("wgpu", "ash"):
        assert {"primitives", "multi"} <= passed(proc.stderr, backend), (
            proc.stdout + proc.stderr[-3000:]
        )


def test_through_naga_the_primitives_match_too(built: Path) -> None:
    env = {**LAVAPIPE, "RGPU_WGPU_SHADER": "naga"}
    run = run_rgpu("run", "-C", str(built), "--backend", "wgpu", "--", "--quick", env=env)
    assert "all checks passed" in run.stdout, run.stderr[-3000:]


def test_cuda_builds_every_crates_kernels_into_checked_ptx(built: Path) -> None:
    ptx = [a for a in manifest_of(built) if a.kind == "ptx"]
    assert ptx, "no PTX in the manifest"
    for artifact in ptx:
        text = (kernels_dir(built) / artifact.path).read_text()
        entries = set(re.findall(r"\.entry (\w+)\(", text))
        assert {"saxpy", *LIBRARY_KERNELS, "prim_radix_downsweep_pairs"} <= entries, entries
        if find_ptxas(dict(os.environ)) is not None:
            assert artifact.extra["ptxas"] == "accepted", artifact.extra


def test_a_kernel_name_declared_in_two_crates_is_refused(tmp_path: Path) -> None:
    run_rgpu("new", "clash", "--template", "minimal", "--dir", str(tmp_path))
    ws = tmp_path / "clash"
    add_libraries(ws, tmp_path / "outer-kernels")
    lib = ws / "inner" / "src" / "lib.rs"
    lib.write_text(lib.read_text().replace("fn inner_triple", "fn saxpy"))
    kernel = ws / "kernel" / "src" / "lib.rs"
    kernel.write_text(
        kernel.read_text().replace("inner_kernels::inner_triple", "inner_kernels::saxpy as s2")
    )
    proc = run_rgpu("build", "-C", str(ws), "--backend", "wgpu", "--dry-run", check=False)
    assert_clean_failure(proc, 9)
    assert "kernel `saxpy` is declared in two crates" in proc.stderr, proc.stderr


def test_without_rgpu_workspace_in_the_cargo_config_the_build_says_what_to_add(
    tmp_path: Path,
) -> None:
    run_rgpu("new", "noenv", "--template", "minimal", "--dir", str(tmp_path))
    ws = tmp_path / "noenv"
    add_libraries(ws, tmp_path / "outer-kernels")
    (ws / ".cargo" / "config.toml").unlink()
    proc = run_rgpu("build", "-C", str(ws), "--backend", "wgpu", "--dry-run", check=False)
    assert_clean_failure(proc, 9)
    assert "inner-kernels, outer-kernels" in proc.stderr
    assert 'RGPU_WORKSPACE = { value = ".", relative = true }' in proc.stderr


def test_in_headless_chromium_every_primitive_matches_plain_rust(built: Path) -> None:
    # Most of the page's run is SwiftShader compiling the pipelines (about 5 minutes here).
    run = run_rgpu("run", "-C", str(built), "--backend", "webgpu", "--", "--quick")
    assert "device: webgpu" in run.stdout and "all checks passed" in run.stdout, (
        run.stdout + run.stderr[-3000:]
    )


def test_the_crates_own_tests_pass() -> None:
    """rgpu-primitives' unit tests in rgpu's crates workspace: the host versions and the
    kernels (on the cpu backend) against plain Rust at the edge sizes, NaN and -0.0 keys, the
    launch hook, a scan row longer than one round."""
    proc = subprocess.run(
        ["cargo", "test", "--release", "-p", "rgpu-primitives"],
        cwd=REPO / "crates",
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(r"test result: ok\. (\d+) passed", proc.stdout), proc.stdout[-2000:]
