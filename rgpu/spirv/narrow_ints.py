"""8- and 16-bit integer values computed in 32 bits, the wrap made explicit.

Why: naga (wgpu on Metal, DX12 and in browsers) refuses every 8-bit integer type and WebGPU
has no 16-bit ones; with spirv/narrow_memory.py (which moves narrow integers out of memory
first) a module computing in u8/i8/u16/i16 has no narrow type left. (It was written first
for Debian bookworm's lavapipe, Mesa 22.3.6, which miscomputes a loop whose carried value is
8-bit; docs/reference.md, "Vulkan on the CPU: lavapipe".)

What: every scalar 8- or 16-bit integer value a function computes with an instruction listed
below is computed in 32 bits (`OpTypeInt 32 0`) instead, held zero-extended (its N-bit
pattern in the low bits, the high bits 0). Per opcode, for a result of N bits and
M = 2^N - 1:

- OpIAdd, OpISub, OpIMul, OpShiftLeftLogical: the 32-bit operation, then `& M` (the low N
  bits of the 32-bit result are the N-bit result); OpSNegate: `0 - x`, then `& M` (naga
  refuses a negation of an unsigned value, and the 32-bit values are unsigned);
- OpBitwiseAnd/Or/Xor, OpUDiv, OpUMod, OpShiftRightLogical: the 32-bit operation (the result
  of zero-extended operands stays below 2^N); OpNot: `^ M`;
- OpSDiv, OpSRem, OpSMod, OpShiftRightArithmetic: on sign-extended operands (`(x ^ S) - S`,
  S the sign bit) bitcast to i32, the i32 result bitcast back, then `& M` (naga takes an
  operation's signedness from its operands' type, not from the opcode);
- OpUConvert/OpSConvert to N bits: truncation is `& M` (a 64-bit source is first converted
  to 32 bits); widening zero-extends (a copy) or sign-extends (then `& M`); OpBitcast between
  N-bit types and OpCopyObject: a copy; OpConvertFToU/FToS: to u32/i32, then `& M` (a float
  out of the N-bit range is undefined in SPIR-V either way);
- OpSelect, OpPhi: the same on the 32-bit values; an N-bit OpUndef becomes the 32-bit 0 (one
  value the undefined one may take); N-bit constants become 32-bit constants.

Instructions that read a promoted value without producing a narrow one take the 32-bit
value: the comparisons (the signed ones on sign-extended i32 operands), OpUConvert/OpSConvert
to 32 or 64 bits and OpConvertUToF/SToF (the signed ones from a sign-extended i32), the shift
amount of a wider shift, and an OpSwitch on a narrow selector (its literals zero-extended).
Every other instruction keeps the narrow value: where a promoted value is needed narrow (a
store to narrow memory, a call, a composite, an instruction not listed)
`OpUConvert`/`OpSConvert` makes it again right after the 32-bit one, under its original id;
a narrow value the pass does not compute (a load, a parameter, a call's result) is
zero-extended with OpUConvert right after it where a rewritten instruction reads it.
Afterwards the narrow constants and types nothing uses are removed, and `OpCapability Int8`
(`Int16`) when no 8-bit (16-bit) integer type remains. A module without 8- or 16-bit integer
types, or without a narrow value this pass computes (only loads, say), is returned as it is.

Pure Python over the binary, with spirv.words' parser helpers. Uses are counted as
spirv.pointer_values counts them (conservatively: a literal equal to an id keeps that id).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from rgpu.spirv.opcodes import (
    OP_BITCAST,
    OP_BITWISE_AND,
    OP_BITWISE_OR,
    OP_BITWISE_XOR,
    OP_CAPABILITY,
    OP_CONSTANT,
    OP_CONSTANT_NULL,
    OP_CONVERT_F_TO_S,
    OP_CONVERT_F_TO_U,
    OP_CONVERT_S_TO_F,
    OP_CONVERT_U_TO_F,
    OP_COPY_OBJECT,
    OP_DECORATE,
    OP_FUNCTION,
    OP_FUNCTION_END,
    OP_FUNCTION_PARAMETER,
    OP_I_ADD,
    OP_I_MUL,
    OP_I_SUB,
    OP_LABEL,
    OP_LINE,
    OP_NAME,
    OP_NO_LINE,
    OP_NOT,
    OP_PHI,
    OP_S_CONVERT,
    OP_S_DIV,
    OP_S_MOD,
    OP_S_NEGATE,
    OP_S_REM,
    OP_SELECT,
    OP_SHIFT_LEFT_LOGICAL,
    OP_SHIFT_RIGHT_ARITHMETIC,
    OP_SHIFT_RIGHT_LOGICAL,
    OP_SPEC_CONSTANT,
    OP_SPEC_CONSTANT_OP,
    OP_SWITCH,
    OP_TYPE_INT,
    OP_U_CONVERT,
    OP_U_DIV,
    OP_U_MOD,
    OP_UNDEF,
    OP_VARIABLE,
)
from rgpu.spirv.pointer_values import used_words
from rgpu.spirv.words import ANNOTATIONS, instructions, module_bytes, module_words, opcode

DECORATION_NO_SIGNED_WRAP = 4469
DECORATION_NO_UNSIGNED_WRAP = 4470
WRAP_FLAGS = frozenset({DECORATION_NO_SIGNED_WRAP, DECORATION_NO_UNSIGNED_WRAP})
CAPABILITY_INT16 = 22
CAPABILITY_INT8 = 39
CAPABILITY_NAMES = {8: ("Int8", CAPABILITY_INT8), 16: ("Int16", CAPABILITY_INT16)}
NARROW_WIDTHS = frozenset({8, 16})
# Values defined outside functions (a module-scope word 1 is a result type only for these).
MODULE_VALUES = frozenset(
    {OP_UNDEF, OP_CONSTANT, OP_CONSTANT_NULL, OP_SPEC_CONSTANT, OP_SPEC_CONSTANT_OP}
)

# Binary operations on two N-bit operands, by what the 32-bit result needs.
WRAPPING = frozenset({OP_I_ADD, OP_I_SUB, OP_I_MUL})  # then & M
IN_RANGE = frozenset({OP_BITWISE_AND, OP_BITWISE_OR, OP_BITWISE_XOR, OP_U_DIV, OP_U_MOD})
SIGNED = frozenset({OP_S_DIV, OP_S_REM, OP_S_MOD})  # sign-extend, then & M
SHIFTS = frozenset({OP_SHIFT_LEFT_LOGICAL, OP_SHIFT_RIGHT_LOGICAL, OP_SHIFT_RIGHT_ARITHMETIC})
CONVERSIONS = frozenset({OP_U_CONVERT, OP_S_CONVERT})
# Instructions with an N-bit result this pass computes in 32 bits.
PROMOTED = (
    WRAPPING
    | IN_RANGE
    | SIGNED
    | SHIFTS
    | CONVERSIONS
    | frozenset(
        {
            OP_S_NEGATE,
            OP_NOT,
            OP_BITCAST,
            OP_COPY_OBJECT,
            OP_CONVERT_F_TO_U,
            OP_CONVERT_F_TO_S,
            OP_SELECT,
            OP_PHI,
        }
    )
)
# Comparisons (result bool): unsigned ones read zero-extended operands as they are.
UNSIGNED_COMPARISONS = frozenset({170, 171, 172, 174, 176, 178})  # IEqual .. ULessThanEqual
SIGNED_COMPARISONS = frozenset({173, 175, 177, 179})  # SGreaterThan .. SLessThanEqual


@dataclass(frozen=True)
class Promoted:
    data: bytes
    values: int  # narrow integer values now computed in 32 bits
    capabilities_removed: tuple[str, ...]  # Int8/Int16, when no such type is left


Inst = list[int]


class _Rewriter:
    """The state of one run: the module's narrow types and the ids the pass adds."""

    def __init__(self, insts: list[tuple[int, ...]], bound: int) -> None:
        self.insts = insts
        self.bound = bound
        self.widths: dict[int, int] = {}  # narrow integer type id -> width
        self.signed_types: set[int] = set()
        self.int_widths: dict[int, int] = {}  # every integer type id -> width
        self.u32: int | None = None
        self.i32: int | None = None
        for inst in insts:
            if opcode(inst) == OP_TYPE_INT and len(inst) >= 4:
                self.int_widths[inst[1]] = inst[2]
                if inst[2] in NARROW_WIDTHS:
                    self.widths[inst[1]] = inst[2]
                if inst[3]:
                    self.signed_types.add(inst[1])
                    if inst[2] == 32 and self.i32 is None:
                        self.i32 = inst[1]
                elif inst[2] == 32 and self.u32 is None:
                    self.u32 = inst[1]
        self.new_u32 = self.u32 is None
        if self.u32 is None:
            self.u32 = self.fresh()
        self.new_i32 = False  # made on first use (signed operations need it)
        self.constants: dict[int, int] = {}  # u32 value -> constant id (existing or new)
        self.new_constants: dict[int, int] = {}
        for inst in insts:
            if opcode(inst) == OP_CONSTANT and inst[1] == self.u32 and len(inst) == 4:
                self.constants.setdefault(inst[3], inst[2])
        # Narrow values by id: type, and the 32-bit constant standing for a constant/undef.
        self.narrow: dict[int, int] = {}  # value id -> its narrow type
        self.known: dict[int, int] = {}  # narrow constant/undef id -> its zero-extended value
        self.global_values: set[int] = set()  # narrow values defined outside functions
        self.value_widths: dict[int, int] = {}  # integer scalar value id -> width

    def fresh(self) -> int:
        self.bound += 1
        return self.bound - 1

    def const(self, value: int) -> int:
        value &= 0xFFFFFFFF
        if value not in self.constants:
            self.constants[value] = self.new_constants[value] = self.fresh()
        return self.constants[value]

    def mask(self, width: int) -> int:
        return self.const((1 << width) - 1)

    def int32(self) -> int:
        """The signed 32-bit type (added to the module when it has none)."""
        if self.i32 is None:
            self.i32 = self.fresh()
            self.new_i32 = True
        return self.i32


