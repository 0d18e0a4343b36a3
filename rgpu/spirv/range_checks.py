"""Bounds checks that a guard of the kernel's own already proves, folded away.

rust-gpu keeps every index check of a fixed-size array (a `Shared<T, N>` is `[T; N]`): an
`OpULessThan %i %N` and a branch to the invocation's exit, in every iteration of every loop.
Where the index is built from a value a dominating branch has bounded (`while k < 256 {
tile.load(4 * k + 3) }`: `k < 256` holds in the loop's body, so `4 * k + 3 <= 1023 < 1024`),
the check can never fail. LLVM proves the same on the nvptx target and drops it; SPIR-V has
no such pass (spirv-opt folds constants, not ranges), and NVIDIA's Vulkan driver keeps the
branches: the n-body kernel ran 1.7x slower with them (BENCHMARKS.md, "n-body").

What is folded, and why it is safe: a conditional branch on `OpULessThan %y %C` (C a 32-bit
constant) gets `true` as its condition when the largest value `%y` can take is below C. The
largest value comes from constants, from `OpULessThan %x %B` conditions whose true target
dominates the check (there `x <= B - 1`; the target must have that branch as its only
predecessor), and from `IAdd`, `IMul`, `ShiftLeftLogical`, `UDiv`, `UMod`, `BitwiseAnd` of
those, on 32-bit integers, with no intermediate value past 2^32 - 1 (so nothing wrapped).
Anything else is unknown and its checks stay. spirv-opt's dead-branch elimination then
removes the failing side.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from rgpu.spirv.opcodes import (
    OP_BITWISE_AND,
    OP_BRANCH,
    OP_BRANCH_CONDITIONAL,
    OP_CONSTANT,
    OP_CONSTANT_TRUE,
    OP_FUNCTION,
    OP_FUNCTION_END,
    OP_I_ADD,
    OP_I_MUL,
    OP_LABEL,
    OP_SHIFT_LEFT_LOGICAL,
    OP_SWITCH,
    OP_TYPE_BOOL,
    OP_TYPE_INT,
    OP_U_DIV,
    OP_U_LESS_THAN,
    OP_U_MOD,
)
from rgpu.spirv.words import instructions, module_bytes, module_words, opcode

U32_MAX = 0xFFFF_FFFF

Inst = tuple[int, ...]


class _Function:
    """One function's blocks: each label's instructions and successors."""

    def __init__(self) -> None:
        self.blocks: dict[int, list[int]] = {}  # label -> indexes into the module's list
        self.order: list[int] = []
        self.successors: dict[int, list[int]] = {}
        self.preds: dict[int, list[int]] = {}
        self.idom: dict[int, int] = {}

    def add(self, label: int, indexes: list[int], insts: Sequence[Inst]) -> None:
        self.blocks[label] = indexes
        self.order.append(label)
        last = insts[indexes[-1]]
        op = opcode(last)
        if op == OP_BRANCH:
            succ = [last[1]]
        elif op == OP_BRANCH_CONDITIONAL:
            succ = [last[2], last[3]]
        elif op == OP_SWITCH:
            succ = [last[2], *last[4::2]]
        else:
            succ = []
        self.successors[label] = succ

    def dominators(self) -> None:
        """Immediate dominators (Cooper, Harvey and Kennedy's iterative algorithm)."""
        entry = self.order[0]
        post: list[int] = []
        seen = {entry}
        stack: list[tuple[int, Iterator[int]]] = [(entry, iter(self.successors[entry]))]
        while stack:
            node, it = stack[-1]
            nxt = next((s for s in it if s not in seen), None)
            if nxt is None:
                post.append(node)
                stack.pop()
            else:
                seen.add(nxt)
                stack.append((nxt, iter(self.successors.get(nxt, []))))
        number = {b: i for i, b in enumerate(post)}
        for b in post:
            for s in self.successors.get(b, []):
                self.preds.setdefault(s, []).append(b)
        idom = {entry: entry}
        changed = True
        while changed:
            changed = False
            for b in reversed(post):
                if b == entry:
                    continue
                done = [p for p in self.preds.get(b, []) if p in idom]
                if not done:
                    continue
                new = done[0]
                for p in done[1:]:
                    a, c = p, new
                    while a != c:
                        while number[a] < number[c]:
                            a = idom[a]
                        while number[c] < number[a]:
                            c = idom[c]
                    new = a
                if idom.get(b) != new:
                    idom[b] = new
                    changed = True
        self.idom = idom


def _functions(insts: Sequence[Inst]) -> Iterator[_Function]:
    function: _Function | None = None
    label: int | None = None
    indexes: list[int] = []
    for i, inst in enumerate(insts):
        op = opcode(inst)
        if op == OP_FUNCTION:
            function = _Function()
        elif function is None:
            continue
        elif op == OP_LABEL:
            label, indexes = inst[1], [i]
        elif op == OP_FUNCTION_END:
            if function.order:
                function.dominators()
                yield function
            function = None
        elif label is not None:
            indexes.append(i)
            if op in (OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH) or op in range(252, 256):
                function.add(label, indexes, insts)
                label = None


def fold_proven_checks(data: bytes) -> tuple[bytes, int]:
    """The module with every provably true `OpULessThan` branch condition replaced by
    `true`, and how many were."""
    words = module_words(data)
    insts = instructions(words)
    u32 = {i[1] for i in insts if opcode(i) == OP_TYPE_INT and i[2] == 32}
    values = _Values(
        constants={i[2]: i[3] for i in insts if opcode(i) == OP_CONSTANT and i[1] in u32},
        defs={i[2]: i for i in insts if opcode(i) in _ARITHMETIC and i[1] in u32},
        less={i[2]: (i[3], i[4]) for i in insts if opcode(i) == OP_U_LESS_THAN},
    )
    folds = [index for function in _functions(insts) for index in _proven(function, insts, values)]
    if not folds:
        return data, 0
    return _with_true(words, insts, folds), len(folds)


class _Values(NamedTuple):
    constants: dict[int, int]  # 32-bit integer constants
    defs: dict[int, Inst]  # the arithmetic that makes 32-bit integers
    less: dict[int, tuple[int, int]]  # OpULessThan results: (left, right)


def _conditional(insts: Sequence[Inst], function: _Function, label: int) -> Inst | None:
    """The block's `OpBranchConditional`, if it ends in one."""
    last = insts[function.blocks[label][-1]]
    return last if opcode(last) == OP_BRANCH_CONDITIONAL else None


def _guards(
    function: _Function, insts: Sequence[Inst], values: _Values
) -> dict[int, tuple[int, int]]:
    """For each block entered only on the true side of `x < C`: (x, C - 1)."""
    facts = {}
    for label in function.order:
        branch = _conditional(insts, function, label)
        if branch is None or branch[1] not in values.less or branch[2] == branch[3]:
            continue
        x, bound = values.less[branch[1]]
        if values.constants.get(bound, 0) > 0 and function.preds.get(branch[2]) == [label]:
            facts[branch[2]] = (x, values.constants[bound] - 1)
    return facts


def _proven(function: _Function, insts: Sequence[Inst], values: _Values) -> Iterator[int]:
    """The indexes of the function's branches on an `x < C` that cannot fail."""
    facts = _guards(function, insts, values)
    for label in function.order:
        branch = _conditional(insts, function, label)
        if branch is None or branch[1] not in values.less or label not in function.idom:
            continue
        y, bound = values.less[branch[1]]
        if bound not in values.constants:
            continue
        known: dict[int, int] = {}  # what the guards dominating this block bound
        block = label
        while True:
            if block in facts:
                value, bounded = facts[block]
                known[value] = min(bounded, known.get(value, bounded))
            if function.idom[block] == block:
                break
            block = function.idom[block]
        most = _largest(y, known, values, 0)
        if most is not None and most < values.constants[bound]:
            yield function.blocks[label][-1]


def _with_true(words: tuple[int, ...], insts: list[Inst], folds: list[int]) -> bytes:
    """The module with each folded branch's condition `true` (an OpConstantTrue, added after
    the module's last constant when it has none)."""
    bound = words[3]
    out = list(insts)
    true = next((i[2] for i in insts if opcode(i) == OP_CONSTANT_TRUE), None)
    if true is None:
        bool_type = next(i[1] for i in insts if opcode(i) == OP_TYPE_BOOL)
        true, bound = bound, bound + 1
        at = 1 + max(i for i, inst in enumerate(out) if opcode(inst) in (OP_CONSTANT, OP_TYPE_BOOL))
        out.insert(at, ((3 << 16) | OP_CONSTANT_TRUE, bool_type, true))
        folds = [f + 1 if f >= at else f for f in folds]
    for index in folds:
        out[index] = (out[index][0], true, *out[index][2:])
    return module_bytes(words[:5], bound, out)


_ARITHMETIC = {OP_I_ADD, OP_I_MUL, OP_U_DIV, OP_U_MOD, OP_SHIFT_LEFT_LOGICAL, OP_BITWISE_AND}


def _largest(value: int, known: dict[int, int], values: _Values, depth: int) -> int | None:
    """The largest value `value` can take, or None when unknown (or it may have wrapped)."""
    constants = values.constants
    if value in constants:
        return constants[value]
    derived = _derived(value, known, values, depth)
    guarded = known.get(value)
    if derived is None or guarded is None:
        return guarded if derived is None else derived
    return min(derived, guarded)  # both hold: a guard's bound and what the value is built of


def _derived(value: int, known: dict[int, int], values: _Values, depth: int) -> int | None:
    """The largest value of `value` from the instruction that makes it, or None."""
    constants = values.constants
    inst = values.defs.get(value)
    if inst is None or depth > 16:
        return None
    op, a, b = opcode(inst), inst[3], inst[4]
    if op == OP_U_MOD:
        return constants[b] - 1 if constants.get(b, 0) > 0 else None
    left = _largest(a, known, values, depth + 1)
    if op == OP_BITWISE_AND:
        right = _largest(b, known, values, depth + 1)
        options = [v for v in (left, right) if v is not None]
        return min(options) if options else None
    if left is None:
        return None
    if op == OP_U_DIV:
        return left // constants[b] if constants.get(b, 0) > 0 else None
    right = _largest(b, known, values, depth + 1)
    if right is None:
        return None
    if op == OP_I_ADD:
        result = left + right
    elif op == OP_I_MUL:
        result = left * right
    else:  # OP_SHIFT_LEFT_LOGICAL
        result = left << right if right < 32 else U32_MAX + 1
    return result if result <= U32_MAX else None
