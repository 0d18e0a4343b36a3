"""The nvptx codegen (codegens.nvptx): its plan (pure, from a toolchain given by hand), its
toolchain choice (against fake programs) and what it collects (with the real ptxas)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rgpu.codegens import KernelBuild, nvptx
from rgpu.containers.placement import Placement
from rgpu.cuda_archs import Arch
from rgpu.errors import ArtifactError
from rgpu.scaffold import vendor
from rgpu.toolchains import nvptx_routes
from rgpu.util import cmd
from tests.unit.projects import demo_workspace, fake_program, kernel_build, options, pin, tiny_ptx

NIGHTLY = nvptx_routes.NvptxToolchain(
    kind="pinned", cargo=("cargo", "+nightly-2026-11-01"), rustc_version="1.97.0"
)
CONTAINER = Placement(True, "rgpu-toolchain:test", "--docker (--docker)")


def build(tmp_path: Path, toolchain: nvptx_routes.NvptxToolchain = NIGHTLY,
          archs: str = "sm_80,sm_90", where: Placement | None = None) -> KernelBuild:  # fmt: skip
    ws = demo_workspace(tmp_path / "ws")
    opts = options({"RGPU_CUDA_ARCHS": archs})
    return kernel_build(ws, "nvptx", toolchain, opts, where)


def test_arch_step_builds_one_cdylib_per_arch_in_its_own_target_dir(tmp_path: Path) -> None:
    b = build(tmp_path)
    ws = tmp_path / "ws"
    step = nvptx.arch_step(b, NIGHTLY, Arch(80))
    assert step.argv == (
        "cargo", "+nightly-2026-11-01", "rustc", "--release", "-p", "demo-kernel", "--lib",
        "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core", "--crate-type", "cdylib",
        "--target-dir", str(ws / "target" / "rgpu-nvptx" / "sm_80"),
        # libm patched with rgpu's (from rgpu's own crates: this workspace vendors none),
        # resolved against a lock of the arch's own (cargo 1.97+: no -Zlockfile-path).
        "--config", f'resolver.lockfile-path="{ws / "target/rgpu-nvptx/sm_80/Cargo.lock"}"',
        "--config", f'patch.crates-io.libm.path="{vendor.crates_source() / "rgpu-libm"}"',
        "--", "-Zcrate-attr=feature(abi_ptx)",
        f"-Clinker={ws / 'target' / 'rgpu-nvptx' / 'linker' / 'rgpu-bitcode-linker'}",
    )  # fmt: skip
    # MIR's jump threading off: it copies warp shuffles into divergent branches.
    assert step.env == {
        "CARGO_ENCODED_RUSTFLAGS": "-Ctarget-cpu=sm_80\x1f-Zmir-enable-passes=-JumpThreading"
    }
    assert {"RUSTFLAGS", "CARGO_TARGET_DIR", "RUSTUP_TOOLCHAIN"} <= set(step.unset_env)
    assert step.cwd == ws and step.container_ok


def test_libm_is_the_vendored_rgpu_libm_and_the_lock_a_copy_per_arch(tmp_path: Path) -> None:
    b = build(tmp_path)._replace(cargo_lock="# the user's lock\n")
    ws = tmp_path / "ws"
    shim = ws / vendor.vendor_dir() / "rgpu-libm"
    shim.mkdir(parents=True)
    (shim / "Cargo.toml").write_text('[package]\nname = "libm"\n', encoding="utf-8")
    assert nvptx.libm_patch(b) == shim
    steps = nvptx.lock_steps(b, NIGHTLY, (Arch(80), Arch(90)))
    assert [(s.cwd.name, dict(s.files)) for s in steps] == [
        ("sm_80", {"Cargo.lock": "# the user's lock\n"}),
        ("sm_90", {"Cargo.lock": "# the user's lock\n"}),
    ]
    # In a container only the workspace's own copy is mounted: without it, no patch.
    shutil.rmtree(shim)
    inside = build(tmp_path, where=CONTAINER)._replace(cargo_lock="x")
    assert nvptx.libm_patch(inside) is None
    assert (
        nvptx.libm_args(inside, Arch(80)) == ()
        and nvptx.lock_steps(inside, NIGHTLY, (Arch(80),)) == ()
    )


def test_the_lock_copy_drops_a_libm_the_patch_cannot_stand_in_for() -> None:
    other = '[[package]]\nname = "glam"\nversion = "0.30.10"\ndependencies = [\n "libm",\n]\n'
    locked = (
        f"version = 4\n\n{other}\n"
        '[[package]]\nname = "libm"\nversion = "{}"\nsource = "registry+x"\nchecksum = "c"\n'
    )
    same = locked.format(nvptx.LIBM_VERSION)
    assert nvptx.lock_for_patch(same) == same  # cargo swaps the source itself
    older = locked.format("0.2.11")
    assert nvptx.lock_for_patch(older) == f"version = 4\n\n{other}"
    old_major = locked.format("0.1.4")
    assert nvptx.lock_for_patch(old_major) == old_major
    manifest = (vendor.crates_source() / "rgpu-libm" / "Cargo.toml").read_text(encoding="utf-8")
    assert f'\nversion = "{nvptx.LIBM_VERSION}"\n' in manifest


def test_lockfile_path_needs_its_unstable_flag_before_cargo_1_97(tmp_path: Path) -> None:
    b = build(tmp_path)
    assert nvptx.libm_args(b, Arch(80), "1.96.0")[0] == "-Zlockfile-path"
    assert nvptx.libm_args(b, Arch(80), "none")[0] == "-Zlockfile-path"
    assert nvptx.libm_args(b, Arch(80), "1.101.0-nightly")[0] == "--config"
    printed = (
        "warning: flag `-Z lockfile-path` has been stabilized in the 1.97 release, and is no "
        "longer necessary\n  The `lockfile-path` config key is now always available\n\n"
        "   Compiling demo-kernel v0.1.0 (/w/kernel)\n"
    )
    assert cmd.LineFilter(nvptx.LIBM_PATCH_NOTES).text(printed) == (
        "   Compiling demo-kernel v0.1.0 (/w/kernel)\n"
    )


def test_cargos_note_on_the_patch_in_cores_own_resolve_is_hidden(tmp_path: Path) -> None:
    """The lines cargo 1.96 prints (seen building a kernel with -Zbuild-std), then a line
    of the build's own, which stays."""
    printed = (
        "warning: patch `libm v0.2.16 (/w/vendor/rgpu-0.2.0/rgpu-libm)` was not used in the "
        "crate graph\n"
        "help: Check that the patched package version and available features are compatible\n"
        "      with the dependency requirements. If the patch has a different version from\n"
        "      what is locked in the Cargo.lock file, run `cargo update` to use the new\n"
        "      version. This may also occur with an optional dependency that is not enabled.\n"
        "   Compiling demo-kernel v0.1.0 (/w/kernel)\n"
    )
    assert cmd.LineFilter(nvptx.LIBM_PATCH_NOTES).text(printed) == (
        "   Compiling demo-kernel v0.1.0 (/w/kernel)\n"
    )
    step = nvptx.arch_step(build(tmp_path), NIGHTLY, Arch(80))
    assert step.keep_output and step.hide == nvptx.LIBM_PATCH_NOTES


