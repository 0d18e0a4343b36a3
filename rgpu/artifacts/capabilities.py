"""The SPIR-V capabilities a workspace's kernels need, and rust-gpu's word when one is missing.

rust-gpu declares a capability only when it is told to (`cargo gpu build --capabilities C`)
and stops with ``error: `f64` type used without `OpCapability Float64` `` otherwise. rgpu
tells it three things, in this order, each name once:

1. the device API's own (toolchains/spirv.toml `[build] capabilities`: the subgroup
   operations `crates/rgpu/src/device/spirv.rs` calls);
2. the scalar types the sources of the crates holding kernels name (the kernel crate and
   the libraries of kernels it depends on, artifacts/kernels.py; src/**/*.rs, comments and
   string literals left out): `f64` -> Float64, `u8`/`i8` -> Int8, `u16`/`i16` -> Int16,
   `u64`/`i64` -> Int64, and `Ordering` (core's atomic ordering, a `u8` enum) -> Int8.
   Reading the source over-approximates (a type used only in host-side code still counts),
   which costs nothing on Vulkan devices that have the feature;
3. `spirv-capabilities = [...]` in `[workspace.metadata.rgpu]`, for what source reading
   cannot see (a dependency's `u64` atomics: Int64Atomics).

This is what rust-gpu needs to compile the source. The module rgpu embeds can declare less:
spirv/narrow_ints.py computes 8- and 16-bit values in 32 bits and drops Int8/Int16
with the last such type (spirv-val checks the result).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Rust scalar type -> the SPIR-V capability rust-gpu needs for it.
TYPE_CAPABILITIES: dict[str, str] = {
    "f64": "Float64",
    "u8": "Int8",
    "i8": "Int8",
    "u16": "Int16",
    "i16": "Int16",
    "u64": "Int64",
    "i64": "Int64",
}
# Words that name no scalar type but bring one into the SPIR-V: core's atomic `Ordering`
# (what the ordered handle `x.atomic(i).load(Ordering::Acquire)` takes) is an enum with a
# `u8` discriminant, and rust-gpu compiles the handle's match on it with 8-bit integers
# ("u8 used without Int8"). spirv.narrow_ints computes them in 32 bits afterwards, so the
# embedded module still declares no Int8 when nothing else needs it.
IMPLIED_TYPES: dict[str, str] = {"Ordering": "u8"}
CONFIG_KEY = "spirv-capabilities"

_TYPES = re.compile(r"\b(" + "|".join([*TYPE_CAPABILITIES, *IMPLIED_TYPES]) + r")\b")
# Comments, then string and char literals (so `"u8"` in a message does not count). Raw
# strings with hashes are rare in kernels and only make the answer larger, never wrong.
_NOISE = re.compile(
    r"//[^\n]*|/\*.*?\*/|b?r#*\"(?:[^\"\\]|\\.)*\"#*|b?\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\\n]|\\.)'",
    re.DOTALL,
)
_MISSING = re.compile(r"`([^`]+)` type used without `OpCapability (\w+)`")
_MISSING_ANY = re.compile(r"without `OpCapability (\w+)`")


def types_in(text: str) -> set[str]:
    """The scalar types of TYPE_CAPABILITIES that Rust source text names, or brings in
    through a word of IMPLIED_TYPES."""
    return {IMPLIED_TYPES.get(word, word) for word in _TYPES.findall(_NOISE.sub(" ", text))}


def from_types(types: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({TYPE_CAPABILITIES[t] for t in types if t in TYPE_CAPABILITIES}))


def types_in_crate(kernel_dir: Path) -> tuple[str, ...]:
    """The scalar types of TYPE_CAPABILITIES named in the kernel crate's src/**/*.rs."""
    return types_in_sources(kernel_dir / "src")


def types_in_sources(src_dir: Path) -> tuple[str, ...]:
    """The scalar types of TYPE_CAPABILITIES named in ``src_dir``/**/*.rs (a crate that
    holds kernels: the kernel crate or a library of kernels it depends on)."""
    found: set[str] = set()
    for source in sorted(src_dir.rglob("*.rs")):
        try:
            found |= types_in(source.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return tuple(sorted(found))


def combined(*groups: Iterable[str]) -> tuple[str, ...]:
    """Each name once, in the order first given."""
    return tuple(dict.fromkeys(name for group in groups for name in group))


@dataclass(frozen=True)
class Missing:
    """rust-gpu stopped because a capability was not declared."""

    capability: str
    rust_type: str | None

    def message(self) -> str:
        what = f"uses `{self.rust_type}`, which" if self.rust_type else "uses something that"
        return (
            f"rust-gpu stopped: the kernel crate {what} needs the SPIR-V capability "
            f"{self.capability}, and the build did not declare it"
        )

    def hint(self) -> str:
        return (
            f'declare it in Cargo.toml: [workspace.metadata.rgpu] {CONFIG_KEY} = ["'
            f'{self.capability}"], then run the same rgpu build again'
        )


def missing(output: str) -> Missing | None:
    """rust-gpu's `... without `OpCapability X`` error in a build's output, if there is one."""
    if m := _MISSING.search(output):
        return Missing(capability=m.group(2), rust_type=m.group(1))
    if m := _MISSING_ANY.search(output):
        return Missing(capability=m.group(1), rust_type=None)
    return None