def _result(inst: tuple[int, ...]) -> tuple[int, int] | None:
    """(result type, result id) of an instruction that has both at words 1 and 2."""
    return (inst[1], inst[2]) if len(inst) > 2 else None


def _narrow_operands(op: int, inst: tuple[int, ...]) -> list[int]:
    """The word indices of the operands of a promoted or reading instruction that may hold a
    narrow value (every word that is a value id, for the opcodes this pass rewrites)."""
    if op == OP_PHI:
        return list(range(3, len(inst), 2))
    if op == OP_SELECT:
        return [4, 5]
    if op == OP_SWITCH:
        return [1]
    if op in SHIFTS:
        return [3, 4]
    return list(range(3, len(inst)))


def promote_narrow_ints(data: bytes) -> Promoted:
    """`data` (a SPIR-V module) with its 8- and 16-bit integer values computed in 32 bits."""
    words = module_words(data)
    insts = instructions(words)
    rw = _Rewriter(insts, words[3])
    if not rw.widths:
        return Promoted(data, 0, ())
    _find_narrow_values(rw)
    plan = _plan_rewrites(rw)
    if not plan.promoted and not plan.readers:
        return Promoted(data, 0, ())
    plan.keep_narrow = _still_narrow(insts, plan)
    _plan_widening(rw, plan)
    out = _rewrite_functions(rw, plan)
    _add_globals(out, rw)
    out, removed = _drop_unused_narrow(out, rw)
    return Promoted(module_bytes(words, rw.bound, out), len(plan.promoted), removed)


