"""Capabilities that follow the kernel, and the portability report (pure parts).

The translator itself (crates/rgpu-naga) runs in tests/integration/test_portability.py on
real rust-gpu output; here: the capability derivation, rust-gpu's error in one line, the
report's parsing and rendering, the config keys, and the three naga versions agreeing.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from rgpu import config
from rgpu.artifacts import capabilities, portability
from rgpu.artifacts.manifest import Artifact
from rgpu.codegens import spirv
from rgpu.errors import ArtifactError, ConfigError
from rgpu.toolchains import naga
from tests.unit.projects import demo_workspace, kernel_build, options, pin

ROOT = Path(__file__).resolve().parents[2]
MANDELBROT = """
/// Escape time of one pixel; `limit` as u8 keeps the image one byte a pixel.
#[rgpu::kernel]
pub fn mandelbrot(item: Item, #[item] out: &mut u8, scale: f64) {
    let s = "u16 in a string is not a type"; // i64 in a comment neither
    /* nor u64 here */
}
"""


def test_the_source_types_give_the_capabilities() -> None:
    types = capabilities.types_in(MANDELBROT)
    assert types == {"u8", "f64"}
    assert capabilities.from_types(types) == ("Float64", "Int8")
    assert capabilities.from_types(capabilities.types_in("fn f(a: u32, b: f32) {}")) == ()
    assert capabilities.types_in("let x: [i16; 4]; let y = 1u64;") == {"i16"}  # `1u64`: no \b
    # core's atomic Ordering is a u8 enum under rust-gpu: an ordered atomic needs Int8.
    ordered = "while flag.atomic(0).load(core::sync::atomic::Ordering::Relaxed) == 0 {}"
    assert capabilities.from_types(capabilities.types_in(ordered)) == ("Int8",)
    assert capabilities.types_in("// Ordering in a comment") == set()


def test_capabilities_are_the_pins_then_the_sources_then_the_configs(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    p = spirv.spirv_pin(pin("spirv"))
    tc = spirv.SpirvToolchain(p, tmp_path / "cargo-gpu", status=None, problem=None)
    opts = options(yes=True, spirv_capabilities=("Int64Atomics", "Float64"))
    build = kernel_build(ws, "spirv", tc, opts)._replace(kernel_types=("f64", "u8"))
    caps = spirv.CODEGEN.capabilities(build)
    assert caps == (*p.capabilities, "Float64", "Int8", "Int64Atomics")
    argv = spirv.CODEGEN.plan(build).steps[-1].argv
    given = [argv[i + 1] for i, a in enumerate(argv) if a == "--capabilities"]
    assert tuple(given) == caps


def test_the_kernel_crates_types_are_read_from_its_source(tmp_path: Path) -> None:
    (tmp_path / "src" / "deep").mkdir(parents=True)
    (tmp_path / "src" / "lib.rs").write_text("pub fn a(x: f64) {}\n")
    (tmp_path / "src" / "deep" / "m.rs").write_text("pub fn b(x: i16) {}\n")
    assert capabilities.types_in_crate(tmp_path) == ("f64", "i16")


def test_rust_gpus_missing_capability_is_one_line_with_the_config_key() -> None:
    output = (
        "   Compiling mandel-kernel v0.1.0\n"
        "error: `f64` type used without `OpCapability Float64`\n"
        "  --> kernel/src/lib.rs:4:5\n"
        "thread 'main' panicked at crates/spirv-builder/src/lib.rs:1:1\n"
        "stack backtrace:\n   0: rust_begin_unwind\n"
    )
    error = spirv.CODEGEN.explain_failure(output)
    assert error is not None
    assert error.message == (
        "rust-gpu stopped: the kernel crate uses `f64`, which needs the SPIR-V capability "
        "Float64, and the build did not declare it"
    )
    assert error.hint is not None
    assert 'spirv-capabilities = ["Float64"]' in error.hint
    assert "backtrace" not in error.message + error.hint
    assert spirv.CODEGEN.explain_failure("error: could not compile `x`") is None
    other = capabilities.missing("error: OpAtomicIAdd used without `OpCapability Int64Atomics`")
    assert other == capabilities.Missing("Int64Atomics", None)


def test_config_keys_are_typed() -> None:
    meta = {"spirv-capabilities": ["Int64Atomics"], "require-platforms": ["metal", "webgpu"]}
    opts = config.resolve(metadata=meta, env={}, cli={})
    assert opts.spirv_capabilities == ("Int64Atomics",)
    assert opts.require_platforms == ("metal", "webgpu")
    env = config.resolve(metadata={}, env={"RGPU_REQUIRE_PLATFORMS": "dx12"}, cli={})
    assert env.require_platforms == ("dx12",)
    cli = config.resolve(metadata=meta, env={}, cli={"require_platforms": ("dx12",)})
    assert cli.require_platforms == ("dx12",)
    assert config.resolve(metadata={}, env={}, cli={}).require_platforms == ()
    with pytest.raises(ConfigError, match=r"unknown platform `metl`.*metal"):
        config.resolve(metadata={"require-platforms": ["metl"]}, env={}, cli={})
    with pytest.raises(ConfigError, match="not a SPIR-V capability name"):
        config.resolve(metadata={"spirv-capabilities": ["float 64"]}, env={}, cli={})
    with pytest.raises(ConfigError, match="not a list of names"):
        config.resolve(metadata={"spirv-capabilities": 3}, env={}, cli={})


REPORT = {
    "naga": "30.0.1",
    "module": "m.spv",
    "kernels": [
        {
            "name": "saxpy",
            "buffers": 2,
            "platforms": {
                "webgpu": {"ok": True, "file": "m.saxpy.wgsl", "language": "wgsl"},
                "metal": {"ok": True, "file": "m.saxpy.metal", "language": "msl"},
                "dx12": {"ok": True, "file": "m.saxpy.hlsl", "language": "hlsl"},
            },
        },
        {
            "name": "mandelbrot",
            "buffers": 1,
            "platforms": {
                "webgpu": {"ok": False, "message": "Capability FLOAT64 is required"},
                "metal": {"ok": False, "message": "Capability FLOAT64 is required"},
                "dx12": {"ok": True, "file": "m.mandelbrot.hlsl", "language": "hlsl"},
            },
        },
    ],
}


def test_the_report_becomes_outcomes_files_and_findings(tmp_path: Path) -> None:
    version, outcomes = portability.parse_report(
        json.dumps(REPORT), ["saxpy", "mandelbrot", "lost"]
    )
    assert version == "30.0.1"
    assert len(outcomes) == 9
    table = portability.table_of(outcomes)
    assert table["saxpy"] == {"webgpu": "ok", "metal": "ok", "dx12": "ok"}
    assert table["mandelbrot"]["metal"] == "Capability FLOAT64 is required"
    assert table["lost"]["dx12"] == "rgpu-naga did not report this kernel"
    lines = [f.line() for f in portability.findings(outcomes)]
    assert lines[0] == (
        "`mandelbrot` will not run on WebGPU: Capability FLOAT64 is required (WebGPU has no "
        "f64: use f32 in kernels that must run there)"
    )
    assert lines[1].startswith("`mandelbrot` will not run on Metal: Capability FLOAT64")
    assert len(lines) == 5

    staging, base = tmp_path / "staging", tmp_path / "kernels"
    staging.mkdir()
    base.mkdir()
    for o in outcomes:
        if o.file:
            (staging / o.file).write_text(f"// {o.kernel} {o.platform}\n")
    made = portability.describe_outputs(
        outcomes, staging, base, module="m.spv", naga=version, codegen="spirv"
    )
    kinds = sorted((a.kind, a.target, a.path, a.entry_points) for a in made)
    assert kinds == [
        ("hlsl", "dx12", "m.mandelbrot.hlsl", ("mandelbrot",)),
        ("hlsl", "dx12", "m.saxpy.hlsl", ("saxpy",)),
        ("msl", "metal", "m.saxpy.metal", ("saxpy",)),
        ("wgsl", "webgpu", "m.saxpy.wgsl", ("saxpy",)),
    ]
    wgsl = next(a for a in made if a.kind == "wgsl")
    assert wgsl.extra["params_binding"] == 2
    assert wgsl.extra["naga"] == "30.0.1"
    assert "never compiled" in next(a for a in made if a.kind == "msl").extra["validated"]


def test_findings_come_back_from_the_manifest_and_required_platforms_fail() -> None:
    spv = Artifact(
        path="m.spv", kind="spirv", codegen="spirv", target="spirv-unknown-vulkan1.2",
        entry_points=("mandelbrot",), size=4, sha256="0",
        extra={"portability": {"mandelbrot": {
            "webgpu": "Capability FLOAT64 is required", "metal": "ok", "dx12": "ok"}}},
    )  # fmt: skip
    found = portability.findings_of([spv])
    assert [(f.kernel, f.platform) for f in found] == [("mandelbrot", "webgpu")]
    assert found[0].to_dict()["change"].startswith("WebGPU has no f64")
    assert "construct" not in found[0].to_dict()
    # With the sources the build found (spirv/sources.py): the construct and where.
    located = dataclasses.replace(spv, extra={**spv.extra, "sources": {"mandelbrot": {
        "at": "kernel/src/lib.rs:3",
        "webgpu": {"construct": "f64", "source": "kernel/src/lib.rs:7:13"}}}})  # fmt: skip
    (finding,) = portability.findings_of([located])
    assert finding.line() == (
        "`mandelbrot` (kernel/src/lib.rs:3) will not run on WebGPU: it uses f64 at "
        "kernel/src/lib.rs:7:13; WebGPU has no f64: use f32 in kernels that must run there "
        "(naga: Capability FLOAT64 is required)"
    )
    assert finding.to_dict()["source"] == "kernel/src/lib.rs:7:13"
    portability.require(found, ["metal", "dx12"])  # not required there: a warning only
    with pytest.raises(ArtifactError, match="`mandelbrot` will not run on WebGPU"):
        portability.require(found, ["webgpu"])


# Two kernels as rust-gpu writes them (OpLine before each source span): `scale` multiplies
# floats on line 7 of the user's file, `count` adds integers only.
FLOAT_MODULE = """OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %scale "scale"
OpEntryPoint GLCompute %count "count"
OpExecutionMode %scale LocalSize 1 1 1
OpExecutionMode %count LocalSize 1 1 1
%file = OpString "/home/u/proj/kernel/src/lib.rs"
%std = OpString "/root/.rustup/toolchains/x/lib/rustlib/src/rust/library/core/src/num.rs"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%uint = OpTypeInt 32 0
%f2 = OpConstant %float 2
%u2 = OpConstant %uint 2
%scale = OpFunction %void None %fn
%s0 = OpLabel
OpLine %file 5 1
OpLine %std 100 5
%x = OpFMul %float %f2 %f2
OpLine %file 7 9
%y = OpFMul %float %x %f2
OpReturn
OpFunctionEnd
%count = OpFunction %void None %fn
%c0 = OpLabel
OpLine %file 12 5
%n = OpIAdd %uint %u2 %u2
OpReturn
OpFunctionEnd
"""


@pytest.mark.skipif(shutil.which("spirv-as") is None, reason="spirv-as: scripts/setup-test-env.sh")
def test_float_arithmetic_is_located_and_named_for_the_naga_platforms(tmp_path: Path) -> None:
    (tmp_path / "m.spvasm").write_text(FLOAT_MODULE)
    raw = tmp_path / "m.spv"
    made = subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(tmp_path / "m.spvasm"), "-o", str(raw)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    ok = [
        portability.Outcome(k, p, f"m.{k}.x", None, 0)
        for k in ("scale", "count")
        for p in portability.PLATFORMS
    ]
    found = portability.locate(ok, raw, Path("/home/u/proj"))
    # The first float operation under a line of the user's (the one on core's line is not).
    assert found == {"scale": {"rounding": "kernel/src/lib.rs:7:9"}}
    spv = Artifact(
        path="m.spv", kind="spirv", codegen="spirv", target="spirv-unknown-vulkan1.2",
        entry_points=("scale", "count"), size=4, sha256="0", extra={"sources": found},
    )  # fmt: skip
    kernels = portability.rounding_of([spv], {"scale": "mylib"})
    assert kernels == [("scale (from mylib)", "kernel/src/lib.rs:7:9")]
    line = portability.rounding_line(kernels, ["metal", "webgpu"])
    assert line is not None
    assert line.startswith(
        "on WebGPU / Metal, 1 kernel(s) do float arithmetic (`scale (from mylib)` "
        "(kernel/src/lib.rs:7:9)): float results may differ"
    )
    assert "NoContraction" in line
    assert portability.rounding_line(kernels, []) is None  # no naga platform named
    assert portability.rounding_line([], ["dx12"]) is None


# Two kernels with atomics on a storage buffer word: `publish` stores with Release
# semantics (Release | UniformMemory = 0x44) on line 9 of the user's file, `count` adds with
# relaxed semantics (0): naga keeps neither ordering, so only `publish` loses something.
ATOMICS_MODULE = """OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %p "publish" %buf
OpEntryPoint GLCompute %c "count" %buf
OpExecutionMode %p LocalSize 1 1 1
OpExecutionMode %c LocalSize 1 1 1
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%file = OpString "/home/u/proj/kernel/src/lib.rs"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%blk = OpTypeStruct %uint
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %uint
%buf = OpVariable %pblk StorageBuffer
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%scope = OpConstant %uint 5
%release = OpConstant %uint 68
%p = OpFunction %void None %fn
%p0 = OpLabel
OpLine %file 9 5
%pw = OpAccessChain %pu %buf %u0
OpAtomicStore %pw %scope %release %u1
OpReturn
OpFunctionEnd
%c = OpFunction %void None %fn
%c0 = OpLabel
OpLine %file 14 5
%cw = OpAccessChain %pu %buf %u0
%old = OpAtomicIAdd %uint %cw %scope %u0 %u1
OpReturn
OpFunctionEnd
"""


@pytest.mark.skipif(shutil.which("spirv-as") is None, reason="spirv-as: scripts/setup-test-env.sh")
def test_ordered_atomics_lose_the_naga_platforms_relaxed_ones_keep_them(tmp_path: Path) -> None:
    (tmp_path / "m.spvasm").write_text(ATOMICS_MODULE)
    raw = tmp_path / "m.spv"
    made = subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(tmp_path / "m.spvasm"), "-o", str(raw)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    ok = [
        portability.Outcome(k, p, f"m.{k}.x", None, 0)
        for k in ("publish", "count")
        for p in portability.PLATFORMS
    ]
    out = portability.weakened(ok, raw)
    assert {(o.kernel, o.platform) for o in out if not o.ok} == {
        ("publish", p) for p in portability.PLATFORMS
    }
    assert all(o.message == portability.ORDERINGS for o in out if not o.ok)
    found = portability.locate(out, raw, Path("/home/u/proj"))
    assert found["publish"]["metal"] == {
        "construct": "atomics with acquire/release orderings",
        "source": "kernel/src/lib.rs:9:5",
    }
    (line,) = [f.line() for f in portability.findings(out) if f.platform == "webgpu"]
    assert "will not run on WebGPU" in line and "acquire/release" in line, line
    assert portability.weakened(ok, None) == ok  # no raw module: nothing to read


# rust-gpu's form of `Atomic::store(v, order)` (no MIR inlining): a switch on the constant
# ordering's 8-bit discriminant, one atomic per arm. `pick(K)` selects arm K: 0 is the
# relaxed store, 2 the release one.
SWITCHED_MODULE = """OpCapability Shader
OpCapability Int8
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %f "store" %buf
OpExecutionMode %f LocalSize 1 1 1
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%uchar = OpTypeInt 8 0
%blk = OpTypeStruct %uint
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %uint
%buf = OpVariable %pblk StorageBuffer
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%scope = OpConstant %uint 5
%release = OpConstant %uint 68
%order = OpConstant %uchar {pick}
%f = OpFunction %void None %fn
%entry = OpLabel
%w = OpAccessChain %pu %buf %u0
%sel = OpSConvert %int %order
OpSelectionMerge %merge None
OpSwitch %sel %other 0 %relaxed 2 %rel
%relaxed = OpLabel
OpAtomicStore %w %scope %u0 %u1
OpBranch %merge
%rel = OpLabel
OpAtomicStore %w %scope %release %u1
OpBranch %merge
%other = OpLabel
OpBranch %merge
%merge = OpLabel
OpReturn
OpFunctionEnd
"""


@pytest.mark.skipif(shutil.which("spirv-as") is None, reason="spirv-as: scripts/setup-test-env.sh")
@pytest.mark.parametrize(("pick", "ordered"), [(0, False), (2, True), (7, False)])
def test_a_switch_on_a_constant_ordering_counts_only_its_case(
    pick: int, ordered: bool, tmp_path: Path
) -> None:
    from rgpu.spirv.sources import Sources

    (tmp_path / "m.spvasm").write_text(SWITCHED_MODULE.format(pick=pick))
    raw = tmp_path / "m.spv"
    made = subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(tmp_path / "m.spvasm"), "-o", str(raw)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert Sources(raw.read_bytes()).ordered_atomics("store") is ordered


def test_what_to_change_follows_nagas_message() -> None:
    width = "Type [3] '' is invalid: The Uint scalar width 1 is not supported"
    assert "8-bit" in portability.change_for("metal", width)
    assert "(a vector of 8- or 16-bit integers)" in portability.change_for(
        "metal", width, "a vector of 8- or 16-bit integers"
    )
    assert "64-bit" in portability.change_for("webgpu", "requires the `SHADER_INT64` flag")
    assert "SPIR-V reader" in portability.change_for(
        "dx12", "naga cannot read the SPIR-V module: Type [21] is invalid"
    )
    crashed = "naga's SPIR-V reader panicked on the module: called `Option::unwrap()` ..."
    assert "a naga bug" in portability.change_for("metal", crashed)


def test_naga_is_the_same_version_in_the_pin_the_crate_and_wgpus_lock() -> None:
    pinned = naga.version(pin("spirv"))
    crate = tomllib.loads((ROOT / "crates" / "rgpu-naga" / "Cargo.toml").read_text())
    assert crate["dependencies"]["naga"]["version"] == f"={pinned}"
    lock = tomllib.loads((ROOT / "crates" / "Cargo.lock").read_text())
    wgpus_naga = {p["version"] for p in lock["package"] if p["name"] == "naga"}
    assert wgpus_naga == {pinned}
    own = tomllib.loads((ROOT / "crates" / "rgpu-naga" / "Cargo.lock").read_text())
    assert {p["version"] for p in own["package"] if p["name"] == "naga"} == {pinned}
    main = (ROOT / "crates" / "rgpu-naga" / "src" / "main.rs").read_text()
    assert re.search(rf'NAGA_VERSION: &str = "{re.escape(pinned)}"', main)


def test_rgpu_naga_is_installed_once_into_rgpus_cache(tmp_path: Path) -> None:
    env = {"RGPU_CACHE_DIR": str(tmp_path / "cache")}
    tool = naga.find(pin("spirv"), env)
    assert tool.root.parent == tmp_path / "cache" / "rgpu-naga"
    assert tool.root.name.startswith("30.0.1-")
    assert tool.install_argv()[:5] == ("cargo", "install", "--locked", "--path", str(tool.source))
    ws = demo_workspace(tmp_path / "ws")
    p = spirv.spirv_pin(pin("spirv"))
    tc = spirv.SpirvToolchain(p, tmp_path / "cg", None, None, translator=tool)
    steps = spirv.CODEGEN.plan(kernel_build(ws, "spirv", tc, options(yes=True))).steps
    assert [s.name for s in steps] == [
        "install-cargo-gpu", "install-rgpu-naga", "write-crate", "spirv-kernel"
    ]  # fmt: skip
    assert steps[-1].keep_output
    checks = {c.name: c for c in spirv.CODEGEN.checks(pin("spirv"), tc)}
    assert "not installed yet" in checks["spirv rgpu-naga"].detail
    tool.binary.parent.mkdir(parents=True)
    tool.binary.write_text("")
    steps = spirv.CODEGEN.plan(kernel_build(ws, "spirv", tc, options(yes=True))).steps
    assert "install-rgpu-naga" not in [s.name for s in steps]
    assert spirv.CODEGEN.checks(pin("spirv"), tc)[-1].detail == str(tool.binary)
