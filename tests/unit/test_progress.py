"""A long step says it is still running (in logs) and how long it took; a step that writes a
generated crate is shown as the files it writes."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from rgpu.plan import Step
from rgpu.runner import run_step
from rgpu.util import output
from rgpu.util.output import Reporter, duration, set_reporter


def test_durations_read_as_people_say_them() -> None:
    assert duration(12.34) == "12.3 s"
    assert duration(492) == "8 min 12 s"
    assert duration(60) == "1 min 00 s"


def test_a_long_step_beats_while_it_runs_and_says_how_long_it_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(output, "LONG_STEP_SECONDS", 0.2)
    out = io.StringIO()  # not a terminal: a log
    reporter = Reporter(out, heartbeat=0.1)
    with reporter.group("kernel -> SPIR-V"):
        time.sleep(0.45)
    lines = out.getvalue().splitlines()
    assert lines[0] == "==> kernel -> SPIR-V"
    beats = [ln for ln in lines if ln.startswith("    ... still running: kernel -> SPIR-V (")]
    assert len(beats) >= 2
    assert lines[-1].startswith("==> kernel -> SPIR-V: done after 0.")
    quick = io.StringIO()
    with Reporter(quick, heartbeat=0.1).group("quick"):
        pass
    assert quick.getvalue() == "==> quick\n"  # a short step: no time, no beat


def test_a_failed_long_step_says_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "LONG_STEP_SECONDS", 0.0)
    out = io.StringIO()
    with pytest.raises(RuntimeError), Reporter(out, heartbeat=None).group("build"):
        raise RuntimeError("x")
    assert out.getvalue().splitlines()[-1].startswith("==> build: stopped after ")


def test_a_write_step_shows_what_it_writes_never_the_text(tmp_path: Path) -> None:
    text = '[package]\nname = "k"\n' * 40
    step = Step("write-crate", "write the shader crate", (), tmp_path / "crate",
                files={"Cargo.toml": text})  # fmt: skip
    out = io.StringIO()
    set_reporter(Reporter(out))
    try:
        run_step(step)
        run_step(step)
    finally:
        set_reporter(Reporter())
    shown = out.getvalue()
    assert "[package]" not in shown and "{" not in shown
    crate = tmp_path / "crate" / "Cargo.toml"
    assert f"write  {crate}" in shown and f"unchanged  {crate}" in shown
    assert crate.read_text() == text
    assert step.render().endswith(f"(write {tmp_path / 'crate'}/: Cargo.toml ({len(text)} bytes))")
