"""rgpu.spirv.narrow_memory on small modules written in SPIR-V assembly here, each
checked by spirv-val after it and after spirv.narrow_ints (which runs next in the codegen):
no 8- or 16-bit type is left, and each access has the shape the pass promises. What the
kernels compute is checked on rust-gpu's real output, on lavapipe through every Vulkan path
and in Chromium, by tests/integration/test_corpus.py (its narrow-memory kernels)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.spirv.narrow_ints import promote_narrow_ints
from rgpu.spirv.narrow_memory import lower_narrow_memory

pytestmark = pytest.mark.skipif(
    shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
    reason="SPIRV-Tools (spirv-as, spirv-val) is not installed: scripts/setup-test-env.sh",
)

HEADER = """
OpCapability Shader
OpCapability Int8
OpCapability Int16
{caps}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %gid {interface}
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%uchar = OpTypeInt 8 0
%ushort = OpTypeInt 16 0
%v3 = OpTypeVector %uint 3
%pv3 = OpTypePointer Input %v3
%gid = OpVariable %pv3 Input
%c0 = OpConstant %uint 0
%c1 = OpConstant %uint 1
{globals}
%main = OpFunction %void None %fn
%entry = OpLabel
{locals}
%g = OpLoad %v3 %gid
%i = OpCompositeExtract %uint %g 0
{body}
OpReturn
OpFunctionEnd
"""

# u8 buffers: in (binding 0, read-only) and out (binding 1), and the params block whose
# member 1 is buffer 0's element count (rgpu's launch ABI: count, len_0, len_1, ...).
BUFFERS = dict(
    locals="",
    caps='OpCapability StorageBuffer8BitAccess\nOpExtension "SPV_KHR_8bit_storage"',
    interface="%in %out %params",
    decorations="""
OpDecorate %arr ArrayStride 1
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %in NonWritable
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
OpDecorate %pblock Block
OpMemberDecorate %pblock 0 Offset 0
OpMemberDecorate %pblock 1 Offset 4
OpMemberDecorate %pblock 2 Offset 8
""",
    globals="""
%arr = OpTypeRuntimeArray %uchar
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu8 = OpTypePointer StorageBuffer %uchar
%in = OpVariable %pblk StorageBuffer
%out = OpVariable %pblk StorageBuffer
%pblock = OpTypeStruct %uint %uint %uint
%ppblock = OpTypePointer PushConstant %pblock
%params = OpVariable %ppblock PushConstant
%c3 = OpConstant %uchar 3
""",
)


def assemble(text: str, tmp_path: Path) -> bytes:
    source = tmp_path / "m.spvasm"
    source.write_text(text)
    out = tmp_path / "m.spv"
    result = subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(source), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return out.read_bytes()


def checked(data: bytes, tmp_path: Path) -> str:
    """spirv-val accepts `data`; its disassembly."""
    path = tmp_path / "checked.spv"
    path.write_bytes(data)
    dis = subprocess.run(
        ["spirv-dis", "--raw-id", str(path)], capture_output=True, text=True, check=True
    ).stdout
    result = subprocess.run(
        ["spirv-val", "--target-env", "vulkan1.2", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr + dis
    return dis


def both(text: str, tmp_path: Path) -> tuple[str, int]:
    """The module after spirv.narrow_memory and spirv.narrow_ints: its disassembly (each
    step validated) and how many variables the first moved into words."""
    lowered = lower_narrow_memory(assemble(text, tmp_path))
    assert lowered.refused is None
    checked(lowered.data, tmp_path)
    dis = checked(promote_narrow_ints(lowered.data).data, tmp_path)
    assert "OpTypeInt 8" not in dis and "OpTypeInt 16" not in dis, dis
    assert "Int8" not in dis and "8BitAccess" not in dis and "8bit_storage" not in dis
    return dis, lowered.variables


def test_a_byte_buffer_becomes_words_loads_shift_and_stores_are_atomic(tmp_path: Path) -> None:
    body = """
%pa = OpAccessChain %pu8 %in %c0 %i
%a = OpLoad %uchar %pa
%b = OpIMul %uchar %a %c3
%pb = OpAccessChain %pu8 %out %c0 %i
OpStore %pb %b
"""
    dis, variables = both(HEADER.format(body=body, **BUFFERS), tmp_path)
    assert variables == 2
    assert "ArrayStride 1" not in dis and "ArrayStride 4" in dis
    function = dis.split("OpFunction ")[1]
    # The load: word i >> 2, shifted right by (i & 3) * 8, masked; the store: the word's bits
    # cleared and set atomically, no plain store.
    assert function.count("OpShiftRightLogical") == 3, function  # 2 word indices, 1 shift
    assert function.count("OpAtomicAnd") == 1 and function.count("OpAtomicOr") == 1
    assert "OpStore" not in function


def test_a_slices_length_is_the_params_blocks_count(tmp_path: Path) -> None:
    body = """
