"""Checked launches' fault records on SPIR-V (spirv/faults.py), on hand-written SPIR-V
(spirv-as) in the shape rust-gpu gives a failed index check under
`--abort-strategy=debug-printf`: a DebugPrintf of the place and message, then a return. After
the pass spirv-val accepts the module, no DebugPrintf is left, and each site writes the
record the runtime reads (rgpu-runtime's common/fault.rs)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.spirv import faults, passes

pytestmark = pytest.mark.skipif(
    shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
    reason="SPIRV-Tools (spirv-as, spirv-val) is not installed: scripts/setup-test-env.sh",
)

# (spirv-as takes the newlines inside the quotes as they are.)
FORMAT = (
    "\n[Rust panicked at kernel/src/lib.rs:21:10]\n index out of bounds: the len is %u but "
    "the index is %u{extra}\n      in read_past_end()\n"
)

# `let v = x[i]` with x a `&[u32]` at set 0 binding 0: past the end, the printf and a return.
KERNEL = """
OpCapability Shader
OpCapability VulkanMemoryModel
{capabilities}
OpExtension "SPV_KHR_non_semantic_info"
%printf = OpExtInstImport "NonSemantic.DebugPrintf"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main "read_past_end" %x %gid
OpExecutionMode %main LocalSize 64 1 1
%fmt = OpString "{format}"
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %x DescriptorSet 0
OpDecorate %x Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%float = OpTypeFloat 32
%v3uint = OpTypeVector %uint 3
{types}
%u0 = OpConstant %uint 0
%u64 = OpConstant %uint 64
%f1 = OpConstant %float 1.5
{constants}
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %uint
%pin = OpTypePointer Input %v3uint
%x = OpVariable %pblk StorageBuffer
%gid = OpVariable %pin Input
%main = OpFunction %void None %fn
%entry = OpLabel
%g = OpLoad %v3uint %gid
%i = OpCompositeExtract %uint %g 0
%j = OpIAdd %uint %i %u64
%ok = OpULessThan %bool %j %u64
OpSelectionMerge %end None
OpBranchConditional %ok %read %fail
%fail = OpLabel
%unused = OpExtInst %void %printf 1 %fmt %u64 %j {args}
OpReturn
%read = OpLabel
%p = OpAccessChain %pu %x %u0 %j
%v = OpLoad %uint %p
OpBranch %end
%end = OpLabel
OpReturn
OpFunctionEnd
"""


def kernel(
    extra: str = "",
    args: str = "",
    types: str = "",
    constants: str = "",
    capabilities: str = "",
) -> str:
    return KERNEL.format(
        format=FORMAT.format(extra=extra),
        args=args,
        types=types,
        constants=constants,
        capabilities=capabilities,
    )


def run(tool: str, *args: str, data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([tool, *args], input=data, capture_output=True, check=False)


def assemble(text: str, tmp_path: Path) -> bytes:
    source, binary = tmp_path / "m.spvasm", tmp_path / "m.spv"
    source.write_text(text)
    subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(source), "-o", str(binary)], check=True
    )
    return binary.read_bytes()


def disassemble(data: bytes) -> str:
    return run("spirv-dis", "--raw-id", "-", data=data).stdout.decode()


def valid(data: bytes) -> str:
    proc = run("spirv-val", "--target-env", "vulkan1.2", "-", data=data)
    return proc.stderr.decode() + proc.stdout.decode()


def test_the_printf_becomes_the_record_and_the_module_stays_valid(tmp_path: Path) -> None:
    data = assemble(kernel(), tmp_path)
    assert valid(data) == ""
    recorded = faults.record_faults(data)
    assert valid(recorded.data) == ""
    assert recorded.sites == (FORMAT.format(extra=""),)
    text = disassemble(recorded.data)
    assert "DebugPrintf" not in text and "SPV_KHR_non_semantic_info" not in text
    # The count, then the site and the two operands, each an atomic store.
    assert text.count("OpAtomicIAdd") == 1 and text.count("OpAtomicStore") == 3
    assert f"DescriptorSet {faults.FAULT_SET}" in text
    # The record is in the entry point's interface (SPIR-V 1.4+ lists every global it uses).
    entry = next(line for line in text.splitlines() if "OpEntryPoint" in line)
    assert len(entry.split()) == 7  # ... "read_past_end" %x %gid %record


def test_operands_take_the_words_of_their_types(tmp_path: Path) -> None:
    text = kernel(
        extra=" at %v3u, %f, %i, %lu",
        args="%g %f1 %s5 %w7",
        types="%int = OpTypeInt 32 1\n%ulong = OpTypeInt 64 0",
        constants="%s5 = OpConstant %int -5\n%w7 = OpConstant %ulong 7",
        capabilities="OpCapability Int64",
    )
    recorded = faults.record_faults(assemble(text, tmp_path))
    assert valid(recorded.data) == ""
    # site + 2 + 3 (the vector) + 1 (f32) + 1 (i32) + 2 (u64) words.
    assert disassemble(recorded.data).count("OpAtomicStore") == 1 + 2 + 3 + 1 + 1 + 2


def test_a_module_without_printf_is_unchanged(tmp_path: Path) -> None:
    text = kernel().replace("%unused = OpExtInst %void %printf 1 %fmt %u64 %j \n", "")
    data = assemble(text, tmp_path)
    assert faults.record_faults(data) == faults.Recorded(data, ())


def test_a_kernel_already_using_the_binding_is_refused(tmp_path: Path) -> None:
    text = kernel().replace("OpDecorate %x DescriptorSet 0", "OpDecorate %x DescriptorSet 1")
    data = assemble(text, tmp_path)
    with pytest.raises(ValueError, match="binding 0 of descriptor set 1 is taken"):
        faults.record_faults(data)


def test_the_pass_runs_only_in_a_checked_build(tmp_path: Path) -> None:
    data = assemble(kernel(), tmp_path)
    unchecked, reports = passes.run(passes.BEFORE_OPT, data, frozenset({passes.UNCHECKED}))
    assert "checked_faults" not in reports and "DebugPrintf" in disassemble(unchecked)
    checked, reports = passes.run(passes.BEFORE_OPT, data)
    assert reports["checked_faults"] == {
        "set": 1,
        "binding": 0,
        "sites": [FORMAT.format(extra="")],
    }
    assert "DebugPrintf" not in disassemble(checked)


def test_a_site_keeps_the_places_and_the_message_relative_to_the_workspace() -> None:
    site = (
        "\n[Rust panicked at /w/s/vendor/rgpu/src/device/spirv.rs:354:13]\n Global: index %u is"
        " past the %u elements of the buffer\n      in <rgpu::Global<u32>>::element\n        "
        "called at /w/s/kernel/src/lib.rs:27:12\n      by kernel::count_past_end\n      called"
        " by count_past_end\n"
    )
    assert faults.compact(site, "/w/s") == (
        "\n[Rust panicked at vendor/rgpu/src/device/spirv.rs:354:13]\n Global: index %u is past"
        " the %u elements of the buffer\n        called at kernel/src/lib.rs:27:12\n"
    )
