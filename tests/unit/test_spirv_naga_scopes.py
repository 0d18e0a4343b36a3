"""rgpu.spirv.naga_scopes on the three shapes naga 30's SPIR-V reader gets wrong,
written in SPIR-V assembly (tests/fixtures/spirv/naga_scopes/): the pass's output passes
spirv-val and has the copy (or the repeated access chain) in the using block, and nothing
else changes. tests/integration/test_rgpu_naga.py runs naga on both forms;
tests/integration/test_corpus.py runs rust-gpu's modules through the pass on lavapipe."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.spirv.naga_scopes import rescope_for_naga

SHAPES = Path(__file__).resolve().parents[1] / "fixtures" / "spirv" / "naga_scopes"

pytestmark = pytest.mark.skipif(
    shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
    reason="SPIRV-Tools (spirv-as, spirv-val) is not installed: scripts/setup-test-env.sh",
)


def assemble(name: str, tmp_path: Path) -> bytes:
    out = tmp_path / f"{name}.spv"
    subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(SHAPES / f"{name}.spvasm"), "-o", str(out)],
        check=True,
    )
    return out.read_bytes()


def disassemble(data: bytes, tmp_path: Path) -> list[str]:
    path = tmp_path / "after.spv"
    path.write_bytes(data)
    subprocess.run(["spirv-val", "--target-env", "vulkan1.2", str(path)], check=True)
    text = subprocess.run(
        ["spirv-dis", "--raw-id", str(path)], check=True, capture_output=True, text=True
    ).stdout
    return [line.strip() for line in text.splitlines() if not line.startswith(";")]


def block(lines: list[str], label: str) -> list[str]:
    """The instructions of the block `label` (an id as spirv-dis --raw-id writes it)."""
    start = lines.index(f"{label} = OpLabel")
    ends = [i for i in range(start + 1, len(lines)) if lines[i].endswith("OpLabel")]
    return lines[start + 1 : ends[0] if ends else len(lines)]


def test_a_subgroup_operand_from_the_loop_header_is_copied_into_the_merge_block(
    tmp_path: Path,
) -> None:
    before = assemble("subgroup_operand", tmp_path)
    after = rescope_for_naga(before)
    assert (after.copied, after.addresses) == (1, 0)
    lines = disassemble(after.data, tmp_path)
    # %acc is %20 in the assembled module, the merge block %23, the copy the old bound.
    merge = block(lines, "%23")
    assert merge[:2] == [
        "%26 = OpCopyObject %7 %20",
        "%24 = OpGroupNonUniformIAdd %7 %11 Reduce %26",
    ], merge
    # Only that: the rest of the module is word for word the same.
    assert len(after.data) == len(before) + 16
    again = rescope_for_naga(after.data)
    assert (again.copied, again.addresses) == (0, 0) and again.data == after.data


def test_an_atomic_value_from_another_block_is_copied(tmp_path: Path) -> None:
    after = rescope_for_naga(assemble("atomic_value", tmp_path))
    assert (after.copied, after.addresses) == (1, 0)
    merge = block(disassemble(after.data, tmp_path), "%23")
    copy = next(line for line in merge if "OpCopyObject" in line)
    atomic = next(line for line in merge if "OpAtomicIAdd" in line)
    assert copy == "%27 = OpCopyObject %7 %20" and atomic == "%25 = OpAtomicIAdd %7 %24 %9 %8 %27"


def test_an_access_chain_used_in_another_block_is_repeated_there(tmp_path: Path) -> None:
    after = rescope_for_naga(assemble("pointer_across_blocks", tmp_path))
    # The load and the store each get the chain once (one per instruction that uses it).
    assert (after.copied, after.addresses) == (0, 2)
    lines = disassemble(after.data, tmp_path)
    assert block(lines, "%21")[:5] == [
        "%24 = OpAccessChain %12 %2 %8 %16",
        "%22 = OpLoad %7 %24",
        "%23 = OpIAdd %7 %22 %9",
        "%25 = OpAccessChain %12 %2 %8 %16",
        "OpStore %25 %23",
    ]


def test_a_module_without_those_shapes_is_returned_as_it_is(tmp_path: Path) -> None:
    fixed = rescope_for_naga(assemble("subgroup_operand", tmp_path)).data
    assert rescope_for_naga(fixed).data is fixed


def test_not_a_module() -> None:
    with pytest.raises(ValueError):
        rescope_for_naga(b"\x03\x02\x23\x07")