def test_the_plan_writes_rgpus_linker_then_has_one_step_per_arch(tmp_path: Path) -> None:
    plan = nvptx.CODEGEN.plan(build(tmp_path, archs="sm_90,sm_75,sm_80"))
    # A workspace without a Cargo.lock gets one first (the patched build resolves on its own).
    assert [s.name for s in plan.steps] == [
        "nvptx-linker", "nvptx-lockfile", "nvptx-sm_75", "nvptx-sm_80", "nvptx-sm_90",
    ]  # fmt: skip
    linker = plan.steps[0]
    assert linker.cwd == tmp_path / "ws" / "target" / "rgpu-nvptx" / "linker"
    assert sorted(linker.files) == ["bin/opt", "rgpu-bitcode-linker"]
    lockfile = plan.steps[1]
    assert lockfile.argv[-1] == "generate-lockfile" and not lockfile.keyed
    flags = [s.env["CARGO_ENCODED_RUSTFLAGS"] for s in plan.steps[2:]]
    assert [f.split("\x1f")[0] for f in flags] == [
        "-Ctarget-cpu=sm_75",
        "-Ctarget-cpu=sm_80",
        "-Ctarget-cpu=sm_90",
    ]
    assert any("always built with the release profile" in n for n in plan.notes)


def test_the_artifacts_go_to_the_kernels_dir_by_arch(tmp_path: Path) -> None:
    b = build(tmp_path)
    kernels = tmp_path / "ws" / "target" / "rgpu" / "kernels"
    assert nvptx.artifact_path(b, Arch(80)) == kernels / "demo_kernel-sm_80.ptx"
    release = tmp_path / "ws" / "target" / "rgpu-nvptx" / "sm_90" / nvptx.TARGET / "release"
    assert nvptx.built_ptx(b, Arch(90)) == release / "demo_kernel.ptx"
    assert nvptx.CODEGEN.dep_infos(b)[1] == release / "demo_kernel.d"


