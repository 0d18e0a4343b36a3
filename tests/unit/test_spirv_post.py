"""The spirv codegen's post-processing (codegens.spirv_post, spirv.contraction):
NoContraction on every float arithmetic result, spirv-opt's passes, spirv-val after, and
what the manifest records. The hand-made module checks the layout; the GLSL SAXPY fixture
(glslang) goes through the real spirv-opt and spirv-val."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from rgpu.codegens import spirv_post
from rgpu.errors import ArtifactError, ToolMissingError
from rgpu.spirv import contraction as sc
from rgpu.spirv import module as spirv_module
from tests.spirv_fixture import SAXPY_GLSL, TARGET_ENV, compile_entry, tools_missing

OP_TYPE_FLOAT = 22
OP_NAME = 5


def op(opcode: int, *operands: int) -> list[int]:
    return [((1 + len(operands)) << 16) | opcode, *operands]


def tiny_module() -> list[int]:
    """Header, OpCapability Shader, OpMemoryModel, an OpName, an OpDecorate, then a float
    type and (not a valid function: the pass reads instructions, not control flow) an
    OpFMul %5, OpFAdd %6, OpIAdd %7 and an OpFMul %8 already decorated NoContraction."""
    words = [spirv_module.MAGIC, 0x00010500, 0, 16, 0]
    words += op(17, 1)  # OpCapability Shader
    words += op(14, 0, 1)  # OpMemoryModel Logical GLSL450
    words += op(OP_NAME, 5, 0x61)  # OpName %5 "a"
    words += op(sc.OP_DECORATE, 8, sc.DECORATION_NO_CONTRACTION)
    words += op(OP_TYPE_FLOAT, 2, 32)
    words += op(133, 2, 5, 3, 4)  # OpFMul
    words += op(129, 2, 6, 5, 4)  # OpFAdd
    words += op(128, 2, 7, 3, 4)  # OpIAdd: not float
    words += op(133, 2, 8, 3, 4)  # OpFMul, already decorated
    return words


def pack(words: list[int]) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def unpack(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def test_float_results_get_no_contraction_among_the_annotations() -> None:
    words = tiny_module()
    out, added = sc.add_no_contraction(pack(words))
    assert added == 2
    got = unpack(out)
    decorations = op(sc.OP_DECORATE, 5, 42) + op(sc.OP_DECORATE, 6, 42)
    at = words.index((3 << 16) | OP_TYPE_FLOAT)  # before the first type declaration
    assert got == words[:at] + decorations + words[at:]
    assert sc.count_no_contraction(out) == (3, 3)
    assert sc.count_no_contraction(pack(words)) == (3, 1)


def test_an_fma_of_glsl_std_450_gets_no_contraction_and_other_ext_insts_not() -> None:
    """`mul_add` (GLSL.std.450 Fma, instruction 50) is decorated: "a single operation"."""
    words = [spirv_module.MAGIC, 0x00010500, 0, 16, 0]
    words += op(17, 1)  # OpCapability Shader
    glsl = struct.unpack("<4I", b"GLSL.std.450\0\0\0\0")
    words += op(sc.OP_EXT_INST_IMPORT, 1, *glsl)  # %1 = OpExtInstImport "GLSL.std.450"
    words += op(14, 0, 1)  # OpMemoryModel Logical GLSL450
    words += op(OP_TYPE_FLOAT, 2, 32)
    words += op(sc.OP_EXT_INST, 2, 5, 1, sc.GLSL_STD_450_FMA, 3, 3, 3)  # %5 = Fma
    words += op(sc.OP_EXT_INST, 2, 6, 1, 31, 3)  # %6 = Sqrt: not decorated
    words += op(sc.OP_EXT_INST, 2, 7, 9, sc.GLSL_STD_450_FMA, 3, 3, 3)  # another set's 50
    out, added = sc.add_no_contraction(pack(words))
    assert added == 1
    at = words.index((3 << 16) | OP_TYPE_FLOAT)
    assert unpack(out) == words[:at] + op(sc.OP_DECORATE, 5, 42) + words[at:]
    assert sc.count_no_contraction(out) == (1, 1)


def test_a_module_without_float_arithmetic_is_unchanged() -> None:
    words = tiny_module()[:-20]  # up to the float type
    data = pack(words)
    assert sc.add_no_contraction(data) == (data, 0)


def test_a_truncated_module_is_refused() -> None:
    words = tiny_module()
    words[-5] = (9 << 16) | 133  # claims more words than remain
    with pytest.raises(ValueError, match="truncated"):
        sc.add_no_contraction(pack(words))
    with pytest.raises(ValueError, match="not a SPIR-V module"):
        sc.add_no_contraction(b"\0" * 20)


@pytest.fixture
def saxpy_spv(tmp_path: Path) -> Path:
    if tools_missing():
        pytest.skip(f"missing {tools_missing()}")
    return compile_entry(SAXPY_GLSL, "saxpy", tmp_path / "saxpy.spv")


def val(data: bytes, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "checked.spv"
    path.write_bytes(data)
    return subprocess.run(
        ["spirv-val", "--target-env", TARGET_ENV, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_optimized_and_decorated_saxpy_passes_spirv_val(
    saxpy_spv: Path, tmp_path: Path
) -> None:
    data, extra = spirv_post.process(
        saxpy_spv, tmp_path / "opt.spv", "spirv-unknown-vulkan1.2", opt=True, contraction=False
    )
    assert extra["spirv_opt"]["passes"] == list(spirv_post.PASSES)
    assert extra["spirv_opt"]["tools"].startswith("SPIRV-Tools v")
    assert extra["no_contraction"] >= 2  # a * x[i] and the += at least
    floats, decorated = sc.count_no_contraction(data)
    assert floats == decorated == extra["no_contraction"]
    result = val(data, tmp_path)
    assert result.returncode == 0, result.stderr
    dis = subprocess.run(
        ["spirv-dis", "-"], input=data, capture_output=True, check=True
    ).stdout.decode()
    assert "NoContraction" in dis and "OpFMul" in dis and "OpFAdd" in dis
    assert "Fma" not in dis


def test_without_the_decorations_spirv_opt_fuses_the_multiply_add(
    saxpy_spv: Path, tmp_path: Path
) -> None:
    """Why the pass runs before spirv-opt as well: -O folds a*b+c into one Fma."""
    data, extra = spirv_post.process(
        saxpy_spv, tmp_path / "opt.spv", "spirv-unknown-vulkan1.2", opt=True, contraction=True
    )
    assert extra["no_contraction"] == "off (float-contraction = true)"
    dis = subprocess.run(
        ["spirv-dis", "-"], input=data, capture_output=True, check=True
    ).stdout.decode()
    assert "Fma" in dis and "NoContraction" not in dis


def test_with_both_steps_off_the_module_is_rust_gpus(saxpy_spv: Path, tmp_path: Path) -> None:
    data, extra = spirv_post.process(
        saxpy_spv, tmp_path / "opt.spv", "spirv-unknown-vulkan1.2", opt=False, contraction=True
    )
    # SAXPY has no index check (item buffers): the folding changes nothing either.
    assert data == saxpy_spv.read_bytes()
    assert extra == {
        "bounds_checks_proven": 0,
        "spirv_opt": "off (spirv-opt = false)",
        "no_contraction": "off (float-contraction = true)",
    }


def test_without_spirv_opt_the_build_says_how_to_get_it(
    saxpy_spv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No spirv-opt on PATH nor in rgpu's (empty) tools dir: exit 6's error, whose fix names
    --yes, the package command and the setting that does without it."""
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    monkeypatch.setenv("RGPU_TOOLS_DIR", str(tmp_path / "tools"))
    with pytest.raises(ToolMissingError, match="spirv-opt") as info:
        spirv_post.process(saxpy_spv, tmp_path / "o.spv", "x", opt=True, contraction=False)
    assert info.value.exit_code == 6
    hint = info.value.hint or ""
    assert "spirv-opt = false" in hint and "--yes" in hint
    assert "`sudo apt-get install spirv-tools`" in hint


def test_a_spirv_opt_failure_names_the_command(saxpy_spv: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.spv"
    broken.write_bytes(saxpy_spv.read_bytes()[:-8])
    with pytest.raises(ArtifactError, match="spirv-opt failed") as info:
        spirv_post.process(broken, tmp_path / "o.spv", "x", opt=True, contraction=True)
    assert info.value.hint is not None and "RGPU_SPIRV_OPT=0" in info.value.hint
