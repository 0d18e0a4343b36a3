"""rgpu.spirv.pointer_values on small modules written word by word here (the shape
rust-gpu's release output has: a dead OpCompositeConstruct of a struct holding a pointer).
tests/integration/test_rust_gpu.py runs the pass on rust-gpu's real output and the result
through naga (wgpu's naga path on lavapipe)."""

from __future__ import annotations

import struct

import pytest

from rgpu.spirv.pointer_values import drop_dead_pointer_values

# Ids of the module below.
VOID, UINT, U4, ARR, FN, PTR_ARR, PTR_U, HOLDER, OUTER, WG, MAIN, LABEL = range(1, 13)
DEAD, DEAD_OUTER, ELEM, U0 = 13, 14, 15, 17
BOUND = 20
WORKGROUP = 4


def inst(opcode: int, *operands: int) -> list[int]:
    return [(len(operands) + 1) << 16 | opcode, *operands]


def string(text: str) -> list[int]:
    raw = text.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return list(struct.unpack(f"<{len(raw) // 4}I", raw))


def module(body: list[list[int]], *, holder_offset: int = 4) -> list[list[int]]:
    """Capability Shader, a GLCompute entry point `main`, a workgroup array, the struct
    {pointer to it, u32} (HOLDER) and {HOLDER, u32} (OUTER), then `body` in main."""
    return [
        inst(17, 1),  # OpCapability Shader
        inst(14, 0, 1),  # OpMemoryModel Logical GLSL450
        inst(15, 5, MAIN, *string("main"), WG),  # OpEntryPoint GLCompute
        inst(16, MAIN, 17, 1, 1, 1),  # OpExecutionMode LocalSize 1 1 1
        inst(5, HOLDER, *string("Holder")),  # OpName
        inst(72, HOLDER, 1, 35, holder_offset),  # OpMemberDecorate Offset
        inst(19, VOID),
        inst(21, UINT, 32, 0),
        inst(43, UINT, U4, 4),  # OpConstant 4
        inst(43, UINT, U0, 0),  # OpConstant 0
        inst(28, ARR, UINT, U4),
        inst(33, FN, VOID),
        inst(32, PTR_ARR, WORKGROUP, ARR),
        inst(32, PTR_U, WORKGROUP, UINT),
        inst(30, HOLDER, PTR_ARR, UINT),
        inst(30, OUTER, HOLDER, UINT),
        inst(59, PTR_ARR, WG, WORKGROUP),  # OpVariable
        inst(54, VOID, MAIN, 0, FN),  # OpFunction
        inst(248, LABEL),
        *body,
        inst(253),  # OpReturn
        inst(56),  # OpFunctionEnd
    ]


def encode(insts: list[list[int]]) -> bytes:
    words = [0x07230203, 0x00010500, 0, BOUND, 0] + [w for i in insts for w in i]
    return struct.pack(f"<{len(words)}I", *words)


STORE = inst(62, ELEM, U4)  # OpStore %elem %uint_4
ACCESS = inst(65, PTR_U, ELEM, WG, U0)  # OpAccessChain (a use of the workgroup array)
CONSTRUCT = inst(80, HOLDER, DEAD, WG, U4)  # OpCompositeConstruct %Holder %wg %uint_4
CONSTRUCT_OUTER = inst(80, OUTER, DEAD_OUTER, DEAD, U4)


def test_dead_values_of_pointer_holding_types_and_the_types_go() -> None:
    dead = module([CONSTRUCT, CONSTRUCT_OUTER, ACCESS, STORE])
    cleaned = drop_dead_pointer_values(encode(dead))
    assert (cleaned.values, cleaned.types) == (2, 2)
    # Exactly those instructions, and the name and decoration of the struct, are gone; the
    # header (bound included) and everything else are as they were.
    gone = [CONSTRUCT, CONSTRUCT_OUTER, dead[4], dead[5], dead[14], dead[15]]
    assert cleaned.data == encode([i for i in dead if i not in gone])


def test_a_literal_equal_to_an_id_does_not_keep_it() -> None:
    # The member offset 14 equals OUTER's id: a decoration's literal, not a use.
    cleaned = drop_dead_pointer_values(encode(module([CONSTRUCT], holder_offset=OUTER)))
    assert (cleaned.values, cleaned.types) == (1, 2)


def test_a_value_still_used_stays_with_its_type() -> None:
    extract = inst(81, PTR_ARR, 16, DEAD, 0)  # OpCompositeExtract %ptr %dead 0
    access = inst(65, PTR_U, ELEM, 16, U0)
    live = module([CONSTRUCT, extract, access, STORE])
    cleaned = drop_dead_pointer_values(encode(live))
    assert (cleaned.values, cleaned.types) == (0, 1)  # only OUTER, which nothing uses
    kept = [i for i in live if i != live[15]]
    assert cleaned.data == encode(kept)


def test_dead_values_of_other_types_are_left_alone() -> None:
    plain = inst(80, ARR, 16, U4, U4, U4, U4)  # a dead u32 array: naga takes it
    cleaned = drop_dead_pointer_values(encode(module([plain, ACCESS, STORE])))
    assert cleaned.values == 0
    assert struct.pack(f"<{len(plain)}I", *plain) in cleaned.data


def test_a_module_without_pointer_holders_is_returned_as_it_is() -> None:
    data = encode([inst(17, 1), inst(14, 0, 1), inst(21, UINT, 32, 0)])
    cleaned = drop_dead_pointer_values(data)
    assert cleaned.data is data and (cleaned.values, cleaned.types) == (0, 0)


@pytest.mark.parametrize("data", [b"\x03\x02\x23\x07", encode([[5 << 16 | 5, 1]])])
def test_a_broken_module_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        drop_dead_pointer_values(data)
