"""SPIR-V's binary form, word by word: a module's words, its instructions, their opcodes and
literal strings, and a module made again from its header and instructions (the SPIR-V
specification, section 2.3 "Physical Layout of a SPIR-V Module and Instruction"). The passes
in rgpu.spirv read and write modules through these, except contraction.py, which walks the
words by offset to insert its decorations in place."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

from rgpu.spirv.opcodes import (
    OP_DECORATE,
    OP_DECORATE_ID,
    OP_DECORATE_STRING,
    OP_MEMBER_DECORATE,
    OP_MEMBER_DECORATE_STRING,
    OP_MEMBER_NAME,
    OP_NAME,
)

HEADER_WORDS = 5
# Debug and annotation instructions: word 1 names what they describe, not a use of it.
ANNOTATIONS = frozenset(
    {
        OP_NAME,
        OP_MEMBER_NAME,
        OP_DECORATE,
        OP_MEMBER_DECORATE,
        OP_DECORATE_ID,
        OP_DECORATE_STRING,
        OP_MEMBER_DECORATE_STRING,
    }
)


def module_words(data: bytes) -> tuple[int, ...]:
    """A SPIR-V module's 32-bit words (little-endian); ValueError if it is no whole module."""
    if len(data) < HEADER_WORDS * 4 or len(data) % 4:
        raise ValueError("not a whole SPIR-V module")
    return struct.unpack(f"<{len(data) // 4}I", data)


def module_bytes(header: Sequence[int], bound: int, insts: Iterable[Sequence[int]]) -> bytes:
    """A module from the header words of another, a new id bound and its instructions."""
    words = [*header[:HEADER_WORDS]]
    words[3] = bound
    words += [w for inst in insts for w in inst]
    return struct.pack(f"<{len(words)}I", *words)


def literal_string(inst: Sequence[int], at: int) -> str:
    """The nul-terminated UTF-8 literal string starting at word `at` of `inst`."""
    raw = struct.pack(f"<{len(inst) - at}I", *inst[at:])
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def instructions(words: tuple[int, ...]) -> list[tuple[int, ...]]:
    out = []
    at = HEADER_WORDS
    while at < len(words):
        count = words[at] >> 16
        if count == 0 or at + count > len(words):
            raise ValueError(f"truncated SPIR-V instruction at word {at}")
        out.append(words[at : at + count])
        at += count
    return out


def opcode(inst: Sequence[int]) -> int:
    return inst[0] & 0xFFFF
