"""The shader crate rgpu generates for cargo-gpu (rgpu/codegens/spirv.py + standalone.py), for
the demo's kernels and for a user's, checked with plain cargo.

`rgpu build --backend wgpu` writes the kernel crate restated as a standalone package under
target/rgpu/spirv/crate (its own workspace, the kernel crate's src/lib.rs as its library, its
dependencies from kernel/Cargo.toml, rgpu's `spirv` feature), then hands it to cargo-gpu.
Here the write step of the real build plan runs (`--dry-run --json` gives the plan), and
stable cargo checks the result on the host with rgpu's `check-spirv` feature in place of
`spirv`: the rust-gpu entry points `#[rgpu::kernel]` generates are compiled against the real
spirv-std 0.11 API (type-checked, not code-generated). rust-gpu itself compiles the crate in
tests/integration/test_rust_gpu.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from rgpu.util.files import write_tree
from tests.conftest import TARGET_DIR, run_rgpu

SPIRV_STD = "=0.11.0"
USER_KERNELS = """
#[rgpu::kernel]
pub fn saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
    *y += a * *x;
}

#[rgpu::kernel(threads = 64)]
pub fn scale(t: rgpu::Item, a: u32, x: &[u32], y: rgpu::Global<u32>) {
    let i = t.index();
    // SAFETY: i < n <= y.len(); each i is written by one invocation.
    unsafe { y.write(i, a * x[i as usize]) }
}

#[rgpu::kernel(threads = 64)]
pub fn reverse(g: rgpu::Group, keys: rgpu::Global<u32>, tile: rgpu::Shared<u32, 64>) {
    let (base, t) = (g.id() * 64, g.thread());
    if base + t < keys.len() {
        // SAFETY: in bounds; this invocation's own element.
        tile.store(t, unsafe { keys.read(base + t) });
    }
    g.barrier();
    if base + t < keys.len() {
        // SAFETY: as above.
        unsafe { keys.write(base + t, tile.load(63 - t)) };
    }
}

#[rgpu::kernel]
pub fn norm(#[item] x: &f32, #[item] y: &f32, #[item] out: &mut f32) {
    *out = libm::sqrtf(*x * *x + *y * *y);
}
"""


def cargo(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["cargo", *args],
        cwd=cwd,
        env={**os.environ, "CARGO_TARGET_DIR": str(TARGET_DIR / "spirv-check"), **(env or {})},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, f"cargo {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def write_shader_crate(ws: Path) -> Path:
    """Run the write step of `rgpu build --backend wgpu`'s plan, as the build does."""
    plan = json.loads(run_rgpu("build", "--backend", "wgpu", "--dry-run", "--json", cwd=ws).stdout)
    (step,) = [s for s in plan["plan"]["steps"] if s["name"] == "write-crate"]
    crate = ws / "target" / "rgpu" / "spirv" / "crate"
    assert step["argv"] == [] and step["cwd"] == str(crate)  # rgpu writes the files itself
    write_tree(crate, step["files"])
    assert (crate / "Cargo.toml").is_file()
    return crate


def host_check_copy(crate: Path, dest: Path) -> Path:
    """The generated manifest with rgpu's `check-spirv` feature for `spirv` (the same cfg,
    rgpu_codegen = "spirv", on the host) and no dylib, in ``dest``."""
    text = (crate / "Cargo.toml").read_text()
    assert text.count('features = ["spirv"]') == 1
    text = text.replace('features = ["spirv"]', 'features = ["check-spirv"]')
    text = text.replace('crate-type = ["rlib", "dylib"]', 'crate-type = ["rlib"]')
    dest.mkdir(parents=True)
    (dest / "Cargo.toml").write_text(text)
    return dest


def expanded(crate: Path) -> str:
    """The library after macro expansion (rustc's -Zunpretty; RUSTC_BOOTSTRAP lets stable
    print it)."""
    return cargo("rustc", "--lib", "-q", "--", "-Zunpretty=expanded", cwd=crate,
                 env={"RUSTC_BOOTSTRAP": "1"})  # fmt: skip


@pytest.fixture(scope="module")
def demo_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("shader-demo")
    run_rgpu("new", "shaderdemo", "--dir", str(parent))
    return parent / "shaderdemo"


