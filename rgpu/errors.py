"""Errors the user can cause. Each carries what went wrong, the fix, and an exit code.

Only ``cli.main()`` turns them into an exit; library code raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class ExitCode(IntEnum):
    """Stable exit codes, documented in README.md."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    INVALID_NAME = 3
    DESTINATION = 4
    NOT_A_WORKSPACE = 5
    TOOL_MISSING = 6
    COMMAND_FAILED = 7
    BACKEND_UNAVAILABLE = 8
    CONFIG = 9
    ARTIFACT = 10
    TOOLCHAIN = 11
    CONTAINER = 12
    INTERRUPTED = 130


class Reported(BaseException):
    """What rgpu reports when it stops: a one-line message, a hint (the command or setting
    that fixes it) and an exit code. `RgpuError` (a failure) and `InterruptedByUser` (Ctrl-C)
    both carry it; only `cli.main()` turns them into an exit."""

    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_dict(self) -> dict[str, object]:
        return {
            "error": type(self).__name__,
            "message": self.message,
            "hint": self.hint,
            "exit_code": int(self.exit_code),
        }


class RgpuError(Reported, Exception):
    """A failure with a one-line message, a hint (the command or setting that fixes it)."""


class UsageError(RgpuError):
    exit_code = ExitCode.USAGE


class InvalidNameError(RgpuError):
    exit_code = ExitCode.INVALID_NAME


class DestinationError(RgpuError):
    exit_code = ExitCode.DESTINATION


class NotAWorkspaceError(RgpuError):
    exit_code = ExitCode.NOT_A_WORKSPACE


class ToolMissingError(RgpuError):
    exit_code = ExitCode.TOOL_MISSING


class CommandFailedError(RgpuError):
    exit_code = ExitCode.COMMAND_FAILED

    def __init__(
        self, message: str, hint: str | None = None, *, returncode: int | None = None
    ) -> None:
        super().__init__(message, hint)
        self.returncode = returncode
        # What the command printed, where the caller asked to keep it (cmd.run keep_output).
        self.output: str | None = None


class BackendUnavailableError(RgpuError):
    exit_code = ExitCode.BACKEND_UNAVAILABLE


class ConfigError(RgpuError):
    exit_code = ExitCode.CONFIG


class ArtifactError(RgpuError):
    exit_code = ExitCode.ARTIFACT


class ToolchainError(RgpuError):
    exit_code = ExitCode.TOOLCHAIN


class ContainerError(RgpuError):
    exit_code = ExitCode.CONTAINER


class InterruptedByUser(Reported, KeyboardInterrupt):
    """Ctrl-C, with what was left as it was. A KeyboardInterrupt and never an RgpuError:
    code that tries something and falls back on failure (`except RgpuError`, or `except
    Exception`) cannot swallow it, and rgpu stops."""

    exit_code = ExitCode.INTERRUPTED


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """ " (did you mean `x`?)" for the nearest of ``choices``, else ""."""
    import difflib  # only on the error path

    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""
