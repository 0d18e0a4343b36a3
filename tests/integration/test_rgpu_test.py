"""Issue 11, trust: `rgpu test` never calls a backend that did not run "passed". After a
cuda build on a machine without a GPU the summary says `skipped cuda: <why>`; asking for
cuda (`--backend cuda`, or RGPU_REQUIRE_BACKENDS=cuda as the CI jobs do) turns that skip
into a failure; `--backend cpu` tests the backend every build has (rgpu/host/test.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from rgpu.errors import ExitCode
from tests.conftest import REPO, has_nvidia_gpu, run_rgpu
from tests.integration.conftest import manifest_of, new_workspace

pytestmark = pytest.mark.skipif(has_nvidia_gpu(), reason="checks the answers without a GPU")
NO_DRIVER = "cuda backend unavailable: no CUDA driver found"


def summary(stderr: str) -> dict[str, tuple[str, str]]:
    """rgpu's per-backend lines: backend -> (status, detail)."""
    found = {}
    for line in stderr.splitlines():
        match = re.match(r"^\s*(passed|failed|skipped|not reported)\s+(\w+): (.*)$", line)
        if match:
            found[match[2]] = (match[1], match[3])
    return found


def test_a_cuda_build_without_a_gpu_reports_cuda_skipped_never_passed(cuda_ws: Path) -> None:
    proc = run_rgpu("test", cwd=cuda_ws)
    results = summary(proc.stderr)
    assert set(results) == {"cuda", "cpu"}, proc.stderr
    status, why = results["cuda"]
    assert status == "skipped" and NO_DRIVER in why
    assert re.search(rf"skipped\s+cuda: {NO_DRIVER}", proc.stderr)
    assert results["cpu"][0] == "passed"


def test_asking_for_cuda_makes_the_skip_a_failure(cuda_ws: Path) -> None:
    proc = run_rgpu("test", "--backend", "cuda", cwd=cuda_ws, check=False)
    assert proc.returncode == ExitCode.COMMAND_FAILED, proc.stderr
    assert "Traceback" not in proc.stderr
    results = summary(proc.stderr)
    assert set(results) == {"cuda"}  # exactly the backend asked for
    assert results["cuda"][0] == "failed" and NO_DRIVER in results["cuda"][1]


def test_rgpu_require_backends_makes_the_skip_a_failure(cuda_ws: Path) -> None:
    proc = run_rgpu("test", cwd=cuda_ws, env={"RGPU_REQUIRE_BACKENDS": "cuda"}, check=False)
    assert proc.returncode == ExitCode.COMMAND_FAILED, proc.stderr
    results = summary(proc.stderr)
    assert results["cuda"][0] == "failed" and NO_DRIVER in results["cuda"][1]
    assert results["cpu"][0] == "passed"


TEST_SCHEMA = json.loads((REPO / "rgpu/schemas/test.schema.json").read_text(encoding="utf-8"))


def test_json_is_the_same_report_on_stdout(cuda_ws: Path) -> None:
    proc = run_rgpu("test", "--json", cwd=cuda_ws)
    data = json.loads(proc.stdout)  # only the report: the tests' own output went to stderr
    jsonschema.validate(data, TEST_SCHEMA, cls=jsonschema.Draft202012Validator)
    assert data["ok"] is True and data["error"] is None
    results = {r["backend"]: (r["status"], r["detail"]) for r in data["results"]}
    assert results["cpu"][0] == "passed"
    assert results["cuda"][0] == "skipped" and NO_DRIVER in results["cuda"][1]
    assert "test result: ok" in proc.stderr


def test_json_of_a_failure_is_the_report_and_its_error(cuda_ws: Path) -> None:
    proc = run_rgpu("test", "--backend", "cuda", "--json", cwd=cuda_ws, check=False)
    assert proc.returncode == ExitCode.COMMAND_FAILED, proc.stderr
    data = json.loads(proc.stdout)
    jsonschema.validate(data, TEST_SCHEMA, cls=jsonschema.Draft202012Validator)
    assert data["ok"] is False and data["error"]["exit_code"] == ExitCode.COMMAND_FAILED
    assert [(r["backend"], r["status"]) for r in data["results"]] == [("cuda", "failed")]
    assert "error:" in proc.stderr and "Traceback" not in proc.stderr


def test_backend_cpu_tests_only_the_cpu(cuda_ws: Path) -> None:
    proc = run_rgpu("test", "--backend", "cpu", cwd=cuda_ws)
    assert summary(proc.stderr) == {"cpu": ("passed", "parity, parity-radix")}


def test_rgpu_test_builds_what_the_last_build_built(tmp_path: Path) -> None:
    """The adoption story's surprise: `rgpu test` after `rgpu build --arch sm_90` rebuilt PTX
    for the default archs and relinked the program, and the next build deleted it again. Now
    it builds with the last build's settings (target/rgpu/build.json): nothing to do."""
    ws = new_workspace(tmp_path, "archdemo")
    run_rgpu("build", "--backend", "cuda", "--arch", "sm_90", cwd=ws)
    state = json.loads((ws / "target" / "rgpu" / "build.json").read_text())
    assert state["settings"]["cuda_archs"] == ["sm_90"]
    tested = run_rgpu("test", cwd=ws)
    assert "nvptx kernels: up to date, not compiled" in tested.stderr, tested.stderr
    assert "up to date, cargo not started" in tested.stderr
    assert [a.target for a in manifest_of(ws) if a.kind == "ptx"] == ["sm_90"]
    again = run_rgpu("build", "--backend", "cuda", "--arch", "sm_90", cwd=ws)
    assert "nvptx kernels: up to date, not compiled" in again.stderr
    assert "up to date, cargo not started" in again.stderr
