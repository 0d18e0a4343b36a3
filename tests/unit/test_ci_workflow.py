"""`rgpu ci init`: the jobs (ci.workflow), the workflow it renders for every backend
combination, where CI installs rgpu from (ci.source), and the ptxas check of CUDA jobs."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rgpu.backends import parse_backends
from rgpu.ci import source, workflow
from rgpu.cli import main
from rgpu.errors import DestinationError, UsageError
from rgpu.resources import toolchains_dir
from tests.conftest import REPO
from tests.unit.projects import write_workspace

SHA = "0123456789abcdef0123456789abcdef01234567"
SOURCE = f"rgpu-cli @ git+https://github.com/example/rgpu@{SHA}"
ALL = parse_backends(("cpu", "wgpu", "ash", "cuda"))
COMBINATIONS = [
    combo
    for n in range(1, len(workflow.DEFAULT_BACKENDS) + 1)
    for combo in itertools.combinations(workflow.DEFAULT_BACKENDS, n)
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


# --- the jobs -----------------------------------------------------------------------------


def test_one_job_per_backend_and_cuda_codegen() -> None:
    jobs = workflow.jobs_for(ALL)
    assert [j.id for j in jobs] == [
        "cpu", "wgpu", "wgpu-metal", "wgpu-dx12", "ash", "cuda-nvptx", "cuda-nvvm",
    ]  # fmt: skip
    assert [j.kind for j in jobs] == [
        "cpu", "vulkan", "metal", "dx12", "vulkan", "cuda", "cuda",
    ]  # fmt: skip
    assert [j.codegen for j in jobs] == [None, "spirv", "spirv", "spirv", "spirv", "nvptx", "nvvm"]


def test_wgpu_also_runs_on_metal_and_dx12_runners() -> None:
    """wgpu's other platforms (docs/platforms.md): the same commands as on lavapipe, on a
    macOS runner (Metal) and a Windows runner (DX12 on WARP), each with its caches where
    rgpu and cargo-gpu keep them on that system."""
    by_id = {j.id: j for j in workflow.jobs_for(ALL, ci_run=("--", "--verify"))}
    for job_id, runner, caches in (
        ("wgpu-metal", "macos-latest", "~/Library/Caches"),
        ("wgpu-dx12", "windows-latest", "~/AppData/Local"),
    ):
        job = by_id[job_id]
        assert (job.runs_on, job.caches, job.backend) == (runner, caches, "wgpu")
        assert job.commands == by_id["wgpu"].commands
        assert "rgpu test --backend wgpu" in job.commands
    assert by_id["wgpu"].caches == "~/.cache" and by_id["ash"].runs_on == "ubuntu-latest"
    assert not any(j.id.startswith("ash-") for j in by_id.values())  # ash is Vulkan only


def test_runner_backends_build_then_test_without_ci_run() -> None:
    by_id = {j.id: j for j in workflow.jobs_for(ALL)}
    for backend in ("cpu", "wgpu", "ash"):
        assert by_id[backend].commands == (
            f"rgpu build --backend {backend}",
            f"rgpu test --backend {backend}",
        )


def test_ci_run_adds_an_rgpu_run_step_where_the_backend_runs() -> None:
    by_id = {j.id: j for j in workflow.jobs_for(ALL, ci_run=("--", "--verify", "a b"))}
    for backend in ("cpu", "wgpu", "ash"):
        assert by_id[backend].commands[-1] == f"rgpu run --backend {backend} -- --verify 'a b'"
    for cuda in ("cuda-nvptx", "cuda-nvvm"):
        assert not any(c.startswith("rgpu run") for c in by_id[cuda].commands)


def test_the_webgpu_job_builds_and_runs_the_page_in_headless_chrome(tmp_path: Path) -> None:
    (job,) = workflow.jobs_for(parse_backends(("webgpu",)), ci_run=("--", "--check"))
    assert (job.id, job.kind, job.codegen) == ("webgpu", "web", "spirv")
    assert job.setup == ("rgpu toolchain install spirv --yes",)
    assert job.commands == (
        "rgpu build --backend webgpu",
        "rgpu run --backend webgpu -- --check",
    )
    (bare,) = workflow.jobs_for(parse_backends(("webgpu",)))
    assert bare.commands == ("rgpu build --backend webgpu",)
    block = job_blocks(
        workflow.render(tmp_path, parse_backends(("webgpu",)), SOURCE, ("--", "--check")).text
    )
    assert "name: webgpu in headless Chrome" in block["webgpu"]
    assert "run: google-chrome --version" in block["webgpu"]
    assert "~/.cache/rust-gpu" in block["webgpu"]
    out = tmp_path / "rgpu.yml"
    out.write_text(
        workflow.render(tmp_path, parse_backends(("cpu", "webgpu")), SOURCE, ("--",)).text
    )
    proc = subprocess.run([actionlint(), str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_cuda_jobs_compile_then_check_the_ptx() -> None:
    by_id = {j.id: j for j in workflow.jobs_for(parse_backends(("cuda",)))}
    assert by_id["cuda-nvptx"].commands == (
        "rgpu build --backend cuda --codegen nvptx",
        "rgpu ci check-ptx",
    )
    assert by_id["cuda-nvvm"].commands == (
        "rgpu build --backend cuda --codegen nvvm --docker",
        "rgpu ci check-ptx",
    )


def test_setup_steps_install_the_toolchains_rgpu_pins(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pinned = {p.stem for p in toolchains_dir().glob("*.toml")}
    setups = {j.id: j.setup for j in workflow.jobs_for(ALL)}
    assert setups == {
        "cpu": (),
        "wgpu": ("rgpu toolchain install spirv --yes",),
        "wgpu-metal": ("rgpu toolchain install spirv --yes",),
        "wgpu-dx12": ("rgpu toolchain install spirv --yes",),
        "ash": ("rgpu toolchain install spirv --yes",),
        "cuda-nvptx": ("rgpu toolchain install nvptx --yes",),
        "cuda-nvvm": (),
    }
    for line in itertools.chain.from_iterable(setups.values()):
        assert line.split()[3] in pinned
    with pytest.raises(SystemExit) as done:
        main(["toolchain", "install", "--help"])
    assert done.value.code == 0 and "--yes" in capsys.readouterr().out


def test_backends_are_parsed_and_checked() -> None:
    assert workflow.chosen_backends(()) == workflow.DEFAULT_BACKENDS
    assert [b.name for b in workflow.chosen_backends(("cuda,cpu", "cpu"))] == ["cuda", "cpu"]
    with pytest.raises(UsageError, match="did you mean `wgpu`"):
        workflow.chosen_backends(("cpu,wgpy",))


# --- the rendered workflow ----------------------------------------------------------------


def test_every_backend_combination_passes_actionlint(tmp_path: Path) -> None:
    files = []
    for combo in COMBINATIONS:
        out = tmp_path / "-".join(b.name for b in combo) / "rgpu.yml"
        out.parent.mkdir()
        out.write_text(workflow.render(tmp_path, combo, SOURCE, ("--",)).text, encoding="utf-8")
        files.append(str(out))
    proc = subprocess.run([actionlint(), *files], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(files) == 15


def test_the_rendered_workflow_parses_as_yaml(tmp_path: Path) -> None:
    import yaml

    data = yaml.safe_load(workflow.render(tmp_path, ALL, SOURCE).text)
    assert list(data["jobs"]) == [
        "cpu", "wgpu", "wgpu-metal", "wgpu-dx12", "ash", "cuda-nvptx", "cuda-nvvm",
    ]  # fmt: skip
    assert data["jobs"]["wgpu-metal"]["runs-on"] == "macos-latest"
    assert data["jobs"]["wgpu-dx12"]["runs-on"] == "windows-latest"
    steps = [s.get("run", "") for s in data["jobs"]["wgpu-dx12"]["steps"]]
    assert any("vulkansdk-windows-X64" in s and "GITHUB_PATH" in s for s in steps)
    assert any("brew install spirv-tools" in s for s in (
        st.get("run", "") for st in data["jobs"]["wgpu-metal"]["steps"]))  # fmt: skip


def test_rgpus_own_workflow_passes_actionlint_and_runs_the_ci_command() -> None:
    ci_workflow = REPO / ".github" / "workflows" / "ci.yml"
    proc = subprocess.run(
        [actionlint(), str(ci_workflow)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = ci_workflow.read_text(encoding="utf-8")
    assert "run: bash .ci/run" in text
    assert "bash scripts/test.sh" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    # The lint job runs exactly the lint commands of the test script.
    script = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8").splitlines()
    lints = [line for line in script if line.startswith(("ruff ", "mypy"))]
    assert len(lints) == 3
    for lint in lints:
        assert f"run: {lint}\n" in text
    assert "python scripts/check-wheel.py dist/*.whl" in text


def test_rgpus_own_demo_jobs_are_the_jobs_ci_init_generates(tmp_path: Path) -> None:
    """ci.yml's demo jobs are scripts/render-demo-ci.py's output, byte for byte, and that
    is each generated job plus two steps of rgpu's CI (checked here on the parsed YAML)."""
    import yaml

    text = (REPO / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "render-demo-ci.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout in text, "ci.yml's demo jobs are stale: paste scripts/render-demo-ci.py"
    ours = yaml.safe_load(text)["jobs"]
    repo = tmp_path
    (repo / ".git").mkdir()
    (repo / "sortdemo").mkdir()
    generated = yaml.safe_load(
        workflow.render(
            repo / "sortdemo",
            parse_backends(("wgpu", "ash", "cuda", "webgpu")),
            "x",
            ("--", "--verify"),
        ).text
    )
    assert set(generated["jobs"]) == {
        "wgpu", "wgpu-metal", "wgpu-dx12", "ash", "cuda-nvptx", "cuda-nvvm", "webgpu",
    }  # fmt: skip
    for job_id, job in generated["jobs"].items():
        mine = ours[f"demo-{job_id}"]
        steps = [s for s in mine["steps"] if not str(s.get("name", "")).startswith("rgpu's CI")]
        assert steps == job["steps"]
        assert mine["defaults"] == generated["defaults"]
        assert mine["runs-on"] == job["runs-on"]
        env = {**generated["env"], **job.get("env", {})}
        assert {k: v for k, v in mine["env"].items() if k != "RGPU_SOURCE"} == {
            k: v for k, v in env.items() if k != "RGPU_SOURCE"
        }
        assert mine["env"]["RGPU_SOURCE"] == "${{ github.workspace }}"
    assert "--codegen nvvm --docker" in str(ours["demo-cuda-nvvm"]["steps"])


@pytest.mark.parametrize("combo", COMBINATIONS, ids=lambda c: "-".join(b.name for b in c))
def test_job_run_lines_are_the_jobs_commands(tmp_path: Path, combo: tuple[str, ...]) -> None:
    blocks = job_blocks(workflow.render(tmp_path, combo, SOURCE).text)
    expected = {job.id: list(job.commands) for job in workflow.jobs_for(combo)}
    assert {job: bare_run_lines(block) for job, block in blocks.items()} == expected


def test_workflow_installs_the_pinned_rgpu_cli(tmp_path: Path) -> None:
    text = workflow.render(tmp_path, ALL, SOURCE).text
    assert f"  RGPU_SOURCE: {json.dumps(SOURCE)}\n" in text
    assert 'run: python -m pip install "$RGPU_SOURCE"' in text


def test_workflow_is_least_privilege_and_pins_every_action(tmp_path: Path) -> None:
    text = workflow.render(tmp_path, ALL, SOURCE).text
    assert "\npermissions:\n  contents: read\n" in text
    uses = re.findall(r"uses: (\S+)", text)
    assert uses and all(re.fullmatch(r"actions/[a-z-]+@v\d+", u) for u in uses), uses
    assert "persist-credentials: false" in text


def test_jobs_get_their_platform_setup(tmp_path: Path) -> None:
    blocks = job_blocks(workflow.render(tmp_path, ALL, SOURCE).text)
    for runner in workflow.CPU_RUNNERS:
        assert f"- {runner}" in blocks["cpu"]
    for vulkan in ("wgpu", "ash"):
        assert f"VK_ICD_FILENAMES: {workflow.LAVAPIPE_ICD}" in blocks[vulkan]
        assert "mesa-vulkan-drivers" in blocks[vulkan]
        assert f"RGPU_REQUIRE_BACKENDS: {vulkan}" in blocks[vulkan]
    for cuda in ("cuda-nvptx", "cuda-nvvm"):
        assert "pip install nvidia-cuda-nvcc" in blocks[cuda]
        assert "actions/upload-artifact@" in blocks[cuda]
        assert "target/rgpu/kernels/*.ptx" in blocks[cuda]
        assert "target/rgpu/kernels/manifest.json" in blocks[cuda]
    assert "run: rgpu toolchain install nvptx --yes" in blocks["cuda-nvptx"]
    assert "run: rgpu toolchain install spirv --yes" in blocks["ash"]
    assert "rgpu toolchain install" not in blocks["cpu"] + blocks["cuda-nvvm"]
    assert "~/.cache/rgpu" not in blocks["cpu"]
    assert "key: rgpu-toolchains-" in blocks["wgpu"]


def test_workspace_below_the_repository_root_gets_working_directory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    ws = tmp_path / "gpu" / "sortdemo"
    ws.mkdir(parents=True)
    rendered = workflow.render(ws, parse_backends(("cpu",)), SOURCE)
    assert rendered.path == tmp_path / ".github" / "workflows" / "rgpu.yml"
    assert "    working-directory: gpu/sortdemo\n" in rendered.text
    assert "hashFiles('gpu/sortdemo/**/Cargo.lock'" in rendered.text
    assert "            gpu/sortdemo/target\n" in rendered.text


def test_write_workflow_never_overwrites_without_force(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    rendered = workflow.render(tmp_path, parse_backends(("cpu",)), SOURCE)
    assert workflow.write_workflow(rendered, force=False) == "create"
    assert workflow.write_workflow(rendered, force=False) == "identical"
    rendered.path.write_text("# my own edits\n", encoding="utf-8")
    with pytest.raises(DestinationError) as err:
        workflow.write_workflow(rendered, force=False)
    assert "already exists" in err.value.message and "--force" in (err.value.hint or "")
    assert rendered.path.read_text(encoding="utf-8") == "# my own edits\n"
    assert workflow.write_workflow(rendered, force=True) == "overwrite"
    assert rendered.path.read_text(encoding="utf-8") == rendered.text
    assert sorted(p.name for p in rendered.path.parent.iterdir()) == ["rgpu.yml"]


def test_ci_init_writes_the_run_step_of_the_workspaces_ci_run(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_workspace(tmp_path, metadata='ci-run = ["--", "--verify"]')
    args = ["ci", "init", "-C", str(tmp_path), "--backends", "cpu", "--rgpu-source", SOURCE]
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 0
    text = (tmp_path / ".github" / "workflows" / "rgpu.yml").read_text(encoding="utf-8")
    assert "      - run: rgpu run --backend cpu -- --verify\n" in text


def test_cache_key_is_a_short_stable_hash(capsys: pytest.CaptureFixture[str]) -> None:
    key = workflow.toolchains_key()
    assert re.fullmatch(r"[0-9a-f]{16}", key)
    assert workflow.toolchains_key() == key
    with pytest.raises(SystemExit):
        main(["ci", "cache-key"])
    assert capsys.readouterr().out == f"{key}\n"


def test_cache_key_follows_the_pins_rgpu_uses(tmp_path: Path) -> None:
    packaged = workflow.toolchains_key({})
    for pin in toolchains_dir().glob("*.toml"):
        (tmp_path / pin.name).write_bytes(pin.read_bytes())
    assert workflow.toolchains_key({"RGPU_TOOLCHAINS_DIR": str(tmp_path)}) == packaged
    (tmp_path / "spirv.toml").write_text("# moved on\n", encoding="utf-8")
    assert workflow.toolchains_key({"RGPU_TOOLCHAINS_DIR": str(tmp_path)}) != packaged


# --- where CI installs rgpu from ----------------------------------------------------------


@pytest.mark.parametrize(
    "requirement", ["rgpu==0.1.0", f"rgpu @ git+https://github.com/org/rgpu@{SHA}", "rgpu"]
)
def test_the_unrelated_pypi_rgpu_is_refused(requirement: str) -> None:
    with pytest.raises(UsageError) as err:
        source.check_requirement(requirement)
    assert "unrelated project" in err.value.message
    assert "rgpu-cli" in (err.value.hint or "")


def test_another_distribution_is_refused() -> None:
    with pytest.raises(UsageError, match="`numpy` is not rgpu's distribution"):
        source.check_requirement("numpy>=2")


@pytest.mark.parametrize(
    "requirement",
    [
        f"rgpu-cli @ git+https://github.com/org/rgpu@{SHA}",
        "rgpu_cli==0.2.0",
        "RGPU.CLI[extra]>=0.1",
        f"git+https://github.com/org/rgpu@{SHA}",
        "./rgpu",
    ],
)
def test_rgpu_cli_requirements_and_bare_urls_are_accepted(requirement: str) -> None:
    assert source.check_requirement(f" {requirement} ") == requirement


def test_require_source_checks_what_it_is_given() -> None:
    with pytest.raises(UsageError):
        workflow.require_source("rgpu==0.1.0")
    assert workflow.require_source(SOURCE) == SOURCE


def test_git_requirement_pins_a_commit_of_rgpu_cli_with_an_https_url() -> None:
    assert source.git_requirement("git@github.com:org/rgpu.git", SHA) == (
        f"rgpu-cli @ git+https://github.com/org/rgpu.git@{SHA}"
    )
    assert source.git_requirement("git+https://github.com/org/rgpu", SHA) == (
        f"rgpu-cli @ git+https://github.com/org/rgpu@{SHA}"
    )
    assert source.check_requirement(source.git_requirement("https://x/rgpu", SHA))


def test_source_is_the_checkouts_pushed_commit(tmp_path: Path, messages: object) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
    assert source._from_checkout(tmp_path) is None  # no remote: nothing CI could fetch
    git("remote", "add", "origin", str(tmp_path))
    assert source._from_checkout(tmp_path) is None  # a local path means nothing on a runner
    git("remote", "set-url", "origin", "git@github.com:org/rgpu.git")
    sha = git("rev-parse", "HEAD")
    assert (
        source._from_checkout(tmp_path) == f"rgpu-cli @ git+https://github.com/org/rgpu.git@{sha}"
    )