def test_a_container_build_uses_the_images_toolchain_without_probing(tmp_path: Path) -> None:
    # An empty PATH: probing this machine would find no rustup and no system rustc.
    found = nvptx.CODEGEN.toolchain(pin("nvptx"), CONTAINER, {"PATH": str(tmp_path)})
    assert found is nvptx_routes.IMAGE_TOOLCHAIN
    plan = nvptx.CODEGEN.plan(build(tmp_path, found, archs="sm_80", where=CONTAINER))
    # rgpu's linker is written here, into the workspace the container mounts.
    linker, step = plan.steps
    assert linker.files and not linker.container_ok
    assert step.argv[:2] == ("/usr/bin/cargo", "rustc")
    assert step.env["RUSTC_BOOTSTRAP"] == "1" and step.env["RUSTC"] == "/usr/bin/rustc"
    assert "/usr/lib/llvm-22/bin" in step.env["PATH"].split(":")
    assert step.env["CARGO_ENCODED_RUSTFLAGS"].split("\x1f")[0] == "-Ctarget-cpu=sm_80"
    assert step.container_ok
    assert any("in the container" in n for n in plan.notes)


def test_bitcode_linker_is_built_outside_the_rustc_tree(tmp_path: Path) -> None:
    toolchain = NIGHTLY._replace(
        linker_source=Path("/usr/src/rustc-1.96.0/src/tools/llvm-bitcode-linker"),
        linker_root=tmp_path / "cache" / "llvm-bitcode-linker-1.96.0",
    )
    mkdir, copy, install = nvptx.linker_steps(toolchain, tmp_path)
    root = str(toolchain.linker_root)
    assert mkdir.argv == ("mkdir", "-p", root)
    assert copy.argv[:2] == ("cp", "-rT") and copy.argv[3] == f"{root}/src"
    assert install.argv[:3] == ("cargo", "install", "--quiet")
    assert ("--root", root) == install.argv[5:7]
    assert nvptx.linker_steps(NIGHTLY, tmp_path) == ()
    plan = nvptx.CODEGEN.plan(build(tmp_path, toolchain, archs="sm_80"))
    assert [s.name for s in plan.steps][:3] == [
        "bitcode-linker-dir", "bitcode-linker-source", "bitcode-linker",
    ]  # fmt: skip


def system_pin(tmp_path: Path, major: int = 22) -> object:
    """The nvptx pin with its [system] table pointing at a fake system toolchain."""
    sysroot = tmp_path / "sysroot"
    (sysroot / "lib/rustlib/src/rust/library/core").mkdir(parents=True)
    rustc = fake_program(
        tmp_path / "sys",
        "rustc",
        f"""
        if [ "$1" = "-vV" ]; then
          printf 'rustc 1.96.0\\nrelease: 1.96.0\\nLLVM version: {major}.1.8\\n'
        else
          echo {sysroot}
        fi
        """,
    )
    for tool in ("llc", "opt", "llvm-link"):
        fake_program(tmp_path / "llvm-22" / "bin", tool, "exit 0\n")
    (tmp_path / "src-1.96.0").mkdir()
    table = {
        "rustc": str(rustc),
        "cargo": str(tmp_path / "sys" / "cargo"),
        "llvm_bin": str(tmp_path / "llvm-{major}" / "bin"),
        "bitcode_linker_source": str(tmp_path / "src-{version}"),
    }
    base = pin("nvptx")
    return base._replace(tables={**base.tables, "system": table})


def test_without_a_rustup_nightly_the_system_rustc_is_used_with_bootstrap(tmp_path: Path) -> None:
    fake_program(tmp_path / "bin", "rustup", "echo 'error: no default toolchain' >&2\nexit 1\n")
    env = {"PATH": str(tmp_path / "bin"), "RGPU_CACHE_DIR": str(tmp_path / "cache")}
    found = nvptx_routes.find_toolchain(system_pin(tmp_path), env)  # type: ignore[arg-type]
    assert found.kind == "system" and found.ready
    assert found.env["RUSTC"] == str(tmp_path / "sys" / "rustc")
    assert found.env["RUSTC_BOOTSTRAP"] == "1"
    assert found.env["PATH"].split(":")[1] == str(tmp_path / "llvm-22" / "bin")
    assert found.linker_source == tmp_path / "src-1.96.0"
    assert found.linker_root == tmp_path / "cache" / "llvm-bitcode-linker-1.96.0"
    assert "`rustup toolchain list` failed" in found.checks[0].detail
    assert any("RUSTC_BOOTSTRAP=1" in n for n in found.notes)


