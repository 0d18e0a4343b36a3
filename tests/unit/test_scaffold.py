"""Rendering: .jinja files rendered, everything else verbatim, nothing half-made."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from rgpu import __version__
from rgpu.errors import DestinationError, InterruptedByUser
from rgpu.scaffold import new_workspace, render_tree


def test_only_jinja_files_are_rendered(tmp_path: Path) -> None:
    template = tmp_path / "tpl"
    (template / "src").mkdir(parents=True)
    (template / "Cargo.toml.jinja").write_text('name = "{{ name }}"\n')
    (template / "src" / "main.rs").write_text("fn main() { let x = {{ 1 }}; }\n")
    out = tmp_path / "out"
    out.mkdir()
    files = render_tree(template, out, {"name": "demo"})
    assert sorted(files) == ["Cargo.toml", "src/main.rs"]
    assert (out / "Cargo.toml").read_text() == 'name = "demo"\n'
    assert (out / "src" / "main.rs").read_text() == "fn main() { let x = {{ 1 }}; }\n"


def test_new_workspace_records_its_template_and_names_its_crates(tmp_path: Path) -> None:
    dest, statuses = new_workspace("sortdemo", tmp_path)
    assert dest == tmp_path / "sortdemo"
    assert {s.word for s in statuses} == {"create"}
    root = tomllib.loads((dest / "Cargo.toml").read_text())
    meta = root["workspace"]["metadata"]["rgpu"]
    assert meta["template"] == "bitonic"
    assert meta["template-version"] == __version__
    assert root["package"]["name"] == "sortdemo"
    kernel = tomllib.loads((dest / "kernel" / "Cargo.toml").read_text())
    assert kernel["package"]["name"] == "sortdemo-kernel"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_workgroup_size_is_defined_exactly_once(tmp_path: Path) -> None:
    dest, _ = new_workspace("wg", tmp_path)
    definitions = [
        path
        for path in dest.rglob("*.rs")
        if "const WORKGROUP_SIZE" in path.read_text(encoding="utf-8")
    ]
    assert [p.relative_to(dest).as_posix() for p in definitions] == ["shared/src/lib.rs"]


def test_existing_non_empty_destination_is_refused_and_untouched(tmp_path: Path) -> None:
    dest = tmp_path / "sortdemo"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    with pytest.raises(DestinationError) as err:
        new_workspace("sortdemo", tmp_path)
    assert "--force" in (err.value.hint or "")
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]


def test_force_keeps_files_the_template_does_not_produce(tmp_path: Path) -> None:
    dest = tmp_path / "sortdemo"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    (dest / "README.md").write_text("old")
    _, statuses = new_workspace("sortdemo", tmp_path, force=True)
    words = {s.path: s.word for s in statuses}
    assert words["README.md"] == "overwrite"
    assert words["Cargo.toml"] == "create"
    assert (dest / "notes.txt").read_text() == "mine"
    _, again = new_workspace("sortdemo", tmp_path, force=True)
    assert {s.word for s in again} == {"identical"}


def test_interrupt_while_rendering_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rgpu.scaffold as scaffold

    def interrupted(*_args: object) -> list[str]:
        raise KeyboardInterrupt

    monkeypatch.setattr(scaffold, "render_tree", interrupted)
    with pytest.raises(InterruptedByUser):
        new_workspace("sortdemo", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_missing_parent_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DestinationError) as err:
        new_workspace("sortdemo", tmp_path / "nope")
    assert "mkdir -p" in (err.value.hint or "")