@dataclass
class _Plan:
    """What one run rewrites, found before anything is written."""

    promoted: dict[int, int]  # narrow result id -> its 32-bit id
    readers: set[int]  # indices of the instructions rewritten
    keep_narrow: set[int] = field(default_factory=set)  # promoted values also needed narrow
    # Narrow values a rewritten instruction reads that the pass does not compute: value ->
    # its zero-extended id; module-scope ones per function, (function index, value) -> id.
    widened: dict[int, int] = field(default_factory=dict)
    widened_global: dict[tuple[int, int], int] = field(default_factory=dict)


def _find_narrow_values(rw: _Rewriter) -> None:
    """Step 1a: the width of every integer value, and which are narrow: their types, the
    values of narrow constants and undefs, and which are defined outside functions."""
    in_function = False
    for inst in rw.insts:
        op = opcode(inst)
        if op == OP_FUNCTION:
            in_function = True
        elif op == OP_FUNCTION_END:
            in_function = False
        res = _result(inst) if in_function or op in MODULE_VALUES else None
        if res is None or res[0] not in rw.int_widths:
            continue
        rw.value_widths[res[1]] = rw.int_widths[res[0]]
        if res[0] not in rw.widths:
            continue
        rw.narrow[res[1]] = res[0]
        width = rw.widths[res[0]]
        if op == OP_CONSTANT and len(inst) == 4:
            rw.known[res[1]] = inst[3] & ((1 << width) - 1)
        elif op in (OP_CONSTANT_NULL, OP_UNDEF):
            rw.known[res[1]] = 0
        elif not in_function:
            rw.global_values.add(res[1])


