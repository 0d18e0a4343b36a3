"""The spirv codegen's plan (codegens.spirv): the exact cargo-gpu commands and the shader crate.

These commands are NOT executed anywhere in rgpu's test suite (cargo-gpu needs rustup and
the rustc-dev component of a pinned nightly, which cannot be installed here); they are
checked against cargo-gpu 0.11.0's `gpu build --help` as recorded in toolchains/spirv.toml.
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path

import pytest

from rgpu.codegens import KernelBuild, spirv
from rgpu.errors import ArtifactError
from rgpu.runner import run_step
from rgpu.util.files import write_tree
from tests.unit.projects import demo_workspace, kernel_build, options, pin

PIN = spirv.spirv_pin(pin("spirv"))
CAPABILITIES = (
    "GroupNonUniform",
    "GroupNonUniformBallot",
    "GroupNonUniformVote",
    "GroupNonUniformArithmetic",
    "GroupNonUniformShuffle",
    "GroupNonUniformShuffleRelative",
)


def toolchain(cache: Path) -> spirv.SpirvToolchain:
    root = cache / "cargo-gpu" / PIN.version
    return spirv.SpirvToolchain(PIN, root / "bin" / "cargo-gpu", status=None, problem=None)


def build(tmp_path: Path, *, yes: bool) -> KernelBuild:
    ws = demo_workspace(tmp_path / "ws")
    return kernel_build(ws, "spirv", toolchain(tmp_path / "cache"), options(yes=yes))


def test_the_pin_is_rust_gpu_0_11_from_crates_io() -> None:
    assert PIN.version == "0.11.0"
    assert PIN.channel == "nightly-2026-08-15"
    assert PIN.components == ("rust-src", "rustc-dev", "llvm-tools", "clippy")
    assert PIN.target == "spirv-unknown-vulkan1.2"
    assert PIN.capabilities == CAPABILITIES


def test_first_build_installs_cargo_gpu_into_rgpus_cache(tmp_path: Path) -> None:
    plan = spirv.CODEGEN.plan(build(tmp_path, yes=True))
    install, write, compile_ = plan.steps
    root = tmp_path / "cache" / "cargo-gpu" / "0.11.0"
    assert install.argv == (
        "cargo", "install", "--locked", "cargo-gpu", "--version", "0.11.0",
        "--no-default-features", "--root", str(root),
    )  # fmt: skip
    assert write.name == "write-crate"
    ws = tmp_path / "ws"
    assert compile_.argv == (
        str(root / "bin" / "cargo-gpu"), "gpu", "build",
        "--shader-crate", str(ws / "target" / "rgpu" / "spirv" / "crate"),
        "--output-dir", str(ws / "target" / "rgpu" / "spirv" / "out"),
        "--target", "spirv-unknown-vulkan1.2",
        "--capabilities", "GroupNonUniform",
        "--capabilities", "GroupNonUniformBallot",
        "--capabilities", "GroupNonUniformVote",
        "--capabilities", "GroupNonUniformArithmetic",
        "--capabilities", "GroupNonUniformShuffle",
        "--capabilities", "GroupNonUniformShuffleRelative",
        "--auto-install-rust-toolchain",
    )  # fmt: skip
    for step in (install, compile_):
        assert set(step.unset_env) >= {"RUSTUP_TOOLCHAIN", "RUSTFLAGS", "CARGO_TARGET_DIR"}
        assert not step.container_ok
    # rgpu runs spirv-opt itself, after marking float results NoContraction.
    assert compile_.env == {"RUSTGPU_CODEGEN_ARGS": "--no-spirv-opt"}


def test_an_installed_cargo_gpu_is_reused(tmp_path: Path) -> None:
    b = build(tmp_path, yes=True)
    b.toolchain.cargo_gpu.parent.mkdir(parents=True)
    b.toolchain.cargo_gpu.write_text("")
    plan = spirv.CODEGEN.plan(b)
    assert [s.name for s in plan.steps] == ["write-crate", "spirv-kernel"]


def test_without_consent_no_toolchain_is_installed_and_the_plan_says_so(tmp_path: Path) -> None:
    plan = spirv.CODEGEN.plan(build(tmp_path, yes=False))
    assert "--auto-install-rust-toolchain" not in plan.steps[-1].argv
    assert any("--yes" in note and PIN.channel in note for note in plan.notes)
    hint = plan.steps[-1].hint or ""
    assert "--yes" in hint and "No TTY detected" in hint
    assert f"rustup toolchain install {PIN.channel} -c rust-src,rustc-dev,llvm-tools,clippy" in hint


def test_with_the_toolchain_installed_the_install_note_does_not_apply(tmp_path: Path) -> None:
    from rgpu.toolchains import rustup

    b = build(tmp_path, yes=False)
    base = pin("spirv")
    rustc = {"commit-hash": base.commit_hash} if base.commit_hash else {}
    installed = rustup.Status(base, PIN.channel, rustc, ())
    assert installed.ok
    b = b._replace(toolchain=dataclasses.replace(b.toolchain, status=installed))
    assert spirv.CODEGEN.plan(b).notes == ()
    # A component missing: cargo-gpu would install it, and the note says so again.
    partial = rustup.Status(base, PIN.channel, rustc, ("rustc-dev",))
    b = b._replace(toolchain=dataclasses.replace(b.toolchain, status=partial))
    assert any("--yes" in note for note in spirv.CODEGEN.plan(b).notes)


def test_a_consenting_build_needs_no_hint(tmp_path: Path) -> None:
    plan = spirv.CODEGEN.plan(build(tmp_path, yes=True))
    assert plan.steps[-1].hint is None


def test_the_write_step_writes_the_shader_crate(tmp_path: Path) -> None:
    b = build(tmp_path, yes=True)
    write = next(s for s in spirv.CODEGEN.plan(b).steps if s.name == "write-crate")
    assert write.argv == () and write.cwd == spirv.crate_dir(b)
    # Shown as what it writes, never as the text of a generated Cargo.toml.
    assert write.render().endswith(
        f"(write {write.cwd}/: Cargo.toml ({len(write.files['Cargo.toml'].encode())} bytes))"
    )
    run_step(write)
    crate = spirv.crate_dir(b)
    assert sorted(p.name for p in crate.iterdir()) == ["Cargo.toml"]
    data = tomllib.loads((crate / "Cargo.toml").read_text())
    assert data["package"]["name"] == "demo-kernel-spirv"
    assert data["lib"]["crate-type"] == ["rlib", "dylib"]
    assert data["dependencies"]["spirv-std"] == {"version": "=0.11.0"}
    assert data["dependencies"]["rgpu"]["features"] == ["spirv"]
    assert data["lints"]["rust"]["unexpected_cfgs"]["level"] == "allow"


def test_the_shader_crate_keeps_the_kernels_own_dependencies(tmp_path: Path) -> None:
    files = spirv.shader_crate(build(tmp_path, yes=False), PIN)
    deps = tomllib.loads(files["Cargo.toml"])["dependencies"]
    assert deps["bytemuck"]["features"] == ["derive", "min_const_generics"]
    assert deps["helper"]["path"] == str((tmp_path / "ws" / "helper").resolve())


def test_write_files_refuses_a_path_outside_the_crate(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="would leave"):
        write_tree(tmp_path / "crate", {"../escape.txt": "x"})


def test_cargo_gpu_decides_itself_what_to_rebuild(tmp_path: Path) -> None:
    assert spirv.CODEGEN.dep_infos(build(tmp_path, yes=True)) is None


def test_cargo_gpu_manifest_becomes_rgpu_artifacts(tmp_path: Path) -> None:
    from tests.spirv_fixture import compile_fixture, tools_missing

    if tools_missing():
        pytest.skip(f"missing {tools_missing()}")
    out = tmp_path / "ws" / "target" / "rgpu" / "spirv" / "out"
    spv = compile_fixture(out)
    crate = tmp_path / "ws" / "target" / "rgpu" / "spirv" / "crate"
    crate.mkdir(parents=True)
    # The shape cargo-gpu writes: one entry per entry point, source_path relative to the
    # shader crate when it can be.
    rel = "../out/" + spv.name
    manifest = [
        {"source_path": rel, "entry_point": e, "wgsl_entry_point": e}
        for e in ("bitonic_global", "bitonic_tile")
    ]
    (out / "manifest.json").write_text(json.dumps(manifest))
    kernels = tmp_path / "ws" / "target" / "rgpu" / "kernels"
    (found,) = spirv.collect_from(out, kernels, crate, PIN)
    assert found.path == spv.name and (kernels / spv.name).is_file()
    assert (found.codegen, found.target) == ("spirv", "spirv-unknown-vulkan1.2")
    assert set(found.entry_points) == {"bitonic_tile", "bitonic_global"}
    assert found.extra["rust_gpu"] == "0.11.0"
    assert found.extra["narrow_ints"] == {"promoted": 0, "capabilities_removed": []}


def test_a_broken_cargo_gpu_manifest_is_an_artifact_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"not": "a list"}')
    with pytest.raises(ArtifactError, match=r"manifest\.json"):
        spirv.read_cargo_gpu_manifest(tmp_path)


def test_an_f64_float_function_vulkan_lacks_is_explained() -> None:
    output = (
        "error: error:0:0 - GLSL.std.450 Exp: expected Result Type to be a 16 or 32-bit scalar "
        "or vector float type\n         %334 = OpExtInst %double %1 Exp %288\n"
    )
    error = spirv.CODEGEN.explain_failure(output)
    assert error is not None
    assert "f64 float function Vulkan does not have (GLSL.std.450 `Exp`" in error.message
    assert "on f32 in kernels for wgpu and ash" in (error.hint or "")
    assert spirv.CODEGEN.explain_failure("error: something else") is None
