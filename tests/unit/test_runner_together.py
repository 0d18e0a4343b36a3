"""Steps that run at the same time (`Step.together`): they overlap, each one's command and
output is shown whole and in plan order, a failure is raised once all ended, and in a
container or under GitHub Actions they run one after another."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rgpu.errors import CommandFailedError
from rgpu.plan import Plan, Step
from rgpu.runner import run_plan
from rgpu.util import cmd
from rgpu.util.output import Reporter, set_reporter
from tests.unit.projects import fake_program


def sleeper(tmp_path: Path, name: str, code: int = 0) -> Step:
    """A step that notes when it starts and ends (0.3 s apart) and prints its name."""
    program = fake_program(
        tmp_path / "bin",
        name,
        f"""
        date +%s.%N > {tmp_path}/{name}.start
        echo "{name} on stdout"
        echo "{name} on stderr" >&2
        sleep 0.3
        date +%s.%N > {tmp_path}/{name}.end
        exit {code}
        """,
    )
    return Step(name, f"run {name}", (str(program),), tmp_path, together="group")


def span(tmp_path: Path, name: str) -> tuple[float, float]:
    start = float((tmp_path / f"{name}.start").read_text())
    return start, float((tmp_path / f"{name}.end").read_text())


@pytest.fixture
def shown() -> Iterator[io.StringIO]:
    out = io.StringIO()
    set_reporter(Reporter(out))
    yield out
    set_reporter(Reporter())


def test_steps_together_overlap_and_show_their_output_in_order(
    tmp_path: Path, shown: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = (sleeper(tmp_path, "a"), sleeper(tmp_path, "b"), sleeper(tmp_path, "c"))
    run_plan(Plan(steps=steps), stdout_to_stderr=True)
    spans = [span(tmp_path, n) for n in "abc"]
    assert max(s for s, _ in spans) < min(e for _, e in spans), spans  # all ran at once
    text = shown.getvalue()
    assert text.splitlines()[0] == "==> at the same time: run a; run b; run c"
    printed = capsys.readouterr()
    assert printed.out == ""  # stdout_to_stderr: the steps' stdout went to stderr
    lines = printed.err.splitlines()
    assert lines == [f"{n} on {s}" for n in "abc" for s in ("stdout", "stderr")]
    assert text.index(cmd.format_argv(steps[0].argv)) < text.index(cmd.format_argv(steps[2].argv))


def test_a_failure_is_raised_after_every_step_ended(tmp_path: Path, shown: io.StringIO) -> None:
    steps = (sleeper(tmp_path, "ok1"), sleeper(tmp_path, "bad", code=3), sleeper(tmp_path, "ok2"))
    with pytest.raises(CommandFailedError) as error:
        run_plan(Plan(steps=steps))
    assert "bad` failed with exit code 3: bad on stderr" in error.value.message
    assert error.value.returncode == 3
    assert (tmp_path / "ok2.end").is_file()  # not cut short


def test_under_github_actions_they_run_one_after_another(
    tmp_path: Path, shown: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    started = time.perf_counter()
    run_plan(Plan(steps=(sleeper(tmp_path, "a"), sleeper(tmp_path, "b"))))
    assert span(tmp_path, "a")[1] <= span(tmp_path, "b")[0]
    assert time.perf_counter() - started >= 0.6
    assert "at the same time" not in shown.getvalue()


def test_only_neighbours_of_the_same_group_go_together(tmp_path: Path, shown: io.StringIO) -> None:
    a, b = sleeper(tmp_path, "a"), sleeper(tmp_path, "b")
    alone = sleeper(tmp_path, "alone")._replace(together="")
    run_plan(Plan(steps=(a, alone, b)))
    assert span(tmp_path, "a")[1] <= span(tmp_path, "alone")[0]
    assert span(tmp_path, "alone")[1] <= span(tmp_path, "b")[0]
