"""Run a plan: every step through util.cmd, locally or in a container (container.py).

Steps marked ``container_ok`` run inside the container when one is given; the others
(e.g. checks that need host tools) always run locally.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

from rgpu.errors import CommandFailedError
from rgpu.plan import Plan, Step
from rgpu.util import cmd
from rgpu.util.output import in_github_actions, reporter


class StepRunner(Protocol):
    def run(self, step: Step) -> cmd.Result: ...


def run_step(
    step: Step,
    base_env: Mapping[str, str] | None = None,
    container: StepRunner | None = None,
    *,
    stdout_to_stderr: bool = False,
) -> cmd.Result:
    """Run one step; a failure always says what fixes it (CommandFailedError's hint). With
    ``stdout_to_stderr`` what it prints goes to rgpu's stderr (see cmd.run)."""
    try:
        return _run_step(step, base_env, container, stdout_to_stderr)
    except CommandFailedError as error:
        error.hint = error.hint or step.failure_hint
        raise


def _run_step(
    step: Step,
    base_env: Mapping[str, str] | None,
    container: StepRunner | None,
    stdout_to_stderr: bool,
) -> cmd.Result:
    with reporter().group(step.description):
        if step.files:
            return _write_files(step)
        if container is not None and step.container_ok:
            return container.run(step)
        env = step.child_env(os.environ if base_env is None else base_env)
        # Under GitHub Actions, cargo's diagnostics also become annotations (diagnostics.py).
        if in_github_actions(env):
            from rgpu.ci import diagnostics

            if done := diagnostics.run_cargo(step.argv, step.cwd, env):
                return done
        return cmd.run(
            step.argv,
            cwd=step.cwd,
            env=env,
            hint=step.hint,
            stdout_to_stderr=stdout_to_stderr,
            keep_output=step.keep_output,
            hide=step.hide,
        )


def _write_files(step: Step) -> cmd.Result:
    """A files step: rgpu writes them (no process); says each path and whether it changed."""
    from rgpu.util.files import write_tree

    for rel, written in write_tree(step.cwd, dict(step.files)):
        reporter().status("write" if written else "unchanged", str(step.cwd / rel))
    return cmd.Result((), 0, "", "")


def run_plan(
    plan: Plan,
    base_env: Mapping[str, str] | None = None,
    container: StepRunner | None = None,
    *,
    stdout_to_stderr: bool = False,
) -> None:
    for note in plan.notes:
        reporter().info(f"note: {note}")
    for step in plan.steps:
        run_step(step, base_env, container, stdout_to_stderr=stdout_to_stderr)
