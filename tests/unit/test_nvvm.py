"""The nvvm codegen's generated crates and commands (codegens.nvvm), checked against
Rust-CUDA's documented interface at the pinned rev (the codegen itself cannot run on our
machines: it needs the pinned nightly's rustc-dev, LLVM 7 and CUDA, and `cargo check` of the
generated crates needs github.com for the git dependencies)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from rgpu.codegens import KernelBuild, nvvm
from rgpu.containers.placement import Placement
from rgpu.cuda_archs import Arch
from rgpu.errors import ConfigError
from rgpu.runner import run_step
from tests.unit.projects import demo_workspace, fake_program, kernel_build, options, pin

REV = "946c91f080770f30d42d7c706ac8185969274073"
REPO = "https://github.com/Rust-GPU/rust-cuda"
PIN = nvvm.nvvm_pin(pin("nvvm"))
CONTAINER = Placement(True, "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda12:latest", "test")


def build(tmp_path: Path, archs: str = "sm_70,sm_80") -> KernelBuild:
    ws = demo_workspace(tmp_path / "ws")
    env = {"HOME": str(tmp_path), "RGPU_CACHE_DIR": str(tmp_path / "cache")}
    found = nvvm.CODEGEN.toolchain(pin("nvvm"), CONTAINER, env)
    return kernel_build(ws, "nvvm", found, options({"RGPU_CUDA_ARCHS": archs}), CONTAINER)


def test_sm_archs_map_to_nvvm_arch_variants() -> None:
    assert nvvm.nvvm_arch(Arch(80), PIN) == "Compute80"
    assert nvvm.nvvm_arch(Arch(120), PIN) == "Compute120"
    for arch in (Arch(35), Arch(90, "a")):
        with pytest.raises(ConfigError, match=f"`{arch}` is not one rustc_codegen_nvvm"):
            nvvm.nvvm_arch(arch, PIN)


def test_the_nvvm_archs_come_from_the_pins_nvvm_table() -> None:
    assert {"50", "80", "121"} <= PIN.archs
    narrow = dataclasses.replace(PIN, archs=frozenset({"80"}))
    assert nvvm.nvvm_arch(Arch(80), narrow) == "Compute80"
    with pytest.raises(ConfigError) as err:
        nvvm.nvvm_arch(Arch(90), narrow)
    assert err.value.hint == "use sm_XX with XX one of 80"


def test_the_plan_installs_the_pinned_nightly_writes_both_crates_and_builds(
    tmp_path: Path,
) -> None:
    b = build(tmp_path)
    plan = nvvm.CODEGEN.plan(b)
    install, write_kernel, write_builder, compile_ = plan.steps
    assert install.argv == (
        "rustup", "toolchain", "install", "nightly-2026-04-02", "--profile", "minimal",
        "--component", "rust-src,rustc-dev,llvm-tools",
    )  # fmt: skip
    assert install.container_ok and compile_.container_ok
    assert not write_kernel.container_ok and not write_builder.container_ok
    assert write_kernel.cwd == tmp_path / "ws" / "target" / "rgpu" / "nvvm" / "kernel"
    ws_hash = hashlib.sha256(str(tmp_path / "ws").encode()).hexdigest()[:12]
    root = tmp_path / "cache" / "nvvm" / REV[:12] / ws_hash
    assert write_builder.cwd == root
    assert compile_.argv == (
        "cargo", "+nightly-2026-04-02", "build", "--release",
        "--manifest-path", str(root / "Cargo.toml"),
        "--target-dir", str(tmp_path / "cache" / "nvvm" / REV[:12] / "target"),
    )  # fmt: skip
    # In the container: Rust-CUDA's image keeps LLVM 7 and CUDA at these paths.
    assert compile_.env == {
        "CUDA_PATH": "/usr/local/cuda",
        "LD_LIBRARY_PATH": "/usr/local/cuda/nvvm/lib64",
        "LLVM_CONFIG": "/opt/llvm-7/bin/llvm-config",
    }
    assert {"RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_TARGET_DIR"} <= set(compile_.unset_env)
    assert any("not exercised in rgpu's CI" in n for n in plan.notes)
    assert any(REV in n for n in plan.notes)


def test_the_plan_refuses_an_arch_nvvm_arch_lacks_before_anything_runs(tmp_path: Path) -> None:
    b = build(tmp_path, archs="sm_80,sm_90")
    narrow = dataclasses.replace(b.toolchain, pin=dataclasses.replace(PIN, archs=frozenset({"80"})))
    with pytest.raises(ConfigError, match="`sm_90`"):
        nvvm.CODEGEN.plan(b._replace(toolchain=narrow))


def test_the_builder_pins_cuda_builder_with_the_backend_feature(tmp_path: Path) -> None:
    files = nvvm.builder_files(build(tmp_path), PIN, (Arch(70), Arch(80)))
    assert sorted(files) == ["Cargo.toml", "build.rs", "src/main.rs"]
    data = tomllib.loads(files["Cargo.toml"])
    assert data["build-dependencies"]["cuda_builder"] == {
        "git": REPO,
        "rev": REV,
        "features": ["rustc_codegen_nvvm"],
    }
    assert data["package"]["build"] == "build.rs" and data["workspace"] == {}


def test_the_build_script_calls_cuda_builder_once_per_arch(tmp_path: Path) -> None:
    b = build(tmp_path)
    text = nvvm.builder_files(b, PIN, (Arch(70), Arch(80)))["build.rs"]
    out = tmp_path / "ws" / "target" / "rgpu" / "nvvm" / "out"
    assert "use cuda_builder::{CudaBuilder, NvvmArch};" in text
    assert f'(NvvmArch::Compute70, "{out}/demo_kernel-sm_70.ptx"),' in text
    assert f'(NvvmArch::Compute80, "{out}/demo_kernel-sm_80.ptx"),' in text
    assert f'const KERNEL: &str = "{nvvm.kernel_dir(b)}";' in text
    assert "CudaBuilder::new(KERNEL)" in text and ".copy_to(ptx)" in text
    assert ".arch(arch)" in text and ".release(true)" in text


@pytest.mark.skipif(shutil.which("rustfmt") is None, reason="rustfmt not installed")
def test_the_generated_build_script_parses_as_rust(tmp_path: Path) -> None:
    file = tmp_path / "build.rs"
    file.write_text(nvvm.builder_files(build(tmp_path), PIN, (Arch(80),))["build.rs"])
    proc = subprocess.run(
        ["rustfmt", "--edition", "2021", "--emit", "stdout", str(file)],
        capture_output=True,
        text=True,
        check=False,
    )  # rustfmt exits non-zero on a syntax error
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_rust_strings_are_escaped_and_control_characters_refused() -> None:
    assert nvvm.rust_str('/a "b"\\c') == '"/a \\"b\\"\\\\c"'
    with pytest.raises(ConfigError, match="control characters"):
        nvvm.rust_str("/a\nb")


def test_the_kernel_package_patches_cuda_std_to_the_pinned_rev(tmp_path: Path) -> None:
    data = tomllib.loads(nvvm.kernel_files(build(tmp_path), PIN)["Cargo.toml"])
    assert data["package"]["name"] == "demo-kernel-nvvm"
    assert data["patch"]["crates-io"]["cuda_std"] == {"git": REPO, "rev": REV}
    assert data["lib"]["crate-type"] == ["cdylib", "rlib"]
    assert data["dependencies"]["rgpu"]["features"] == ["nvvm"]


def test_the_write_steps_write_both_crates(tmp_path: Path) -> None:
    steps = nvvm.CODEGEN.plan(build(tmp_path)).steps
    for step in steps[1:3]:
        run_step(step)
    kernel, builder = steps[1].cwd, steps[2].cwd
    assert (kernel / "Cargo.toml").is_file()
    names = sorted(p.relative_to(builder).as_posix() for p in builder.rglob("*") if p.is_file())
    assert names == ["Cargo.toml", "build.rs", "src/main.rs"]


def test_a_local_build_uses_the_local_llvm7_and_cuda(tmp_path: Path) -> None:
    llvm = fake_program(tmp_path, "llvm-config", "echo 7.1.0\n")
    cuda = tmp_path / "cuda-12.8"
    cuda.mkdir()
    env = {"LLVM_CONFIG": str(llvm), "CUDA_PATH": str(cuda), "LD_LIBRARY_PATH": "/x"}
    assert nvvm.toolchain_env(pin("nvvm"), Placement.local("test"), env) == {
        "CUDA_PATH": str(cuda),
        "LD_LIBRARY_PATH": f"{cuda}/nvvm/lib64:/x",
        "LLVM_CONFIG": str(llvm),
    }


def test_a_container_build_uses_the_images_paths(tmp_path: Path) -> None:
    env = {"LLVM_CONFIG": "/mine/llvm-config", "LD_LIBRARY_PATH": "/x"}
    assert nvvm.toolchain_env(pin("nvvm"), CONTAINER, env) == {
        "CUDA_PATH": "/usr/local/cuda",
        "LD_LIBRARY_PATH": "/usr/local/cuda/nvvm/lib64",
        "LLVM_CONFIG": "/opt/llvm-7/bin/llvm-config",
    }


def without_default_cuda_roots() -> object:
    base = pin("nvvm")
    cuda = {**base.table("cuda"), "default_roots": []}
    return base._replace(tables={**base.tables, "cuda": cuda})


def test_the_image_is_picked_by_the_local_cuda_major(tmp_path: Path) -> None:
    (tmp_path / "version.json").write_text(json.dumps({"cuda": {"version": "13.0.2"}}))
    hermetic = without_default_cuda_roots()
    image = nvvm.CODEGEN.image(hermetic, {"CUDA_PATH": str(tmp_path)})  # type: ignore[arg-type]
    assert image == "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda13:latest"
    none = nvvm.CODEGEN.image(hermetic, {"CUDA_PATH": str(tmp_path / "missing")})  # type: ignore[arg-type]
    assert none == "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda12:latest"


def cuda_toolkit(tmp_path: Path) -> Path:
    root = tmp_path / "cuda"
    (root / "nvvm" / "lib64").mkdir(parents=True)
    (root / "nvvm" / "lib64" / "libnvvm.so.4").write_bytes(b"")
    return root


def test_a_machine_with_llvm7_cuda_and_libnvvm_on_the_path_can_build_here(tmp_path: Path) -> None:
    llvm = fake_program(tmp_path, "llvm-config", "echo 7.1.0\n")
    root = cuda_toolkit(tmp_path)
    env = {
        "LLVM_CONFIG": str(llvm),
        "CUDA_PATH": str(root),
        "LD_LIBRARY_PATH": f"{root}/nvvm/lib64",
    }
    checks = nvvm.native_checks(pin("nvvm"), env)
    assert [(c.name, c.status) for c in checks] == [
        ("nvvm llvm", "ok"), ("cuda toolkit", "ok"), ("libnvvm", "ok"),
    ]  # fmt: skip


def test_libnvvm_off_the_callers_library_path_is_fine(tmp_path: Path) -> None:
    # The build step puts CUDA's nvvm/lib64 on LD_LIBRARY_PATH itself.
    llvm = fake_program(tmp_path, "llvm-config", "echo 7.1.0\n")
    root = cuda_toolkit(tmp_path)
    checks = nvvm.native_checks(pin("nvvm"), {"LLVM_CONFIG": str(llvm), "CUDA_PATH": str(root)})
    libnvvm = checks[-1]
    assert not libnvvm.failed and f"{root}/nvvm/lib64" in libnvvm.detail
    env = nvvm.toolchain_env(pin("nvvm"), Placement.local("test"), {"CUDA_PATH": str(root)})
    assert env["LD_LIBRARY_PATH"].split(":")[0] == f"{root}/nvvm/lib64"


def test_without_llvm7_or_cuda_every_line_fails_with_the_container_way_out(tmp_path: Path) -> None:
    hermetic = without_default_cuda_roots()
    checks = nvvm.native_checks(hermetic, {"PATH": str(tmp_path)})  # type: ignore[arg-type]
    assert [c.name for c in checks] == ["nvvm llvm", "cuda toolkit", "libnvvm"]
    assert all(c.failed for c in checks)
    assert "no llvm-config on PATH" in checks[0].detail
    assert "rgpu toolchain show nvvm" in (checks[0].fix or "")
