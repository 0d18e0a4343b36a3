"""One line of `rgpu doctor`: what was checked, ok/warn/fail, and the fix. Made by the
codegens and toolchains (their checks) and by doctor/, so it sits below them all."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

CheckStatus = Literal["ok", "warn", "fail"]


class Check(NamedTuple):
    name: str
    status: CheckStatus
    detail: str
    fix: str | None = None
    # Requirement keys this check is part of: "cargo", a codegen name ("nvptx", "nvvm",
    # "spirv"), or "cuda-run" / "vulkan-run" for what running (not building) needs.
    needed_for: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["needed_for"] = list(self.needed_for)
        return data
