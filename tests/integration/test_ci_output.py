"""`rgpu ci init` and rgpu under GitHub Actions, with the real tools: the workflow file it
writes (jobs from the codegens, rgpu installed from the configured source, actionlint
clean), its CPU job's own command lines run as a job runs them, its CUDA job uploads what a
real build writes, a real compile error becomes an annotation, and `rgpu ci check-ptx`
runs ptxas on a real manifest."""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from rgpu.artifacts import manifest
from rgpu.backends import parse_backends
from rgpu.ci import workflow
from rgpu.errors import ExitCode
from tests.conftest import run_rgpu
from tests.integration.conftest import assert_clean_failure, kernels_dir, new_workspace

SOURCE = "rgpu-cli @ git+https://github.com/ORG/rgpu@" + "0123456789abcdef" * 2 + "01234567"
ANNOTATION = re.compile(r"^::error file=kernel/src/key\.rs,line=(\d+),col=(\d+),", re.M)


def actions_env(workspace: Path, summary: Path) -> dict[str, str]:
    """What GitHub Actions sets for a step (the parts rgpu reads), plus NO_COLOR."""
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "NO_COLOR": "1",
        "CI": "true",
    }


def jobs_of(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    jobs: dict[str, Any] = data["jobs"]
    return jobs


def run_lines(job: dict[str, Any]) -> list[str]:
    return [s["run"] for s in job["steps"] if "run" in s]


@pytest.fixture(scope="module")
def repo_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace in a subfolder of a git repository, as projects keep them."""
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return new_workspace(repo / "gpu", "cidemo")


def test_ci_init_writes_the_workflow_at_the_repository_root(repo_ws: Path) -> None:
    proc = run_rgpu("ci", "init", "--rgpu-source", SOURCE, cwd=repo_ws)
    path = repo_ws.parent.parent / ".github" / "workflows" / "rgpu.yml"
    assert re.search(rf"create\s+{re.escape(str(path))}", proc.stderr)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["env"]["RGPU_SOURCE"] == SOURCE
    assert data["permissions"] == {"contents": "read"}
    assert data["defaults"]["run"]["working-directory"] == "gpu/cidemo"
    jobs = data["jobs"]
    # One job per backend and codegen, from rgpu's codegen registry; wgpu also on Metal
    # (macOS) and DX12 (Windows).
    expected = workflow.jobs_for(workflow.DEFAULT_BACKENDS, ("--", "--verify"))
    assert list(jobs) == [j.id for j in expected] == [
        "cpu", "wgpu", "wgpu-metal", "wgpu-dx12", "ash", "cuda-nvptx", "cuda-nvvm",
    ]  # fmt: skip
    for job in expected:
        lines = run_lines(jobs[job.id])
        assert 'python -m pip install "$RGPU_SOURCE"' in lines
        rgpu_lines = [ln for ln in lines if ln.startswith("rgpu ") and "cache-key" not in ln]
        assert rgpu_lines == [*job.setup, *job.commands], job.id
    assert jobs["cpu"]["strategy"]["matrix"]["os"] == list(workflow.CPU_RUNNERS)


def test_the_workflow_passes_actionlint(repo_ws: Path) -> None:
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        if os.environ.get("CI", "").lower() in ("1", "true"):
            pytest.fail("actionlint missing: run scripts/setup-test-env.sh")
        pytest.skip("actionlint missing: run scripts/setup-test-env.sh")
    run_rgpu("ci", "init", "--rgpu-source", SOURCE, cwd=repo_ws)
    path = repo_ws.parent.parent / ".github" / "workflows" / "rgpu.yml"
    proc = subprocess.run([actionlint, str(path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ci_init_never_overwrites_a_different_workflow_without_force(repo_ws: Path) -> None:
    run_rgpu("ci", "init", "--rgpu-source", SOURCE, cwd=repo_ws)
    path = repo_ws.parent.parent / ".github" / "workflows" / "rgpu.yml"
    again = run_rgpu("ci", "init", "--rgpu-source", SOURCE, cwd=repo_ws)
    assert re.search(r"identical\s+", again.stderr)
    path.write_text(path.read_text(encoding="utf-8") + "# my edit\n", encoding="utf-8")
    refused = run_rgpu("ci", "init", "--rgpu-source", SOURCE, cwd=repo_ws, check=False)
    assert_clean_failure(refused, ExitCode.DESTINATION)
    assert "--force" in refused.stderr
    assert path.read_text(encoding="utf-8").endswith("# my edit\n")
    run_rgpu("ci", "init", "--rgpu-source", SOURCE, "--force", cwd=repo_ws)
    assert "# my edit" not in path.read_text(encoding="utf-8")


def test_the_cpu_jobs_commands_pass_as_the_workflow_runs_them(tmp_path: Path) -> None:
    ws = new_workspace(tmp_path, "cijob")
    run_rgpu("ci", "init", "--rgpu-source", SOURCE, "--backends", "cpu", cwd=ws)
    summary = tmp_path / "summary.md"
    lines = run_lines(jobs_of(ws / ".github/workflows/rgpu.yml")["cpu"])
    commands = [shlex.split(ln) for ln in lines if ln.startswith("rgpu ") and "$(" not in ln]
    assert [c[:2] for c in commands] == [["rgpu", "build"], ["rgpu", "test"], ["rgpu", "run"]]
    done = [run_rgpu(*command[1:], cwd=ws, env=actions_env(ws, summary)) for command in commands]
    for proc in done:
        assert "\x1b[" not in proc.stderr  # NO_COLOR and no terminal: plain text
    built, _tested, ran = done
    assert "::group::host build (cpu; release)" in built.stderr  # folded in the job's log
    assert "::endgroup::" in built.stderr
    assert "verified: identical to Rust's sort" in ran.stdout
    report = summary.read_text(encoding="utf-8")
    assert "### rgpu build: ok (cpu)" in report
    assert "| host build (cpu; release) |" in report
    assert "### rgpu test: passed" in report
    assert "| cpu | passed | parity, parity-radix |" in report


def test_the_gpu_jobs_lines_are_commands_rgpu_accepts(tmp_path: Path) -> None:
    """Their build lines as dry runs (each codegen's own tests run them for real where it can
    run here); a line rgpu no longer accepts (exit 2) is drift between workflow and rgpu."""
    ws = new_workspace(tmp_path, "cigpu")
    run_rgpu("ci", "init", "--rgpu-source", SOURCE, cwd=ws)
    jobs = jobs_of(ws / ".github/workflows/rgpu.yml")
    machine = {ExitCode.OK, ExitCode.TOOL_MISSING, ExitCode.TOOLCHAIN, ExitCode.CONTAINER}
    for job_id in ("wgpu", "ash", "cuda-nvptx", "cuda-nvvm"):
        for line in run_lines(jobs[job_id]):
            command = shlex.split(line)
            if command[:2] == ["rgpu", "build"]:
                proc = run_rgpu(*command[1:], "--dry-run", cwd=ws, check=False)
                assert proc.returncode in machine, f"{line}: {proc.returncode}\n{proc.stderr}"
            elif command[:3] == ["rgpu", "toolchain", "install"]:
                shown = run_rgpu("toolchain", "show", command[3], cwd=ws, check=False)
                assert shown.returncode == 0, f"{line}: {shown.stderr}"


def test_the_cuda_job_uploads_what_a_cuda_build_writes(cuda_ws: Path) -> None:
    rendered = workflow.render(cuda_ws, parse_backends(("cuda",)), SOURCE)
    jobs = yaml.safe_load(rendered.text)["jobs"]
    upload = next(s for s in jobs["cuda-nvptx"]["steps"] if "upload-artifact" in s.get("uses", ""))
    patterns = upload["with"]["path"].split()
    assert patterns
    for pattern in patterns:
        found = glob.glob(str(cuda_ws / pattern), recursive=True)
        assert found, f"{pattern} matches nothing after `rgpu build --backend cuda`"
    uploaded = {Path(p).name for pattern in patterns for p in glob.glob(str(cuda_ws / pattern))}
    assert uploaded == {p.name for p in kernels_dir(cuda_ws).iterdir()}


def test_a_compile_error_becomes_an_annotation_and_a_summary(tmp_path: Path) -> None:
    ws = new_workspace(tmp_path, "cierror")
    summary = tmp_path / "summary.md"
    key_rs = ws / "kernel" / "src" / "key.rs"
    lines = key_rs.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("pub fn encode("))
    lines.insert(at + 1, '    let broken: u32 = "not a number";\n')
    key_rs.write_text("".join(lines), encoding="utf-8")
    proc = run_rgpu("build", cwd=ws, env=actions_env(ws, summary), check=False)
    assert proc.returncode == ExitCode.COMMAND_FAILED, proc.stderr
    found = ANNOTATION.search(proc.stderr)
    assert found, proc.stderr
    line, col = int(found[1]), int(found[2])
    # 1-based: the line after `pub fn encode(`, the column of the string literal.
    assert (line, col) == (at + 2, len('    let broken: u32 = "'))
    assert "::group::host build (cpu; release)" in proc.stderr
    assert "error[E0308]: mismatched types" in proc.stderr  # the human rendering too
    assert "\x1b[" not in proc.stderr and "Traceback" not in proc.stderr
    assert f"fix: fix the error at kernel/src/key.rs:{line}:{col}" in proc.stderr
    report = summary.read_text(encoding="utf-8")
    assert "### rgpu build (cpu): failed" in report
    assert f"`kernel/src/key.rs:{line}:{col}`: mismatched types" in report


def test_check_ptx_rejects_a_ptx_that_ptxas_rejects(cuda_ws: Path, tmp_path: Path) -> None:
    ws = new_workspace(tmp_path, "cicheck")
    shutil.copytree(kernels_dir(cuda_ws), kernels_dir(ws))
    ok = run_rgpu("ci", "check-ptx", "-C", str(ws))
    assert len(re.findall(r"^\s*ok\s+\S+\.ptx \(sm_\d+\)$", ok.stderr, re.M)) == 3, ok.stderr
    artifacts = manifest.read_manifest(kernels_dir(ws))
    sm80 = next(a for a in artifacts if a.target == "sm_80" and a.kind == "ptx")
    ptx = kernels_dir(ws) / sm80.path
    ptx.write_text(ptx.read_text(encoding="utf-8").replace("\tret;", "\tret_nope;", 1), "utf-8")
    fixed = manifest.describe(ptx, kernels_dir(ws), kind="ptx", codegen="nvptx", target="sm_80",
                              entry_points=sm80.entry_points)  # fmt: skip
    manifest.write_manifest(kernels_dir(ws), [*(a for a in artifacts if a is not sm80), fixed])
    bad = run_rgpu("ci", "check-ptx", "-C", str(ws), check=False)
    assert_clean_failure(bad, ExitCode.ARTIFACT)
    assert "ptxas rejected 1 of 3 PTX files" in bad.stderr and "ret_nope" in bad.stderr


def test_check_ptx_refuses_a_cubin_not_made_from_the_listed_ptx(
    cuda_ws: Path, tmp_path: Path
) -> None:
    """The runtime loads the cubin or the PTX: both must be the same kernels."""
    ws = new_workspace(tmp_path, "cicubin")
    shutil.copytree(kernels_dir(cuda_ws), kernels_dir(ws))
    ok = run_rgpu("ci", "check-ptx", "-C", str(ws))
    assert len(re.findall(r"^\s*ok\s+\S+\.cubin \(sm_\d+ SASS\)$", ok.stderr, re.M)) == 3
    artifacts = manifest.read_manifest(kernels_dir(ws))
    cubin = next(a for a in artifacts if a.target == "sm_90" and a.kind == "cubin")
    other = dataclasses.replace(cubin, extra={**cubin.extra, "ptx_sha256": "0" * 64})
    manifest.write_manifest(kernels_dir(ws), [*(a for a in artifacts if a is not cubin), other])
    bad = run_rgpu("ci", "check-ptx", "-C", str(ws), check=False)
    assert_clean_failure(bad, ExitCode.ARTIFACT)
    assert "1 cubin(s) do not match their PTX" in bad.stderr
    assert f"{cubin.path} was not made from the listed {cubin.extra['ptx']}" in bad.stderr


def test_check_ptx_without_ptx_says_how_to_build_it(tmp_path: Path) -> None:
    ws = new_workspace(tmp_path, "cinone")
    proc = run_rgpu("ci", "check-ptx", "-C", str(ws), check=False)
    assert_clean_failure(proc, ExitCode.ARTIFACT)
    assert "rgpu build --backend cuda" in proc.stderr


def test_the_cache_key_is_stable_and_short() -> None:
    first = run_rgpu("ci", "cache-key").stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert run_rgpu("ci", "cache-key").stdout.strip() == first
