"""rgpu.spirv.narrow_ints on small modules written in SPIR-V assembly here
(spirv-as), each checked by spirv-val after the pass, and run before and after it by a small
evaluator of the instructions these modules use (SPIR-V's semantics for N-bit integers,
written here independently of the pass) over many operand values: what the modules store
must be the same. tests/integration/test_portability.py runs the pass on rust-gpu's real
output on lavapipe (wgpu and ash) against the cpu backend."""

from __future__ import annotations

import itertools
import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from rgpu.spirv.narrow_ints import promote_narrow_ints

TARGET_ENV = "vulkan1.2"

pytestmark = pytest.mark.skipif(
    shutil.which("spirv-as") is None or shutil.which("spirv-val") is None,
    reason="SPIRV-Tools (spirv-as, spirv-val) is not installed: scripts/setup-test-env.sh",
)

# A compute shader reading u32 inputs from buffer 0 and writing u32 results to buffer 1.
MODULE = """
OpCapability Shader
{caps}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %in %out
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %arr ArrayStride 4
OpDecorate %blk Block
OpMemberDecorate %blk 0 Offset 0
OpDecorate %in DescriptorSet 0
OpDecorate %in Binding 0
OpDecorate %out DescriptorSet 0
OpDecorate %out Binding 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%float = OpTypeFloat 32
%arr = OpTypeRuntimeArray %uint
%blk = OpTypeStruct %arr
%pblk = OpTypePointer StorageBuffer %blk
%pu = OpTypePointer StorageBuffer %uint
%in = OpVariable %pblk StorageBuffer
%out = OpVariable %pblk StorageBuffer
{types}
%c0 = OpConstant %uint 0
%c1 = OpConstant %uint 1
%c2 = OpConstant %uint 2
%c3 = OpConstant %uint 3
{consts}
{functions}
%main = OpFunction %void None %fn
%entry = OpLabel
%pa = OpAccessChain %pu %in %c0 %c0
%a32 = OpLoad %uint %pa
%pb = OpAccessChain %pu %in %c0 %c1
%b32 = OpLoad %uint %pb
%ps = OpAccessChain %pu %in %c0 %c2
%s32 = OpLoad %uint %ps
{body}
OpReturn
OpFunctionEnd
"""


