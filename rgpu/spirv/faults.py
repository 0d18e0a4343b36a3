"""Checked launches on the SPIR-V backends (`rgpu build --checked`): each panic of a kernel
records itself in a storage buffer the runtime binds and reads after the launch.

rust-gpu lowers a panic (an index past a slice's end, `Global`'s and `Shared`'s checks, any
`panic!`) to its own abort instruction, and in an entry point to a return. Built with
`--abort-strategy=debug-printf+backtrace` (codegens/spirv.py, checked builds only) it puts a
`NonSemantic.DebugPrintf` before that return instead: a format string with the place
("[Rust panicked at kernel/src/lib.rs:21:10]"), the message (for an index: "index out of
bounds: the len is %u but the index is %u"), the inlined calls that led there, and the
message's values as operands. No Vulkan driver prints those without a validation layer, so
this pass turns each into stores to a buffer:

- one `StorageBuffer` variable, `{ u32[] }` at descriptor set FAULT_SET, binding
  FAULT_BINDING, in every entry point's interface (a set of its own: the kernels' buffers
  are set 0's bindings 0..n, which wgpu's Vulkan backend numbers densely, and the webgpu
  backend's params are binding n there);
- at each printf (its site, numbered from 1 in module order): an atomic add of 1 to word 0 (a
  count of faulting invocations); the invocation that found 0 writes the site and the
  operands' words into the record (words 1..RECORD_WORDS), every other one into the spare
  record after it (an `OpSelect` of the base: no new blocks, so no structured control flow
  to keep). Every store is atomic (naga then reads the words as `atomic<u32>`).

The format strings, by site, are the pass's report: the manifest records them beside the
module, `rgpu::embed_kernels!()` embeds them with it, and the runtime turns the record into
`rgpu::Error::OutOfRange` after the wait (rgpu-runtime's common/fault.rs). An operand takes
the words its type has: a 32-bit scalar one (floats by their bits, bools as 0/1), a 64-bit
integer two (low, high), a vector of 32-bit scalars one per component; any other operand one
word, 0. The runtime reads them back by the format's conversions (`%u` one word, `%lu` two,
`%v3u` three), which rust-gpu writes from the same types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rgpu.spirv.declarations import Declarations, Inst
from rgpu.spirv.opcodes import (
    DECORATION_ARRAY_STRIDE,
    DECORATION_BINDING,
    DECORATION_BLOCK,
    DECORATION_DESCRIPTOR_SET,
    DECORATION_OFFSET,
    OP_ACCESS_CHAIN,
    OP_ATOMIC_I_ADD,
    OP_ATOMIC_STORE,
    OP_BITCAST,
    OP_COMPOSITE_EXTRACT,
    OP_DECORATE,
    OP_ENTRY_POINT,
    OP_EXT_INST,
    OP_EXT_INST_IMPORT,
    OP_EXTENSION,
    OP_FUNCTION,
    OP_I_ADD,
    OP_I_EQUAL,
    OP_MEMBER_DECORATE,
    OP_SELECT,
    OP_SHIFT_RIGHT_LOGICAL,
    OP_STRING,
    OP_TYPE_BOOL,
    OP_TYPE_FLOAT,
    OP_TYPE_INT,
    OP_TYPE_POINTER,
    OP_TYPE_RUNTIME_ARRAY,
    OP_TYPE_STRUCT,
    OP_TYPE_VECTOR,
    OP_U_CONVERT,
    OP_VARIABLE,
    SC_STORAGE_BUFFER,
    TYPE_OPS,
)
from rgpu.spirv.words import instructions, literal_string, module_bytes, module_words, opcode

# Where the fault record is bound; rgpu-runtime's common/fault.rs has the same numbers.
FAULT_SET = 1
FAULT_BINDING = 0
# Words of one record: the count, the site, then the operands' words.
RECORD_WORDS = 32
# The buffer holds the record, then the spare one the other faulting invocations write.
ARG_WORDS = RECORD_WORDS - 2

DEBUG_PRINTF_SET = "NonSemantic.DebugPrintf"
DEBUG_PRINTF = 1  # the set's only instruction
NON_SEMANTIC_EXTENSION = "SPV_KHR_non_semantic_info"
SEMANTICS_RELAXED = 0


@dataclass(frozen=True)
class Recorded:
    data: bytes  # the module
    sites: tuple[str, ...]  # site i + 1's format string


class _Site:
    """The instructions that record one printf's fault."""

    def __init__(self, m: Declarations, variable: int, pointer: int) -> None:
        self.m, self.variable, self.pointer = m, variable, pointer
        self.out: list[Inst] = []

    def value(self, op: int, type_id: int, *operands: int) -> int:
        result = self.m.fresh()
        self.out.append([((len(operands) + 3) << 16) | op, type_id, result, *operands])
        return result

    def word_at(self, index: int) -> int:
        m = self.m
        return self.value(OP_ACCESS_CHAIN, self.pointer, self.variable, m.const(0), index)

    def words_of(self, value: int, type_id: int) -> list[int]:
        """``value``'s words as u32 values (see the module's docstring)."""
        m = self.m
        t = m.defs.get(type_id, ())
        op = opcode(t) if t else 0
        if op == OP_TYPE_INT and t[2] == 32:
            return [value if t[3] == 0 else self.value(OP_BITCAST, m.u32, value)]
        if op == OP_TYPE_FLOAT and t[2] == 32:
            return [self.value(OP_BITCAST, m.u32, value)]
        if op == OP_TYPE_BOOL:
            return [self.value(OP_SELECT, m.u32, value, m.const(1), m.const(0))]
        if op == OP_TYPE_INT and t[2] == 64:
            high = self.value(OP_SHIFT_RIGHT_LOGICAL, type_id, value, m.const(32))
            low = self.value(OP_U_CONVERT, m.u32, value)
            return [low, self.value(OP_U_CONVERT, m.u32, high)]
        if op == OP_TYPE_VECTOR:
            component = m.defs.get(t[2], ())
            if (
                component
                and opcode(component) in (OP_TYPE_INT, OP_TYPE_FLOAT)
                and component[2] == 32
            ):
                return [
                    w
                    for i in range(t[3])
                    for w in self.words_of(self.value(OP_COMPOSITE_EXTRACT, t[2], value, i), t[2])
                ]
            return [m.const(0)] * t[3]
        return [m.const(0)]

    def record(self, site: int, operands: Sequence[int], types: dict[int, int]) -> list[Inst]:
        m = self.m
        scope, relaxed = m.atomic_scope(), m.const(SEMANTICS_RELAXED)
        count = self.word_at(m.const(0))
        before = self.value(OP_ATOMIC_I_ADD, m.u32, count, scope, relaxed, m.const(1))
        first = self.value(OP_I_EQUAL, m.type_of(OP_TYPE_BOOL), before, m.const(0))
        base = self.value(OP_SELECT, m.u32, first, m.const(0), m.const(RECORD_WORDS))
        words = [m.const(site)]
        for operand in operands:
            words += self.words_of(operand, types.get(operand, 0))
        for offset, word in enumerate(words[: 1 + ARG_WORDS], start=1):
            at = self.word_at(self.value(OP_I_ADD, m.u32, base, m.const(offset)))
            self.out.append([(5 << 16) | OP_ATOMIC_STORE, at, scope, relaxed, word])
        return self.out


