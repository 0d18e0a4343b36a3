"""`rgpu ci init`: a GitHub Actions workflow that proves every backend on GPU-less runners.

``JOB_COMMANDS`` is the one list of the rgpu commands each CI job runs. The workflow's
``run:`` lines are rendered from it, and the integration tests execute the same commands,
so the workflow cannot drift from what is tested.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.errors import DestinationError, UsageError

WORKFLOW_PATH = Path(".github") / "workflows" / "rgpu.yml"
TEMPLATE = Path("ci") / "rgpu.yml.jinja"

Command = tuple[str, ...]

# The rgpu commands of each job, in order.
JOB_COMMANDS: dict[str, tuple[Command, ...]] = {
    "cpu": (
        ("rgpu", "build", "--backend", "cpu"),
        ("rgpu", "test"),
        ("rgpu", "run", "--backend", "cpu", "--", "--verify"),
    ),
    # lavapipe is a real Vulkan device on the CPU, so the Vulkan hosts run and verify.
    "wgpu": (
        ("rgpu", "build", "--backend", "wgpu"),
        ("rgpu", "test"),
        ("rgpu", "run", "--backend", "wgpu", "--", "--verify"),
    ),
    "ash": (
        ("rgpu", "build", "--backend", "ash"),
        ("rgpu", "test"),
        ("rgpu", "run", "--backend", "ash", "--", "--verify"),
    ),
    # No GPU on the runners: CUDA jobs compile, check the PTX with ptxas, and upload it.
    "cuda-nvptx": (
        ("rgpu", "build", "--backend", "cuda", "--codegen", "nvptx"),
        ("rgpu", "ci", "check-ptx"),
    ),
    "cuda-nvvm": (
        ("rgpu", "build", "--backend", "cuda", "--codegen", "nvvm", "--docker"),
        ("rgpu", "ci", "check-ptx"),
    ),
}

# Before those: the pinned toolchain of the job's codegen, installed by rgpu itself
# (`rgpu build` checks it and stops with the fix, it does not install). The CPU job needs
# none, and the nvvm job's toolchain is inside the Rust-CUDA container.
JOB_SETUP: dict[str, tuple[Command, ...]] = {
    "wgpu": (("rgpu", "toolchain", "install", "spirv", "--yes"),),
    "ash": (("rgpu", "toolchain", "install", "spirv", "--yes"),),
    "cuda-nvptx": (("rgpu", "toolchain", "install", "nvptx", "--yes"),),
}

# Which jobs a backend asks for.
BACKEND_JOBS: dict[str, tuple[str, ...]] = {
    "cpu": ("cpu",),
    "wgpu": ("wgpu",),
    "ash": ("ash",),
    "cuda": ("cuda-nvptx", "cuda-nvvm"),
}
DEFAULT_BACKENDS: tuple[str, ...] = ("cpu", "wgpu", "ash", "cuda")

# Action majors, confirmed current in November 2026 (release notes and dependabot bumps):
# checkout v6 (Nov 2025), cache v5 (Dec 2025), upload-artifact v7 (Feb 2026),
# setup-python v7 (Jul 2026; it dropped the pip-install input, which we do not use).
# Rust comes from the rustup that every GitHub-hosted runner has, so no third-party action
# runs with the job's token.
ACTIONS: dict[str, str] = {
    "checkout": "actions/checkout@v6",
    "cache": "actions/cache@v5",
    "upload_artifact": "actions/upload-artifact@v7",
    "setup_python": "actions/setup-python@v7",
}
PYTHON_VERSION = "3.12"
# Mesa's software Vulkan driver on the ubuntu runners (package mesa-vulkan-drivers).
LAVAPIPE_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
CPU_RUNNERS = ("ubuntu-latest", "macos-latest", "windows-latest")


def shell_line(command: Command) -> str:
    return shlex.join(command)


@dataclass(frozen=True)
class Job:
    id: str
    kind: str  # "cpu", "vulkan", "cuda-nvptx" or "cuda-nvvm": which setup steps it gets
    backend: str
    setup: tuple[str, ...]
    commands: tuple[str, ...]


def jobs_for(backends: Sequence[str]) -> list[Job]:
    jobs = []
    for backend in backends:
        for job_id in BACKEND_JOBS[backend]:
            kind = "vulkan" if backend in ("wgpu", "ash") else job_id
            setup = tuple(shell_line(c) for c in JOB_SETUP.get(job_id, ()))
            lines = tuple(shell_line(c) for c in JOB_COMMANDS[job_id])
            jobs.append(Job(job_id, kind, backend, setup=setup, commands=lines))
    return jobs


def parse_backends(values: Sequence[str]) -> tuple[str, ...]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    if not names:
        return DEFAULT_BACKENDS
    from rgpu.backends import get_backend

    for name in names:
        get_backend(name)  # unknown names fail with a did-you-mean
    return tuple(dict.fromkeys(names))


def toolchains_key() -> str:
    """A cache key for rgpu's toolchain cache: the pinned toolchain files and rgpu's version."""
    from rgpu.resources import toolchains_dir

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(toolchains_dir().glob("*.toml")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Rendered:
    path: Path  # where the workflow goes
    text: str
    working_directory: str  # the Cargo workspace, relative to the repository root


def repository_root(workspace: Path) -> Path:
    """GitHub reads workflows from the repository root, which may sit above the workspace."""
    for candidate in (workspace, *workspace.parents):
        if (candidate / ".git").exists():
            return candidate
    return workspace


def render(workspace: Path, backends: Sequence[str], rgpu_source: str) -> Rendered:
    import jinja2

    from rgpu.resources import templates_dir

    repo = repository_root(workspace)
    workdir = Path(os.path.relpath(workspace, repo)).as_posix()
    # GitHub's own ${{ }} expressions fill the workflow: this template uses [[ ]] and [% %].
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    prefix = "" if workdir == "." else f"{workdir}/"
    text = env.get_template(TEMPLATE.as_posix()).render(
        jobs=jobs_for(backends),
        actions=ACTIONS,
        python_version=PYTHON_VERSION,
        lavapipe_icd=LAVAPIPE_ICD,
        cpu_runners=CPU_RUNNERS,
        rgpu_source=json.dumps(rgpu_source),  # a quoted YAML scalar
        rgpu_version=__version__,
        working_directory=workdir,
        prefix=prefix,
    )
    return Rendered(path=repo / WORKFLOW_PATH, text=text, working_directory=workdir)


def write_workflow(rendered: Rendered, *, force: bool) -> str:
    """Write the workflow; return the status word. Never overwrites without ``force``."""
    path = rendered.path
    if path.is_file():
        if path.read_text(encoding="utf-8") == rendered.text:
            return "identical"
        if not force:
            raise DestinationError(
                f"{path} already exists and differs from the workflow rgpu would write",
                "rerun with --force to overwrite it (commit or copy your edits first), "
                "e.g. `rgpu ci init --force`",
            )
    elif path.exists():
        raise DestinationError(f"{path} exists and is not a file", f"move {path} away")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.rgpu-tmp")
    tmp.write_text(rendered.text, encoding="utf-8")
    word = "overwrite" if path.exists() else "create"
    os.replace(tmp, path)
    return word


def require_source(source: str | None) -> str:
    from rgpu.ci_source import detect_source

    if source:
        return source
    found = detect_source()
    if found is None:
        raise UsageError(
            "cannot tell from this installation where CI should install rgpu from",
            "pass the pinned requirement yourself, e.g. "
            "`rgpu ci init --rgpu-source 'rgpu @ git+https://github.com/ORG/rgpu@<commit>'`",
        )
    return found