def _plan_rewrites(rw: _Rewriter) -> _Plan:
    """Step 1b: which instructions are rewritten: narrow results computed in 32 bits
    (`promoted`), and instructions reading narrow values (`readers`)."""
    promoted: dict[int, int] = {}
    readers: set[int] = set()
    reading: list[int] = []  # instructions that read narrow values without computing one
    for index, inst in enumerate(rw.insts):
        op = opcode(inst)
        res = _result(inst)
        if op in PROMOTED and res is not None and res[1] in rw.narrow:
            if _promotable(rw, op, inst):
                promoted[res[1]] = rw.fresh()
                readers.add(index)
        elif _reads_narrow(rw, op, inst):
            reading.append(index)
    # A reader is rewritten when it reads a promoted value or a narrow constant (one reading
    # only loads or calls would gain nothing; one reading a constant keeps the narrow type
    # alive otherwise: rust-gpu switches on an enum's 8-bit discriminant, e.g. the
    # `Ordering` of an atomic, converted to 32 bits, where MIR inlining would have folded it).
    for index in reading:
        op = opcode(rw.insts[index])
        operands = [rw.insts[index][at] for at in _narrow_operands(op, rw.insts[index])]
        if any(v in promoted or v in rw.known for v in operands):
            readers.add(index)
    return _Plan(promoted, readers)


def _still_narrow(insts: list[tuple[int, ...]], plan: _Plan) -> set[int]:
    """Step 2: the promoted values still needed narrow (used by an instruction not
    rewritten)."""
    uses: Counter[int] = Counter()
    for index, inst in enumerate(insts):
        if index not in plan.readers:
            uses.update(used_words(inst))
    return {r for r in plan.promoted if uses[r] > 0}


def _plan_widening(rw: _Rewriter, plan: _Plan) -> None:
    """Step 3: narrow values a rewritten instruction reads that the pass does not compute:
    zero-extended right after their definition (per function for module-scope ones)."""
    function = -1
    for index, inst in enumerate(rw.insts):
        op = opcode(inst)
        if op == OP_FUNCTION:
            function = index
        if index not in plan.readers:
            continue
        for at in _narrow_operands(op, inst):
            value = inst[at] if at < len(inst) else None
            if value is None or value not in rw.narrow or value in plan.promoted:
                continue
            if value in rw.known:
                continue
            if value in rw.global_values:
                plan.widened_global.setdefault((function, value), rw.fresh())
            else:
                plan.widened.setdefault(value, rw.fresh())


def _v32(rw: _Rewriter, plan: _Plan, function: int, value: int) -> int:
    """The 32-bit id standing for narrow `value` in the function starting at `function`."""
    if value in plan.promoted:
        return plan.promoted[value]
    if value in rw.known:
        return rw.const(rw.known[value])
    if value in rw.global_values:
        return plan.widened_global[(function, value)]
    return plan.widened[value]


