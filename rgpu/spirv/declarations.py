"""A module's types and constants as a pass that adds instructions needs them: the ones the
module declares, found by what they are (each scalar, vector and pointer type and each
constant once), the new ones the pass declares (kept in order, for the module's global
section before its first function), and fresh result ids past the module's bound.

The passes that write new code (narrow_memory, faults) share it; each inserts
`new_globals` itself and writes the final bound into the header (words.module_bytes).
"""

from __future__ import annotations

from rgpu.spirv.opcodes import (
    MEMORY_MODEL_VULKAN,
    OP_CONSTANT,
    OP_MEMORY_MODEL,
    OP_TYPE_BOOL,
    OP_TYPE_FLOAT,
    OP_TYPE_INT,
    OP_TYPE_POINTER,
    OP_TYPE_VECTOR,
    SCOPE_DEVICE,
    SCOPE_QUEUE_FAMILY,
    TYPE_OPS,
)
from rgpu.spirv.words import opcode

Inst = list[int]

# Types that are equal when their operands are (the others, structs and arrays, may differ
# by their decorations, so a pass declares its own: `declare`).
INTERNED_TYPES = frozenset(
    {OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_POINTER, OP_TYPE_BOOL}
)


class Declarations:
    """The module's types and constants, and the new ones the pass declares."""

    def __init__(self, insts: list[tuple[int, ...]], bound: int) -> None:
        self.bound = bound
        self.defs: dict[int, tuple[int, ...]] = {}  # type id -> its instruction
        self.constants: dict[int, int] = {}  # scalar constant id -> its value
        self.made: dict[tuple[int, ...], int] = {}  # interned type/constant -> id
        self.new_globals: list[Inst] = []  # types and constants, in dependency order
        self.vulkan_memory_model = False
        for inst in insts:
            op = opcode(inst)
            if op in TYPE_OPS and len(inst) > 1:
                self.defs[inst[1]] = inst
                if op in INTERNED_TYPES:
                    self.made.setdefault((op, *inst[2:]), inst[1])
            elif op == OP_CONSTANT and len(inst) == 4:
                self.constants[inst[2]] = inst[3]
                self.made.setdefault((op, inst[1], inst[3]), inst[2])
            elif op == OP_MEMORY_MODEL and len(inst) >= 3:
                self.vulkan_memory_model = inst[2] == MEMORY_MODEL_VULKAN
        self.u32 = self.type_of(OP_TYPE_INT, 32, 0)

    def fresh(self) -> int:
        self.bound += 1
        return self.bound - 1

    def declare(self, op: int, *operands: int) -> int:
        """A new type, whatever the module has (one a pass decorates)."""
        new = self.fresh()
        inst = [((len(operands) + 2) << 16) | op, new, *operands]
        self.new_globals.append(inst)
        self.defs[new] = tuple(inst)
        return new

    def type_of(self, op: int, *operands: int) -> int:
        """The module's type `op operands`, declared when it has none."""
        key = (op, *operands)
        if key not in self.made:
            self.made[key] = self.declare(op, *operands)
        return self.made[key]

    def const(self, value: int) -> int:
        """The u32 constant `value`, declared when the module has none."""
        value &= 0xFFFFFFFF
        key = (OP_CONSTANT, self.u32, value)
        if key not in self.made:
            new = self.fresh()
            self.made[key] = new
            self.new_globals.append([(4 << 16) | OP_CONSTANT, self.u32, new, value])
            self.constants[new] = value
        return self.made[key]

    def atomic_scope(self) -> int:
        """The scope of one launch's atomics: QueueFamily under the Vulkan memory model
        (Device scope needs a capability rust-gpu does not declare), else Device; as rgpu's
        `Global` atomics."""
        return self.const(SCOPE_QUEUE_FAMILY if self.vulkan_memory_model else SCOPE_DEVICE)
