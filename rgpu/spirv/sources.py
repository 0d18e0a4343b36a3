"""Where in the kernel's Rust source a SPIR-V construct comes from: rust-gpu's OpLine.

rust-gpu writes `OpLine %file line column` before the instructions of each source span, and
rgpu's spirv codegen keeps its module as cargo-gpu wrote it (target/rgpu/spirv/out) before
spirv-opt strips them (`--strip-debug`). The portability report uses that module to say
where a kernel uses what a platform lacks: the first instruction, in the kernel's entry
point or a function it calls, whose result has the type a platform refuses (an f64, a
64-bit or 8-bit integer) and whose line is in the user's own files (not the standard
library, spirv-std or rgpu's vendored crates); and where the kernel itself is written (the
first such line of its entry point: the `#[rgpu::kernel]` function).

Pure Python over the binary, like the other spirv_* modules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rgpu.spirv.opcodes import (
    OP_ATOMIC_COMPARE_EXCHANGE,
    OP_ATOMIC_F_ADD,
    OP_ATOMIC_STORE,
    OP_BRANCH,
    OP_BRANCH_CONDITIONAL,
    OP_CONSTANT,
    OP_ENTRY_POINT,
    OP_FUNCTION,
    OP_FUNCTION_CALL,
    OP_FUNCTION_END,
    OP_LABEL,
    OP_LINE,
    OP_MEMORY_BARRIER,
    OP_NO_LINE,
    OP_STRING,
    OP_SWITCH,
    OP_TYPE_ARRAY,
    OP_TYPE_FLOAT,
    OP_TYPE_INT,
    OP_TYPE_POINTER,
    OP_TYPE_RUNTIME_ARRAY,
    OP_TYPE_STRUCT,
    OP_TYPE_VECTOR,
    TYPE_OPS,
)
from rgpu.spirv.words import instructions, literal_string, module_words, opcode

SUBGROUP_OPS = frozenset(range(333, 367))
# Scalar and vector float arithmetic (SPIR-V 3.52.13): OpFNegate, OpFAdd, OpFSub, OpFMul,
# OpFDiv, OpFRem, OpFMod, OpVectorTimesScalar, OpDot.
FLOAT_ARITHMETIC_OPS = frozenset({127, 129, 131, 133, 136, 140, 141, 142, 148})
# The atomics whose memory semantics are word 5 (result type, result, pointer, scope,
# semantics): OpAtomicLoad, OpAtomicExchange, OpAtomicIIncrement .. OpAtomicXor, and the
# float ones (OpAtomicFMinEXT, OpAtomicFMaxEXT, OpAtomicFAddEXT).
ATOMICS_SEMANTICS_5 = frozenset({227, 229, *range(232, 243), 5614, 5615, OP_ATOMIC_F_ADD})
# Instructions that pass a constant on unchanged for a switch's selector (rust-gpu converts
# an enum's 8-bit discriminant to the selector's type): OpCopyObject, OpUConvert,
# OpSConvert, OpBitcast.
SELECTOR_COPIES = frozenset({83, 113, 114, 124})
# Memory semantics bits that order (Acquire, Release, AcquireRelease, SequentiallyConsistent).
ORDERING_BITS = 0x2 | 0x4 | 0x8 | 0x10
# Paths that are not the user's: the standard library, crates from the registry (spirv-std,
# libm), rgpu's crates vendored into the workspace.
NOT_THE_USERS = ("/.cargo/registry/", "/.rustup/", "/rustlib/src/", "/vendor/rgpu-")


@dataclass(frozen=True)
class Place:
    file: str
    line: int
    column: int

    def text(self, root: Path | None = None) -> str:
        """`file:line[:column]`, the file relative to `root` when it lies under it."""
        path = self.file
        if root is not None:
            with contextlib.suppress(ValueError):
                path = Path(self.file).relative_to(root).as_posix()
        return f"{path}:{self.line}" + (f":{self.column}" if self.column else "")


class Sources:
    """rust-gpu's module as cargo-gpu wrote it, read for its source lines."""

    def __init__(self, data: bytes) -> None:
        self.insts = instructions(module_words(data))
        self.files: dict[int, str] = {}
        self.entries: dict[str, int] = {}
        self.types: dict[int, tuple[int, ...]] = {}
        self.functions: dict[int, tuple[int, int]] = {}  # id -> (first, end) indices
        self.constants: dict[int, int] = {}  # 32-bit scalar OpConstant id -> its value
        self._dead: set[int] | None = None  # ids of instructions in blocks never reached
        start = 0
        for index, inst in enumerate(self.insts):
            op = opcode(inst)
            if op == OP_STRING:
                self.files[inst[1]] = literal_string(inst, 2)
            elif op == OP_ENTRY_POINT and len(inst) > 3:
                self.entries[literal_string(inst, 3)] = inst[2]
            elif op in TYPE_OPS and len(inst) > 1:
                self.types[inst[1]] = inst
            elif op == OP_CONSTANT and len(inst) == 4:
                self.constants[inst[2]] = inst[3]
            elif op == OP_FUNCTION:
                start = index
            elif op == OP_FUNCTION_END:
                self.functions[self.insts[start][2]] = (start, index)

    def reachable(self, kernel: str) -> list[int]:
        """The kernel's entry point function, then every function it calls (transitively)."""
        entry = self.entries.get(kernel)
        if entry is None or entry not in self.functions:
            return []
        order, todo = [entry], [entry]
        while todo:
            first, end = self.functions[todo.pop()]
            for inst in self.insts[first:end]:
                if opcode(inst) == OP_FUNCTION_CALL and len(inst) > 3:
                    callee = inst[3]
                    if callee in self.functions and callee not in order:
                        order.append(callee)
                        todo.append(callee)
        return order

    def first(self, kernel: str, wanted: Callable[[tuple[int, ...]], bool]) -> Place | None:
        """The source line of the first instruction `wanted` accepts in the kernel's
        functions, or of the first call of a function that has one, where that line is in
        the user's files (a subgroup add is in spirv-std's code; the call is the user's)."""
        has: dict[int, bool] = {}

        def contains(function: int) -> bool:
            if function not in has:
                has[function] = False  # recursion (none in SPIR-V) ends here
                first, end = self.functions[function]
                has[function] = any(
                    wanted(inst)
                    or (
                        opcode(inst) == OP_FUNCTION_CALL
                        and inst[3] in self.functions
                        and contains(inst[3])
                    )
                    for inst in self.insts[first + 1 : end]
                )
            return has[function]

        # First an instruction under a line of the user's own; else one under a line of
        # spirv-std or rgpu, inlined into the kernel from a call the user wrote at the last
        # line of the user's seen before it.
        for inlined in (False, True):
            for function in self.reachable(kernel):
                first, end = self.functions[function]
                place: Place | None = None
                for inst in self.insts[first + 1 : end]:
                    op = opcode(inst)
                    if op == OP_LINE and len(inst) >= 4:
                        file = self.files.get(inst[1], "")
                        if file and not any(part in file for part in NOT_THE_USERS):
                            place = Place(file, inst[2], inst[3])
                        elif not inlined:
                            place = None
                    elif op in (OP_NO_LINE, OP_LABEL) and not inlined:
                        place = None
                    elif place is not None and (
                        wanted(inst)
                        or (
                            op == OP_FUNCTION_CALL
                            and inst[3] in self.functions
                            and contains(inst[3])
                        )
                    ):
                        return place
        return None

    def kernel(self, kernel: str) -> Place | None:
        """Where the kernel is written: its entry point's first line in the user's files."""
        return self.first(kernel, lambda inst: True)

    def uses(self, kernel: str, wanted: Callable[[tuple[int, ...]], bool]) -> bool:
        """Whether the kernel's functions (its entry point's and those it calls) have an
        instruction `wanted` accepts, wherever its source line is."""
        for function in self.reachable(kernel):
            first, end = self.functions[function]
            if any(wanted(inst) for inst in self.insts[first + 1 : end]):
                return True
        return False

    def float_arithmetic(self, kernel: str) -> Place | bool:
        """Where the kernel first does float arithmetic (in the user's files, else the call
        of the function that does), True when it does but no line says where, False when it
        does none."""

        def wanted(inst: tuple[int, ...]) -> bool:
            return opcode(inst) in FLOAT_ARITHMETIC_OPS

        if not self.uses(kernel, wanted):
            return False
        return self.first(kernel, wanted) or True

    def ordered(self, inst: tuple[int, ...]) -> bool:
        """Whether an instruction is an atomic or a memory barrier (a fence) whose memory
        semantics order other accesses (acquire, release): what naga drops. Workgroup barriers
        (OpControlBarrier) are not: naga keeps them."""
        op = opcode(inst)
        if op in ATOMICS_SEMANTICS_5 and len(inst) > 5:
            words = [inst[5]]
        elif op == OP_ATOMIC_COMPARE_EXCHANGE and len(inst) > 6:
            words = [inst[5], inst[6]]
        elif op == OP_ATOMIC_STORE and len(inst) > 3:
            words = [inst[3]]
        elif op == OP_MEMORY_BARRIER and len(inst) > 2:
            words = [inst[2]]
        else:
            return False
        return any(self.constants.get(w, 0) & ORDERING_BITS for w in words)

    def dead(self) -> set[int]:
        """`id()`s of the instructions in blocks no path from their function's entry reaches
        when each switch on a constant takes only its case. rust-gpu inlines no MIR: an
        `Atomic` method called with `Relaxed` keeps one atomic per ordering behind a switch
        on the constant ordering (spirv-opt folds no 8-bit constant); those arms are dead."""
        if self._dead is not None:
            return self._dead
        value: dict[int, int] = dict(self.constants)
        for inst in self.insts:
            if opcode(inst) in SELECTOR_COPIES and len(inst) == 4 and inst[3] in value:
                value[inst[2]] = value[inst[3]]
        dead: set[int] = set()
        for first, end in self.functions.values():
            blocks: dict[int, tuple[int, int]] = {}  # label -> (first, end) indices
            label, start = None, first
            for index in range(first + 1, end + 1):
                op = opcode(self.insts[index])
                if op in (OP_LABEL, OP_FUNCTION_END):
                    if label is not None:
                        blocks[label] = (start, index)
                    if op == OP_LABEL:
                        label, start = self.insts[index][1], index
            if not blocks:
                continue
            seen, todo = set(), [next(iter(blocks))]
            while todo:
                block = todo.pop()
                if block in seen or block not in blocks:
                    continue
                seen.add(block)
                a, b = blocks[block]
                last = self.insts[b - 1]
                op = opcode(last)
                if op == OP_BRANCH:
                    todo.append(last[1])
                elif op == OP_BRANCH_CONDITIONAL:
                    todo += [last[2], last[3]]
                elif op == OP_SWITCH:
                    cases = dict(zip(last[3::2], last[4::2], strict=False))
                    if last[1] in value:
                        todo.append(cases.get(value[last[1]], last[2]))
                    else:
                        todo += [last[2], *cases.values()]
            for block, (a, b) in blocks.items():
                if block not in seen:
                    dead.update(id(inst) for inst in self.insts[a:b])
        self._dead = dead
        return dead

    def live_ordered(self, inst: tuple[int, ...]) -> bool:
        """An ordered atomic (`ordered`) in a block the kernel can reach (`dead`)."""
        return self.ordered(inst) and id(inst) not in self.dead()

    def ordered_atomics(self, kernel: str) -> bool:
        """Whether the kernel has an atomic (or fence) with an acquire or release ordering
        that it can reach (a switch on a constant ordering takes only its case)."""
        return self.uses(kernel, self.live_ordered)

    def holds(self, type_id: int, scalar: Callable[[tuple[int, ...]], bool]) -> bool:
        """Whether a type is, or contains (members, elements, pointee), a scalar `scalar`
        accepts."""
        seen: set[int] = set()
        todo = [type_id]
        while todo:
            t = todo.pop()
            if t in seen or t not in self.types:
                continue
            seen.add(t)
            d = self.types[t]
            op = opcode(d)
            if op in (OP_TYPE_INT, OP_TYPE_FLOAT) and scalar(d):
                return True
            if op in (OP_TYPE_VECTOR, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
                todo.append(d[2])
            elif op == OP_TYPE_STRUCT:
                todo += d[2:]
            elif op == OP_TYPE_POINTER:
                todo.append(d[3])
        return False

    def first_of_type(self, kernel: str, scalar: Callable[[tuple[int, ...]], bool]) -> Place | None:
        """The first instruction whose result type holds such a scalar."""
        return self.first(
            kernel,
            lambda inst: (
                len(inst) > 2
                and inst[1] in self.types
                and opcode(inst) not in TYPE_OPS
                and self.holds(inst[1], scalar)
            ),
        )


@dataclass(frozen=True)
class Construct:
    """What a platform lacks, as naga names it, and how to find it in the module."""

    name: str  # as the report says it: "f64", "64-bit integers", ...
    marker: str  # a piece of naga's message that names it
    find: Callable[[Sources, str], Place | None]


def _scalar(op: int, width: int) -> Callable[[Sources, str], Place | None]:
    return lambda sources, kernel: sources.first_of_type(
        kernel, lambda d: opcode(d) == op and d[2] == width
    )


CONSTRUCTS: tuple[Construct, ...] = (
    Construct("f64", "FLOAT64", _scalar(OP_TYPE_FLOAT, 64)),
    Construct("64-bit integers (u64/i64)", "SHADER_INT64", _scalar(OP_TYPE_INT, 64)),
    Construct("16-bit integers (u16/i16)", "SHADER_INT16", _scalar(OP_TYPE_INT, 16)),
    Construct("f16", "FLOAT16", _scalar(OP_TYPE_FLOAT, 16)),
    Construct("8-bit integers (u8/i8)", "scalar width 1", _scalar(OP_TYPE_INT, 8)),
    Construct(
        "atomics with acquire/release orderings",
        "memory orderings",
        lambda sources, kernel: sources.first(kernel, sources.live_ordered),
    ),
    Construct(
        "f32 atomics",
        "SHADER_FLOAT32_ATOMIC",
        lambda sources, kernel: sources.first(kernel, lambda i: opcode(i) == OP_ATOMIC_F_ADD),
    ),
    Construct(
        "subgroup operations",
        "SUBGROUP",
        lambda sources, kernel: sources.first(kernel, lambda i: opcode(i) in SUBGROUP_OPS),
    ),
)


def construct_of(message: str) -> Construct | None:
    """The construct naga's message is about, when it is one the report can locate."""
    return next((c for c in CONSTRUCTS if c.marker in message), None)