def _rewrite_functions(rw: _Rewriter, plan: _Plan) -> list[Inst]:
    """Step 4: the module's instructions, rewritten: the zero-extensions of step 3 at the
    start of each function's entry block (after its variables) and after each block's phis."""
    u32 = rw.u32
    assert u32 is not None
    out: list[Inst] = []
    after_phis: list[Inst] = []  # waits for the first instruction after a block's phis
    at_entry: list[Inst] = []  # waits for the first instruction after the entry's variables
    entry_block = False
    function = -1
    for index, inst in enumerate(rw.insts):
        op = opcode(inst)
        if op == OP_FUNCTION:
            function = index
            at_entry = [
                [(4 << 16) | OP_U_CONVERT, u32, new, value]
                for (f, value), new in plan.widened_global.items()
                if f == index
            ]
        elif op == OP_FUNCTION_PARAMETER and len(inst) > 2 and inst[2] in plan.widened:
            at_entry.append([(4 << 16) | OP_U_CONVERT, u32, plan.widened[inst[2]], inst[2]])
        if op == OP_LABEL:
            entry_block = bool(at_entry)
        elif op not in (OP_PHI, OP_LINE, OP_NO_LINE) and after_phis:
            out += after_phis
            after_phis = []
        if entry_block and op not in (OP_LABEL, OP_VARIABLE, OP_LINE, OP_NO_LINE):
            out += at_entry
            at_entry = []
            entry_block = False
        if op in ANNOTATIONS and len(inst) > 1 and inst[1] in plan.promoted:
            out += _annotation(op, inst, plan)
            continue
        emitted, conversion = _emitted(rw, plan, index, inst, function)
        out += emitted
        if conversion is not None:
            (after_phis if op == OP_PHI else out).append(conversion)
    return out


def _annotation(op: int, inst: tuple[int, ...], plan: _Plan) -> list[Inst]:
    """The name or decoration of a promoted value, as it stays.

    A narrow value that is gone gives its name to the 32-bit one; the decorations of a
    promoted value go (wrap flags: the masked 32-bit arithmetic cannot overflow, and a value
    made narrow again is a conversion), except where the narrow value stays and the
    decoration is not a wrap flag."""
    wrap_flag = op == OP_DECORATE and len(inst) > 2 and inst[2] in WRAP_FLAGS
    if inst[1] in plan.keep_narrow and not wrap_flag:
        return [list(inst)]
    if op == OP_NAME and inst[1] not in plan.keep_narrow:
        return [[inst[0], plan.promoted[inst[1]], *inst[2:]]]
    return []


def _emitted(
    rw: _Rewriter, plan: _Plan, index: int, inst: tuple[int, ...], function: int
) -> tuple[list[Inst], Inst | None]:
    """Instruction `index` as the pass writes it, and the conversion to follow it (after its
    block's phis when it is a phi): its narrow result zero-extended where a rewritten
    instruction reads it, or a promoted result made narrow again where one not rewritten
    does."""
    op = opcode(inst)
    res = _result(inst)
    if index not in plan.readers:
        if res is not None and res[1] in plan.widened and op != OP_FUNCTION_PARAMETER:
            assert rw.u32 is not None
            return [list(inst)], [(4 << 16) | OP_U_CONVERT, rw.u32, plan.widened[res[1]], res[1]]
        return [list(inst)], None
    emitted = _rewrite(rw, op, inst, plan.promoted, functools.partial(_v32, rw, plan, function))
    if res is not None and res[1] in plan.keep_narrow:
        back = OP_S_CONVERT if res[0] in rw.signed_types else OP_U_CONVERT
        return emitted, [(4 << 16) | back, res[0], res[1], plan.promoted[res[1]]]
    return emitted, None


