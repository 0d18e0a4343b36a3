"""The spirv codegen's plan: the exact cargo-gpu commands and environment.

These commands are NOT executed anywhere in rgpu's test suite (cargo-gpu needs rustup and
the rustc-dev component of a pinned nightly, which cannot be installed here); they are
checked against cargo-gpu's source at the rev in toolchains/spirv.toml.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rgpu import codegens, config
from rgpu.codegens import KernelBuild
from rgpu.codegens import spirv as spirv_codegen
from rgpu.errors import ArtifactError, ToolchainError
from rgpu.project import Project
from tests.unit.projects import demo_project

REPO = Path(__file__).resolve().parents[2]
PIN = spirv_codegen.load_pin()


def project(root: Path) -> Project:
    return demo_project(root)


def kernel_build(root: Path, *, yes: bool) -> KernelBuild:
    (root / "kernel" / "spirv").mkdir(parents=True, exist_ok=True)
    (root / "kernel" / "spirv" / "Cargo.toml").write_text("[package]\n")
    options = config.resolve(metadata={}, env={}, cli={"yes": yes})
    proj = project(root)
    return KernelBuild(project=proj, options=options, out_dir=proj.rgpu_dir)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RGPU_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_pin_is_a_full_commit_and_cargo_gpu_shares_it() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", PIN.rev)
    assert PIN.source == "https://github.com/Rust-GPU/rust-gpu"
    assert PIN.target == "spirv-unknown-vulkan1.2"


def test_the_shader_crate_pins_spirv_std_at_the_same_rev() -> None:
    text = (REPO / "templates/bitonic/kernel/spirv/Cargo.toml.jinja").read_text()
    match = re.search(r'spirv-std = \{ git = "([^"]+)", rev = "([0-9a-f]+)" \}', text)
    assert match is not None
    assert (match.group(1), match.group(2)) == (PIN.source, PIN.rev)


def test_the_codegen_is_registered() -> None:
    assert codegens.get("spirv") is spirv_codegen.CODEGEN


def test_first_build_installs_cargo_gpu_into_rgpus_cache(tmp_path: Path, cache: Path) -> None:
    plan = spirv_codegen.CODEGEN.plan(kernel_build(tmp_path / "ws", yes=True))
    install, build = plan.steps
    root = cache / "cargo-gpu" / PIN.rev
    assert install.argv == (
        "cargo",
        "install",
        "--locked",
        "--git",
        "https://github.com/Rust-GPU/rust-gpu",
        "--rev",
        PIN.rev,
        "cargo-gpu",
        "--root",
        str(root),
    )
    assert build.argv == (
        str(root / "bin" / "cargo-gpu"),
        "gpu",
        "build",
        "--shader-crate",
        str(tmp_path / "ws" / "kernel" / "spirv"),
        "--output-dir",
        str(tmp_path / "ws" / "target" / "rgpu" / "spirv"),
        "--target",
        "spirv-unknown-vulkan1.2",
        "--auto-install-rust-toolchain",
    )
    for step in plan.steps:
        assert set(step.unset_env) >= {"RUSTUP_TOOLCHAIN", "RUSTFLAGS", "CARGO_TARGET_DIR"}


def test_an_installed_cargo_gpu_is_reused(tmp_path: Path, cache: Path) -> None:
    binary = cache / "cargo-gpu" / PIN.rev / "bin" / "cargo-gpu"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    plan = spirv_codegen.CODEGEN.plan(kernel_build(tmp_path / "ws", yes=True))
    assert [s.name for s in plan.steps] == ["spirv-kernel"]


def test_without_consent_no_toolchain_is_installed_and_the_plan_says_so(
    tmp_path: Path, cache: Path
) -> None:
    plan = spirv_codegen.CODEGEN.plan(kernel_build(tmp_path / "ws", yes=False))
    assert "--auto-install-rust-toolchain" not in plan.steps[-1].argv
    assert any("--yes" in note and PIN.channel in note for note in plan.notes)
    assert any("not exercised on rgpu's CI" in note for note in plan.notes)
    hint = plan.steps[-1].hint or ""
    assert "--yes" in hint
    assert f"rustup toolchain install {PIN.channel} -c rust-src,rustc-dev,llvm-tools,clippy" in hint


def test_a_consenting_build_needs_no_hint(tmp_path: Path, cache: Path) -> None:
    plan = spirv_codegen.CODEGEN.plan(kernel_build(tmp_path / "ws", yes=True))
    assert plan.steps[-1].hint is None


def test_a_workspace_without_the_shader_crate_is_told_how_to_get_one(tmp_path: Path) -> None:
    options = config.resolve(metadata={}, env={}, cli={})
    proj = project(tmp_path)
    with pytest.raises(ToolchainError, match="shader crate"):
        spirv_codegen.CODEGEN.plan(KernelBuild(project=proj, options=options, out_dir=tmp_path))


def test_cargo_gpu_manifest_becomes_rgpu_artifacts(tmp_path: Path) -> None:
    from tests.spirv_fixture import compile_fixture, tools_missing

    if tools_missing():
        pytest.skip(f"missing {tools_missing()}")
    out = tmp_path / "ws" / "target" / "rgpu" / "spirv"
    spv = compile_fixture(out)
    crate = tmp_path / "ws" / "kernel" / "spirv"
    crate.mkdir(parents=True)
    # The shape cargo-gpu writes (crates/cargo-gpu/src/linkage.rs): sorted, one entry per
    # entry point, source_path relative to the shader crate when it can be.
    rel = "../../target/rgpu/spirv/" + spv.name
    manifest = [
        {"source_path": rel, "entry_point": e, "wgsl_entry_point": e}
        for e in ("bitonic_global", "bitonic_tile")
    ]
    (out / "manifest.json").write_text(json.dumps(manifest))
    found = spirv_codegen.collect_from(out, tmp_path / "ws" / "target" / "rgpu", crate, PIN)
    assert len(found) == 1
    assert found[0].path == "spirv/" + spv.name
    assert found[0].codegen == "spirv"
    assert found[0].target == "spirv-unknown-vulkan1.2"
    assert set(found[0].entry_points) == {"bitonic_tile", "bitonic_global"}


def test_a_broken_cargo_gpu_manifest_is_an_artifact_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"not": "a list"}')
    with pytest.raises(ArtifactError, match=r"manifest\.json"):
        spirv_codegen.read_cargo_gpu_manifest(tmp_path)
