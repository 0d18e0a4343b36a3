"""`rgpu test`: the workspace's own tests, with every backend built in, and a per-backend
summary that never calls a skipped backend passed.

Tests report per backend through the runtime's test helper (`rgpu::testing`): it appends one
JSON line per backend and test to the file named by RGPU_TEST_REPORT (passed, failed, or
skipped and why). RGPU_REQUIRE_BACKENDS turns a skip into a failure; `rgpu test --backend B`
tests exactly B (RGPU_TEST_BACKENDS) and requires it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu.backends import BACKENDS, Backend
from rgpu.config import Options
from rgpu.errors import BackendUnavailableError, CommandFailedError, UsageError
from rgpu.host import build as host
from rgpu.host import state as build_state
from rgpu.plan import Plan, Step
from rgpu.workspace import Workspace

REPORT_ENV = "RGPU_TEST_REPORT"
REQUIRE_ENV = "RGPU_REQUIRE_BACKENDS"
ONLY_ENV = "RGPU_TEST_BACKENDS"
REPORT_FILE = "test-report.jsonl"


@dataclass(frozen=True)
class BackendResult:
    backend: str
    status: str  # "passed", "failed", "skipped", "not reported"
    detail: str

    def to_dict(self) -> dict[str, str]:
        """One entry of `rgpu test --json`'s results (rgpu/schemas/test.schema.json)."""
        return {"backend": self.backend, "status": self.status, "detail": self.detail}


def test_plan(ws: Workspace, state: build_state.State, env_extra: Mapping[str, str]) -> Plan:
    step = Step(
        name="test",
        description=f"workspace tests ({', '.join(b.name for b in state.backends)}; "
        f"{state.profile})",
        argv=(
            "cargo",
            "test",
            *host.profile_args(state.profile),
            "--workspace",
            *host.feature_args(state.features),
        ),
        cwd=ws.root,
        env=dict(env_extra),
    )
    return Plan(steps=(step,))


# The runtime always has the cpu backend: every host build can test it.
ALWAYS_BUILT = (BACKENDS["cpu"],)


def require_built(asked: Sequence[Backend], state: build_state.State) -> None:
    missing = [b.name for b in asked if b not in state.backends and b not in ALWAYS_BUILT]
    if missing:
        built = ", ".join(b.name for b in state.backends)
        raise BackendUnavailableError(
            f"backend {', '.join(missing)} is not built in (built: {built})",
            f"build it first: `rgpu build --backend {','.join(missing)}`",
        )


def test_env(asked: Sequence[Backend], report: Path, env: Mapping[str, str]) -> dict[str, str]:
    extra = {REPORT_ENV: str(report)}
    if asked:
        required = [*env.get(REQUIRE_ENV, "").split(","), *(b.name for b in asked)]
        extra[REQUIRE_ENV] = ",".join(dict.fromkeys(r for r in required if r))
        extra[ONLY_ENV] = ",".join(b.name for b in asked)
    return extra


def read_report(path: Path) -> list[dict[str, str]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "backend" in record and "status" in record:
            records.append({k: str(v) for k, v in record.items()})
    return records


def summarize(backends: Sequence[str], records: Sequence[Mapping[str, str]]) -> list[BackendResult]:
    results = []
    for backend in backends:
        mine = [r for r in records if r["backend"] == backend]
        failed = [r for r in mine if r["status"] == "failed"]
        passed = [r for r in mine if r["status"] == "passed"]
        skipped = [r for r in mine if r["status"] == "skipped"]
        if failed:
            results.append(BackendResult(backend, "failed", _tests(failed, with_reason=True)))
        elif passed:
            results.append(BackendResult(backend, "passed", _tests(passed)))
        elif skipped:
            results.append(BackendResult(backend, "skipped", skipped[0].get("reason", "")))
        else:
            results.append(
                BackendResult(backend, "not reported", "no test reported a result for it")
            )
    return results


def _tests(records: Sequence[Mapping[str, str]], with_reason: bool = False) -> str:
    names = sorted({r.get("test", "?") for r in records})
    text = ", ".join(names)
    if with_reason and records[0].get("reason"):
        text += f": {records[0]['reason']}"
    return text


def run_tests(
    ws: Workspace,
    options: Options,
    asked: Sequence[Backend],
    env: Mapping[str, str] | None = None,
    *,
    build: build_state.Build,
    stdout_to_stderr: bool = False,
) -> list[BackendResult]:
    """Build what the last build built (kernels and host; a no-op when nothing changed),
    run the workspace's tests, and return the per-backend results. A failing test run
    raises after the results are known (the caller prints them first). With
    ``stdout_to_stderr`` the tests' own output goes to stderr (stdout is `--json`'s).
    ``build``: the pipeline's, passed by the command."""
    # start-up: ~2 ms to import runner; only this path pays it
    from rgpu.runner import run_plan

    env = os.environ if env is None else env
    in_browser = [b.name for b in asked if b.host_target]
    if in_browser:
        raise UsageError(
            f"rgpu test runs the workspace's tests as native programs, and {in_browser[0]} "
            "runs only in a browser: its test binaries are not run there yet",
            f"run the program in the browser: `rgpu run --backend {in_browser[0]} -- ARGS` "
            "(its exit status is the program's), and test the kernels on the other backends "
            "with `rgpu test`",
        )
    previous = build_state.read(ws.rgpu_dir)
    build(ws, options, previous.backends if previous else options.backends)
    state = build_state.read(ws.rgpu_dir)
    assert state is not None
    require_built(asked, state)
    report = ws.rgpu_dir / REPORT_FILE
    report.unlink(missing_ok=True)
    failure: CommandFailedError | None = None
    try:
        run_plan(
            test_plan(ws, state, test_env(asked, report, env)), stdout_to_stderr=stdout_to_stderr
        )
    except CommandFailedError as error:
        failure = error
    records = read_report(report)
    native = [b.name for b in state.backends if not b.host_target]
    shown = [b.name for b in asked] or [*native, *(r["backend"] for r in records)]
    results = summarize(list(dict.fromkeys(shown)), records)
    if failure is not None:
        raise TestsFailed(failure, results)
    return results


class TestsFailed(Exception):
    def __init__(self, error: CommandFailedError, results: list[BackendResult]) -> None:
        super().__init__(error.message)
        self.error = error
        self.results = results
