"""8- and 16-bit integers in memory moved into 32-bit words, byte for byte.

Why: naga (wgpu on Metal, DX12 and in browsers, and rgpu's build-time translation) refuses
every 8-bit integer type ("The Uint scalar width 1 is not supported"), WebGPU has no 16-bit
integers, and many devices have no 8/16-bit storage. spirv/narrow_ints.py computes narrow
*values* in 32 bits; this pass, run before it, removes the narrow types from *memory* and
from composite values, so nothing narrow is left once both have run.

What, by where the memory is:

- Storage buffers, push constants, uniform buffers (memory whose layout the host wrote: a
  `&[u8]`, `#[item] x: &mut u16`, `Global<i8>`, a struct with `u8` fields, a `u8` kernel
  parameter): the variable becomes a block of 32-bit words (a runtime array of `u32` for a
  storage buffer, `u32` members for a push-constant block) and every access a byte address
  into it: an access chain adds its members' offsets and its indices times the array
  stride (the module's own Offset and ArrayStride decorations). A narrow load reads the word
  and takes the bits `(address & 3) * 8` upwards; a narrow store clears those bits with an
  atomic AND and sets them with an atomic OR (`OpAtomicAnd`, `OpAtomicOr`, relaxed,
  device/queue-family scope), so invocations writing different bytes of one word lose no
  update; a 32-bit scalar is the word itself (64-bit ones two words); a composite is loaded
  or stored as its scalars. `OpArrayLength` counts elements of the old stride again.
- Function, private and workgroup memory (a per-thread `[u8; 16]`, a local struct): each
  narrow element becomes a 32-bit one (no packing: nobody else shares these words).
- Composite values (a struct or array with narrow members, loaded, built, passed or
  returned): their types get 32-bit members; a narrow scalar going in is zero-extended
  (`OpUConvert`), one coming out is the 32-bit member converted back, which
  spirv.narrow_ints then computes in 32 bits like any other narrow value. Function
  parameters and results of narrow or narrow-holding types are widened the same way.

Values are held zero-extended (spirv.narrow_ints' convention): a narrow value converted to
32 bits is its bit pattern, and a 32-bit member read back is truncated again. A module whose
narrow memory uses something this pass does not handle (a pointer into the host's memory
passed to a function or chosen by a phi, `OpCopyMemory`, a dynamic index into a narrow
push-constant array, a narrow vector) is returned unchanged, with the reason: its kernels
keep their narrow memory (Vulkan and CUDA run them; the portability report says why naga
cannot). Capabilities and extensions of 8/16-bit storage go when nothing needs them.

Pure Python over the binary, like the other spirv_* passes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rgpu.spirv.declarations import Declarations, Inst
from rgpu.spirv.opcodes import (
    DECORATION_ARRAY_STRIDE,
    DECORATION_BINDING,
    DECORATION_BLOCK,
    DECORATION_NON_WRITABLE,
    DECORATION_OFFSET,
    OP_ACCESS_CHAIN,
    OP_ARRAY_LENGTH,
    OP_ATOMIC_AND,
    OP_ATOMIC_LOAD,
    OP_ATOMIC_OR,
    OP_BITCAST,
    OP_BITWISE_AND,
    OP_CAPABILITY,
    OP_COMPOSITE_CONSTRUCT,
    OP_COMPOSITE_EXTRACT,
    OP_COMPOSITE_INSERT,
    OP_CONSTANT,
    OP_CONSTANT_COMPOSITE,
    OP_CONSTANT_NULL,
    OP_COPY_LOGICAL,
    OP_COPY_OBJECT,
    OP_DECORATE,
    OP_ENTRY_POINT,
    OP_EXTENSION,
    OP_FUNCTION,
    OP_FUNCTION_CALL,
    OP_FUNCTION_END,
    OP_FUNCTION_PARAMETER,
    OP_I_ADD,
    OP_I_MUL,
    OP_IN_BOUNDS_ACCESS_CHAIN,
    OP_LABEL,
    OP_LINE,
    OP_LOAD,
    OP_MEMBER_DECORATE,
    OP_NO_LINE,
    OP_NOT,
    OP_PHI,
    OP_RETURN_VALUE,
    OP_S_CONVERT,
    OP_SELECT,
    OP_SHIFT_LEFT_LOGICAL,
    OP_SHIFT_RIGHT_LOGICAL,
    OP_STORE,
    OP_TYPE_ARRAY,
    OP_TYPE_BOOL,
    OP_TYPE_FLOAT,
    OP_TYPE_FUNCTION,
    OP_TYPE_INT,
    OP_TYPE_POINTER,
    OP_TYPE_RUNTIME_ARRAY,
    OP_TYPE_STRUCT,
    OP_TYPE_VECTOR,
    OP_U_CONVERT,
    OP_U_DIV,
    OP_UNDEF,
    OP_VARIABLE,
    SC_PUSH_CONSTANT,
    SC_STORAGE_BUFFER,
    SC_UNIFORM,
    TYPE_OPS,
)
from rgpu.spirv.pointer_values import used_words
from rgpu.spirv.words import (
    ANNOTATIONS,
    instructions,
    literal_string,
    module_bytes,
    module_words,
    opcode,
)

LAID_OUT = frozenset({SC_UNIFORM, SC_PUSH_CONSTANT, SC_STORAGE_BUFFER})

# Capabilities and extensions that only narrow memory needs (SPIR-V spec, 3.31).
STORAGE_CAPABILITIES = frozenset({4433, 4434, 4435, 4436, 4448, 4449, 4450})
STORAGE_EXTENSIONS = ("SPV_KHR_8bit_storage", "SPV_KHR_16bit_storage")

# Instructions of a function body a narrow-holding value may pass through unchanged but
# for its type (the result type is word 1).
RETYPED = frozenset({OP_PHI, OP_SELECT, OP_COPY_OBJECT, OP_UNDEF, OP_COPY_LOGICAL})


class Unsupported(Exception):
    """The module's narrow memory uses something this pass does not rewrite."""


