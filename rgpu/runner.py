"""Run a plan: every step through util.cmd, locally or in a container (container.py).

Steps marked ``container_ok`` run inside the container when one is given; the others
(e.g. checks that need host tools) always run locally.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Protocol

from rgpu.errors import CommandFailedError, InterruptedByUser
from rgpu.plan import Plan, Step
from rgpu.util import cmd
from rgpu.util.files import write_tree
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
            # start-up: ~3 ms to import ci.diagnostics; only this path pays it
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
    steps = list(plan.steps)
    while steps:
        batch = _together(steps, base_env, container)
        if len(batch) > 1:
            _run_together(batch, base_env, stdout_to_stderr)
        else:
            run_step(batch[0], base_env, container, stdout_to_stderr=stdout_to_stderr)
        del steps[: len(batch)]


def _together(
    steps: list[Step], base_env: Mapping[str, str] | None, container: StepRunner | None
) -> list[Step]:
    """The first step, with the steps after it that run at the same time (`Step.together`):
    here only, and not under GitHub Actions (where cargo's output becomes annotations)."""
    first = steps[0]
    env = os.environ if base_env is None else base_env
    if not first.together or first.files or in_github_actions(env):
        return [first]
    if container is not None and first.container_ok:
        return [first]
    batch = [first]
    for step in steps[1:]:
        if step.together != first.together or step.files:
            break
        batch.append(step)
    return batch


def _run_together(
    steps: list[Step], base_env: Mapping[str, str] | None, stdout_to_stderr: bool
) -> None:
    """Start every step, wait for all, then show each one's command and output in plan
    order (their lines would interleave otherwise); the first failure is raised after."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    env = os.environ if base_env is None else base_env

    def start(step: Step) -> cmd.Result:
        return cmd.run(step.argv, cwd=step.cwd, env=step.child_env(env), capture=True,
                       check=False, echo=False, hint=step.hint)  # fmt: skip

    title = "at the same time: " + "; ".join(s.description for s in steps)
    with reporter().group(title):
        try:
            with ThreadPoolExecutor(max_workers=len(steps)) as pool:
                results = list(pool.map(start, steps))
        except KeyboardInterrupt as exc:
            raise InterruptedByUser("interrupted while running " + steps[0].argv[0]) from exc
        for step, result in zip(steps, results, strict=True):
            reporter().command(cmd.format_argv(step.argv))
            for text, stream in ((result.stdout, sys.stderr if stdout_to_stderr else sys.stdout),
                                 (result.stderr, sys.stderr)):  # fmt: skip
                text = cmd.LineFilter(step.hide).text(text)
                if text:
                    stream.write(text if text.endswith("\n") else text + "\n")
                    stream.flush()
    for step, result in zip(steps, results, strict=True):
        if result.returncode != 0:
            output = result.stderr if result.stderr.strip() else result.stdout
            detail = f": {cmd.error_line(output, result.returncode)}" if output.strip() else ""
            raise CommandFailedError(
                f"`{cmd.format_argv(step.argv)}` failed with exit code {result.returncode}"
                + detail,
                step.failure_hint,
                returncode=result.returncode,
            )
