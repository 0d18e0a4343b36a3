"""The nvvm codegen's generated crates and commands, checked against Rust-CUDA's documented
interface at the pinned rev (the codegen itself cannot run on our machines: it needs the
pinned nightly's rustc-dev, LLVM 7 and CUDA, and `cargo check` of the generated crates needs
github.com for the git dependencies)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from rgpu.codegens import KernelBuild, nvvm
from rgpu.config import resolve
from rgpu.errors import ConfigError
from tests.unit.projects import demo_project

REV = "946c91f080770f30d42d7c706ac8185969274073"


def kernel_build(tmp_path: Path, archs: str = "sm_70,sm_80") -> KernelBuild:
    root = tmp_path / "ws"
    for crate, name in (("kernel", "demo-kernel"), ("shared", "demo-shared")):
        (root / crate).mkdir(parents=True)
        (root / crate / "Cargo.toml").write_text(f'[package]\nname = "{name}"\n')
    project = demo_project(root)
    options = resolve(metadata={}, env={"RGPU_CUDA_ARCHS": archs}, cli={})
    return KernelBuild(project=project, options=options, out_dir=root / "target" / "rgpu")


def spec(tmp_path: Path) -> nvvm.BuilderSpec:
    return nvvm.make_spec(kernel_build(tmp_path), nvvm.Pins())


def test_sm_archs_map_to_nvvm_arch_variants() -> None:
    assert nvvm.nvvm_arch("sm_80") == "Compute80"
    assert nvvm.nvvm_arch("compute_120") == "Compute120"
    with pytest.raises(ConfigError):
        nvvm.nvvm_arch("sm_35")  # below NvvmArch::Compute50


def test_builder_manifest_pins_cuda_builder_with_the_backend_feature(tmp_path: Path) -> None:
    data = tomllib.loads(nvvm.builder_manifest(spec(tmp_path)))
    dep = data["build-dependencies"]["cuda_builder"]
    assert dep == {
        "git": "https://github.com/Rust-GPU/rust-cuda",
        "rev": REV,
        "features": ["rustc_codegen_nvvm"],
    }
    assert data["package"]["build"] == "build.rs" and "workspace" in data


def test_entry_manifest_roots_at_the_template_entry_and_enables_the_nvvm_feature(
    tmp_path: Path,
) -> None:
    s = spec(tmp_path)
    data = tomllib.loads(nvvm.entry_manifest(s))
    assert data["lib"] == {
        "path": f"{s.kernel_dir}/nvvm/kernels.rs",
        "crate-type": ["cdylib", "rlib"],
    }
    deps = data["dependencies"]
    assert deps["cuda_std"] == {"git": "https://github.com/Rust-GPU/rust-cuda", "rev": REV}
    assert deps["kernel"] == {"package": "demo-kernel", "path": s.kernel_dir, "features": ["nvvm"]}
    assert deps["shared"]["package"] == "demo-shared"


def test_build_script_calls_cuda_builder_once_per_arch(tmp_path: Path) -> None:
    s = spec(tmp_path)
    text = nvvm.builder_build_rs(s, "/cache/entry")
    assert "use cuda_builder::{CudaBuilder, NvvmArch};" in text
    assert f'(NvvmArch::Compute70, "{s.out_dir}/demo_kernel-sm_70.ptx"),' in text
    assert f'(NvvmArch::Compute80, "{s.out_dir}/demo_kernel-sm_80.ptx"),' in text
    assert "CudaBuilder::new(ENTRY_CRATE)" in text and ".copy_to(ptx)" in text
    assert ".arch(arch)" in text and ".release(true)" in text


@pytest.mark.skipif(shutil.which("rustfmt") is None, reason="rustfmt not installed")
def test_generated_build_script_parses_as_rust(tmp_path: Path) -> None:
    file = tmp_path / "build.rs"
    file.write_text(nvvm.builder_build_rs(spec(tmp_path), "/cache/entry"))
    proc = subprocess.run(
        ["rustfmt", "--edition", "2021", "--emit", "stdout", str(file)],
        capture_output=True,
        text=True,
    )  # rustfmt exits non-zero on a syntax error
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_plan_installs_the_pinned_nightly_writes_the_builder_and_builds(tmp_path: Path) -> None:
    build = kernel_build(tmp_path)
    env = {"HOME": str(tmp_path), "PATH": str(tmp_path), "RGPU_CACHE_DIR": str(tmp_path / "c")}
    plan = nvvm.NvvmCodegen(env).plan(build)
    install, write, compile_ = plan.steps
    assert install.argv == ("rustup", "toolchain", "install", "nightly-2026-04-02", "--profile",
                            "minimal", "--component", "rust-src,rustc-dev,llvm-tools")  # fmt: skip
    assert install.container_ok and not write.container_ok and compile_.container_ok
    root = tmp_path / "c" / "nvvm" / REV[:12]
    assert compile_.argv[:4] == ("cargo", "+nightly-2026-04-02", "build", "--release")
    assert compile_.argv[-1].startswith(str(root)) and compile_.argv[-1].endswith(
        "builder/Cargo.toml"
    )
    # No LLVM 7 here: the build goes to Rust-CUDA's image, whose paths the env names.
    assert compile_.env == {
        "CUDA_PATH": "/usr/local/cuda",
        "LD_LIBRARY_PATH": "/usr/local/cuda/nvvm/lib64",
        "LLVM_CONFIG": "/opt/llvm-7/bin/llvm-config",
    }
    assert "RUSTFLAGS" in compile_.unset_env and "CARGO_TARGET_DIR" in compile_.unset_env
    assert any("not exercised in rgpu's CI" in n for n in plan.notes)


def test_native_env_uses_the_local_llvm7_and_cuda(tmp_path: Path) -> None:
    llvm = tmp_path / "llvm-config"  # named fixture: an llvm-config that reports 7.1.0
    llvm.write_text("#!/bin/sh\necho 7.1.0\n")
    llvm.chmod(0o755)
    env = {"LLVM_CONFIG": str(llvm), "CUDA_PATH": "/opt/cuda-12.8", "LD_LIBRARY_PATH": "/x"}
    assert nvvm.toolchain_env(False, env) == {
        "CUDA_PATH": "/opt/cuda-12.8",
        "LD_LIBRARY_PATH": "/opt/cuda-12.8/nvvm/lib64:/x",
        "LLVM_CONFIG": str(llvm),
    }


def test_image_is_picked_by_cuda_major(tmp_path: Path) -> None:
    (tmp_path / "version.json").write_text(json.dumps({"cuda": {"version": "13.0.2"}}))
    image = nvvm.NvvmCodegen().container_image({"CUDA_PATH": str(tmp_path)})
    assert image == "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda13:latest"
    none = nvvm.NvvmCodegen().container_image({"CUDA_PATH": str(tmp_path / "missing")})
    assert none == "ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda12:latest"


def test_write_builder_step_writes_the_crates(tmp_path: Path) -> None:
    build = kernel_build(tmp_path)
    env = {"HOME": str(tmp_path), "PATH": str(tmp_path), "RGPU_CACHE_DIR": str(tmp_path / "c")}
    write = nvvm.NvvmCodegen(env).plan(build).steps[1]
    subprocess.run([sys.executable, *write.argv[1:]], check=True, cwd=write.cwd)
    root = Path(write.argv[4])
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert names == ["builder/Cargo.toml", "builder/build.rs", "builder/src/main.rs",
                     "entry/Cargo.toml"]  # fmt: skip
    assert (root / "builder" / "build.rs").read_text() == nvvm.builder_build_rs(
        nvvm.make_spec(build, nvvm.Pins()), str(root / "entry")
    )
