"""The codegen registry (codegens), and the kernel crate restated as a standalone package for
the codegens that compile it in a nested cargo build (codegens.standalone)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from rgpu import backends, codegens
from rgpu.backends import BACKENDS
from rgpu.check import Check
from rgpu.codegens import nvptx, nvvm, spirv, standalone
from rgpu.errors import ConfigError, UsageError
from rgpu.toolchains import pins
from tests.unit.projects import demo_workspace

# --- the registry (rgpu/backends.py) ---------------------------------------------------------


def test_every_codegen_is_registered_with_its_backends() -> None:
    assert backends.codegen_names() == ("nvptx", "nvvm", "spirv")
    assert backends.codegens_for("cuda") == ("nvptx", "nvvm")
    assert backends.codegens_for("wgpu") == backends.codegens_for("ash") == ("spirv",)
    assert backends.codegens_for("cpu") == ()
    assert backends.backends_of("spirv") == ("wgpu", "ash", "webgpu")
    assert backends.codegens_for("webgpu") == ("spirv",)
    assert backends.backends_of("nope") == ()


def test_get_returns_each_modules_codegen() -> None:
    assert codegens.get("nvptx") is nvptx.CODEGEN
    assert codegens.get("nvvm") is nvvm.CODEGEN
    assert codegens.get("spirv") is spirv.CODEGEN
    assert [c.name for c in codegens.all_codegens()] == list(backends.codegen_names())


def test_an_unknown_codegen_suggests_the_close_one() -> None:
    with pytest.raises(UsageError) as err:
        codegens.get("nvpx")
    assert "did you mean `nvptx`" in err.value.message
    assert "nvptx (cuda) or nvvm (cuda) or spirv (wgpu, ash, webgpu)" in (err.value.hint or "")


def test_every_codegen_has_a_pin_and_builds_its_backends_artifact_kind() -> None:
    pinned = {p.name for p in pins.load_all({})}
    for codegen in codegens.all_codegens():
        assert codegen.name in pinned
        kinds = {BACKENDS[b].artifact for b in backends.backends_of(codegen.name)}
        # webgpu's WGSL is written from the spirv codegen's SPIR-V, one file per kernel.
        derived = {"wgsl"} if codegen.name == "spirv" else set()
        assert kinds == {codegen.artifact_kind} | derived


def test_resolve_picks_the_default_or_the_asked_codegen() -> None:
    assert backends.resolve_codegen("cuda", None) == "nvptx"
    assert backends.resolve_codegen("cuda", "nvvm") == "nvvm"
    assert backends.resolve_codegen("wgpu", None) == "spirv"
    assert backends.resolve_codegen("cpu", None) is None


def test_resolve_refuses_a_codegen_of_another_backend() -> None:
    with pytest.raises(UsageError) as err:
        backends.resolve_codegen("wgpu", "nvptx")
    assert "cannot build for the wgpu backend" in err.value.message
    assert err.value.hint == "codegens for wgpu: spirv"
    with pytest.raises(UsageError) as cpu:
        backends.resolve_codegen("cpu", "nvptx")
    assert "drop --codegen" in (cpu.value.hint or "")


def test_first_failure_is_the_first_failed_check() -> None:
    ok = Check("a", "ok", "fine")
    bad = [Check("b", "warn", "meh"), Check("c", "fail", "broken"), Check("d", "fail", "x")]
    assert codegens.first_failure([ok, *bad]) == bad[1]
    assert codegens.first_failure([ok]) is None


# --- the standalone package ---------------------------------------------------------------


def generated(
    tmp_path: Path,
    feature: str = "spirv",
    extra_dependencies: dict[str, Any] | None = None,
    patch: dict[str, Any] | None = None,
) -> dict[str, Any]:
    ws = demo_workspace(tmp_path)
    return standalone.manifest(
        ws,
        package="demo-kernel-x",
        feature=feature,
        crate_types=("rlib",),
        extra_dependencies=extra_dependencies,
        patch=patch,
    )


def test_workspace_dependencies_are_resolved_with_their_features_merged(tmp_path: Path) -> None:
    deps = generated(tmp_path)["dependencies"]
    assert deps["bytemuck"] == {
        "version": "1",
        "features": ["derive", "min_const_generics"],
    }


def test_relative_paths_become_absolute(tmp_path: Path) -> None:
    deps = generated(tmp_path)["dependencies"]
    assert deps["helper"] == {"path": str((tmp_path / "helper").resolve())}
    rgpu = deps["rgpu"]
    assert rgpu["path"] == str((tmp_path / "vendor" / "rgpu").resolve())
    assert rgpu["version"] == "0.1.0"


def test_the_rgpu_dependency_gets_the_codegens_feature(tmp_path: Path) -> None:
    deps = generated(tmp_path, feature="nvvm")["dependencies"]
    assert deps["rgpu"]["features"] == ["nvvm"]


def test_the_package_roots_at_the_kernel_crates_own_source(tmp_path: Path) -> None:
    data = generated(tmp_path)
    assert data["package"] == {
        "name": "demo-kernel-x",
        "version": "0.0.0",
        "edition": "2024",
        "publish": False,
    }
    assert data["lib"] == {
        "name": "demo_kernel",
        "path": str((tmp_path / "kernel" / "src" / "lib.rs").resolve()),
        "crate-type": ["rlib"],
    }
    assert data["workspace"] == {}


def test_features_and_extra_dependencies_and_patches_are_carried(tmp_path: Path) -> None:
    data = generated(
        tmp_path,
        extra_dependencies={"spirv-std": {"version": "=0.11.0"}},
        patch={"cuda_std": {"git": "https://x", "rev": "1"}},
    )
    assert data["features"] == {"cuda": ["rgpu/cuda"], "wgpu": ["rgpu/wgpu"], "ash": ["rgpu/ash"]}
    assert data["dependencies"]["spirv-std"] == {"version": "=0.11.0"}
    assert data["patch"] == {"crates-io": {"cuda_std": {"git": "https://x", "rev": "1"}}}


def test_a_kernel_build_script_is_kept(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path)
    (ws.kernel_dir / "build.rs").write_text("fn main() {}\n")
    data = standalone.manifest(ws, package="p", feature="spirv", crate_types=("rlib",))
    assert data["package"]["build"] == str((ws.kernel_dir / "build.rs").resolve())


def test_a_kernel_crate_without_the_rgpu_dependency_is_refused(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path, dependencies='bytemuck = "1"\n')
    with pytest.raises(ConfigError) as err:
        standalone.manifest(ws, package="p", feature="spirv", crate_types=("rlib",))
    assert "does not depend on `rgpu`" in err.value.message
    assert str(ws.kernel_dir / "Cargo.toml") in (err.value.hint or "")


def test_a_workspace_dependency_missing_from_the_root_is_refused(tmp_path: Path) -> None:
    deps = "rgpu = { workspace = true }\nx = { workspace = true }\n"
    ws = demo_workspace(tmp_path, dependencies=deps)
    with pytest.raises(ConfigError, match=r"`x.workspace = true` has no \[workspace"):
        standalone.manifest(ws, package="p", feature="spirv", crate_types=("rlib",))


def test_the_rendered_manifest_is_toml_with_a_generated_header(tmp_path: Path) -> None:
    text = standalone.render(generated(tmp_path), "a test")
    assert text.startswith("# Generated by rgpu ")
    assert tomllib.loads(text)["lib"]["name"] == "demo_kernel"
