"""Operands naga's SPIR-V reader loses across blocks, copied into the block that uses them.

naga 30's SPIR-V front end (`front/spv`, the reader wgpu uses on Metal, DX12, in browsers and
for `RGPU_WGPU_SHADER=naga`) turns each SPIR-V block into statements of a structured body (a
loop's body, an if's arm). A value defined in a block whose body does not enclose the using
body (defined in a loop's header, used after the loop: SPIR-V allows it, the header dominates
the merge block) is spilled by its `get_expr_handle` into a local variable and loaded again
where it is used. Three kinds of instruction get that wrong (read in naga 30.0.1 and 30.0.2,
`front/spv/next_block.rs` and `mod.rs`; each reproduced with a module written in SPIR-V
assembly, tests/unit/test_spirv_naga_scopes.py):

- the subgroup operations (`OpGroupNonUniform*`) end the running expression emitter before
  they look up their operands, and the spill ends it again: naga panics (`proc/emitter.rs:24`,
  "called `Option::unwrap()` on a `None` value"; wgpu issues #8389 and #7358);
- the atomics with a value (`OpAtomicIAdd`, `OpAtomicAnd`, `OpAtomicExchange`, ...) take the
  value's expression without the spill: naga's validator then rejects the function ("Used by
  a statement before it was introduced into the scope by any of the dominating blocks");
- a pointer (an access chain) used in another block is spilled like a value, into a local
  variable of pointer type, which naga's validator rejects ("Local variable has a type [N]
  that can't be stored in a local variable").

The rewrite, the same program in a shape naga reads: before a subgroup operation or an
atomic, every operand value defined in another block of the function is copied
(`OpCopyObject`) in the operation's own block, and the operation reads the copy (naga spills
and reloads for the copy, as it does for any other instruction); an access chain used in
another block than its own is repeated (same base and indices, a fresh id) right before the
use, and the use takes the repetition. Phis are left alone (their operands belong to the
predecessor blocks). A driver compiles the same program: a copy and a repeated address are
nothing to it. spirv-val checks the result (codegens/spirv.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from rgpu.spirv.opcodes import (
    OP_ACCESS_CHAIN,
    OP_ARRAY_LENGTH,
    OP_ATOMIC_STORE,
    OP_COPY_MEMORY,
    OP_COPY_OBJECT,
    OP_FUNCTION,
    OP_FUNCTION_END,
    OP_IN_BOUNDS_ACCESS_CHAIN,
    OP_IN_BOUNDS_PTR_ACCESS_CHAIN,
    OP_LABEL,
    OP_LOAD,
    OP_PHI,
    OP_PTR_ACCESS_CHAIN,
    OP_STORE,
    OP_TYPE_POINTER,
    OP_TYPE_UNTYPED_POINTER,
    OP_VARIABLE,
)
from rgpu.spirv.words import instructions, module_bytes, module_words, opcode

# OpTypeVoid .. OpTypeForwardPointer, OpTypeUntypedPointerKHR: word 1 is the type's id.
TYPE_OPS = frozenset({*range(19, 40), OP_TYPE_UNTYPED_POINTER})
ACCESS_CHAINS = frozenset(
    {OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN, OP_PTR_ACCESS_CHAIN, OP_IN_BOUNDS_PTR_ACCESS_CHAIN}
)
# Atomics: opcode -> (word index of the pointer, word indices of values naga must see in
# scope). Scope and semantics operands are constants.
ATOMICS: dict[int, tuple[int, tuple[int, ...]]] = {
    227: (3, ()),  # OpAtomicLoad: type, result, pointer, scope, semantics
    OP_ATOMIC_STORE: (1, (4,)),  # OpAtomicStore: pointer, scope, semantics, value
    229: (3, (6,)),  # OpAtomicExchange
    230: (3, (7, 8)),  # OpAtomicCompareExchange: .., equal, unequal, value, comparator
    232: (3, ()),  # OpAtomicIIncrement
    233: (3, ()),  # OpAtomicIDecrement
    **{op: (3, (6,)) for op in range(234, 243)},  # OpAtomicIAdd .. OpAtomicXor
    6035: (3, (6,)),  # OpAtomicFAddEXT
}
# Subgroup operations (OpGroupNonUniform*, 333..366): every operand from word 3 on is an id,
# except the GroupOperation literal (word 4) of the reductions and scans.
SUBGROUP = frozenset(range(333, 367))
SUBGROUP_WITH_GROUP_OPERATION = frozenset({342, *range(349, 365)})  # BallotBitCount, IAdd..


@dataclass(frozen=True)
class Rescoped:
    data: bytes
    copied: int  # operand values copied into their user's block
    addresses: int  # access chains repeated in their user's block


def _pointer_uses(op: int, inst: tuple[int, ...]) -> tuple[int, ...]:
    """Word indices of `inst` that hold a pointer operand naga reads in the current block."""
    if op in (OP_LOAD, OP_ARRAY_LENGTH) or op in ACCESS_CHAINS:
        return (3,) if len(inst) > 3 else ()
    if op == OP_STORE:
        return (1,)
    if op == OP_COPY_MEMORY:
        return (1, 2)
    if op in ATOMICS:
        return (ATOMICS[op][0],)
    return ()


def _value_uses(op: int, inst: tuple[int, ...]) -> tuple[int, ...]:
    """Word indices of `inst` holding values naga must find in scope (subgroup operations and
    atomics; every other instruction spills what it reads correctly)."""
    if op in SUBGROUP:
        return tuple(
            i for i in range(3, len(inst)) if not (i == 4 and op in SUBGROUP_WITH_GROUP_OPERATION)
        )
    if op in ATOMICS:
        return tuple(i for i in ATOMICS[op][1] if i < len(inst))
    return ()


class _Block:
    """The copies and repeated access chains one instruction gets in its own block."""

    def __init__(self, scope: _Scope, label: int) -> None:
        self.scope = scope
        self.label = label
        self.before: list[list[int]] = []
        self.local: dict[int, int] = {}  # id -> its copy in this block, for this instruction

    def here(self, value: int) -> bool:
        return self.scope.block_of.get(value, self.label) == self.label

    def address(self, pointer: int) -> int:
        """`pointer`, or an access chain repeated in this block that gives the same."""
        if pointer in self.local:
            return self.local[pointer]
        chain = self.scope.chains.get(pointer)
        if chain is None or self.here(pointer):
            return pointer
        base = self.address(chain[3])
        fresh = self.scope.fresh()
        self.before.append([chain[0], chain[1], fresh, base, *chain[4:]])
        self.scope.addresses += 1
        self.local[pointer] = fresh
        return fresh

    def value(self, value: int) -> int:
        """`value`, or its copy in this block."""
        if value in self.local:
            return self.local[value]
        kind = self.scope.value_types.get(value)
        if kind is None or self.here(value) or kind in self.scope.pointer_types:
            return value  # not a function's value, in scope, or a pointer (not copied)
        fresh = self.scope.fresh()
        self.before.append([(4 << 16) | OP_COPY_OBJECT, kind, fresh, value])
        self.scope.copied += 1
        self.local[value] = fresh
        return fresh


class _Scope:
    """One run over a module: what it knows of the current function, the ids it adds."""

    def __init__(self, insts: list[tuple[int, ...]], bound: int) -> None:
        self.bound = bound
        self.pointer_types = {
            inst[1]
            for inst in insts
            if opcode(inst) in (OP_TYPE_POINTER, OP_TYPE_UNTYPED_POINTER) and len(inst) > 1
        }
        self.types = {inst[1] for inst in insts if opcode(inst) in TYPE_OPS and len(inst) > 1}
        self.block_of: dict[int, int] = {}
        self.chains: dict[int, tuple[int, ...]] = {}
        self.value_types: dict[int, int] = {}
        self.copied = self.addresses = 0

    def fresh(self) -> int:
        self.bound += 1
        return self.bound - 1


def rescope_for_naga(data: bytes) -> Rescoped:
    """`data` (a SPIR-V module) with the operands above copied into their users' blocks."""
    words = module_words(data)
    insts = instructions(words)
    scope = _Scope(insts, words[3])
    out: list[list[int]] = []
    in_function = False
    label = 0
    for index, inst in enumerate(insts):
        op = opcode(inst)
        if op == OP_FUNCTION:
            in_function = True
            scope.block_of, scope.chains, scope.value_types = {}, {}, {}
            _scan_function(insts, index, scope)
        elif op == OP_FUNCTION_END:
            in_function = False
        elif op == OP_LABEL:
            label = inst[1]
        if not in_function or op in (OP_FUNCTION, OP_LABEL, OP_PHI):
            out.append(list(inst))
            continue
        block = _Block(scope, label)
        new = list(inst)
        for at in _pointer_uses(op, inst):
            new[at] = block.address(inst[at])
        for at in _value_uses(op, inst):
            new[at] = block.value(inst[at])
        out += block.before
        out.append(new)
    if not scope.copied and not scope.addresses:
        return Rescoped(data, 0, 0)
    return Rescoped(module_bytes(words, scope.bound, out), scope.copied, scope.addresses)


def _scan_function(insts: list[tuple[int, ...]], start: int, scope: _Scope) -> None:
    """Fill in, for the function starting at `insts[start]`: the block defining each result
    (function parameters, variables and the entry block's results count as everywhere: naga
    puts the entry block in the function's outermost body, which encloses all), the access
    chains, and each result's type. An instruction has a result when its word 1 is a type
    (a result type); those without one (a store, a branch, a barrier) name no type there."""
    label = entry = 0
    for inst in insts[start + 1 :]:
        op = opcode(inst)
        if op == OP_FUNCTION_END:
            return
        if op == OP_LABEL:
            label = inst[1]
            entry = entry or label
            continue
        if len(inst) < 3 or inst[1] not in scope.types:
            continue  # no result
        scope.value_types[inst[2]] = inst[1]
        if label in (0, entry) or op == OP_VARIABLE:
            continue  # parameters, variables and the entry block's results: everywhere
        if op in ACCESS_CHAINS:
            scope.chains[inst[2]] = inst
        scope.block_of[inst[2]] = label