def _add_globals(out: list[Inst], rw: _Rewriter) -> None:
    """Step 5: the u32 and i32 types and the constants the pass made, into `out` beside the
    module's 32-bit unsigned type (or, when the pass made it, before its first narrow one)."""
    u32 = rw.u32
    assert u32 is not None
    globals_: list[Inst] = []
    if rw.new_u32:
        globals_.append([(4 << 16) | OP_TYPE_INT, u32, 32, 0])
    if rw.new_i32:
        assert rw.i32 is not None
        globals_.append([(4 << 16) | OP_TYPE_INT, rw.i32, 32, 1])
    globals_ += [[(4 << 16) | OP_CONSTANT, u32, i, value] for value, i in rw.new_constants.items()]
    if not globals_:
        return
    anchor = next(
        i
        for i, inst in enumerate(out)
        if opcode(inst) == OP_TYPE_INT
        and (inst[1] == u32 if not rw.new_u32 else inst[1] in rw.widths)
    )
    where = anchor + 1 if not rw.new_u32 else anchor
    out[where:where] = globals_


def _promotable(rw: _Rewriter, op: int, inst: tuple[int, ...]) -> bool:
    """Whether an instruction with a narrow scalar result is one this pass computes in 32
    bits (conversions only from scalar integers and floats, bitcasts only narrow to narrow)."""
    if op in CONVERSIONS:
        return len(inst) == 4 and _source_width(rw, inst[3]) is not None
    if op == OP_BITCAST:
        return len(inst) == 4 and inst[3] in rw.narrow
    if op == OP_SELECT:
        return len(inst) == 6
    if op in (OP_CONVERT_F_TO_U, OP_CONVERT_F_TO_S, OP_COPY_OBJECT, OP_S_NEGATE, OP_NOT):
        return len(inst) == 4
    if op == OP_PHI:
        return len(inst) >= 5 and len(inst) % 2 == 1
    return len(inst) == 5  # binary operations and shifts


def _source_width(rw: _Rewriter, value: int) -> int | None:
    """The integer width of a conversion's source: narrow (known here), or 32/64 (read from
    the defining instruction's type)."""
    if value in rw.narrow:
        return rw.widths[rw.narrow[value]]
    return rw.value_widths.get(value)


def _reads_narrow(rw: _Rewriter, op: int, inst: tuple[int, ...]) -> bool:
    """Whether an instruction without a narrow result reads a narrow scalar value in a way
    this pass rewrites to read its 32-bit value."""
    if op in UNSIGNED_COMPARISONS or op in SIGNED_COMPARISONS:
        return len(inst) == 5 and inst[3] in rw.narrow
    if op in CONVERSIONS or op in (OP_CONVERT_U_TO_F, OP_CONVERT_S_TO_F):
        return (
            len(inst) == 4
            and inst[3] in rw.narrow
            and (op not in CONVERSIONS or rw.int_widths.get(inst[1]) in (32, 64))
        )
    if op in SHIFTS:
        return len(inst) == 5 and inst[4] in rw.narrow
    if op == OP_SWITCH:
        return len(inst) >= 3 and inst[1] in rw.narrow
    return False


def _sext(rw: _Rewriter, value: int, width: int, result: int | None = None) -> list[Inst]:
    """`value` (32-bit, zero-extended from `width` bits) sign-extended, as a u32:
    `(value ^ S) - S` with S the sign bit (no arithmetic shift: naga reads a shift of a u32 as
    logical whatever the opcode). Two instructions, the last one's result `result` (a fresh id
    when None)."""
    u32 = rw.u32
    assert u32 is not None
    sign = rw.const(1 << (width - 1))
    flipped = rw.fresh()
    out = result if result is not None else rw.fresh()
    return [
        [(5 << 16) | OP_BITWISE_XOR, u32, flipped, value, sign],
        [(5 << 16) | OP_I_SUB, u32, out, flipped, sign],
    ]


def _signed(rw: _Rewriter, value: int, width: int) -> tuple[list[Inst], int]:
    """`value` sign-extended and bitcast to i32: what a signed operation must read. naga
    takes an operation's signedness from its operands' type, not from the SPIR-V opcode (an
    OpSDiv of two u32 is an unsigned division in the WGSL, MSL and HLSL it writes)."""
    extended = rw.fresh()
    as_int = rw.fresh()
    return [
        *_sext(rw, value, width, extended),
        [(4 << 16) | OP_BITCAST, rw.int32(), as_int, extended],
    ], as_int


