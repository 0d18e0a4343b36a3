"""CI behaviour with the real tools: the workflow's own commands run as a GitHub job runs
them, a real compile error becomes an annotation, ptxas checks real PTX, the wheel ships
its data."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rgpu import artifacts, ci, codegens
from rgpu.backends import get_backend
from rgpu.errors import ExitCode
from tests.conftest import REPO, run_rgpu

ANNOTATION = re.compile(r"^::error file=kernel/src/key\.rs,line=(\d+),col=(\d+),", re.M)


def actions_env(workspace: Path, summary: Path) -> dict[str, str]:
    """What GitHub Actions sets for a step (the parts rgpu reads), plus NO_COLOR."""
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "NO_COLOR": "1",
    }


def test_cpu_job_commands_pass_as_the_workflow_runs_them(tmp_path: Path) -> None:
    run_rgpu("new", "sortdemo", "--dir", str(tmp_path))
    ws, summary = tmp_path / "sortdemo", tmp_path / "summary.md"
    for command in ci.JOB_COMMANDS["cpu"]:
        assert command[0] == "rgpu"
        proc = run_rgpu(*command[1:], cwd=ws, env=actions_env(ws, summary))
        assert "\x1b[" not in proc.stderr  # NO_COLOR and no terminal: plain text
    report = summary.read_text(encoding="utf-8")
    assert "### rgpu build: ok (cpu)" in report
    assert "| host build (cpu, release) |" in report
    assert "### rgpu test: passed" in report


def _codegen_of(command: tuple[str, ...]) -> str:
    if "--codegen" in command:
        return command[command.index("--codegen") + 1]
    backend = get_backend(command[command.index("--backend") + 1])
    assert backend.default_codegen is not None
    return backend.default_codegen


@pytest.mark.parametrize("job", [j for j in ci.JOB_COMMANDS if j != "cpu"])
def test_gpu_job_build_commands_are_valid_rgpu_commands(tmp_path: Path, job: str) -> None:
    """The GPU jobs' build lines, as dry runs: each backend's own integration tests run
    them for real where the codegen can run here."""
    builds = [c for c in ci.JOB_COMMANDS[job] if c[:2] == ("rgpu", "build")]
    assert builds
    missing = [_codegen_of(c) for c in builds if _codegen_of(c) not in codegens.MODULES]
    if missing:
        pytest.skip(f"codegen {missing[0]} is not in this rgpu yet (its branch is unmerged)")
    run_rgpu("new", "sortdemo", "--dir", str(tmp_path))
    # What this machine lacks (a toolchain, an engine) may stop a dry run too; a command
    # line rgpu no longer accepts (exit 2) is drift between the workflow and rgpu.
    machine = {ExitCode.OK, ExitCode.TOOL_MISSING, ExitCode.TOOLCHAIN, ExitCode.CONTAINER}
    for command in builds:
        proc = run_rgpu(*command[1:], "--dry-run", cwd=tmp_path / "sortdemo", check=False)
        assert proc.returncode in machine, f"{command}: exit {proc.returncode}\n{proc.stderr}"


def test_compile_error_becomes_annotation_and_summary(tmp_path: Path) -> None:
    run_rgpu("new", "sortdemo", "--dir", str(tmp_path))
    ws, summary = tmp_path / "sortdemo", tmp_path / "summary.md"
    key_rs = ws / "kernel" / "src" / "key.rs"
    lines = key_rs.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("pub fn encode("))
    lines.insert(at + 1, '    let broken: u32 = "not a number";\n')
    key_rs.write_text("".join(lines), encoding="utf-8")

    proc = run_rgpu("build", "--backend", "cpu", cwd=ws, env=actions_env(ws, summary), check=False)

    assert proc.returncode == 7, proc.stderr  # ExitCode.COMMAND_FAILED
    found = ANNOTATION.search(proc.stderr)
    assert found, proc.stderr
    line, col = int(found[1]), int(found[2])
    assert (line, col) == (at + 2, len('    let broken: u32 = "'))  # 1-based line, col
    assert "::group::host build (cpu, release)" in proc.stderr
    assert "error[E0308]: mismatched types" in proc.stderr  # the human rendering too
    assert "\x1b[" not in proc.stderr
    assert f"fix the error at kernel/src/key.rs:{line}:{col}" in proc.stderr
    report = summary.read_text(encoding="utf-8")
    assert "### rgpu build (cpu): failed" in report
    assert f"`kernel/src/key.rs:{line}:{col}`: mismatched types" in report


TINY_KERNEL_IR = """\
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fill(ptr addrspace(1) %out) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %slot = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %tid, ptr addrspace(1) %slot
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
"""


def ptxas_env() -> dict[str, str]:
    """PATH with the ptxas of NVIDIA's nvidia-cuda-nvcc wheel (installed by the setup)."""
    import nvidia  # type: ignore[import-not-found]

    bin_dir = Path(next(iter(nvidia.__path__))) / "cu13" / "bin"
    assert (bin_dir / "ptxas").is_file(), "ptxas missing: run scripts/setup-test-env.sh"
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def write_ptx_manifest(workspace: Path, ptx: Path, target: str) -> None:
    rgpu_dir = workspace / "target" / "rgpu"
    artifact = artifacts.describe(
        ptx, rgpu_dir, kind="ptx", codegen="external", target=target, entry_points=["fill"]
    )
    artifacts.write_manifest(rgpu_dir, [artifact])


def test_check_ptx_runs_ptxas_on_every_manifest_ptx(tmp_path: Path) -> None:
    llc = shutil.which("llc-22") or "/usr/lib/llvm-22/bin/llc"
    run_rgpu("new", "sortdemo", "--dir", str(tmp_path))
    ws = tmp_path / "sortdemo"
    (ws / "target" / "rgpu").mkdir(parents=True)
    ll, ptx = tmp_path / "fill.ll", ws / "target" / "rgpu" / "fill.sm_80.ptx"
    ll.write_text(TINY_KERNEL_IR, encoding="utf-8")
    subprocess.run([llc, "-mcpu=sm_80", str(ll), "-o", str(ptx)], check=True)
    write_ptx_manifest(ws, ptx, "sm_80")

    ok = run_rgpu("ci", "check-ptx", "-C", str(ws), env=ptxas_env())
    assert re.search(r"ok\s+\S*fill\.sm_80\.ptx \(sm_80\)", ok.stderr), ok.stderr

    ptx.write_text(ptx.read_text(encoding="utf-8").replace("ret;", "ret_nope;"), "utf-8")
    write_ptx_manifest(ws, ptx, "sm_80")
    bad = run_rgpu("ci", "check-ptx", "-C", str(ws), env=ptxas_env(), check=False)
    assert bad.returncode == 10, bad.stderr  # ExitCode.ARTIFACT
    assert "ptxas rejected 1 of 1 PTX files" in bad.stderr


def test_check_ptx_without_ptx_says_how_to_build_it(tmp_path: Path) -> None:
    run_rgpu("new", "sortdemo", "--dir", str(tmp_path))
    proc = run_rgpu("ci", "check-ptx", "-C", str(tmp_path / "sortdemo"), env=ptxas_env(),
                    check=False)  # fmt: skip
    assert proc.returncode == 10
    assert "rgpu build --backend cuda" in proc.stderr


def test_wheel_carries_templates_and_toolchains(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("rgpu-*.whl"))
    check = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "check-wheel.py"), str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr
