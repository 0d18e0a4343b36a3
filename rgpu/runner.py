"""Run a plan: every step through util.cmd, locally (container.py adds the container way)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from rgpu.plan import Plan, Step
from rgpu.util import cmd
from rgpu.util.output import in_github_actions, reporter


def run_step(step: Step, base_env: Mapping[str, str] | None = None) -> cmd.Result:
    env = step.child_env(os.environ if base_env is None else base_env)
    with reporter().group(step.description):
        # Under GitHub Actions, cargo's diagnostics also become annotations (diagnostics.py).
        if in_github_actions(env):
            from rgpu import diagnostics

            if done := diagnostics.run_cargo(step.argv, step.cwd, env):
                return done
        return cmd.run(step.argv, cwd=step.cwd, env=env, hint=step.hint)


def run_plan(plan: Plan, base_env: Mapping[str, str] | None = None) -> None:
    for note in plan.notes:
        reporter().info(f"note: {note}")
    for step in plan.steps:
        run_step(step, base_env)