def _rewrite(
    rw: _Rewriter,
    op: int,
    inst: tuple[int, ...],
    promoted: dict[int, int],
    v32: Callable[[int], int],
) -> list[Inst]:
    """The 32-bit instructions for one promoted or reading instruction."""
    u32 = rw.u32
    assert u32 is not None
    result_type, result = inst[1], inst[2]
    if result_type in rw.widths and result in promoted:
        return _rewrite_promoted(rw, op, inst, promoted[result], rw.widths[result_type], v32)
    # A reader: the result keeps its id and type.
    if op == OP_SWITCH:
        width = rw.widths[rw.narrow[inst[1]]]
        cases = list(inst[3:])
        for i in range(0, len(cases) - 1, 2):
            cases[i] &= (1 << width) - 1
        return [[inst[0], v32(inst[1]), inst[2], *cases]]
    if op in SHIFTS:  # a wider base shifted by a narrow amount
        return [[inst[0], result_type, result, inst[3], v32(inst[4])]]
    width = rw.widths[rw.narrow[inst[3]]]
    if op in UNSIGNED_COMPARISONS:
        return [[inst[0], result_type, result, v32(inst[3]), v32(inst[4])]]
    if op in SIGNED_COMPARISONS:
        a, b = _signed(rw, v32(inst[3]), width), _signed(rw, v32(inst[4]), width)
        return [*a[0], *b[0], [inst[0], result_type, result, a[1], b[1]]]
    source = v32(inst[3])
    sext: list[Inst] = []
    if op in (OP_S_CONVERT, OP_CONVERT_S_TO_F):
        sext, source = _signed(rw, source, width)
    if op in (OP_CONVERT_U_TO_F, OP_CONVERT_S_TO_F):
        return [*sext, [inst[0], result_type, result, source]]
    if rw.int_widths.get(result_type) == 64:
        return [*sext, [inst[0], result_type, result, source]]
    # To 32 bits: the value as it is (a copy into u32, a bitcast into another 32-bit type).
    source_type = rw.i32 if sext else u32
    if result_type == source_type:
        return [*sext, [(4 << 16) | OP_COPY_OBJECT, result_type, result, source]]
    return [*sext, [(4 << 16) | OP_BITCAST, result_type, result, source]]


def _rewrite_promoted(
    rw: _Rewriter, op: int, inst: tuple[int, ...], r32: int, width: int, v32: Callable[[int], int]
) -> list[Inst]:
    u32 = rw.u32
    assert u32 is not None
    mask = rw.mask(width)

    def masked(opcode_: int, *operands: int) -> list[Inst]:
        raw = rw.fresh()
        return [
            [((len(operands) + 3) << 16) | opcode_, u32, raw, *operands],
            [(5 << 16) | OP_BITWISE_AND, u32, r32, raw, mask],
        ]

    def plain(opcode_: int, *operands: int) -> list[Inst]:
        return [[((len(operands) + 3) << 16) | opcode_, u32, r32, *operands]]

    def signed_masked(opcode_: int, *operands: int) -> list[Inst]:
        """A signed operation on i32 operands, its result bitcast to u32, then `& M`."""
        raw, bits = rw.fresh(), rw.fresh()
        return [
            [((len(operands) + 3) << 16) | opcode_, rw.int32(), raw, *operands],
            [(4 << 16) | OP_BITCAST, u32, bits, raw],
            [(5 << 16) | OP_BITWISE_AND, u32, r32, bits, mask],
        ]

    def operand(value: int) -> int:
        return v32(value) if value in rw.narrow else value

    if op == OP_PHI:
        pairs = list(inst[3:])
        for i in range(0, len(pairs), 2):
            pairs[i] = operand(pairs[i])
        return plain(OP_PHI, *pairs)
    if op == OP_SELECT:
        return plain(OP_SELECT, inst[3], operand(inst[4]), operand(inst[5]))
    if op in (OP_COPY_OBJECT, OP_BITCAST):
        return plain(OP_COPY_OBJECT, operand(inst[3]))
    if op in WRAPPING:
        return masked(op, operand(inst[3]), operand(inst[4]))
    if op in IN_RANGE:
        return plain(op, operand(inst[3]), operand(inst[4]))
    if op == OP_S_NEGATE:
        return masked(OP_I_SUB, rw.const(0), operand(inst[3]))
    if op == OP_NOT:
        return plain(OP_BITWISE_XOR, operand(inst[3]), mask)
    if op in SIGNED:
        a, b = _signed(rw, operand(inst[3]), width), _signed(rw, operand(inst[4]), width)
        return [*a[0], *b[0], *signed_masked(op, a[1], b[1])]
    if op == OP_SHIFT_LEFT_LOGICAL:
        return masked(op, operand(inst[3]), operand(inst[4]))
    if op == OP_SHIFT_RIGHT_LOGICAL:
        return plain(op, operand(inst[3]), operand(inst[4]))
    if op == OP_SHIFT_RIGHT_ARITHMETIC:
        a = _signed(rw, operand(inst[3]), width)
        return [*a[0], *signed_masked(op, a[1], operand(inst[4]))]
    if op == OP_CONVERT_F_TO_U:
        return masked(op, inst[3])
    if op == OP_CONVERT_F_TO_S:
        return signed_masked(op, inst[3])
    # OpUConvert / OpSConvert to `width` bits.
    source = inst[3]
    source_width = _source_width(rw, source)
    assert source_width is not None
    if source in rw.narrow:
        value = v32(source)
        if source_width < width and op == OP_S_CONVERT:
            extended = rw.fresh()
            return [
                *_sext(rw, value, source_width, extended),
                [(5 << 16) | OP_BITWISE_AND, u32, r32, extended, mask],
            ]
        if source_width <= width:
            return plain(OP_COPY_OBJECT, value)
        return [[(5 << 16) | OP_BITWISE_AND, u32, r32, value, mask]]
    if source_width == 32:
        return [[(5 << 16) | OP_BITWISE_AND, u32, r32, source, mask]]
    return masked(OP_U_CONVERT, source)  # from 64 bits: truncate to 32, then to `width`