def record_faults(data: bytes) -> Recorded:
    """``data`` with each DebugPrintf recorded in the fault buffer (the module's docstring);
    unchanged, with no sites, when it has none. ValueError when the module already binds
    the record's binding."""
    words = module_words(data)
    insts = instructions(words)
    printf_sets = {
        inst[1]
        for inst in insts
        if opcode(inst) == OP_EXT_INST_IMPORT and literal_string(inst, 2) == DEBUG_PRINTF_SET
    }
    printfs = [
        i
        for i, inst in enumerate(insts)
        if opcode(inst) == OP_EXT_INST and inst[3] in printf_sets and inst[4] == DEBUG_PRINTF
    ]
    if not printfs:
        return Recorded(data, ())
    _refuse_taken_binding(insts)
    strings = {inst[1]: literal_string(inst, 2) for inst in insts if opcode(inst) == OP_STRING}
    # Value id -> its type id, for the operands' words.
    type_ids = {inst[1] for inst in insts if opcode(inst) in TYPE_OPS and len(inst) > 1}
    types = {inst[2]: inst[1] for inst in insts if len(inst) > 2 and inst[1] in type_ids}
    m = Declarations(insts, words[3])
    array = m.fresh()
    block = m.fresh()
    block_pointer = m.fresh()
    variable = m.fresh()
    word_pointer = m.declare(OP_TYPE_POINTER, SC_STORAGE_BUFFER, m.u32)
    buffer_globals: list[Inst] = [
        [(3 << 16) | OP_TYPE_RUNTIME_ARRAY, array, m.u32],
        [(3 << 16) | OP_TYPE_STRUCT, block, array],
        [(4 << 16) | OP_TYPE_POINTER, block_pointer, SC_STORAGE_BUFFER, block],
        [(4 << 16) | OP_VARIABLE, block_pointer, variable, SC_STORAGE_BUFFER],
    ]
    annotations: list[Inst] = [
        [(4 << 16) | OP_DECORATE, array, DECORATION_ARRAY_STRIDE, 4],
        [(3 << 16) | OP_DECORATE, block, DECORATION_BLOCK],
        [(5 << 16) | OP_MEMBER_DECORATE, block, 0, DECORATION_OFFSET, 0],
        [(4 << 16) | OP_DECORATE, variable, DECORATION_DESCRIPTOR_SET, FAULT_SET],
        [(4 << 16) | OP_DECORATE, variable, DECORATION_BINDING, FAULT_BINDING],
    ]
    sites: list[str] = []
    replaced: dict[int, list[Inst]] = {}
    for index in printfs:
        inst = insts[index]
        sites.append(strings.get(inst[5], "") if len(inst) > 5 else "")
        site = _Site(m, variable, word_pointer)
        replaced[index] = site.record(len(sites), inst[6:], types)
    out: list[Inst] = []
    first_function = next(i for i, inst in enumerate(insts) if opcode(inst) == OP_FUNCTION)
    first_type = next(i for i, inst in enumerate(insts) if opcode(inst) in TYPE_OPS)
    for i, inst in enumerate(insts):
        op = opcode(inst)
        if i == first_type:
            out += annotations
        if i == first_function:
            out += m.new_globals + buffer_globals
        if i in replaced:
            out += replaced[i]
        elif op == OP_EXT_INST_IMPORT and inst[1] in printf_sets:
            continue
        elif op == OP_EXTENSION and literal_string(inst, 1) == NON_SEMANTIC_EXTENSION:
            if not _other_non_semantic(insts, printf_sets):
                continue
            out.append(list(inst))
        elif op == OP_ENTRY_POINT:
            # The interface ends the instruction: the record joins it.
            out.append([((len(inst) + 1) << 16) | OP_ENTRY_POINT, *inst[1:], variable])
        else:
            out.append(list(inst))
    return Recorded(module_bytes(words, m.bound, out), tuple(sites))