@dataclass(frozen=True)
class Lowered:
    data: bytes
    variables: int  # variables whose narrow integers are now 32-bit words
    values: int  # instructions rewritten
    refused: str | None = None  # why narrow memory stays (the module is returned as it was)


@dataclass
class Packed:
    """A pointer into laid-out memory: the variable, the byte address (a constant or a u32
    value id) and the old pointee type."""

    var: int
    address: int | tuple[str, int]  # int: constant; ("id", value)
    pointee: int


@dataclass
class _Types:
    """The module's types, constants and layout decorations, and the ones the pass adds."""

    strides: dict[int, int] = field(default_factory=dict)
    offsets: dict[tuple[int, int], int] = field(default_factory=dict)
    blocks: set[int] = field(default_factory=set)


class _Pass(Declarations):
    def __init__(self, insts: list[tuple[int, ...]], bound: int) -> None:
        super().__init__(insts, bound)
        self.insts = insts
        self.t = _Types()
        self.bindings: dict[int, int] = {}  # variable -> its Binding
        # Variables the module never writes (rust-gpu's `&[T]`): their words are read with
        # plain loads; every other buffer's narrow words with atomic loads (load_leaf).
        self.read_only = {
            inst[1]
            for inst in insts
            if opcode(inst) == OP_DECORATE and len(inst) >= 3 and inst[2] == DECORATION_NON_WRITABLE
        }
        # Entry point function -> its push-constant variable (SPIR-V 1.4+ interfaces list
        # every global an entry point uses).
        self.push_constants: dict[int, int] = {}
        push_constant_vars = {
            inst[2]
            for inst in insts
            if opcode(inst) == OP_VARIABLE and len(inst) >= 4 and inst[3] == SC_PUSH_CONSTANT
        }
        for inst in insts:
            if opcode(inst) == OP_DECORATE and len(inst) >= 4 and inst[2] == DECORATION_BINDING:
                self.bindings[inst[1]] = inst[3]
            elif opcode(inst) == OP_ENTRY_POINT and len(inst) > 3:
                found = [w for w in inst[3:] if w in push_constant_vars]
                if len(found) == 1:
                    self.push_constants[inst[2]] = found[0]
        for inst in insts:
            op = opcode(inst)
            if op == OP_DECORATE and len(inst) >= 4 and inst[2] == DECORATION_ARRAY_STRIDE:
                self.t.strides[inst[1]] = inst[3]
            elif op == OP_DECORATE and len(inst) >= 3 and inst[2] == DECORATION_BLOCK:
                self.t.blocks.add(inst[1])
            elif op == OP_MEMBER_DECORATE and len(inst) >= 5 and inst[3] == DECORATION_OFFSET:
                self.t.offsets[(inst[1], inst[2])] = inst[4]
        self.narrow_memo: dict[int, bool] = {}
        self.new_annotations: list[Inst] = []
        self.widened: dict[int, int] = {}  # old type id -> widened type id
        self.blocks: dict[tuple[int, int], int] = {}  # (storage class, words) -> block
        self.values = 0
        # Module-scope values (constants, undefs, variables): id -> (type, instruction).
        self.globals: dict[int, tuple[int, tuple[int, ...]]] = {}
        for inst in insts:
            op = opcode(inst)
            if op == OP_FUNCTION:
                break
            if op not in TYPE_OPS and len(inst) > 2 and inst[1] in self.defs:
                self.globals[inst[2]] = (inst[1], inst)

    # --- types -----------------------------------------------------------------------------

    def width(self, type_id: int) -> int | None:
        """The width of an integer type, None for other types."""
        d = self.defs.get(type_id)
        return d[2] if d is not None and opcode(d) == OP_TYPE_INT else None

    def is_narrow_scalar(self, type_id: int) -> bool:
        return self.width(type_id) in (8, 16)

    def signed(self, type_id: int) -> bool:
        d = self.defs.get(type_id)
        return d is not None and opcode(d) == OP_TYPE_INT and bool(d[3])

    def holds_narrow(self, type_id: int) -> bool:
        """Whether the type is or contains (through members, elements, pointees, function
        parameters and results) an 8- or 16-bit integer."""
        if type_id in self.narrow_memo:
            return self.narrow_memo[type_id]
        self.narrow_memo[type_id] = False  # cycles (forward pointers) hold nothing narrow
        d = self.defs.get(type_id)
        found = False
        if d is not None:
            op = opcode(d)
            if op == OP_TYPE_INT:
                found = d[2] in (8, 16)
            elif op in (OP_TYPE_VECTOR, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
                found = self.holds_narrow(d[2])
            elif op == OP_TYPE_STRUCT:
                found = any(self.holds_narrow(m) for m in d[2:])
            elif op == OP_TYPE_POINTER:
                found = self.holds_narrow(d[3])
            elif op == OP_TYPE_FUNCTION:
                found = any(self.holds_narrow(m) for m in d[2:])
        self.narrow_memo[type_id] = found
        return found

    def widen(self, type_id: int) -> int:
        """The type with every narrow integer a u32 (the same id when nothing is narrow)."""
        if not self.holds_narrow(type_id):
            return type_id
        if type_id in self.widened:
            return self.widened[type_id]
        d = self.defs[type_id]
        op = opcode(d)
        if op == OP_TYPE_INT:
            new = self.u32
        elif op == OP_TYPE_VECTOR:
            raise Unsupported("a vector of 8- or 16-bit integers")
        elif op == OP_TYPE_ARRAY:
            new = self.declare(OP_TYPE_ARRAY, self.widen(d[2]), d[3])
        elif op == OP_TYPE_RUNTIME_ARRAY:
            new = self.declare(OP_TYPE_RUNTIME_ARRAY, self.widen(d[2]))
        elif op == OP_TYPE_STRUCT:
            new = self.declare(OP_TYPE_STRUCT, *(self.widen(m) for m in d[2:]))
        elif op == OP_TYPE_POINTER:
            if d[2] in LAID_OUT:
                raise Unsupported("a pointer into a buffer of 8- or 16-bit integers as a value")
            new = self.type_of(OP_TYPE_POINTER, d[2], self.widen(d[3]))
        elif op == OP_TYPE_FUNCTION:
            new = self.type_of(OP_TYPE_FUNCTION, *(self.widen(m) for m in d[2:]))
        else:
            raise Unsupported(f"type {op} holding an 8- or 16-bit integer")
        self.widened[type_id] = new
        return new

    # --- layout ----------------------------------------------------------------------------

    def size(self, type_id: int) -> int:
        d = self.defs[type_id]
        op = opcode(d)
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            return int(d[2]) // 8
        if op == OP_TYPE_BOOL:
            return 4
        if op == OP_TYPE_VECTOR:
            return self.size(d[2]) * d[3]
        if op == OP_TYPE_ARRAY:
            return self.stride(type_id) * self.constants[d[3]]
        if op == OP_TYPE_STRUCT:
            members = range(len(d) - 2)
            return max((self.offset(type_id, m) + self.size(d[2 + m]) for m in members), default=0)
        raise Unsupported(f"the size of type {op} in a buffer")

    def stride(self, type_id: int) -> int:
        if type_id not in self.t.strides:
            raise Unsupported("an array in a buffer without an ArrayStride")
        return self.t.strides[type_id]

    def offset(self, struct_id: int, member: int) -> int:
        if (struct_id, member) not in self.t.offsets:
            raise Unsupported("a struct member in a buffer without an Offset")
        return self.t.offsets[(struct_id, member)]

    def leaves(self, type_id: int) -> list[tuple[tuple[int, ...], int, int]]:
        """The scalars of a type in laid-out memory: (indices into the value, byte offset,
        scalar type), in order."""
        d = self.defs[type_id]
        op = opcode(d)
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            return [((), 0, type_id)]
        if op == OP_TYPE_VECTOR:
            size = self.size(d[2])
            return [((i,), i * size, d[2]) for i in range(d[3])]
        if op == OP_TYPE_ARRAY:
            stride = self.stride(type_id)
            inner = self.leaves(d[2])
            return [
                ((i, *path), i * stride + at, t)
                for i in range(self.constants[d[3]])
                for path, at, t in inner
            ]
        if op == OP_TYPE_STRUCT:
            out = []
            for m, member in enumerate(d[2:]):
                base = self.offset(type_id, m)
                out += [((m, *path), base + at, t) for path, at, t in self.leaves(member)]
            return out
        raise Unsupported(f"type {op} in a buffer of 8- or 16-bit integers")


def _result(inst: tuple[int, ...], types: dict[int, tuple[int, ...]]) -> tuple[int, int] | None:
    """(result type, result id) of an instruction with a result type, else None."""
    if len(inst) > 2 and inst[1] in types and opcode(inst) not in TYPE_OPS:
        return inst[1], inst[2]
    return None


def lower_narrow_memory(data: bytes) -> Lowered:
    """`data` (a SPIR-V module) with its narrow integers in memory moved into 32-bit words."""
    words = module_words(data)
    insts = instructions(words)
    p = _Pass(insts, words[3])
    narrow_types = [t for t in p.defs if p.is_narrow_scalar(t)]
    if not narrow_types:
        return Lowered(data, 0, 0)
    holders = [t for t in p.defs if p.holds_narrow(t) and not p.is_narrow_scalar(t)]
    if not holders:
        return Lowered(data, 0, 0)  # narrow values only: spirv.narrow_ints' work
    try:
        out, variables = _rewrite(p)
    except Unsupported as why:
        return Lowered(data, 0, 0, str(why))
    except (KeyError, IndexError, ValueError) as error:
        # A module shaped unlike anything the pass was written for: it stays as it was (its
        # kernels keep running on Vulkan and CUDA), and the report says so; never a crash.
        return Lowered(data, 0, 0, f"a module shape rgpu does not handle ({error!r})")
    out = _drop_unused(out, p)
    return Lowered(module_bytes(words, p.bound, out), variables, p.values)


def _rewrite(p: _Pass) -> tuple[list[Inst], int]:
    insts = p.insts
    # Laid-out variables holding narrow integers: their new word types.
    packed_vars: dict[int, int] = {}  # variable -> its new pointer type
    packed_class: dict[int, int] = {}  # variable -> storage class
    word_pointer: dict[int, int] = {}  # storage class -> pointer-to-u32 type
    retyped_globals: list[Inst] = []
    moved: set[int] = set()  # indices of global instructions re-emitted after the new types
    first_function = next(
        (i for i, inst in enumerate(insts) if opcode(inst) == OP_FUNCTION), len(insts)
    )
    for index, inst in enumerate(insts[:first_function]):
        op = opcode(inst)
        if op == OP_VARIABLE and p.holds_narrow(inst[1]):
            sc = inst[3]
            pointee = p.defs[inst[1]][3]
            if sc in LAID_OUT:
                new_block = _word_block(p, pointee, sc)
                pointer = p.type_of(OP_TYPE_POINTER, sc, new_block)
                word_pointer[sc] = p.type_of(OP_TYPE_POINTER, sc, p.u32)
                packed_vars[inst[2]] = pointer
                packed_class[inst[2]] = sc
                if len(inst) > 4:
                    raise Unsupported("an initialized variable in a buffer")
                retyped_globals.append([inst[0], pointer, inst[2], sc])
            else:
                new = [inst[0], p.widen(inst[1]), inst[2], sc, *inst[4:]]
                if len(inst) > 4:
                    new[4] = _retyped_constant_id(p, inst[4])
                retyped_globals.append(new)
            moved.add(index)
        elif op in (OP_CONSTANT_COMPOSITE, OP_CONSTANT_NULL, OP_UNDEF) and p.holds_narrow(inst[1]):
            retyped_globals.append(_retyped_constant(p, inst))
            moved.add(index)
    body = _functions(p, insts[first_function:], packed_vars, packed_class, word_pointer)
    variables = sum(1 for g in retyped_globals if opcode(g) == OP_VARIABLE)
    out: list[Inst] = []
    for index, inst in enumerate(insts[:first_function]):
        if index in moved:
            continue
        op = opcode(inst)
        if op == OP_CAPABILITY and len(inst) == 2 and inst[1] in STORAGE_CAPABILITIES:
            continue
        if op == OP_EXTENSION and literal_string(inst, 1) in STORAGE_EXTENSIONS:
            continue
        out.append(list(inst))
    # New types, constants and annotations: annotations before the first type, the rest
    # (and the retyped globals that use them) at the end of the global section.
    first_type = next(
        i for i, inst in enumerate(out) if opcode(inst) in TYPE_OPS or opcode(inst) == OP_CONSTANT
    )
    out[first_type:first_type] = p.new_annotations
    out += p.new_globals + retyped_globals
    return out + body, variables


def _word_block(p: _Pass, pointee: int, sc: int) -> int:
    """The block of 32-bit words a laid-out variable of type `pointee` becomes: for a
    storage buffer one runtime array of u32 (every such variable shares it), for a
    push-constant or uniform block one u32 member per word of the old block."""
    if sc == SC_STORAGE_BUFFER:
        key = (sc, 0)
    else:
        if opcode(p.defs[pointee]) != OP_TYPE_STRUCT:
            raise Unsupported("a push-constant or uniform block that is not a struct")
        key = (sc, (p.size(pointee) + 3) // 4)
    if key in p.blocks:
        return p.blocks[key]
    if sc == SC_STORAGE_BUFFER:
        array = p.declare(OP_TYPE_RUNTIME_ARRAY, p.u32)
        p.new_annotations.append([(4 << 16) | OP_DECORATE, array, DECORATION_ARRAY_STRIDE, 4])
        block = p.declare(OP_TYPE_STRUCT, array)
        p.new_annotations.append([(5 << 16) | OP_MEMBER_DECORATE, block, 0, DECORATION_OFFSET, 0])
    else:
        block = p.declare(OP_TYPE_STRUCT, *([p.u32] * key[1]))
        for m in range(key[1]):
            p.new_annotations.append(
                [(5 << 16) | OP_MEMBER_DECORATE, block, m, DECORATION_OFFSET, 4 * m]
            )
    p.new_annotations.append([(3 << 16) | OP_DECORATE, block, DECORATION_BLOCK])
    p.blocks[key] = block
    return block


def _retyped_constant_id(p: _Pass, value: int) -> int:
    """A module-scope operand: the 32-bit constant standing for a narrow scalar constant
    (zero-extended; 0 for a narrow null or undef), else the same id (a narrow-holding
    composite constant is retyped in place)."""
    found = p.globals.get(value)
    if found is None or not p.is_narrow_scalar(found[0]):
        return value
    ty, inst = found
    width = p.width(ty) or 32
    if opcode(inst) == OP_CONSTANT and len(inst) == 4:
        return p.const(inst[3] & ((1 << width) - 1))
    if opcode(inst) in (OP_CONSTANT_NULL, OP_UNDEF):
        return p.const(0)
    raise Unsupported(f"a narrow module-scope value of instruction {opcode(inst)}")


def _retyped_constant(p: _Pass, inst: tuple[int, ...]) -> Inst:
    op = opcode(inst)
    if op == OP_CONSTANT_COMPOSITE:
        parts = [_retyped_constant_id(p, c) for c in inst[3:]]
        return [inst[0], p.widen(inst[1]), inst[2], *parts]
    return [inst[0], p.widen(inst[1]), inst[2]]


class _Function:
    """The rewrite of one function body."""

    def __init__(
        self,
        p: _Pass,
        packed_vars: dict[int, int],
        packed_class: dict[int, int],
        word_pointer: dict[int, int],
    ) -> None:
        self.p = p
        self.packed_vars = packed_vars
        self.packed_class = packed_class
        self.word_pointer = word_pointer
        self.packed: dict[int, Packed] = {
            var: Packed(var, 0, p.defs[_var_type(p, var)][3]) for var in packed_vars
        }
        self.out: list[Inst] = []
        self.function = 0

    # --- helpers ---------------------------------------------------------------------------

    def emit(self, op: int, *operands: int) -> None:
        self.out.append([((len(operands) + 1) << 16) | op, *operands])

    def value(self, op: int, type_id: int, *operands: int) -> int:
        result = self.p.fresh()
        self.emit(op, type_id, result, *operands)
        return result

    def to_u32(self, value: int, narrow_type: int) -> int:
        """A narrow scalar zero-extended into a u32."""
        return self.value(OP_U_CONVERT, self.p.u32, value)

    def from_u32(self, value: int, narrow_type: int, result: int) -> None:
        """`result` (of the narrow type) from the low bits of a u32."""
        op = OP_S_CONVERT if self.p.signed(narrow_type) else OP_U_CONVERT
        self.emit(op, narrow_type, result, value)

    def address_id(self, address: int | tuple[str, int]) -> int:
        return self.p.const(address) if isinstance(address, int) else address[1]

    def add(self, a: int | tuple[str, int], b: int | tuple[str, int]) -> int | tuple[str, int]:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        return ("id", self.value(OP_I_ADD, self.p.u32, self.address_id(a), self.address_id(b)))

    def index_times(self, index: int, stride: int) -> int | tuple[str, int]:
        if index in self.p.constants:
            return self.p.constants[index] * stride
        width = self.p.width(self.types_of.get(index, self.p.u32))
        if width != 32:
            raise Unsupported("an index into a buffer of 8- or 16-bit integers that is not 32-bit")
        if stride == 1:
            return ("id", index)
        return ("id", self.value(OP_I_MUL, self.p.u32, index, self.p.const(stride)))

    def word(self, ptr: Packed, address: int | tuple[str, int]) -> int:
        """A pointer to the word holding byte `address` of a packed variable."""
        sc = self.packed_class[ptr.var]
        if sc == SC_STORAGE_BUFFER:
            if isinstance(address, int):
                index = self.p.const(address // 4)
            else:
                index = self.value(OP_SHIFT_RIGHT_LOGICAL, self.p.u32, address[1], self.p.const(2))
            return self.value(
                OP_ACCESS_CHAIN, self.word_pointer[sc], ptr.var, self.p.const(0), index
            )
        if not isinstance(address, int):
            raise Unsupported("a run-time index into push constants of 8- or 16-bit integers")
        return self.value(
            OP_ACCESS_CHAIN, self.word_pointer[sc], ptr.var, self.p.const(address // 4)
        )

    def shift_of(self, address: int | tuple[str, int]) -> int | tuple[str, int]:
        if isinstance(address, int):
            return (address % 4) * 8
        low = self.value(OP_BITWISE_AND, self.p.u32, address[1], self.p.const(3))
        return ("id", self.value(OP_SHIFT_LEFT_LOGICAL, self.p.u32, low, self.p.const(3)))

    def load_leaf(self, ptr: Packed, address: int | tuple[str, int], leaf: int) -> int:
        """A scalar at `address` as a u32 (zero-extended when narrow), or the scalar of its
        own type when 32 or 64 bits wide."""
        p = self.p
        size = p.size(leaf)
        if size in (1, 2):
            word = self.load_word(ptr, address)
            shift = self.shift_of(address)
            if shift != 0:
                word = self.value(OP_SHIFT_RIGHT_LOGICAL, p.u32, word, self.address_id(shift))
            if shift == 32 - 8 * size:
                return word
            return self.value(OP_BITWISE_AND, p.u32, word, p.const((1 << (8 * size)) - 1))
        if size == 4:
            word = self.value(OP_LOAD, p.u32, self.word(ptr, address))
            return word if leaf == p.u32 else self.value(OP_BITCAST, leaf, word)
        if size == 8:
            low = self.value(OP_LOAD, p.u32, self.word(ptr, address))
            high = self.value(OP_LOAD, p.u32, self.word(ptr, self.add(address, 4)))
            pair = p.type_of(OP_TYPE_VECTOR, p.u32, 2)
            both = self.value(OP_COMPOSITE_CONSTRUCT, pair, low, high)
            return self.value(OP_BITCAST, leaf, both)
        raise Unsupported(f"a {size}-byte scalar in a buffer of 8- or 16-bit integers")

    def load_word(self, ptr: Packed, address: int | tuple[str, int]) -> int:
        """The word holding a narrow scalar. In a buffer the kernel writes, an atomic load
        (relaxed, the stores' scope): its bytes are stored with atomics, and a plain load of
        a word that an atomic of the same invocation changes may be scheduled after it
        (found on NVIDIA's Vulkan driver: a struct of four `u8`s read whole, then written
        byte by byte, read back bytes already written; docs/reference.md)."""
        p = self.p
        target = self.word(ptr, address)
        if self.packed_class[ptr.var] != SC_STORAGE_BUFFER or ptr.var in p.read_only:
            return self.value(OP_LOAD, p.u32, target)
        return self.value(OP_ATOMIC_LOAD, p.u32, target, p.atomic_scope(), p.const(0))

    def store_leaf(
        self, ptr: Packed, address: int | tuple[str, int], leaf: int, value: int
    ) -> None:
        """Store a scalar (a u32 holding a narrow one zero-extended, else its own type)."""
        p = self.p
        size = p.size(leaf)
        if self.packed_class[ptr.var] != SC_STORAGE_BUFFER:
            raise Unsupported("a store into push constants")
        if size in (1, 2):
            target = self.word(ptr, address)
            shift = self.shift_of(address)
            mask = (1 << (8 * size)) - 1
            if isinstance(shift, int):
                clear = p.const(~(mask << shift))
                bits = (
                    value
                    if shift == 0
                    else self.value(OP_SHIFT_LEFT_LOGICAL, p.u32, value, p.const(shift))
                )
            else:
                placed = self.value(OP_SHIFT_LEFT_LOGICAL, p.u32, p.const(mask), shift[1])
                clear = self.value(OP_NOT, p.u32, placed)
                bits = self.value(OP_SHIFT_LEFT_LOGICAL, p.u32, value, shift[1])
            scope = p.atomic_scope()
            relaxed = p.const(0)
            self.value(OP_ATOMIC_AND, p.u32, target, scope, relaxed, clear)
            self.value(OP_ATOMIC_OR, p.u32, target, scope, relaxed, bits)
            return
        if size == 4:
            word = value if leaf == p.u32 else self.value(OP_BITCAST, p.u32, value)
            self.emit(OP_STORE, self.word(ptr, address), word)
            return
        if size == 8:
            pair = p.type_of(OP_TYPE_VECTOR, p.u32, 2)
            both = self.value(OP_BITCAST, pair, value)
            for half in (0, 1):
                part = self.value(OP_COMPOSITE_EXTRACT, p.u32, both, half)
                self.emit(OP_STORE, self.word(ptr, self.add(address, 4 * half)), part)
            return
        raise Unsupported(f"a {size}-byte scalar in a buffer of 8- or 16-bit integers")

    # --- instructions --------------------------------------------------------------------

    def run(self, body: list[tuple[int, ...]]) -> list[Inst]:
        p = self.p
        self.types_of: dict[int, int] = {v: t for v, (t, _) in p.globals.items()}
        for inst in body:
            res = _result(inst, p.defs)
            if res is not None:
                self.types_of[res[1]] = res[0]
        pending_params: list[Inst] = []
        in_entry = False
        for inst in body:
            op = opcode(inst)
            if op == OP_LABEL:
                self.out.append(list(inst))
                in_entry = bool(pending_params)
                continue
            if in_entry and op not in (OP_VARIABLE, OP_LINE, OP_NO_LINE):
                self.out += pending_params
                pending_params = []
                in_entry = False
            handled = self.instruction(op, inst, pending_params)
            if not handled:
                self.check_untouched(op, inst)
                self.out.append(list(inst))
        return self.out

    def check_untouched(self, op: int, inst: tuple[int, ...]) -> None:
        """An instruction this pass leaves as it is must not involve a narrow-holding
        composite or a pointer into packed memory."""
        if op in ANNOTATIONS:
            return
        res = _result(inst, self.p.defs)
        if res is not None and self.p.holds_narrow(res[0]) and not self.p.is_narrow_scalar(res[0]):
            raise Unsupported(f"instruction {op} on a value holding 8- or 16-bit integers")
        for word in used_words(inst):
            if word in self.packed:
                raise Unsupported(f"instruction {op} on a pointer into a buffer of narrow integers")

    def instruction(self, op: int, inst: tuple[int, ...], pending: list[Inst]) -> bool:
        p = self.p
        if op == OP_FUNCTION:
            self.function = inst[2]
            self.emit(op, p.widen(inst[1]), inst[2], inst[3], p.widen(inst[4]))
            return True
        if op == OP_FUNCTION_PARAMETER:
            if p.is_narrow_scalar(inst[1]):
                wide = p.fresh()
                self.emit(op, p.u32, wide)
                converted: list[Inst] = []
                saved, self.out = self.out, converted
                self.from_u32(wide, inst[1], inst[2])
                self.out = saved
                pending += converted
            elif p.holds_narrow(inst[1]):
                self.emit(op, p.widen(inst[1]), inst[2])
            else:
                return False
            p.values += 1
            return True
        if op == OP_VARIABLE:
            if not p.holds_narrow(inst[1]):
                return False
            if inst[3] in LAID_OUT:
                raise Unsupported("a function variable in a laid-out storage class")
            init = [_retyped_constant_id(p, inst[4])] if len(inst) > 4 else []
            self.emit(op, p.widen(inst[1]), inst[2], inst[3], *init)
            p.values += 1
            return True
        if op in (OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN):
            return self.access_chain(op, inst)
        if op == OP_LOAD:
            return self.load(inst)
        if op == OP_STORE:
            return self.store(inst)
        if op == OP_ARRAY_LENGTH:
            return self.array_length(inst)
        if op == OP_COMPOSITE_CONSTRUCT:
            if not p.holds_narrow(inst[1]):
                return False
            parts = [self.widened_operand(c) for c in inst[3:]]
            self.emit(op, p.widen(inst[1]), inst[2], *parts)
            p.values += 1
            return True
        if op == OP_COMPOSITE_EXTRACT:
            source = self.types_of.get(inst[3])
            if source is None or not p.holds_narrow(source):
                return False
            if p.is_narrow_scalar(inst[1]):
                wide = self.value(op, p.u32, inst[3], *inst[4:])
                self.from_u32(wide, inst[1], inst[2])
            else:
                self.emit(op, p.widen(inst[1]), inst[2], *inst[3:])
            p.values += 1
            return True
        if op == OP_COMPOSITE_INSERT:
            if not p.holds_narrow(inst[1]):
                return False
            obj = self.widened_operand(inst[3])
            self.emit(op, p.widen(inst[1]), inst[2], obj, *inst[4:])
            p.values += 1
            return True
        if op in RETYPED:
            if not p.holds_narrow(inst[1]) or p.is_narrow_scalar(inst[1]):
                return False
            self.emit(op, p.widen(inst[1]), *inst[2:])
            p.values += 1
            return True
        if op == OP_FUNCTION_CALL:
            return self.call(inst)
        if op == OP_RETURN_VALUE:
            ty = self.types_of.get(inst[1])
            if ty is None or not p.is_narrow_scalar(ty):
                return False
            self.emit(op, self.to_u32(inst[1], ty))
            p.values += 1
            return True
        return False

    def widened_operand(self, value: int) -> int:
        """An operand going into a widened composite, call or memory: a narrow scalar as a
        u32 (a module-scope constant as the 32-bit constant), anything else as it is."""
        if value in self.p.globals:
            return _retyped_constant_id(self.p, value)
        ty = self.types_of.get(value)
        if ty is not None and self.p.is_narrow_scalar(ty):
            return self.to_u32(value, ty)
        return value

    def access_chain(self, op: int, inst: tuple[int, ...]) -> bool:
        p = self.p
        base = inst[3]
        if base in self.packed:
            ptr = self.packed[base]
            address = ptr.address
            current = ptr.pointee
            for index in inst[4:]:
                d = p.defs[current]
                kind = opcode(d)
                if kind == OP_TYPE_STRUCT:
                    member = p.constants.get(index)
                    if member is None:
                        raise Unsupported("a struct member chosen at run time")
                    address = self.add(address, p.offset(current, member))
                    current = d[2 + member]
                elif kind in (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY):
                    address = self.add(address, self.index_times(index, p.stride(current)))
                    current = d[2]
                elif kind == OP_TYPE_VECTOR:
                    address = self.add(address, self.index_times(index, p.size(d[2])))
                    current = d[2]
                else:
                    raise Unsupported(f"an access chain through type {kind}")
            self.packed[inst[2]] = Packed(ptr.var, address, current)
            p.values += 1
            return True
        if not p.holds_narrow(inst[1]):
            return False
        self.emit(op, p.widen(inst[1]), *inst[2:])
        p.values += 1
        return True

    def load(self, inst: tuple[int, ...]) -> bool:
        p = self.p
        pointer = inst[3]
        if pointer in self.packed:
            ptr = self.packed[pointer]
            if p.is_narrow_scalar(inst[1]):
                wide = self.load_leaf(ptr, ptr.address, inst[1])
                self.from_u32(wide, inst[1], inst[2])
            elif opcode(p.defs[inst[1]]) in (OP_TYPE_INT, OP_TYPE_FLOAT):
                wide = self.load_leaf(ptr, ptr.address, inst[1])
                self.emit(OP_COPY_OBJECT, inst[1], inst[2], wide)
            else:
                built = self.load_composite(ptr, ptr.address, inst[1])
                self.emit(OP_COPY_OBJECT, p.widen(inst[1]), inst[2], built)
            p.values += 1
            return True
        if not p.holds_narrow(inst[1]):
            return False
        if p.is_narrow_scalar(inst[1]):
            wide = self.value(OP_LOAD, p.u32, pointer, *inst[4:])
            self.from_u32(wide, inst[1], inst[2])
        else:
            self.emit(OP_LOAD, p.widen(inst[1]), inst[2], *inst[3:])
        p.values += 1
        return True

    def load_composite(self, ptr: Packed, address: int | tuple[str, int], type_id: int) -> int:
        """A composite in packed memory, loaded as its widened value."""
        p = self.p
        d = p.defs[type_id]
        op = opcode(d)
        if op in (OP_TYPE_INT, OP_TYPE_FLOAT):
            return self.load_leaf(ptr, address, type_id)
        if op == OP_TYPE_STRUCT:
            parts = [
                self.load_composite(ptr, self.add(address, p.offset(type_id, m)), member)
                for m, member in enumerate(d[2:])
            ]
        elif op == OP_TYPE_ARRAY:
            stride = p.stride(type_id)
            parts = [
                self.load_composite(ptr, self.add(address, i * stride), d[2])
                for i in range(p.constants[d[3]])
            ]
        elif op == OP_TYPE_VECTOR:
            size = p.size(d[2])
            parts = [
                self.load_composite(ptr, self.add(address, i * size), d[2]) for i in range(d[3])
            ]
        else:
            raise Unsupported(f"a load of type {op} from a buffer of 8- or 16-bit integers")
        return self.value(OP_COMPOSITE_CONSTRUCT, p.widen(type_id), *parts)

    def store(self, inst: tuple[int, ...]) -> bool:
        p = self.p
        pointer, value = inst[1], inst[2]
        if pointer in self.packed:
            ptr = self.packed[pointer]
            ty = ptr.pointee
            if p.is_narrow_scalar(ty):
                self.store_leaf(ptr, ptr.address, ty, self.to_u32(value, ty))
            elif opcode(p.defs[ty]) in (OP_TYPE_INT, OP_TYPE_FLOAT):
                self.store_leaf(ptr, ptr.address, ty, value)
            else:
                widened = self.widened_operand(value)
                for path, at, leaf in p.leaves(ty):
                    part_type = p.u32 if p.is_narrow_scalar(leaf) else leaf
                    part = self.value(OP_COMPOSITE_EXTRACT, part_type, widened, *path)
                    self.store_leaf(ptr, self.add(ptr.address, at), leaf, part)
            p.values += 1
            return True
        kind = self.types_of.get(value)
        if kind is not None and p.is_narrow_scalar(kind):
            self.emit(OP_STORE, pointer, self.widened_operand(value), *inst[3:])
            p.values += 1
            return True
        return False

    def array_length(self, inst: tuple[int, ...]) -> bool:
        """The element count of a packed runtime array. The host binds whole 4-byte words, so
        a buffer of 1001 `u8` is 1004 bytes long on the device: where the params block holds
        the count the host passed (rgpu's launch ABI: `len_i`, buffer i's element count, at
        byte 4 + 4i), that is the answer, as on the cpu and CUDA backends; otherwise the
        words counted in elements of the old stride."""
        p = self.p
        pointer = inst[3]
        if pointer not in self.packed:
            return False
        ptr = self.packed[pointer]
        passed = self.passed_length(ptr.var)
        if passed is not None:
            self.emit(OP_COPY_OBJECT, inst[1], inst[2], passed)
            p.values += 1
            return True
        block = p.defs[ptr.pointee]
        array = block[2 + inst[4]]
        stride = p.stride(array)
        words = self.value(OP_ARRAY_LENGTH, p.u32, ptr.var, 0)
        if stride == 4:
            self.emit(OP_COPY_OBJECT, inst[1], inst[2], words)
        elif 4 % stride == 0:
            self.emit(OP_I_MUL, inst[1], inst[2], words, p.const(4 // stride))
        else:
            bytes_ = self.value(OP_I_MUL, p.u32, words, p.const(4))
            self.emit(OP_U_DIV, inst[1], inst[2], bytes_, p.const(stride))
        p.values += 1
        return True

    def passed_length(self, var: int) -> int | None:
        """`len_i` of the params block for the buffer bound at binding i, loaded (a u32), or
        None when the block has no 32-bit integer at byte 4 + 4i."""
        p = self.p
        pc, binding = p.push_constants.get(self.function), p.bindings.get(var)
        if pc is None or binding is None:
            return None
        at = 4 + 4 * binding
        block = self.packed[pc].pointee if pc in self.packed else p.defs[_var_type(p, pc)][3]
        try:
            leaf = next((path, t) for path, o, t in p.leaves(block) if o == at)
        except (Unsupported, StopIteration):
            return None
        path, kind = leaf
        if p.width(kind) != 32:
            return None
        if pc in self.packed:
            return self.load_leaf(self.packed[pc], at, p.u32)
        pointer = p.type_of(OP_TYPE_POINTER, SC_PUSH_CONSTANT, kind)
        element = self.value(OP_ACCESS_CHAIN, pointer, pc, *(p.const(i) for i in path))
        value = self.value(OP_LOAD, kind, element)
        return value if kind == p.u32 else self.value(OP_BITCAST, p.u32, value)

    def call(self, inst: tuple[int, ...]) -> bool:
        p = self.p
        args = list(inst[4:])
        if any(a in self.packed for a in args):
            raise Unsupported("a pointer into a buffer of 8- or 16-bit integers passed to a call")
        touched = p.holds_narrow(inst[1]) or any(
            self.types_of.get(a) is not None and p.holds_narrow(self.types_of[a]) for a in args
        )
        if not touched:
            return False
        new_args = [self.widened_operand(a) for a in args]
        if p.is_narrow_scalar(inst[1]):
            wide = self.value(OP_FUNCTION_CALL, p.u32, inst[3], *new_args)
            self.from_u32(wide, inst[1], inst[2])
        else:
            self.emit(OP_FUNCTION_CALL, p.widen(inst[1]), inst[2], inst[3], *new_args)
        p.values += 1
        return True


def _var_type(p: _Pass, var: int) -> int:
    for inst in p.insts:
        if opcode(inst) == OP_VARIABLE and len(inst) > 2 and inst[2] == var:
            return inst[1]
    raise KeyError(var)


def _functions(
    p: _Pass,
    insts: list[tuple[int, ...]],
    packed_vars: dict[int, int],
    packed_class: dict[int, int],
    word_pointer: dict[int, int],
) -> list[Inst]:
    out: list[Inst] = []
    body: list[tuple[int, ...]] = []
    for inst in insts:
        body.append(inst)
        if opcode(inst) == OP_FUNCTION_END:
            out += _Function(p, packed_vars, packed_class, word_pointer).run(body)
            body = []
    return out


def _drop_unused(out: list[Inst], p: _Pass) -> list[Inst]:
    """Without the module's old narrow-holding types (structs, arrays, pointers, function
    types) that nothing uses any more, and their names and decorations. Uses are counted
    conservatively (spirv.pointer_values.used_words; a type's own id is no use of it)."""
    removable = {t for t in p.defs if p.holds_narrow(t) and not p.is_narrow_scalar(t)}
    removable -= set(p.widened.values())
    gone: set[int] = set()
    while True:
        uses: Counter[int] = Counter()
        for inst in out:
            if opcode(inst) in TYPE_OPS:
                if len(inst) > 1 and inst[1] not in gone:
                    uses.update(inst[2:])
            else:
                uses.update(used_words(tuple(inst)))
        now = {t for t in removable - gone if uses[t] == 0}
        if not now:
            break
        gone |= now
    return [
        inst
        for inst in out
        if not (opcode(inst) in TYPE_OPS and len(inst) > 1 and inst[1] in gone)
        and not (opcode(inst) in ANNOTATIONS and len(inst) > 1 and inst[1] in gone)
    ]
