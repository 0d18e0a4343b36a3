"""`rgpu test`: the workspace's own tests, built with the backends of the last build."""

from __future__ import annotations

from rgpu import build as pipeline
from rgpu.config import Options
from rgpu.plan import Plan, Step
from rgpu.project import Project
from rgpu.runner import run_plan


def test_plan(project: Project, options: Options) -> Plan:
    state = pipeline.read_state(project)
    features = state["features"] if state else ["cpu"]
    qualified = ",".join(f"{project.host_package}/{f}" for f in features)
    step = Step(
        name="test",
        description=f"workspace tests ({', '.join(features)})",
        argv=(
            "cargo",
            "test",
            *pipeline.cargo_profile_args(options.profile),
            "--workspace",
            "--features",
            qualified,
        ),
        cwd=project.root,
        env=pipeline.host_env(project, features),
    )
    return Plan(steps=(step,))


def run_tests(project: Project, options: Options) -> None:
    run_plan(test_plan(project, options))
