"""The GitHub step summary: a markdown report appended to ``$GITHUB_STEP_SUMMARY``.

Written after `rgpu build` and `rgpu test` (passed or failed) when that variable is set,
which GitHub Actions does for every step; elsewhere nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from rgpu.ci.diagnostics import SEEN, Diagnostic
from rgpu.errors import RgpuError
from rgpu.util.output import reporter

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def steps_table(timings: Sequence[tuple[str, float, bool]]) -> list[str]:
    if not timings:
        return []
    lines = ["", "| step | time | result |", "|---|---:|---|"]
    lines += [f"| {_cell(t)} | {s:.1f} s | {'ok' if ok else 'failed'} |" for t, s, ok in timings]
    return lines


def artifacts_table(artifacts: Sequence[Any]) -> list[str]:
    if not artifacts:
        return ["", "No kernel artifacts: the CPU backend runs the kernel crate natively."]
    lines = [
        "",
        "| artifact | kind | codegen | target | size | sha256 |",
        "|---|---|---|---|---:|---|",
    ]
    for a in artifacts:
        lines.append(
            f"| `{_cell(a.path)}` | {a.kind} | {a.codegen} | {a.target} | "
            f"{size_text(a.size)} | `{a.sha256[:16]}` |"
        )
    return lines


def diagnostics_list(diags: Sequence[Diagnostic]) -> list[str]:
    if not diags:
        return []
    errors = sum(d.level == "error" for d in diags)
    lines = ["", f"Compiler: {errors} error(s), {len(diags) - errors} warning(s)", ""]
    lines += [f"- **{d.level}** `{_cell(d.location())}`: {_cell(d.message)}" for d in diags[:20]]
    return lines


def build_markdown(result: Any) -> str:
    lines = [
        f"### rgpu build: ok ({', '.join(result.backends)})",
        "",
        f"Features `{','.join(result.features) or '(none)'}`, profile `{result.profile}`, "
        f"{result.seconds:.1f} s, programs: "
        f"{', '.join(f'`{t.name}`' for t in result.targets) or '(unchanged)'}.",
    ]
    lines += artifacts_table(result.artifacts)
    lines += steps_table(reporter().timings)
    lines += diagnostics_list(SEEN)
    return "\n".join(lines) + "\n\n"


def failure_markdown(command: str, error: RgpuError) -> str:
    lines = [f"### {command}: failed", "", f"**error:** {_cell(error.message)}"]
    if error.hint:
        lines += ["", f"**fix:** {_cell(error.hint)}"]
    lines += diagnostics_list(SEEN)
    lines += steps_table(reporter().timings)
    return "\n".join(lines) + "\n\n"


def tests_markdown(results: Sequence[Any]) -> str:
    """Per backend: passed, failed, skipped (and why) or not reported; never "passed" for
    a backend that did not run."""
    lines = ["### rgpu test: passed", "", "| backend | result | detail |", "|---|---|---|"]
    lines += [f"| {r.backend} | {r.status} | {_cell(r.detail)} |" for r in results]
    lines += steps_table(reporter().timings)
    return "\n".join(lines) + "\n\n"


def append(markdown: str, env: Mapping[str, str] | None = None) -> None:
    path = (os.environ if env is None else env).get(SUMMARY_ENV)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(markdown)
    except OSError as exc:  # a summary is a courtesy: never fail the build over it
        reporter().warn(f"could not write the step summary to {path}: {exc}")
