"""`rgpu ci init`: a GitHub Actions workflow that proves every backend on GPU-less runners.

``job_commands`` is the one list of the rgpu commands each CI job runs. The workflow's
``run:`` lines are rendered from it, and the integration tests execute the same commands,
so the workflow cannot drift from what is tested.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.backends import BACKENDS, Backend, codegens_for, parse_backends
from rgpu.errors import DestinationError, UsageError
from rgpu.util.files import atomic_write_text

WORKFLOW_PATH = Path(".github") / "workflows" / "rgpu.yml"
TEMPLATE = Path("ci") / "rgpu.yml.jinja"

Command = tuple[str, ...]
DIST_NAME = "rgpu-cli"  # rgpu's name on PyPI; the PyPI name `rgpu` is an unrelated project


def job_commands(
    backend: Backend, build_args: Sequence[str], ci_run: Sequence[str] | None
) -> tuple[Command, ...]:
    """The rgpu commands of one job, in order: build, then the workspace's own tests and
    the configured `rgpu run` (`ci-run` in [workspace.metadata.rgpu]) where the backend
    runs, or the ptxas check where it cannot."""
    name = backend.name
    build: Command = ("rgpu", "build", "--backend", name, *build_args)
    if backend.ci_runs == "browser":
        # The workspace's test binaries are native programs, which `rgpu test` runs in the
        # other jobs; here the page runs (`rgpu run`).
        run = () if ci_run is None else (("rgpu", "run", "--backend", name, *ci_run),)
        return (build, *run)
    if backend.ci_runs is None:
        return (build, ("rgpu", "ci", "check-ptx"))
    commands: list[Command] = [build, ("rgpu", "test", "--backend", name)]
    if ci_run is not None:
        commands.append(("rgpu", "run", "--backend", name, *ci_run))
    return tuple(commands)


# The default jobs: those that run their programs first, then those that compile only.
DEFAULT_BACKENDS: tuple[Backend, ...] = tuple(
    sorted((b for b in BACKENDS.values() if b.ci_default), key=lambda b: b.ci_runs is None)
)

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
RUNNER = {"cpu": "", "vulkan": "ubuntu-latest", "web": "ubuntu-latest", "cuda": "ubuntu-latest"}
# Where rgpu's cache and cargo-gpu's (rust-gpu's codegen) are on each runner's system:
# rgpu/util/platform.py's cache_base (and cargo-gpu's own, the same convention).
CACHES = {
    "ubuntu-latest": "~/.cache",
    "macos-latest": "~/Library/Caches",
    "windows-latest": "~/AppData/Local",
}
# The Vulkan SDK carries SPIRV-Tools for Windows (spirv-opt and spirv-val, which rgpu runs on
# rust-gpu's modules); the version is LunarG's of 2025-08.
VULKAN_SDK_WINDOWS = "1.4.321.1"


def shell_line(command: Command) -> str:
    return shlex.join(command)


@dataclass(frozen=True)
class Job:
    id: str
    # "cpu", "vulkan", "cuda", "web", "metal" or "dx12": which setup steps it gets
    kind: str
    backend: str
    codegen: str | None
    setup: tuple[str, ...]
    commands: tuple[str, ...]
    runs_on: str = "ubuntu-latest"  # "" for the cpu job (a matrix of CPU_RUNNERS)

    @property
    def caches(self) -> str:
        """The directory that holds rgpu's and cargo-gpu's caches on its runner."""
        return CACHES.get(self.runs_on, "~/.cache")


def jobs_for(backends: Sequence[Backend], ci_run: Sequence[str] | None = None) -> list[Job]:
    """One job per backend and codegen (the codegen's pinned toolchain is its setup)."""
    # start-up: ~1 ms to import codegens; only this path pays it
    from rgpu import codegens

    jobs = []
    for backend in backends:
        kind = backend.ci_setup
        names = codegens_for(backend.name)
        for name in names or (None,):
            codegen = codegens.get(name) if name else None
            job_id = f"{backend.name}-{name}" if len(names) > 1 else backend.name
            setup = tuple(shell_line(c) for c in (codegen.ci_setup if codegen else ()))
            args = codegen.ci_build_args if codegen else ()
            lines = tuple(shell_line(c) for c in job_commands(backend, args, ci_run))
            jobs.append(Job(job_id, kind, backend.name, name, setup, lines, runs_on=RUNNER[kind]))
            for platform, runner in backend.ci_platforms:
                jobs.append(
                    Job(f"{job_id}-{platform}", platform, backend.name, name, setup, lines,
                        runs_on=runner)
                )  # fmt: skip
    return jobs


def chosen_backends(values: Sequence[str]) -> tuple[Backend, ...]:
    """`--backends` as typed (checked), or the default jobs."""
    return parse_backends(values, "--backends") or DEFAULT_BACKENDS


def toolchains_key(env: Mapping[str, str] | None = None) -> str:
    """A cache key for rgpu's toolchain cache: the pin files rgpu uses (RGPU_TOOLCHAINS_DIR's
    when set, as for every command) and rgpu's version."""
    # start-up: ~2 ms to import toolchains.pins; only this path pays it
    from rgpu.toolchains.pins import toolchains_dir

    digest = hashlib.sha256(__version__.encode())
    for path in sorted(toolchains_dir(os.environ if env is None else env).glob("*.toml")):
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


def render(
    workspace: Path,
    backends: Sequence[Backend],
    rgpu_source: str,
    ci_run: Sequence[str] | None = None,
) -> Rendered:
    import jinja2

    # start-up: <1 ms to import resources; only this path pays it
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
        jobs=jobs_for(backends, ci_run),
        actions=ACTIONS,
        python_version=PYTHON_VERSION,
        lavapipe_icd=LAVAPIPE_ICD,
        cpu_runners=CPU_RUNNERS,
        vulkan_sdk_windows=VULKAN_SDK_WINDOWS,
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
    word = "overwrite" if path.exists() else "create"
    atomic_write_text(path, rendered.text)
    return word


def require_source(source: str | None) -> str:
    # start-up: ~51 ms to import ci.source; only this path pays it
    from rgpu.ci.source import check_requirement, detect_source

    if source:
        return check_requirement(source)
    found = detect_source()
    if found is None:
        raise UsageError(
            "cannot tell from this installation where CI should install rgpu from",
            "pass the pinned requirement yourself, e.g. "
            f"`rgpu ci init --rgpu-source '{DIST_NAME} @ git+https://github.com/ORG/rgpu@<commit>'`",
        )
    return found