def compact(site: str, root: str | None) -> str:
    """A site's format as the runtime needs it: the place, the message and the places of the
    inlined calls (`called at`), without the functions' names; paths under ``root`` (the
    workspace) relative to it, as the cpu's and cuda's faults name them."""
    kept = [
        line
        for line in site.split("\n")
        if not line.strip().startswith(("in ", "by ", "called by "))
    ]
    text = "\n".join(kept)
    return text.replace(root.rstrip("/") + "/", "") if root else text


def _other_non_semantic(insts: list[tuple[int, ...]], printf_sets: set[int]) -> bool:
    """Whether an instruction set other than DebugPrintf needs the non-semantic extension."""
    return any(
        opcode(inst) == OP_EXT_INST_IMPORT
        and inst[1] not in printf_sets
        and literal_string(inst, 2).startswith("NonSemantic.")
        for inst in insts
    )


def _refuse_taken_binding(insts: list[tuple[int, ...]]) -> None:
    sets = {
        inst[1]: inst[3]
        for inst in insts
        if opcode(inst) == OP_DECORATE and len(inst) >= 4 and inst[2] == DECORATION_DESCRIPTOR_SET
    }
    for inst in insts:
        if (
            opcode(inst) == OP_DECORATE
            and len(inst) >= 4
            and inst[2] == DECORATION_BINDING
            and inst[3] == FAULT_BINDING
            and sets.get(inst[1], 0) == FAULT_SET
        ):
            raise ValueError(
                f"binding {FAULT_BINDING} of descriptor set {FAULT_SET} is taken: a checked "
                "build keeps it for the fault record"
            )