def test_a_system_rustc_of_another_llvm_major_fails_with_the_package_to_install(
    tmp_path: Path,
) -> None:
    env = {"PATH": str(tmp_path / "bin"), "RGPU_CACHE_DIR": str(tmp_path / "cache")}
    found = nvptx_routes.find_toolchain(system_pin(tmp_path, major=21), env)  # type: ignore[arg-type]
    assert not found.ready
    failed = next(c for c in found.checks if c.failed)
    assert failed.name == "nvptx llvm tools" and failed.fix.startswith("apt-get install llvm-21")


def test_collect_checks_and_copies_each_archs_ptx_and_embeds_ptxas_sass(tmp_path: Path) -> None:
    b = build(tmp_path, archs="sm_80")
    source = nvptx.built_ptx(b, Arch(80))
    source.parent.mkdir(parents=True)
    source.write_text(tiny_ptx("sm_80", entry="add_one"))
    found, cubin = nvptx.CODEGEN.collect(b)
    assert (found.path, found.codegen, found.target) == ("demo_kernel-sm_80.ptx", "nvptx", "sm_80")
    assert found.entry_points == ("add_one",)
    assert found.extra == {"ptx_isa": "7.0", "ptxas": "accepted", "route": "pinned"}
    assert nvptx.artifact_path(b, Arch(80)).read_bytes() == source.read_bytes()
    # The real ptxas's check wrote the SASS: an ELF cubin beside the PTX, naming it.
    assert (cubin.kind, cubin.path, cubin.codegen) == ("cubin", "demo_kernel-sm_80.cubin", "nvptx")
    assert (cubin.target, cubin.entry_points) == ("sm_80", ("add_one",))
    assert cubin.extra["ptx"] == found.path and cubin.extra["ptx_sha256"] == found.sha256
    assert "release" in cubin.extra["ptxas"]
    data = (b.out_dir / cubin.path).read_bytes()
    assert data[:4] == b"\x7fELF" and cubin.size == len(data)


def test_the_manifest_names_the_route_and_the_rustc_cargo_ran(tmp_path: Path) -> None:
    """cargo's own record of `rustc -vV` in the kernel target directory (.rustc_info.json) is
    the compiler that made the PTX, here or in a container."""
    b = build(tmp_path, nvptx_routes.IMAGE_TOOLCHAIN, archs="sm_80")
    source = nvptx.built_ptx(b, Arch(80))
    source.parent.mkdir(parents=True)
    source.write_text(tiny_ptx("sm_80", entry="add_one"))
    vv = (
        "rustc 1.96.0 (ac68faa20 2026-05-25) (built from a source tarball)\nbinary: rustc\n"
        "commit-hash: ac68faa20c58\nrelease: 1.96.0\nLLVM version: 22.1.8\n"
    )
    info = {"rustc_fingerprint": 1, "outputs": {"1": {"stdout": "___.ptx\n"}, "2": {"stdout": vv}}}
    (nvptx.target_dir(b, Arch(80)) / ".rustc_info.json").write_text(json.dumps(info))
    found, _cubin = nvptx.CODEGEN.collect(b)
    assert found.extra["route"] == "image"
    assert found.extra["rustc"] == (
        "rustc 1.96.0 (ac68faa20 2026-05-25) (built from a source tarball), LLVM 22.1.8"
    )


def test_collect_refuses_ptx_of_the_wrong_arch(tmp_path: Path) -> None:
    b = build(tmp_path, archs="sm_80")
    source = nvptx.built_ptx(b, Arch(80))
    source.parent.mkdir(parents=True)
    source.write_text(tiny_ptx("sm_75"))
    with pytest.raises(ArtifactError, match="is PTX for sm_75, but sm_80 was asked for"):
        nvptx.CODEGEN.collect(b)
    assert not nvptx.artifact_path(b, Arch(80)).exists()


def test_collect_without_cargos_output_says_so(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="cargo did not produce"):
        nvptx.CODEGEN.collect(build(tmp_path, archs="sm_80"))
