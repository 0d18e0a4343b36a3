"""`rgpu ci init`: the workflow it writes, for every backend combination."""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rgpu import ci
from rgpu.ci_source import git_requirement
from tests.conftest import REPO, run_rgpu

SOURCE = "rgpu @ git+https://github.com/example/rgpu@0123456789abcdef0123456789abcdef01234567"
COMBINATIONS = [
    combo
    for n in range(1, len(ci.DEFAULT_BACKENDS) + 1)
    for combo in itertools.combinations(ci.DEFAULT_BACKENDS, n)
]


def job_blocks(text: str) -> dict[str, str]:
    """Split the rendered workflow into its jobs (the template's own two-space layout)."""
    body = text.split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([a-z0-9-]+):\n", body, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def bare_run_lines(block: str) -> list[str]:
    return re.findall(r"^      - run: (.+)$", block, flags=re.M)


def actionlint() -> str:
    found = shutil.which("actionlint")
    assert found, "actionlint is missing: run scripts/setup-test-env.sh"
    return found


def test_every_backend_combination_passes_actionlint(tmp_path: Path) -> None:
    files = []
    for combo in COMBINATIONS:
        out = tmp_path / "-".join(combo) / "rgpu.yml"
        out.parent.mkdir()
        out.write_text(ci.render(tmp_path, combo, SOURCE).text, encoding="utf-8")
        files.append(str(out))
    proc = subprocess.run([actionlint(), *files], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(files) == 15


def test_rgpus_own_workflow_passes_actionlint_and_runs_the_ci_command() -> None:
    workflow = REPO / ".github" / "workflows" / "ci.yml"
    proc = subprocess.run(
        [actionlint(), str(workflow)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = workflow.read_text(encoding="utf-8")
    assert "run: bash .ci/run" in text
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    # The lint job runs exactly the lint commands of the test script.
    script = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8").splitlines()
    lints = [line for line in script if line.startswith(("ruff ", "mypy"))]
    assert len(lints) == 3
    for lint in lints:
        assert f"run: {lint}\n" in text
    assert "python scripts/check-wheel.py dist/*.whl" in text


@pytest.mark.parametrize("combo", COMBINATIONS, ids=lambda c: "-".join(c))
def test_job_run_lines_are_the_shared_commands(tmp_path: Path, combo: tuple[str, ...]) -> None:
    blocks = job_blocks(ci.render(tmp_path, combo, SOURCE).text)
    expected = {job: [ci.shell_line(c) for c in ci.JOB_COMMANDS[job]] for b in combo
                for job in ci.BACKEND_JOBS[b]}  # fmt: skip
    assert {job: bare_run_lines(block) for job, block in blocks.items()} == expected


def test_workflow_is_least_privilege_and_pins_every_action(tmp_path: Path) -> None:
    text = ci.render(tmp_path, ci.DEFAULT_BACKENDS, SOURCE).text
    assert "\npermissions:\n  contents: read\n" in text
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"actions/[a-z-]+@v\d+", u) for u in uses), uses
    assert f'RGPU_SOURCE: "{SOURCE}"' in text


def test_jobs_get_their_platform_setup(tmp_path: Path) -> None:
    blocks = job_blocks(ci.render(tmp_path, ci.DEFAULT_BACKENDS, SOURCE).text)
    for runner in ci.CPU_RUNNERS:
        assert f"- {runner}" in blocks["cpu"]
    for vulkan in ("wgpu", "ash"):
        assert f"VK_ICD_FILENAMES: {ci.LAVAPIPE_ICD}" in blocks[vulkan]
        assert "mesa-vulkan-drivers" in blocks[vulkan]
        assert f"RGPU_REQUIRE_BACKENDS: {vulkan}" in blocks[vulkan]
    for cuda in ("cuda-nvptx", "cuda-nvvm"):
        assert "pip install nvidia-cuda-nvcc" in blocks[cuda]
        assert "actions/upload-artifact@" in blocks[cuda]
        assert "target/rgpu/**/*.ptx" in blocks[cuda]
    assert "run: rgpu toolchain install nvptx --yes" in blocks["cuda-nvptx"]
    assert "run: rgpu toolchain install spirv --yes" in blocks["ash"]
    assert "rgpu toolchain install" not in blocks["cpu"] + blocks["cuda-nvvm"]
    assert "~/.cache/rgpu" not in blocks["cpu"]
    assert "key: rgpu-toolchains-" in blocks["wgpu"]


def test_workspace_below_the_repository_root_gets_working_directory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    workspace = tmp_path / "gpu" / "sortdemo"
    workspace.mkdir(parents=True)
    rendered = ci.render(workspace, ("cpu",), SOURCE)
    assert rendered.path == tmp_path / ".github" / "workflows" / "rgpu.yml"
    assert "    working-directory: gpu/sortdemo\n" in rendered.text
    assert "hashFiles('gpu/sortdemo/**/Cargo.lock'" in rendered.text
    assert "            gpu/sortdemo/target\n" in rendered.text


def test_ci_init_never_overwrites_without_force(tmp_path: Path) -> None:
    run_rgpu("new", "demo", "--dir", str(tmp_path))
    ws = tmp_path / "demo"
    init = ("ci", "init", "-C", str(ws), "--rgpu-source", SOURCE)
    first = run_rgpu(*init)
    workflow = ws / ".github" / "workflows" / "rgpu.yml"
    assert "create" in first.stderr and workflow.is_file()
    assert "identical" in run_rgpu(*init).stderr
    workflow.write_text("# my own edits\n", encoding="utf-8")
    refused = run_rgpu(*init, check=False)
    assert refused.returncode == 4, refused.stderr
    assert "already exists" in refused.stderr and "--force" in refused.stderr
    assert workflow.read_text(encoding="utf-8") == "# my own edits\n"
    forced = run_rgpu(*init, "--force")
    assert "overwrite" in forced.stderr
    assert "rgpu build --backend cpu" in workflow.read_text(encoding="utf-8")


def test_ci_init_rejects_an_unknown_backend(tmp_path: Path) -> None:
    run_rgpu("new", "demo", "--dir", str(tmp_path))
    proc = run_rgpu(
        "ci", "init", "-C", str(tmp_path / "demo"), "--backends", "cpu,wgpy", check=False
    )
    assert proc.returncode == 2
    assert "did you mean `wgpu`" in proc.stderr


def test_git_requirement_pins_a_commit_with_an_https_url() -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    assert git_requirement("git@github.com:org/rgpu.git", sha) == (
        f"rgpu @ git+https://github.com/org/rgpu.git@{sha}"
    )
    assert git_requirement("git+https://github.com/org/rgpu", sha) == (
        f"rgpu @ git+https://github.com/org/rgpu@{sha}"
    )


def test_cache_key_is_a_short_stable_hash() -> None:
    first = run_rgpu("ci", "cache-key").stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{16}", first)
    assert run_rgpu("ci", "cache-key").stdout.strip() == first


def test_source_is_the_checkouts_pushed_commit(tmp_path: Path) -> None:
    from rgpu.ci_source import _from_checkout

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
    assert _from_checkout(tmp_path) is None  # no remote: nothing CI could fetch
    git("remote", "add", "origin", str(tmp_path))
    assert _from_checkout(tmp_path) is None  # a local path means nothing on a runner
    git("remote", "set-url", "origin", "git@github.com:org/rgpu.git")
    sha = git("rev-parse", "HEAD")
    assert _from_checkout(tmp_path) == f"rgpu @ git+https://github.com/org/rgpu.git@{sha}"


def test_setup_steps_install_toolchains_rgpu_pins() -> None:
    from rgpu.resources import toolchains_dir

    pinned = {p.stem for p in toolchains_dir().glob("*.toml")}
    for job, commands in ci.JOB_SETUP.items():
        assert job in ci.JOB_COMMANDS
        for command in commands:
            assert command[:3] == ("rgpu", "toolchain", "install") and command[3] in pinned
            help_text = run_rgpu(*command[1:3], "--help").stdout
            assert "--yes" in help_text
