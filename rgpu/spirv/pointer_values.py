"""Dead SPIR-V values whose type holds a pointer, and such types when nothing uses them.

rust-gpu 0.11 gives a struct holding a pointer (`&[T]`'s pointer-and-length, `Global`,
`Shared`, a closure capturing them, a user's struct wrapping one) a SPIR-V struct type with a
pointer member, and builds values of it with OpCompositeInsert/OpCompositeExtract. Its
spirv-opt run (release builds) folds every use of those values away but leaves the
OpCompositeConstruct that built them, now unused, and the type. spirv-val and Vulkan drivers
accept that (logical addressing forbids storing such a value, not naming its type); naga's
SPIR-V front end turns every type of the module into its IR and its validator rejects a
struct member or array element that is a pointer ("Type [21] '' is invalid: Expected data
type, found [19]"), so wgpu on Metal and DX12, and any translation to MSL, HLSL or WGSL,
refused every rust-gpu module with such a struct.

`drop_dead_pointer_values` removes exactly those leftovers: values of a pointer-holding type
that nothing uses (OpCompositeConstruct, OpCompositeInsert/Extract, OpCopyObject, OpUndef,
OpSelect, OpPhi), repeatedly, then the pointer-holding struct and array types nothing refers
to any more, and the names and decorations of what it removed. Nothing that executes
changes: a driver compiles the same program (the kernel's speed on the passthrough path is
the same), and the header's id bound stays as it was.

Uses are counted conservatively: every word of every instruction counts as a use of the id
with that number (a literal that happens to equal an id keeps that id), except the defining
word itself and the target of a name or decoration.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rgpu.spirv.opcodes import (
    OP_DECORATE_ID,
    OP_ENTRY_POINT,
    OP_EXT_INST,
    OP_LOAD,
    OP_STORE,
    OP_TYPE_ARRAY,
    OP_TYPE_FORWARD_POINTER,
    OP_TYPE_POINTER,
    OP_TYPE_RUNTIME_ARRAY,
    OP_TYPE_STRUCT,
    OP_TYPE_UNTYPED_POINTER,
)
from rgpu.spirv.words import ANNOTATIONS, instructions, module_bytes, module_words, opcode

# Instructions whose operands are literals (or name nothing this pass removes): no uses.
LITERAL_ONLY = ANNOTATIONS | frozenset(
    {
        3,  # OpSource
        4,  # OpSourceExtension
        7,  # OpString
        8,  # OpLine
        10,  # OpExtension
        11,  # OpExtInstImport
        14,  # OpMemoryModel
        17,  # OpCapability
        21,  # OpTypeInt
        22,  # OpTypeFloat
        317,  # OpNoLine
        330,  # OpModuleProcessed
    }
)
# Instructions with literal operands: the word indices that are ids (any id a removed
# value or type could be sits at one of them).
ID_WORDS: dict[int, tuple[int, ...]] = {
    16: (1,),  # OpExecutionMode: entry point, then literals
    23: (2,),  # OpTypeVector: component type, count
    24: (2,),  # OpTypeMatrix: column type, count
    32: (3,),  # OpTypePointer: result, storage class, pointee type
    43: (1,),  # OpConstant: type, result, value
    50: (1,),  # OpSpecConstant
    54: (1, 4),  # OpFunction: type, result, control, function type
    59: (1, 4),  # OpVariable: type, result, storage class, initializer
    79: (1, 3, 4),  # OpVectorShuffle: type, result, vectors, component literals
    81: (1, 3),  # OpCompositeExtract: type, result, composite, index literals
    82: (1, 3, 4),  # OpCompositeInsert: type, result, object, composite, index literals
    246: (1, 2),  # OpLoopMerge: merge, continue, control literals
    247: (1,),  # OpSelectionMerge: merge, control
    251: (1,),  # OpSwitch: selector, default, literal/label pairs (labels are no value)
}
# Values without side effects: word 1 is the result type, word 2 the result id.
VALUE_OPS = frozenset(
    {
        1,  # OpUndef
        80,  # OpCompositeConstruct
        81,  # OpCompositeExtract
        82,  # OpCompositeInsert
        83,  # OpCopyObject
        169,  # OpSelect
        245,  # OpPhi
    }
)


@dataclass(frozen=True)
class Cleaned:
    data: bytes
    values: int  # dead values removed
    types: int  # pointer-holding types removed


def _pointer_holders(insts: list[tuple[int, ...]]) -> set[int]:
    """Ids of the struct and array types with a pointer member or element (transitively)."""
    pointers = {
        inst[1]
        for inst in insts
        if opcode(inst) in (OP_TYPE_POINTER, OP_TYPE_UNTYPED_POINTER) and len(inst) > 1
    }
    pointers |= {inst[1] for inst in insts if opcode(inst) == OP_TYPE_FORWARD_POINTER}
    holders: set[int] = set()
    changed = True
    while changed:  # types come before their uses, except through forward pointers
        changed = False
        for inst in insts:
            op = opcode(inst)
            if op == OP_TYPE_STRUCT:
                parts = inst[2:]
            elif op in (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
                parts = inst[2:3]
            else:
                continue
            if inst[1] not in holders and any(p in pointers or p in holders for p in parts):
                holders.add(inst[1])
                changed = True
    return holders


def _defines(inst: tuple[int, ...]) -> int | None:
    """The result id of a value or type instruction this pass may remove."""
    op = opcode(inst)
    if op in VALUE_OPS and len(inst) > 2:
        return inst[2]
    if op in (OP_TYPE_STRUCT, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY) and len(inst) > 1:
        return inst[1]
    return None


def _string_end(inst: tuple[int, ...], start: int) -> int:
    """The index after a literal string that starts at word `start` (nul-terminated)."""
    at = start
    while at < len(inst):
        word = inst[at]
        at += 1
        if any((word >> shift) & 0xFF == 0 for shift in (0, 8, 16, 24)):
            break
    return at


def used_words(inst: tuple[int, ...]) -> tuple[int, ...]:
    """The words of `inst` that count as uses of ids.

    Instructions with literal operands that are common in every module (constants, member
    indices, decorations, execution modes, memory operands, loop controls) count only their
    id operands, so a literal equal to some id does not keep that id alive; every other
    instruction counts all its words.
    """
    op = opcode(inst)
    if op in LITERAL_ONLY:
        return ()
    if op in ID_WORDS:
        return tuple(inst[i] for i in ID_WORDS[op] if i < len(inst))
    if op == OP_DECORATE_ID:
        return inst[3:]
    if op == OP_ENTRY_POINT:
        return inst[2:3] + inst[_string_end(inst, 3) :]
    if op == OP_EXT_INST:  # type, result, set, instruction number, operands
        return inst[1:2] + inst[3:4] + inst[5:]
    if op == OP_LOAD:  # type, result, pointer, memory operands
        return inst[1:2] + inst[3:4]
    if op == OP_STORE:  # pointer, object, memory operands
        return inst[1:3]
    defined = _defines(inst)
    if defined is None:
        return inst[1:]
    position = 2 if op in VALUE_OPS else 1
    return inst[1:position] + inst[position + 1 :]


def drop_dead_pointer_values(data: bytes) -> Cleaned:
    """`data` (a SPIR-V module) without its dead pointer-holding values and types."""
    words = module_words(data)
    insts = instructions(words)
    holders = _pointer_holders(insts)
    uses: Counter[int] = Counter()
    for inst in insts:
        uses.update(used_words(inst))
    removed: set[int] = set()
    values = types = 0
    for wanted in (VALUE_OPS, frozenset({OP_TYPE_STRUCT, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY})):
        changed = True
        while changed:
            changed = False
            for inst in insts:
                op = opcode(inst)
                if op not in wanted:
                    continue
                result = _defines(inst)
                if result is None or result in removed or uses[result] > 0:
                    continue
                held = inst[1] if op in VALUE_OPS else result
                if held not in holders:
                    continue
                removed.add(result)
                uses.subtract(used_words(inst))
                changed = True
                if op in VALUE_OPS:
                    values += 1
                else:
                    types += 1
    if not removed:
        return Cleaned(data, 0, 0)
    kept = [
        inst
        for inst in insts
        if _defines(inst) not in removed
        and not (opcode(inst) in ANNOTATIONS and len(inst) > 1 and inst[1] in removed)
    ]
    return Cleaned(module_bytes(words, words[3], kept), values, types)
