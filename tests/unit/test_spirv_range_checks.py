"""Index checks a guard proves (spirv/range_checks.py), on hand-written SPIR-V
(spirv-as): the loop of a kernel reading `tile[4 * k + 1]` while `k < 256`, the shape
rust-gpu gives a `Shared<f32, 1024>` read, checked by spirv-val after the pass."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.spirv.range_checks import fold_proven_checks

pytestmark = pytest.mark.skipif(
    shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
    reason="SPIRV-Tools (spirv-as, spirv-val) is not installed: scripts/setup-test-env.sh",
)

# `while k < 256 { if !(4k + 1 < 1024) { break } ; if !(4k + 1 < LIMIT) { break } ; k += 1 }`
LOOP = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpName %guard "guard"
OpName %first "first"
OpName %second "second"
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%uint = OpTypeInt 32 0
%u0 = OpConstant %uint 0
%u1 = OpConstant %uint 1
%u4 = OpConstant %uint 4
%u256 = OpConstant %uint 256
%u1024 = OpConstant %uint 1024
%limit = OpConstant %uint {limit}
%main = OpFunction %void None %fn
%entry = OpLabel
OpBranch %header
%header = OpLabel
%k = OpPhi %uint %u0 %entry %next %cont
OpLoopMerge %exit %cont None
OpBranch %check
%check = OpLabel
%guard = OpULessThan %bool %k %u256
OpBranchConditional %guard %body %exit
%body = OpLabel
%i = OpIMul %uint %u4 %k
%j = OpIAdd %uint %i %u1
%first = OpULessThan %bool %j %u1024
OpSelectionMerge %then None
OpBranchConditional %first %then %broke
%broke = OpLabel
OpBranch %exit
%then = OpLabel
%second = OpULessThan %bool %j %limit
OpSelectionMerge %then2 None
OpBranchConditional %second %then2 %broke2
%broke2 = OpLabel
OpBranch %exit
%then2 = OpLabel
OpBranch %cont
%cont = OpLabel
%next = OpIAdd %uint %k %u1
OpBranch %header
%exit = OpLabel
OpReturn
OpFunctionEnd
"""


def run(tool: str, *args: str, data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([tool, *args], input=data, capture_output=True, check=False)


def assemble(text: str, tmp_path: Path) -> bytes:
    source, binary = tmp_path / "m.spvasm", tmp_path / "m.spv"
    source.write_text(text)
    subprocess.run(["spirv-as", str(source), "-o", str(binary)], check=True)
    return binary.read_bytes()


def conditions(data: bytes) -> list[str]:
    text = run("spirv-dis", "-", data=data).stdout.decode()
    return [line.split()[1] for line in text.splitlines() if "OpBranchConditional" in line]


def test_a_check_the_loop_guard_proves_is_folded_and_one_it_does_not_stays(
    tmp_path: Path,
) -> None:
    # 4 * 255 + 1 = 1021: below 1024 always; below 1021 not always.
    data = assemble(LOOP.format(limit=1021), tmp_path)
    folded, count = fold_proven_checks(data)
    assert count == 1
    assert run("spirv-val", "-", data=folded).returncode == 0
    # The guard itself, the proven check (now a new `true` constant), the unproven one.
    guard, first, second = conditions(folded)
    assert (guard, second) == ("%guard", "%second") and first not in ("%first", "%guard")
    assert "OpConstantTrue" in run("spirv-dis", "-", data=folded).stdout.decode()


def test_nothing_is_folded_where_a_value_could_wrap_or_the_bound_is_not_a_constant(
    tmp_path: Path,
) -> None:
    # 4 * k + 1 for k < 2^31 could wrap past 2^32: unknown, both checks stay.
    text = LOOP.format(limit=1021).replace(
        "%u256 = OpConstant %uint 256", "%u256 = OpConstant %uint 2147483648"
    )
    data = assemble(text, tmp_path)
    assert fold_proven_checks(data) == (data, 0)
