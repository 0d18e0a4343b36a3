"""Fixtures for the unit tier."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from rgpu.util import output


@pytest.fixture(autouse=True)
def fresh_reporter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own reporter, made on first use with the test's own stderr (a
    reporter kept from an earlier test would write to that test's closed capture), and
    plain output even when the suite itself runs under GitHub Actions (no annotations, no
    writes to the real step summary)."""
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setattr(output, "_reporter", None)


@pytest.fixture
def messages(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """What rgpu's reporter writes (warnings, errors, commands), as plain text."""
    stream = io.StringIO()
    monkeypatch.setattr(output, "_reporter", output.Reporter(stream))
    yield stream
