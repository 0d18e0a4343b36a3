"""rgpu.spirv.passes: the one interface and the order the spirv codegen runs the passes in,
on real modules (SPIR-V assembly assembled by spirv-as, glslang's SAXPY): running a stage
gives the bytes and reports of each pass's own function run in that order, the manifest
keys the codegen records, and float-contraction turns NoContraction off."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu.spirv import (
    contraction,
    naga_scopes,
    narrow_ints,
    narrow_memory,
    passes,
    pointer_values,
    range_checks,
)
from tests.spirv_fixture import SAXPY_GLSL, compile_entry, tools_missing
from tests.unit.test_spirv_narrow_ints import MODULE

SHAPES = Path(__file__).resolve().parents[1] / "fixtures" / "spirv" / "naga_scopes"

pytestmark = pytest.mark.skipif(
    shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
    reason="SPIRV-Tools (spirv-as, spirv-val) is not installed: scripts/setup-test-env.sh",
)

# An 8-bit add of two inputs, stored back as u32 (narrow_ints promotes it).
NARROW = MODULE.format(
    caps="OpCapability Int8",
    types="%uchar = OpTypeInt 8 0",
    consts="",
    functions="",
    body="""%a = OpUConvert %uchar %a32
%b = OpUConvert %uchar %b32
%sum = OpIAdd %uchar %a %b
%w = OpUConvert %uint %sum
%po = OpAccessChain %pu %out %c0 %c0
OpStore %po %w""",
)


def assemble(source: Path, tmp_path: Path) -> bytes:
    out = tmp_path / f"{source.stem}.spv"
    subprocess.run(
        ["spirv-as", "--target-env", "vulkan1.2", str(source), "-o", str(out)], check=True
    )
    return out.read_bytes()


def modules(tmp_path: Path) -> dict[str, bytes]:
    narrow = tmp_path / "narrow.spvasm"
    narrow.write_text(NARROW)
    found = {path.stem: assemble(path, tmp_path) for path in sorted(SHAPES.glob("*.spvasm"))}
    found["narrow"] = assemble(narrow, tmp_path)
    return found


def by_hand_for_naga(data: bytes) -> tuple[bytes, dict[str, object]]:
    """FOR_NAGA as the codegen ran it before the passes had one interface."""
    cleaned = pointer_values.drop_dead_pointer_values(data)
    memory = narrow_memory.lower_narrow_memory(cleaned.data)
    narrowed = narrow_ints.promote_narrow_ints(memory.data)
    rescoped = naga_scopes.rescope_for_naga(narrowed.data)
    return rescoped.data, {
        "narrow_memory": {
            "variables": memory.variables,
            "rewritten": memory.values,
            "kept": memory.refused,
        },
        "narrow_ints": {
            "promoted": narrowed.values,
            "capabilities_removed": list(narrowed.capabilities_removed),
        },
        "naga_scopes": {"copied": rescoped.copied, "addresses": rescoped.addresses},
    }


def test_for_naga_runs_each_pass_in_order_and_reports_what_the_manifest_records(
    tmp_path: Path,
) -> None:
    names = [p.name for p in passes.FOR_NAGA]
    assert names == ["pointer_values", "narrow_memory", "narrow_ints", "naga_scopes"]
    changed = 0
    for name, data in modules(tmp_path).items():
        data_out, reports = passes.run(passes.FOR_NAGA, data)
        assert (data_out, reports) == by_hand_for_naga(data), name
        changed += data_out != data
    assert changed == 4  # every fixture is a shape one of the passes rewrites
    narrow = passes.run(passes.FOR_NAGA, modules(tmp_path)["narrow"])[1]
    assert narrow["narrow_ints"] == {"promoted": 3, "capabilities_removed": ["Int8"]}


def test_a_module_a_pass_cannot_read_raises_value_error() -> None:
    with pytest.raises(ValueError, match="not a whole SPIR-V module"):
        passes.run(passes.FOR_NAGA, b"\x03\x02\x23\x07")


@pytest.fixture
def saxpy(tmp_path: Path) -> bytes:
    if tools_missing():
        pytest.skip(f"missing {tools_missing()}")
    return compile_entry(SAXPY_GLSL, "saxpy", tmp_path / "saxpy.spv").read_bytes()


def test_before_opt_folds_checks_then_decorates_float_results(saxpy: bytes) -> None:
    data, reports = passes.run(passes.BEFORE_OPT, saxpy)
    folded, proven = range_checks.fold_proven_checks(saxpy)
    decorated, added = contraction.add_no_contraction(folded)
    floats, marked = contraction.count_no_contraction(decorated)
    assert data == decorated
    assert added > 0 and floats == marked
    assert reports == {"bounds_checks_proven": proven, "no_contraction": floats}


def test_float_contraction_turns_no_contraction_off(saxpy: bytes) -> None:
    off = frozenset({passes.FLOAT_CONTRACTION})
    data, reports = passes.run(passes.BEFORE_OPT, saxpy, off)
    assert data == range_checks.fold_proven_checks(saxpy)[0]
    assert "no_contraction" not in reports
    floats, marked = contraction.count_no_contraction(data)
    assert floats > 0 and marked == 0
    assert passes.run(passes.AFTER_OPT, data, off) == (data, {})
