"""Float results like the cpu backend's: `NoContraction` on every float arithmetic result.

rust-gpu marks no float operation `NoContraction`, so a Vulkan driver may fuse `a * b + c`
into one fused multiply-add (NVIDIA's does), which rounds once where the cpu backend and
CUDA (rustc's nvptx PTX: separate mul.rn/add.rn, no contraction flags) round twice. This
pass adds `OpDecorate %r NoContraction` for the result of each float arithmetic instruction
(the SPIR-V spec, 3.20 "Decoration": "Apply to an arithmetic instruction to indicate the
operation cannot be combined with another instruction to form a single operation"), which
is what glslang emits for GLSL's `precise`. An explicit `mul_add` (rgpu's prelude:
GLSL.std.450 `Fma`) is decorated too: the extended instruction set's rule is that an `Fma`
decorated NoContraction is "considered a single operation", where an undecorated one may be
computed as a multiply and an add. (Mesa's llvmpipe still computes it as two roundings: its
NIR options lower every ffma; docs/reference.md.)

Pure Python over the binary (section 2.3 "Physical Layout", 2.4 "Logical Layout": the
decorations sit in the annotation section, before the first type declaration).
"""

from __future__ import annotations

import struct

from rgpu.spirv.module import MAGIC
from rgpu.spirv.opcodes import OP_DECORATE, OP_EXT_INST, OP_EXT_INST_IMPORT
from rgpu.spirv.words import literal_string

DECORATION_NO_CONTRACTION = 42
GLSL_STD_450_FMA = 50  # GLSL.std.450's `Fma` (its spec, "Fma")
# Result-producing float arithmetic (SPIR-V spec 3.52.13 "Arithmetic Instructions"):
# OpFNegate, OpFAdd, OpFSub, OpFMul, OpFDiv, OpFRem, OpFMod, OpVectorTimesScalar,
# OpMatrixTimesScalar, OpVectorTimesMatrix, OpMatrixTimesVector, OpMatrixTimesMatrix,
# OpOuterProduct, OpDot. Each is `opcode result-type result-id operands...`.
FLOAT_ARITHMETIC = frozenset({127, 129, 131, 133, 136, 140, 141, 142, 143, 144, 145, 146, 147, 148})
# What may precede the first type declaration (2.4 "Logical Layout"): capabilities,
# extensions, ext-inst imports, memory model, entry points, execution modes, debug
# instructions (OpSourceContinued, OpSource, OpSourceExtension, OpName, OpMemberName,
# OpString, OpModuleProcessed) and annotations (OpDecorate .. OpGroupMemberDecorate,
# OpDecorateId, OpDecorateString, OpMemberDecorateString), plus OpNop.
PREAMBLE = frozenset(
    {0, 2, 3, 4, 5, 6, 7, 10, 11, 14, 15, 16, 17, 330, 331} | {71, 72, 73, 74, 75, 332, 5632, 5633}
)


def _instructions(words: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(start, word count, opcode) of every instruction after the header."""
    found = []
    at = 5
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if count == 0 or at + count > len(words):
            raise ValueError(f"truncated SPIR-V instruction at word {at}")
        found.append((at, count, opcode))
        at += count
    return found


def _float_results(words: tuple[int, ...], instructions: list[tuple[int, int, int]]) -> list[int]:
    """The result ids of float arithmetic and GLSL.std.450 Fma, in module order."""
    glsl = {
        words[at + 1]
        for at, count, op in instructions
        if op == OP_EXT_INST_IMPORT and literal_string(words[at : at + count], 2) == "GLSL.std.450"
    }
    return [
        words[at + 2]
        for at, count, op in instructions
        if count >= 3
        and (
            op in FLOAT_ARITHMETIC
            or (
                op == OP_EXT_INST
                and count >= 5
                and words[at + 3] in glsl
                and words[at + 4] == GLSL_STD_450_FMA
            )
        )
    ]


def add_no_contraction(data: bytes) -> tuple[bytes, int]:
    """The module with `NoContraction` on every float arithmetic result not already so
    decorated, and how many decorations were added. Raises ValueError on a malformed module."""
    if len(data) < 20 or len(data) % 4:
        raise ValueError("not a SPIR-V module")
    words = struct.unpack(f"<{len(data) // 4}I", data)
    if words[0] != MAGIC:
        raise ValueError("not a SPIR-V module (magic number)")
    instructions = _instructions(words)
    decorated = {
        words[at + 1]
        for at, count, op in instructions
        if op == OP_DECORATE and count >= 3 and words[at + 2] == DECORATION_NO_CONTRACTION
    }
    results = [r for r in _float_results(words, instructions) if r not in decorated]
    results = list(dict.fromkeys(results))
    if not results:
        return data, 0
    insert_at = next((at for at, _, op in instructions if op not in PREAMBLE), len(words))
    added: list[int] = []
    for result in results:
        added += [(3 << 16) | OP_DECORATE, result, DECORATION_NO_CONTRACTION]
    out = [*words[:insert_at], *added, *words[insert_at:]]
    return struct.pack(f"<{len(out)}I", *out), len(results)


def count_no_contraction(data: bytes) -> tuple[int, int]:
    """(float arithmetic and Fma results, how many of them are decorated NoContraction)."""
    words = struct.unpack(f"<{len(data) // 4}I", data)
    instructions = _instructions(words)
    decorated = {
        words[at + 1]
        for at, count, op in instructions
        if op == OP_DECORATE and count >= 3 and words[at + 2] == DECORATION_NO_CONTRACTION
    }
    results = set(_float_results(words, instructions))
    return len(results), len(results & decorated)