%n = OpArrayLength %uint %in 0
%last = OpISub %uint %n %c1
%pa = OpAccessChain %pu8 %in %c0 %last
%a = OpLoad %uchar %pa
%pb = OpAccessChain %pu8 %out %c0 %i
OpStore %pb %a
"""
    dis, _ = both(HEADER.format(body=body, **BUFFERS), tmp_path)
    function = dis.split("OpFunction ")[1]
    # Bound in whole 4-byte words, the buffer is longer than the host's count: the length is
    # member 1 of the params block (buffer 0's len), not OpArrayLength.
    assert "OpArrayLength" not in function
    assert "PushConstant" in dis and "OpAccessChain" in function


def test_narrow_parameters_are_read_from_words_of_the_params_block(tmp_path: Path) -> None:
    text = HEADER.format(
        locals="",
        caps='OpCapability StoragePushConstant8\nOpExtension "SPV_KHR_8bit_storage"',
        interface="%params %out",
        decorations="""
OpDecorate %pblock Block
OpMemberDecorate %pblock 0 Offset 0
OpMemberDecorate %pblock 1 Offset 4
OpMemberDecorate %pblock 2 Offset 5
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
""",
        globals="""
%pblock = OpTypeStruct %uint %uchar %uchar
%ppblock = OpTypePointer PushConstant %pblock
%params = OpVariable %ppblock PushConstant
%ppu8 = OpTypePointer PushConstant %uchar
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %uint
%out = OpVariable %pblk StorageBuffer
%c2 = OpConstant %uint 2
""",
        body="""
%pa = OpAccessChain %ppu8 %params %c1
%a = OpLoad %uchar %pa
%pb = OpAccessChain %ppu8 %params %c2
%b = OpLoad %uchar %pb
%s = OpIAdd %uchar %a %b
%w = OpUConvert %uint %s
%po = OpAccessChain %pu %out %c0 %i
OpStore %po %w
""",
    )
    dis, variables = both(text, tmp_path)
    assert variables == 1
    # Bytes 4 and 5 are word 1, bits 0..7 and 8..15: the block is two words.
    uint = next(line.split()[0] for line in dis.splitlines() if "OpTypeInt 32 0" in line)
    assert f"OpTypeStruct {uint} {uint}\n" in dis, dis
    assert "StoragePushConstant8" not in dis


def test_a_per_thread_byte_array_and_a_struct_value_become_32_bit(tmp_path: Path) -> None:
    text = HEADER.format(
        locals="%table = OpVariable %pbytes Function %null",
        caps="",
        interface="%out",
        decorations="""
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 0
""",
        globals="""
%c16 = OpConstant %uint 16
%bytes = OpTypeArray %uchar %c16
%pbytes = OpTypePointer Function %bytes
%pfu8 = OpTypePointer Function %uchar
%pair = OpTypeStruct %uchar %uint
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %uint
%out = OpVariable %pblk StorageBuffer
%c7 = OpConstant %uchar 7
%null = OpConstantNull %bytes
""",
        body="""
%k = OpBitwiseAnd %uint %i %c16
%slot = OpAccessChain %pfu8 %table %k
OpStore %slot %c7
%back = OpLoad %uchar %slot
%p = OpCompositeConstruct %pair %back %i
%first = OpCompositeExtract %uchar %p 0
%w = OpUConvert %uint %first
%po = OpAccessChain %pu %out %c0 %i
OpStore %po %w
""",
    )
    dis, variables = both(text, tmp_path)
    assert variables == 0  # no module-scope variable: the function's array and the value
    uint = next(line.split()[0] for line in dis.splitlines() if "OpTypeInt 32 0" in line)
    assert f"OpTypeStruct {uint} {uint}\n" in dis  # the pair, widened
    array = next(line for line in dis.splitlines() if "OpTypeArray" in line)
    assert f"OpTypeArray {uint} " in array, array


def test_a_shape_the_pass_does_not_handle_leaves_the_module_and_says_why(tmp_path: Path) -> None:
    body = """
%pa = OpAccessChain %pu8 %in %c0 %i
%pb = OpAccessChain %pu8 %out %c0 %i
OpCopyMemory %pb %pa
"""
    data = assemble(HEADER.format(body=body, **BUFFERS), tmp_path)
    lowered = lower_narrow_memory(data)
    assert lowered.data == data and lowered.variables == 0
    assert lowered.refused is not None and "pointer into a buffer" in lowered.refused


def test_a_module_without_narrow_memory_is_returned_as_it_is(tmp_path: Path) -> None:
    body = "%x = OpUConvert %uchar %i\n%y = OpUConvert %uint %x\n"
    empty = dict(locals="", caps="", interface="", decorations="", globals="")
    data = assemble(HEADER.format(body=body, **empty), tmp_path)
    assert lower_narrow_memory(data).data is data