def _drop_unused_narrow(out: list[Inst], rw: _Rewriter) -> tuple[list[Inst], tuple[str, ...]]:
    """`out` without the narrow constants, undefs and types nothing uses, and without
    `OpCapability Int8`/`Int16` when no integer type of that width is left."""
    removed: set[int] = set()
    changed = True
    while changed:
        changed = False
        uses: Counter[int] = Counter()
        for inst in out:
            defined = _defines_removable(inst, rw)
            if defined is None:
                uses.update(_uses(inst))
            elif defined not in removed and opcode(inst) != OP_TYPE_INT:
                uses[inst[1]] += 1  # a narrow constant uses its type only
        for inst in out:
            defined = _defines_removable(inst, rw)
            if defined is not None and defined not in removed and uses[defined] == 0:
                removed.add(defined)
                changed = True
    if not removed:
        return out, ()
    kept = [
        inst
        for inst in out
        if _defines_removable(inst, rw) not in removed
        and not (opcode(inst) in ANNOTATIONS and len(inst) > 1 and inst[1] in removed)
    ]
    left = {inst[2] for inst in kept if opcode(inst) == OP_TYPE_INT and len(inst) >= 4}
    gone: list[str] = []
    for width, (name, capability) in CAPABILITY_NAMES.items():
        had = any(w == width for w in rw.widths.values())
        if had and width not in left:
            before = len(kept)
            kept = [
                inst
                for inst in kept
                if not (opcode(inst) == OP_CAPABILITY and len(inst) == 2 and inst[1] == capability)
            ]
            if len(kept) < before:
                gone.append(name)
    return kept, tuple(gone)


def _defines_removable(inst: Inst, rw: _Rewriter) -> int | None:
    """The id a narrow constant, undef or narrow integer type defines (None otherwise)."""
    op = opcode(inst)
    if op == OP_TYPE_INT and len(inst) >= 4 and inst[1] in rw.widths:
        return inst[1]
    if op in (OP_CONSTANT, OP_CONSTANT_NULL, OP_UNDEF) and len(inst) > 2 and inst[1] in rw.widths:
        return inst[2]
    return None


def _uses(inst: Iterable[int]) -> tuple[int, ...]:
    return used_words(tuple(inst))
