"""Cargo's JSON messages -> GitHub annotations: the pure parts (argv, parsing, escaping).

The real compiler run is in tests/integration/test_ci_output.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.ci import diagnostics, summary
from rgpu.host.test import BackendResult


def test_json_format_goes_right_after_the_cargo_subcommand() -> None:
    argv = ["cargo", "+nightly", "build", "--release", "-p", "host"]
    assert diagnostics.json_argv(argv, colour=False) == [
        "cargo",
        "+nightly",
        "build",
        "--message-format=json",
        "--release",
        "-p",
        "host",
    ]
    assert diagnostics.json_argv(["cargo", "test"], colour=True) == [
        "cargo",
        "test",
        "--message-format=json-diagnostic-rendered-ansi",
    ]


def test_json_format_is_left_off_where_it_does_not_apply() -> None:
    assert diagnostics.json_argv(["cargo", "run", "--", "x"], colour=False) is None
    assert diagnostics.json_argv(["cargo", "gpu", "build"], colour=False) is None
    assert diagnostics.json_argv(["docker", "run", "img"], colour=False) is None
    assert diagnostics.json_argv(["cargo", "build", "--message-format=short"], False) is None


def test_annotation_escapes_newlines_and_property_separators() -> None:
    diag = diagnostics.Diagnostic("error", "expected `a, b`: got c", "k/src/lib.rs", 3, 7, 3, 9)
    line = diagnostics.annotation(diag, "error: 100% wrong\n --> k/src/lib.rs:3:7\n")
    assert line == (
        "::error file=k/src/lib.rs,line=3,col=7,endLine=3,endColumn=9,"
        "title=expected `a%2C b`%3A got c::error: 100%25 wrong%0A --> k/src/lib.rs:3:7"
    )


def test_span_paths_become_relative_to_the_github_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "repo" / "sortdemo"
    (ws / "kernel" / "src").mkdir(parents=True)
    (ws / "kernel" / "src" / "key.rs").write_text("", encoding="utf-8")
    record = {
        "reason": "compiler-message",
        "manifest_path": str(ws / "kernel" / "Cargo.toml"),
        "message": {
            "level": "warning",
            "message": "unused variable: `x`",
            "spans": [
                {"is_primary": False, "file_name": "elsewhere.rs", "line_start": 1},
                {
                    "is_primary": True,
                    "file_name": "kernel/src/key.rs",
                    "line_start": 4,
                    "line_end": 4,
                    "column_start": 9,
                    "column_end": 10,
                },
            ],
        },
    }
    diag = diagnostics.parse(record, ws, tmp_path / "repo")
    assert diag == diagnostics.Diagnostic(
        "warning", "unused variable: `x`", "sortdemo/kernel/src/key.rs", 4, 9, 4, 10
    )


def test_notes_and_helps_are_not_annotated(tmp_path: Path) -> None:
    record = {"reason": "compiler-message", "message": {"level": "note", "spans": []}}
    assert diagnostics.parse(record, tmp_path, tmp_path) is None


def test_sizes_read_like_people_write_them() -> None:
    assert (
        summary.size_text(900),
        summary.size_text(2048),
        summary.size_text(3 * 1024 * 1024),
    ) == (
        "900 B",
        "2.0 KiB",
        "3.0 MiB",
    )


def test_no_color_reaches_cargo_as_cargo_term_color() -> None:
    from rgpu.util.cmd import child_env

    assert child_env(["cargo", "build"], {"NO_COLOR": "1"}) == {
        "NO_COLOR": "1",
        "CARGO_TERM_COLOR": "never",
    }
    assert child_env(["rustc", "-V"], {"NO_COLOR": "1"}) == {"NO_COLOR": "1"}
    explicit = {"NO_COLOR": "1", "CARGO_TERM_COLOR": "always"}
    assert child_env(["cargo", "build"], explicit) == explicit


def test_rgpu_errors_under_actions_are_one_annotation_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from rgpu.util.output import Reporter

    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    stream = io.StringIO()
    Reporter(stream).error("no PTX in\ntarget/rgpu", "run `rgpu build --backend cuda`")
    first = stream.getvalue().splitlines()[0]
    assert (
        first
        == "::error title=rgpu::no PTX in%0Atarget/rgpu%0Afix: run `rgpu build --backend cuda`"
    )


def test_the_test_summary_says_skipped_for_a_skipped_backend() -> None:
    results = [
        BackendResult("cpu", "passed", "sorts"),
        BackendResult("wgpu", "skipped", "no Vulkan device"),
    ]
    text = summary.tests_markdown(results)
    assert "| cpu | passed | sorts |" in text
    assert "| wgpu | skipped | no Vulkan device |" in text