def assemble(text: str, tmp_path: Path) -> bytes:
    source = tmp_path / "m.spvasm"
    source.write_text(text)
    binary = tmp_path / "m.spv"
    result = subprocess.run(
        ["spirv-as", "--target-env", TARGET_ENV, str(source), "-o", str(binary)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return binary.read_bytes()


def disassemble_named(data: bytes) -> str:
    return subprocess.run(
        ["spirv-dis", "-"], input=data, capture_output=True, check=True
    ).stdout.decode()


def disassemble(data: bytes) -> str:
    return subprocess.run(
        ["spirv-dis", "--raw-id", "-"], input=data, capture_output=True, check=True
    ).stdout.decode()


def validate(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "checked.spv"
    path.write_bytes(data)
    result = subprocess.run(
        ["spirv-val", "--target-env", TARGET_ENV, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr + disassemble(data)


COMPARE: dict[str, Callable[[int, int], bool]] = {
    "IEqual": lambda p, q: p == q,
    "INotEqual": lambda p, q: p != q,
    "GreaterThan": lambda p, q: p > q,
    "GreaterThanEqual": lambda p, q: p >= q,
    "LessThan": lambda p, q: p < q,
    "LessThanEqual": lambda p, q: p <= q,
}
BINARY: dict[str, Callable[[int, int], int]] = {
    "IAdd": lambda p, q: p + q,
    "ISub": lambda p, q: p - q,
    "IMul": lambda p, q: p * q,
    "BitwiseAnd": lambda p, q: p & q,
    "BitwiseOr": lambda p, q: p | q,
    "BitwiseXor": lambda p, q: p ^ q,
    "UDiv": lambda p, q: p // q,
    "UMod": lambda p, q: p % q,
    "ShiftLeftLogical": lambda p, q: p << q,
    "ShiftRightLogical": lambda p, q: p >> q,
}


class Interpreter:
    """One invocation of a module's entry point: SPIR-V's integer semantics at each type's
    width (two's complement for the signed operations), phis, branches, calls, and the two
    buffers. Values are bit patterns (ints below 2^width), floats, or bools."""

    def __init__(self, data: bytes) -> None:
        self.insts: list[tuple[str, list[str]]] = []
        for line in disassemble(data).splitlines():
            parts = line.split(";")[0].split()
            if not parts:
                continue
            if parts[1:2] == ["="]:  # [result type or "", result, operands...]
                kind = parts[3] if len(parts) > 3 else ""
                self.insts.append((parts[2], [kind, parts[0], *parts[4:]]))
            else:
                self.insts.append((parts[0], parts[1:]))
        self.widths: dict[str, int] = {}
        self.value_type: dict[str, str] = {}
        self.constants: dict[str, object] = {}
        self.labels: dict[str, int] = {}
        self.functions: dict[str, int] = {}
        self.bindings: dict[str, int] = {}
        for at, (op, a) in enumerate(self.insts):
            if op == "OpEntryPoint":
                self.main = a[1]
            elif op == "OpDecorate" and a[1] == "Binding":
                self.bindings[a[0]] = int(a[2])
            if op == "OpTypeInt":
                # "%id = OpTypeInt W S" parses as [W, %id, S]
                self.widths[a[1]] = int(a[0])
            elif op == "OpLabel":
                self.labels[a[1]] = at
            elif op == "OpFunction":
                self.functions[a[1]] = at
            elif len(a) > 1 and a[0] in self.widths:
                self.value_type[a[1]] = a[0]
            if op == "OpConstant":
                self.constants[a[1]] = int(a[2]) & ((1 << self.widths[a[0]]) - 1)
            elif op in ("OpConstantNull", "OpUndef"):
                self.constants[a[1]] = 0
            elif op == "OpConstantTrue":
                self.constants[a[1]] = True
            elif op == "OpConstantFalse":
                self.constants[a[1]] = False

    def run(self, inputs: list[int]) -> dict[int, object]:
        self.inputs = inputs
        self.out: dict[int, object] = {}
        self.call(self.main, [])
        return self.out

    def width(self, value: str) -> int:
        return self.widths[self.value_type[value]]

    @staticmethod
    def element(pointer: object) -> tuple[str, int]:
        """(buffer variable, index) of an OpAccessChain's result."""
        assert isinstance(pointer, tuple)
        buffer, index = pointer
        assert isinstance(buffer, str) and isinstance(index, int)
        return buffer, index

    def call(self, function: str, args: list[object]) -> object:
        env: dict[str, object] = dict(self.constants)
        at = self.functions[function] + 1
        while self.insts[at][0] == "OpFunctionParameter":
            env[self.insts[at][1][1]] = args.pop(0)
            at += 1
        block, previous = self.insts[at][1][1], ""
        at += 1
        while True:
            op, a = self.insts[at]
            at += 1
            if op == "OpPhi":
                incoming = dict(zip(a[3::2], a[2::2], strict=True))
                env[a[1]] = env[incoming[previous]]
            elif op in ("OpBranch", "OpBranchConditional", "OpSwitch"):
                if op == "OpSwitch":  # selector, default, then literal/label pairs
                    mask = (1 << self.width(a[0])) - 1
                    cases = {
                        int(lit) & mask: label for lit, label in zip(a[2::2], a[3::2], strict=True)
                    }
                    selector = env[a[0]]
                    assert isinstance(selector, int)
                    target = cases.get(selector, a[1])
                elif op == "OpBranch":
                    target = a[0]
                else:
                    target = a[1] if env[a[0]] else a[2]
                previous, block = block, target
                at = self.labels[target] + 1
            elif op == "OpReturn":
                return None
            elif op == "OpReturnValue":
                return env[a[0]]
            elif op in ("OpLoopMerge", "OpSelectionMerge"):
                continue
            elif op == "OpStore":
                buffer, index = self.element(env[a[0]])
                assert self.bindings[buffer] == 1
                self.out[index] = env[a[1]]
            elif op == "OpAccessChain":
                env[a[1]] = (a[2], env[a[4]])
            elif op == "OpLoad":
                buffer, index = self.element(env[a[2]])
                assert self.bindings[buffer] == 0
                env[a[1]] = self.inputs[index]
            elif op == "OpFunctionCall":
                env[a[1]] = self.call(a[2], [env[x] for x in a[3:]])
            else:
                env[a[1]] = self.compute(op, a[0], a[2:], env)

    def compute(
        self, op: str, result_type: str, operands: list[str], env: dict[str, object]
    ) -> object:
        xs: list[object] = [env[x] for x in operands]
        ints = [x for x in xs if isinstance(x, int) and not isinstance(x, bool)]
        width = self.widths.get(result_type, 0)

        def wrap(value: int) -> int:
            return value & ((1 << width) - 1)

        def signed(value: object, w: int) -> int:
            assert isinstance(value, int)
            return value - (1 << w) if value >> (w - 1) else value

        name = op[2:]
        if name in COMPARE:
            return COMPARE[name](ints[0], ints[1])
        if name[0] == "U" and name[1:] in COMPARE:
            return COMPARE[name[1:]](ints[0], ints[1])
        if name[0] == "S" and name[1:] in COMPARE:
            w = self.width(operands[0])
            return COMPARE[name[1:]](signed(ints[0], w), signed(ints[1], w))
        if name in BINARY:
            return wrap(BINARY[name](ints[0], ints[1]))
        if name in ("SDiv", "SRem", "SMod"):
            p, q = signed(ints[0], width), signed(ints[1], width)
            quotient = abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1)
            return wrap({"SDiv": quotient, "SRem": p - q * quotient, "SMod": p % q}[name])
        if name == "ShiftRightArithmetic":
            return wrap(signed(ints[0], width) >> ints[1])
        if name == "Not":
            return wrap(~ints[0])
        if name == "SNegate":
            return wrap(-ints[0])
        if name in ("CopyObject", "Bitcast", "UConvert"):
            return wrap(ints[0])
        if name == "SConvert":
            return wrap(signed(ints[0], self.width(operands[0])))
        if name == "ConvertUToF":
            return float(ints[0])
        if name == "ConvertSToF":
            return float(signed(ints[0], self.width(operands[0])))
        if name in ("ConvertFToU", "ConvertFToS"):
            assert isinstance(xs[0], float)
            return wrap(int(xs[0]))
        if name == "Select":
            return xs[1] if xs[0] else xs[2]
        raise NotImplementedError(op)


def check_same(original: bytes, inputs: list[list[int]], tmp_path: Path) -> tuple[bytes, int]:
    """The promoted module (spirv-val accepts it) stores what the original stores for every
    input; returns it and its count of promoted values."""
    validate(original, tmp_path)
    promoted = promote_narrow_ints(original)
    validate(promoted.data, tmp_path)
    before, after = Interpreter(original), Interpreter(promoted.data)
    for values in inputs:
        assert after.run(values) == before.run(values), values
    assert_signed_operands(after)
    return promoted.data, promoted.values


# Operations whose signedness naga takes from the operands' type, not from the opcode (its
# SPIR-V reader turns an OpSDiv of two u32 into an unsigned division).
SIGNED_OPERATIONS = {
    "OpSDiv", "OpSRem", "OpSMod", "OpShiftRightArithmetic", "OpSNegate", "OpConvertSToF",
    "OpSGreaterThan", "OpSGreaterThanEqual", "OpSLessThan", "OpSLessThanEqual",
}  # fmt: skip


def assert_signed_operands(module: Interpreter) -> None:
    """Every signed operation of a promoted module reads signed-typed integers (as naga does);
    a shift's amount and a conversion back to a narrow type are not its signed operands."""
    signed_types = {a[1] for op, a in module.insts if op == "OpTypeInt" and a[2] == "1"}
    for op, a in module.insts:
        if op not in SIGNED_OPERATIONS and op != "OpSConvert":
            continue
        if op == "OpSConvert" and module.widths.get(a[0], 32) < 32:
            continue  # a narrow value made again at a boundary (not a computation)
        operands = a[2:3] if op in ("OpShiftRightArithmetic", "OpSConvert") else a[2:]
        for operand in operands:
            kind = module.value_type.get(operand)
            assert kind is None or kind in signed_types, f"{op} {a}: {operand} is {kind}"


def with_stores(body: str, results: list[str], width_type: str = "%uchar") -> str:
    """`body`, then each result (of `width_type`) zero-extended and stored at out[i]."""
    lines = [body]
    for i, name in enumerate(results):
        lines += [
            f"%w{i} = OpUConvert %uint {name}",
            f"%o{i} = OpAccessChain %pu %out %c0 %n{i}",
            f"OpStore %o{i} %w{i}",
        ]
    return "\n".join(lines)


def result_consts(count: int) -> str:
    return "\n".join(f"%n{i} = OpConstant %uint {i}" for i in range(count))


BYTES = [0, 1, 2, 3, 5, 7, 8, 15, 16, 100, 126, 127, 128, 129, 200, 254, 255]
SHORTS = [0, 1, 2, 255, 256, 1000, 32767, 32768, 32769, 40000, 65534, 65535]
OPERATIONS = [
    "OpIAdd",
    "OpISub",
    "OpIMul",
    "OpBitwiseAnd",
    "OpBitwiseOr",
    "OpBitwiseXor",
    "OpUDiv",
    "OpUMod",
    "OpSDiv",
    "OpSRem",
    "OpSMod",
]
SHIFTS = ["OpShiftLeftLogical", "OpShiftRightLogical", "OpShiftRightArithmetic"]
COMPARISONS = [
    "OpIEqual",
    "OpINotEqual",
    "OpUGreaterThan",
    "OpUGreaterThanEqual",
    "OpULessThan",
    "OpULessThanEqual",
    "OpSGreaterThan",
    "OpSGreaterThanEqual",
    "OpSLessThan",
    "OpSLessThanEqual",
]


def narrow_module(width: int, signedness: int, body: str, count: int, extra_caps: str = "") -> str:
    cap = "OpCapability Int8" if width == 8 else "OpCapability Int16"
    return MODULE.format(
        caps=cap + extra_caps,
        types=f"%n_t = OpTypeInt {width} {signedness}\n%ulong = OpTypeInt 64 0",
        consts=result_consts(count) + "\n%k3 = OpConstant %n_t 3\n%kz = OpConstantNull %n_t",
        functions="",
        body=body,
    ).replace("OpCapability Shader", "OpCapability Shader\nOpCapability Int64")


@pytest.mark.parametrize(("width", "values"), [(8, BYTES), (16, SHORTS)])
@pytest.mark.parametrize("signedness", [0, 1])
def test_every_promoted_operation_computes_what_the_narrow_one_does(
    width: int, signedness: int, values: list[int], tmp_path: Path
) -> None:
    # Inputs a, b (nonzero for the divisions; not MIN / -1, undefined in SPIR-V) and a shift
    # amount below the width, each truncated from u32 to the narrow type.
    narrowing = "OpSConvert" if signedness else "OpUConvert"  # (to a signed type: SConvert)
    body = [
        f"%a = {narrowing} %n_t %a32",
        f"%b = {narrowing} %n_t %b32",
        f"%s = {narrowing} %n_t %s32",
        "%sl = OpUConvert %ulong %s32",
    ]
    results = []
    # (OpUDiv and OpUMod take unsigned result types only.)
    operations = [op for op in OPERATIONS if not (signedness and op in ("OpUDiv", "OpUMod"))]
    for i, op in enumerate(operations):
        body.append(f"%r{i} = {op} %n_t %a %b")
        results.append(f"%r{i}")
    for i, op in enumerate(SHIFTS):
        body += [f"%h{i} = {op} %n_t %a %s", f"%hl{i} = {op} %n_t %b %sl"]
        results += [f"%h{i}", f"%hl{i}"]
    body += [
        "%not = OpNot %n_t %a",
        "%neg = OpSNegate %n_t %b",
        "%add3 = OpIAdd %n_t %a %k3",
        "%sum = OpIAdd %n_t %add3 %kz",
        "%cmpa = OpULessThan %bool %a %b",
        "%sel = OpSelect %n_t %cmpa %a %b",
        "%copy = OpCopyObject %n_t %sel",
    ]
    results += ["%not", "%neg", "%sum", "%copy"]
    stored = with_stores("\n".join(body), results)
    # Readers: comparisons (stored as 0/1), widening conversions, conversions to float.
    extra = []
    base = len(results)
    for i, op in enumerate(COMPARISONS):
        extra += [
            f"%q{i} = {op} %bool %a %b",
            f"%qv{i} = OpSelect %uint %q{i} %c1 %c0",
            f"%qo{i} = OpAccessChain %pu %out %c0 %n{base + i}",
            f"OpStore %qo{i} %qv{i}",
        ]
    base += len(COMPARISONS)
    readers = [
        "%x0 = OpSConvert %uint %a",
        "%x1l = OpSConvert %ulong %b",
        "%x1 = OpUConvert %uint %x1l",
        "%x2l = OpUConvert %ulong %a",
        "%x2 = OpUConvert %uint %x2l",
        "%f3 = OpConvertSToF %float %a",
        "%x3 = OpConvertFToS %uint %f3",
        "%f4 = OpConvertUToF %float %b",
        "%x4 = OpConvertFToU %uint %f4",
        "%x5 = OpShiftLeftLogical %uint %a32 %s",
    ]
    # Float to narrow (promoted): in range, as SPIR-V requires (FToU to unsigned types only).
    readers += ["%fs = OpConvertFToS %n_t %f3", "%x6 = OpUConvert %uint %fs"]
    if not signedness:
        readers += ["%fu = OpConvertFToU %n_t %f4", "%x7 = OpUConvert %uint %fu"]
    converted = 8 if not signedness else 7
    extra += readers
    for i in range(converted):
        extra += [f"%xo{i} = OpAccessChain %pu %out %c0 %n{base + i}", f"OpStore %xo{i} %x{i}"]
    count = base + converted
    text = narrow_module(width, signedness, stored + "\n" + "\n".join(extra), count)
    original = assemble(text, tmp_path)
    mask = (1 << width) - 1
    low = 1 << (width - 1)
    inputs = [
        [a, b, s]
        for a, b in itertools.product(values, values)
        for s in (0, 3, width - 1)
        if b != 0 and not (a == low and b == mask)
    ]
    promoted, count_promoted = check_same(original, inputs, tmp_path)
    assert count_promoted == 3 + len(operations) + 2 * len(SHIFTS) + 6 + converted - 6
    text_after = disassemble(promoted)
    # Nothing narrow is computed any more, so the narrow type and its capability are gone.
    assert f"OpTypeInt {width}" not in text_after
    assert f"OpCapability Int{width}" not in text_after


def test_narrowing_conversions_and_sign_extension_between_narrow_widths(tmp_path: Path) -> None:
    body = [
        "%a = OpUConvert %ushort %a32",  # 32 -> 16: truncation
        "%b = OpUConvert %uchar %a",  # 16 -> 8
        "%c = OpSConvert %ushort %b",  # 8 -> 16, sign-extended
        "%d = OpUConvert %ushort %b",  # 8 -> 16, zero-extended
        "%e = OpSConvert %uchar %c",  # 16 -> 8
        "%al = OpUConvert %ulong %a32",
        "%f = OpUConvert %uchar %al",  # 64 -> 8
        "%g = OpBitcast %schar %b",
        "%h = OpSConvert %uint %g",
    ]
    results = ["%c", "%d", "%e", "%f"]
    lines = with_stores("\n".join(body), results)
    lines += "\n%hw = OpAccessChain %pu %out %c0 %n4\nOpStore %hw %h"
    text = MODULE.format(
        caps="OpCapability Int8\nOpCapability Int16\nOpCapability Int64",
        types="%uchar = OpTypeInt 8 0\n%schar = OpTypeInt 8 1\n%ushort = OpTypeInt 16 0\n"
        "%ulong = OpTypeInt 64 0",
        consts=result_consts(5),
        functions="",
        body=lines,
    )
    inputs = [[v, 0, 0] for v in (0, 1, 127, 128, 255, 256, 0x7F80, 0x8000, 0xFFFF, 0x12345678)]
    promoted, count = check_same(assemble(text, tmp_path), inputs, tmp_path)
    assert count == 7
    assert "OpTypeInt 8" not in disassemble(promoted)


# A u8 counter carried around a loop, incremented until it reaches a limit or wraps: the
# shape of the `escape` kernel (tests/integration/test_portability.py) that lavapipe
# miscomputes, with an OpUndef on the path that leaves the loop, as rust-gpu writes it.
LOOP = """
%limit = OpUConvert %uchar %a32
OpBranch %header
%header = OpLabel
%count = OpPhi %uchar %k0 %entry %next %latch
OpLoopMerge %exit %latch None
OpBranch %body
%body = OpLabel
%wide = OpUConvert %uint %count
%go = OpULessThan %bool %wide %b32
OpSelectionMerge %join None
OpBranchConditional %go %step %join
%step = OpLabel
%inc = OpIAdd %uchar %count %k1
OpBranch %join
%join = OpLabel
%next = OpPhi %uchar %inc %step %undef %body
%more = OpPhi %bool %true %step %false %body
OpBranch %latch
%latch = OpLabel
OpBranchConditional %more %header %exit
%exit = OpLabel
%o = OpAccessChain %pu %out %c0 %c0
OpStore %o %wide
%o1 = OpAccessChain %pu %out %c0 %c1
%lw = OpUConvert %uint %limit
OpStore %o1 %lw
"""
LOOP_CONSTS = """%k0 = OpConstant %uchar 0
%k1 = OpConstant %uchar 1
%undef = OpUndef %uchar
%true = OpConstantTrue %bool
%false = OpConstantFalse %bool"""


def test_a_loop_carried_u8_counter_is_carried_and_counted_in_32_bits(tmp_path: Path) -> None:
    text = MODULE.format(
        caps="OpCapability Int8",
        types="%uchar = OpTypeInt 8 0",
        consts=LOOP_CONSTS,
        functions="",
        body=LOOP,
    ).replace("OpDecorate %arr", 'OpName %count "count"\nOpDecorate %arr', 1)
    # (A limit above 255 would loop for ever: the u8 counter wraps before reaching it.)
    inputs = [[0, limit, 0] for limit in (0, 1, 5, 200, 255)]
    promoted, count = check_same(assemble(text, tmp_path), inputs, tmp_path)
    assert count == 4  # limit, count, inc, next
    text_after = disassemble(promoted)
    assert "OpTypeInt 8" not in text_after and "Int8" not in text_after
    # The counter's phis carry u32s (the OpUndef became the u32 0); its increment wraps
    # with `& 255`.
    named = disassemble_named(promoted)
    assert "OpPhi %uint %uint_0 " in named and "OpUndef" not in named
    assert "OpBitwiseAnd %uint " in named and "%uint_255 = OpConstant %uint 255" in named
    assert "%count = OpPhi %uint " in named  # its name went with it


SWITCH = """
%a = OpUConvert %uchar %a32
%x = OpIAdd %uchar %a %k1
OpSelectionMerge %merge None
OpSwitch %x %other 0 %zero 255 %top 7 %seven
%zero = OpLabel
OpBranch %merge
%top = OpLabel
OpBranch %merge
%seven = OpLabel
OpBranch %merge
%other = OpLabel
OpBranch %merge
%merge = OpLabel
%r = OpPhi %uchar %k10 %zero %k20 %top %k30 %seven %x %other
"""


def test_a_switch_on_a_promoted_u8_takes_the_same_case(tmp_path: Path) -> None:
    text = MODULE.format(
        caps="OpCapability Int8",
        types="%uchar = OpTypeInt 8 0",
        consts=result_consts(1)
        + "".join(f"\n%k{v} = OpConstant %uchar {v}" for v in (1, 10, 20, 30)),
        functions="",
        body=with_stores(SWITCH, ["%r"]),
    )
    inputs = [[v, 0, 0] for v in (0, 1, 6, 7, 8, 254, 255, 256, 511)]
    promoted, count = check_same(assemble(text, tmp_path), inputs, tmp_path)
    assert count == 3  # a, x, r
    assert "OpTypeInt 8" not in disassemble(promoted)


def test_narrow_values_at_a_boundary_stay_narrow_there(tmp_path: Path) -> None:
    """A call with a u8 parameter and result: the parameter is widened at the callee's entry,
    the promoted result is made narrow again for OpReturnValue and for the call's argument."""
    functions = """%twice = OpFunction %uchar None %fn_u8
%p = OpFunctionParameter %uchar
%tl = OpLabel
%t = OpIAdd %uchar %p %p
OpReturnValue %t
OpFunctionEnd"""
    body = [
        "%a = OpUConvert %uchar %a32",
        "%x = OpIMul %uchar %a %a",
        "%y = OpFunctionCall %uchar %twice %x",
        "%z = OpISub %uchar %y %a",
    ]
    text = MODULE.format(
        caps="OpCapability Int8",
        types="%uchar = OpTypeInt 8 0\n%fn_u8 = OpTypeFunction %uchar %uchar",
        consts=result_consts(3),
        functions=functions,
        body=with_stores("\n".join(body), ["%x", "%y", "%z"]),
    ).replace("OpDecorate %arr", "OpDecorate %x NoUnsignedWrap\nOpDecorate %arr", 1)
    inputs = [[v, 0, 0] for v in BYTES]
    promoted, count = check_same(assemble(text, tmp_path), inputs, tmp_path)
    assert count == 4  # t, a, x, z
    text_after = disassemble(promoted)
    assert "OpTypeInt 8 0" in text_after and "OpCapability Int8" in text_after
    # The wrap flag went with the narrow multiply (x is now a conversion of the 32-bit one).
    assert "NoUnsignedWrap" not in text_after


def test_narrow_memory_alone_is_left_as_it_is(tmp_path: Path) -> None:
    """A u8 loaded from memory and only widened: nothing to compute in 32 bits."""
    text = MODULE.format(
        caps="OpCapability Int8",
        types="%uchar = OpTypeInt 8 0\n%ppu = OpTypePointer Private %uchar\n"
        "%pv = OpVariable %ppu Private",
        consts=result_consts(1),
        functions="",
        body=with_stores("%l = OpLoad %uchar %pv", ["%l"]),
    ).replace('"main" %in %out', '"main" %in %out %pv')
    data = assemble(text, tmp_path)
    validate(data, tmp_path)
    promoted = promote_narrow_ints(data)
    assert promoted.data is data and promoted.values == 0


def test_a_module_without_narrow_integers_is_returned_as_it_is(tmp_path: Path) -> None:
    text = MODULE.format(
        caps="",
        types="",
        consts=result_consts(1),
        functions="",
        body=with_stores("%r = OpIAdd %uint %a32 %b32", ["%r"]).replace(
            "%w0 = OpUConvert %uint %r", "%w0 = OpCopyObject %uint %r"
        ),
    )
    data = assemble(text, tmp_path)
    promoted = promote_narrow_ints(data)
    assert promoted.data is data and promoted.values == 0
    assert promoted.capabilities_removed == ()


@pytest.mark.parametrize(
    "data", [b"\x03\x02\x23\x07", struct.pack("<7I", 0x07230203, 0x10500, 0, 9, 0, 5 << 16 | 21, 1)]
)
def test_a_broken_module_is_a_value_error(data: bytes) -> None:
    with pytest.raises(ValueError):
        promote_narrow_ints(data)


# rust-gpu's switch on an enum's discriminant (an atomic's `Ordering`, a constant where MIR
# inlining would have folded it): a narrow constant converted to 32 bits, nothing computed
# in 8 bits.
CONSTANT_SELECTOR = """
%sel = OpSConvert %int %k2
OpSelectionMerge %merge None
OpSwitch %sel %other 0 %zero 2 %two
%zero = OpLabel
OpBranch %merge
%two = OpLabel
OpBranch %merge
%other = OpLabel
OpBranch %merge
%merge = OpLabel
%r = OpPhi %uint %c1 %zero %c2 %two %c3 %other
%neg = OpSConvert %int %k200
%negu = OpBitcast %uint %neg
%wide = OpUConvert %uint %k200
%s0 = OpIAdd %uint %r %a32
%o0 = OpAccessChain %pu %out %c0 %n0
OpStore %o0 %s0
%o1 = OpAccessChain %pu %out %c0 %n1
OpStore %o1 %negu
%o2 = OpAccessChain %pu %out %c0 %n2
OpStore %o2 %wide
"""


def test_narrow_constants_read_only_by_conversions_go_with_their_type(tmp_path: Path) -> None:
    text = MODULE.format(
        caps="OpCapability Int8",
        types="%uchar = OpTypeInt 8 0\n%int = OpTypeInt 32 1",
        consts=result_consts(3) + "\n%k2 = OpConstant %uchar 2\n%k200 = OpConstant %uchar 200",
        functions="",
        body=CONSTANT_SELECTOR,
    )
    promoted, count = check_same(assemble(text, tmp_path), [[5, 0, 0], [7, 0, 0]], tmp_path)
    assert count == 0  # nothing computed in 8 bits; the constants' readers were rewritten
    after = disassemble(promoted)
    assert "OpTypeInt 8" not in after and "Int8" not in after, after