@pytest.fixture(scope="module")
def user_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with the user's kernels: every kind of parameter, and a third-party
    crate (libm) added to kernel/Cargo.toml."""
    parent = tmp_path_factory.mktemp("shader-user")
    run_rgpu("new", "shaderuser", "--dir", str(parent))
    ws = parent / "shaderuser"
    manifest = ws / "kernel" / "Cargo.toml"
    manifest.write_text(
        manifest.read_text().replace("[dependencies]\n", '[dependencies]\nlibm = "0.2"\n', 1)
    )
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + USER_KERNELS)
    return ws


@pytest.fixture(scope="module")
def demo_crate(demo_ws: Path) -> Path:
    return write_shader_crate(demo_ws)


@pytest.fixture(scope="module")
def user_crate(user_ws: Path) -> Path:
    return write_shader_crate(user_ws)


def load(crate: Path) -> dict[str, Any]:
    return tomllib.loads((crate / "Cargo.toml").read_text())


def test_the_demos_shader_crate_restates_the_kernel_crate(demo_ws: Path, demo_crate: Path) -> None:
    data = load(demo_crate)
    assert data["package"]["name"] == "shaderdemo-kernel-spirv"
    assert data["lib"] == {
        "name": "shaderdemo_kernel",
        "path": str((demo_ws / "kernel" / "src" / "lib.rs").resolve()),
        "crate-type": ["rlib", "dylib"],
    }
    deps = data["dependencies"]
    vendor = (demo_ws / "vendor" / "rgpu-0.2.0" / "rgpu").resolve()
    assert deps["rgpu"] == {"version": "=0.2.0", "path": str(vendor), "features": ["spirv"]}
    # `bytemuck.workspace = true`, resolved against [workspace.dependencies].
    assert deps["bytemuck"] == {"version": "1.16", "default-features": False}
    assert deps["spirv-std"] == {"version": SPIRV_STD}  # cargo-gpu reads rust-gpu's version here
    assert data["workspace"] == {}  # its own workspace: the user's Cargo.lock never sees it


def test_the_shader_crate_is_its_own_workspace(demo_ws: Path, demo_crate: Path) -> None:
    data = json.loads(cargo("metadata", "--format-version", "1", "--no-deps", cwd=demo_crate))
    assert data["workspace_root"] == str(demo_crate)
    (package,) = data["packages"]
    (lib,) = package["targets"]
    assert Path(lib["src_path"]).resolve() == (demo_ws / "kernel" / "src" / "lib.rs").resolve()


def test_the_host_workspace_has_no_git_dependency(demo_ws: Path) -> None:
    data = json.loads(cargo("metadata", "--format-version", "1", cwd=demo_ws))
    sources = {p["source"] or "path" for p in data["packages"]}
    assert not [s for s in sources if s.startswith("git+")], sources
    names = {p["name"] for p in data["packages"]}
    assert "shaderdemo-kernel-spirv" not in names


def test_the_demos_spirv_entry_points_compile_against_spirv_std(
    demo_crate: Path, tmp_path: Path
) -> None:
    check = host_check_copy(demo_crate, tmp_path / "check")
    cargo("check", "--lib", cwd=check)
    code = expanded(check)
    # The rust-gpu entry points were in what cargo checked (the host launchers were not).
    for kernel in ("bitonic_tile", "bitonic_global"):
        assert f"pub fn {kernel}(" in code
    assert "__p: &__rgpu_params_bitonic_tile, __b0: &mut [u32]," in code
    assert "__w0: &mut [u32; ({ TILE_KEYS as usize }) as usize]" in code
    assert "fn bitonic_tile(device: &::rgpu::Device" not in code


def test_the_user_kernels_shader_crate_brings_the_third_party_crate(user_crate: Path) -> None:
    deps = load(user_crate)["dependencies"]
    assert deps["libm"] == {"version": "0.2"}
    assert deps["rgpu"]["features"] == ["spirv"]


def test_the_user_kernels_spirv_entry_points_compile_against_spirv_std(
    user_crate: Path, tmp_path: Path
) -> None:
    check = host_check_copy(user_crate, tmp_path / "check")
    cargo("check", "--lib", cwd=check)
    code = " ".join(expanded(check).split())
    # Each entry point with the interface the Vulkan hosts bind: the params block as the push
    # constant, buffers in declaration order, workgroup memory last.
    assert (
        "pub struct __rgpu_params_saxpy { pub count: u32, pub len_0: u32, pub len_1: u32, "
        "pub a: f32, }"
    ) in code
    assert "__p: &__rgpu_params_saxpy, __b0: &[f32], __b1: &mut [f32])" in code
    assert "__p: &__rgpu_params_scale, __b0: &[u32], __b1: &mut [u32])" in code
    reverse = "__p: &__rgpu_params_reverse, __b0: &mut [u32], __w0: &mut [u32; (64) as usize])"
    assert reverse in code
    assert "__p: &__rgpu_params_norm, __b0: &[f32], __b1: &[f32], __b2: &mut [f32])" in code
    assert "libm::sqrtf" in code
