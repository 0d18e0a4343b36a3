"""What rgpu checks in a SPIR-V module: header, entry points, and `spirv-val` when installed.

Pure Python reading of the binary (SPIR-V spec, section 2.3 "Physical Layout"): a 5-word
header (magic 0x07230203, version, generator, bound, schema), then instructions whose first
word holds the word count (high 16 bits) and the opcode (low 16 bits).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from rgpu.errors import ArtifactError
from rgpu.util import cmd

MAGIC = 0x07230203
OP_ENTRY_POINT = 15
EXECUTION_MODEL_GLCOMPUTE = 5
# spirv-val's --target-env for each rust-gpu target we accept.
TARGET_ENVS = {
    "spirv-unknown-vulkan1.1": "vulkan1.1",
    "spirv-unknown-vulkan1.2": "vulkan1.2",
    "spirv-unknown-vulkan1.3": "vulkan1.3",
    "spirv-unknown-vulkan1.4": "vulkan1.4",
}


@dataclass(frozen=True)
class ModuleInfo:
    version: tuple[int, int]
    compute_entry_points: tuple[str, ...]


def _words(data: bytes, path: Path) -> tuple[int, ...]:
    if len(data) < 20 or len(data) % 4:
        raise ArtifactError(
            f"{path} is not a SPIR-V module ({len(data)} bytes)",
            "pass the .spv file a SPIR-V compiler wrote (cargo gpu build, glslangValidator -V)",
        )
    words = struct.unpack(f"<{len(data) // 4}I", data)
    if words[0] != MAGIC:
        raise ArtifactError(
            f"{path} does not start with the SPIR-V magic number",
            "pass a binary .spv module, not SPIR-V assembly text",
        )
    return words


def _string(words: tuple[int, ...], start: int, end: int) -> str:
    raw = struct.pack(f"<{end - start}I", *words[start:end])
    return raw.split(b"\0", 1)[0].decode("utf-8", errors="replace")


def inspect(path: Path) -> ModuleInfo:
    words = _words(path.read_bytes(), path)
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF)
    names: list[str] = []
    at = 5
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if count == 0:
            raise ArtifactError(f"{path} is a truncated SPIR-V module", "rebuild it")
        if opcode == OP_ENTRY_POINT and words[at + 1] == EXECUTION_MODEL_GLCOMPUTE:
            names.append(_string(words, at + 3, at + count))
        at += count
    return ModuleInfo(version=version, compute_entry_points=tuple(names))


def spirv_val_argv(path: Path, target: str) -> list[str] | None:
    """The spirv-val command for `path`, or None when spirv-val is not installed (found as
    build and doctor both find it: toolchains.tools.find_tool)."""
    import os

    # start-up: ~10 ms to import toolchains.tools; only this path pays it
    from rgpu.toolchains.tools import find_tool

    tool = find_tool("spirv-val", os.environ)
    if tool is None:
        return None
    return [tool, "--target-env", TARGET_ENVS.get(target, "vulkan1.2"), str(path)]


def validate(path: Path, target: str) -> bool:
    """Runs spirv-val when installed; returns whether it ran. Raises when it rejects."""
    argv = spirv_val_argv(path, target)
    if argv is None:
        return False
    result = cmd.run(argv, capture=True, check=False, echo=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()
        raise ArtifactError(
            f"spirv-val rejects {path}: {detail}",
            f"fix the kernel and rebuild; check by hand with `{cmd.format_argv(argv)}`",
        )
    return True
