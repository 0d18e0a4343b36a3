"""`rgpu new` (scaffold.new): a template rendered atomically into a new workspace, or only
the missing files into an existing one, never losing a user's file. The template and the
vendored crates here are tiny ones of the test's own, not rgpu's real ones."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from rgpu import __version__
from rgpu.errors import DestinationError, InterruptedByUser, InvalidNameError, UsageError
from rgpu.scaffold import new, vendor
from rgpu.scaffold.new import check_utf8, new_workspace, render_tree

TINY = {
    "Cargo.toml.jinja": (
        '[workspace]\n\n[workspace.metadata.rgpu]\ntemplate = "{{ template }}"\n'
        'template-version = "{{ rgpu_version }}"\n\n[package]\nname = "{{ name }}"\n'
    ),
    "README.md": "# a tiny workspace\n",
    "docs/{{ name }}.md": "about {{ name }}, verbatim\n",
    "src/main.rs": "fn main() { let x = {{ 1 }}; }\n",
}
VENDOR = f"vendor/rgpu-{__version__}"


@pytest.fixture(autouse=True)
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `tiny` template and tiny crates to vendor; returns where workspaces go."""
    templates = tmp_path / "data" / "templates"
    for rel, text in TINY.items():
        (templates / "tiny" / rel).parent.mkdir(parents=True, exist_ok=True)
        (templates / "tiny" / rel).write_text(text)
    crates = tmp_path / "data" / "crates"
    for rel in ("rgpu/Cargo.toml", "rgpu/src/lib.rs", "rgpu/target/junk", "rgpu-macros/lib.rs"):
        (crates / rel).parent.mkdir(parents=True, exist_ok=True)
        (crates / rel).write_text(f"// {rel}\n")
    monkeypatch.setattr(new, "templates_dir", lambda: templates)
    monkeypatch.setattr(new, "TEMPLATES", (*new.TEMPLATES, "tiny"))
    monkeypatch.setattr(vendor, "crates_source", lambda: crates)
    (tmp_path / "out").mkdir()
    return tmp_path / "out"


def snapshot(directory: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every directory (None) under `directory`."""
    return {
        p.relative_to(directory).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(directory.rglob("*"))
    }


def create(tiny: Path, **kwargs: object) -> tuple[Path, dict[str, str]]:
    dest, statuses = new_workspace("demo", tiny, template="tiny", **kwargs)  # type: ignore[arg-type]
    return dest, {s.path: s.word for s in statuses}


def test_only_jinja_files_are_rendered(tmp_path: Path) -> None:
    template = tmp_path / "tpl"
    (template / "src").mkdir(parents=True)
    (template / "Cargo.toml.jinja").write_text('name = "{{ name }}"\n')
    (template / "src" / "main.rs").write_text("fn main() { let x = {{ 1 }}; }\n")
    out = tmp_path / "rendered"
    out.mkdir()
    files = render_tree(template, out, {"name": "demo"})
    assert sorted(files) == ["Cargo.toml", "src/main.rs"]
    assert (out / "Cargo.toml").read_text() == 'name = "demo"\n'
    assert (out / "src" / "main.rs").read_text() == "fn main() { let x = {{ 1 }}; }\n"


def test_a_new_workspace_gets_the_template_and_the_vendored_crates(tiny: Path) -> None:
    dest, words = create(tiny)
    assert dest == tiny / "demo"
    assert set(words.values()) == {"create"}
    assert sorted(words) == sorted(
        [
            "Cargo.toml",
            "README.md",
            "docs/demo.md",
            "src/main.rs",
            f"{VENDOR}/rgpu/Cargo.toml",
            f"{VENDOR}/rgpu/src/lib.rs",
            f"{VENDOR}/rgpu-macros/lib.rs",
        ]
    )
    meta = tomllib.loads((dest / "Cargo.toml").read_text())["workspace"]["metadata"]["rgpu"]
    assert meta == {"template": "tiny", "template-version": __version__}
    assert (dest / "docs" / "demo.md").read_text() == "about {{ name }}, verbatim\n"
    assert [p.name for p in tiny.iterdir()] == ["demo"]  # no temporary directory left


def test_an_existing_non_empty_destination_is_refused_and_untouched(tiny: Path) -> None:
    dest = tiny / "demo"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    with pytest.raises(DestinationError) as err:
        create(tiny)
    assert "--force" in (err.value.hint or "")
    assert f"rgpu init -C {dest}" in (err.value.hint or "")
    assert snapshot(dest) == {"notes.txt": b"mine"}


def test_force_writes_only_missing_files_and_lists_conflicts(tiny: Path) -> None:
    dest = tiny / "demo"
    (dest / "src").mkdir(parents=True)
    (dest / "notes.txt").write_bytes(b"mine\r\n")
    (dest / "README.md").write_bytes(b"my own readme\n\x00")
    (dest / "src" / "main.rs").write_text(TINY["src/main.rs"])
    _, words = create(tiny, force=True)
    assert words["README.md"] == "conflict"
    assert words["src/main.rs"] == "identical"
    assert words["Cargo.toml"] == words["docs/demo.md"] == "create"
    assert (dest / "README.md").read_bytes() == b"my own readme\n\x00"
    assert (dest / "notes.txt").read_bytes() == b"mine\r\n"
    assert (dest / "Cargo.toml").is_file()
    _, again = create(tiny, force=True)
    assert {w for p, w in again.items() if p != "README.md"} == {"identical"}
    assert again["README.md"] == "conflict"


def test_overwrite_keeps_the_users_file_as_a_backup(tiny: Path) -> None:
    dest = tiny / "demo"
    dest.mkdir()
    (dest / "README.md").write_bytes(b"my own readme\n")
    _, words = create(tiny, force=True, overwrite=True)
    assert words["README.md"] == "overwrite"
    assert (dest / "README.md").read_text() == TINY["README.md"]
    assert (dest / "README.md.rgpu-backup").read_bytes() == b"my own readme\n"


def test_overwrite_refuses_when_a_backup_exists_and_changes_nothing(tiny: Path) -> None:
    dest = tiny / "demo"
    dest.mkdir()
    (dest / "README.md").write_bytes(b"mine, again\n")
    (dest / "README.md.rgpu-backup").write_bytes(b"an older backup\n")
    before = snapshot(dest)
    with pytest.raises(DestinationError) as err:
        create(tiny, force=True, overwrite=True)
    assert "README.md.rgpu-backup exists already" in err.value.message
    assert snapshot(dest) == before
    assert [p.name for p in tiny.iterdir()] == ["demo"]


def test_overwrite_without_force_is_a_usage_error(tiny: Path) -> None:
    with pytest.raises(UsageError, match="--overwrite only goes with --force"):
        create(tiny, overwrite=True)
    assert list(tiny.iterdir()) == []


def test_an_unknown_template_is_refused_with_did_you_mean(tiny: Path) -> None:
    with pytest.raises(UsageError) as err:
        new_workspace("demo", tiny, template="tinyy")
    assert "unknown template `tinyy` (did you mean `tiny`?)" in err.value.message
    assert list(tiny.iterdir()) == []


def test_an_invalid_name_is_refused_before_anything_is_made(tiny: Path) -> None:
    with pytest.raises(InvalidNameError):
        new_workspace("1demo", tiny, template="tiny")
    assert list(tiny.iterdir()) == []


def interrupt(*_args: object) -> list[str]:
    raise KeyboardInterrupt


def test_an_interrupt_while_rendering_leaves_no_new_destination(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(new, "render_tree", interrupt)
    with pytest.raises(InterruptedByUser, match="was not created"):
        create(tiny)
    assert list(tiny.iterdir()) == []


def test_an_interrupt_while_rendering_leaves_an_existing_destination_as_it_was(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tiny / "demo"
    dest.mkdir()
    (dest / "README.md").write_text("mine")
    before = snapshot(dest)
    monkeypatch.setattr(new, "render_tree", interrupt)
    with pytest.raises(InterruptedByUser, match="is as it was"):
        create(tiny, force=True, overwrite=True)
    assert snapshot(dest) == before
    assert [p.name for p in tiny.iterdir()] == ["demo"]


def test_an_interrupt_while_merging_undoes_what_was_merged(
    tiny: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tiny / "demo"
    dest.mkdir()
    (dest / "README.md").write_text("mine")
    before = snapshot(dest)
    real_replace = os.replace
    calls: list[object] = []

    def replace_then_interrupt(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 3:  # Cargo.toml created, README.md backed up, then Ctrl-C
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_then_interrupt)
    with pytest.raises(InterruptedByUser, match="is as it was"):
        create(tiny, force=True, overwrite=True)
    monkeypatch.undo()
    assert len(calls) > 3  # the undo ran
    assert snapshot(dest) == before


def test_a_parent_that_is_a_file_is_said_to_be_a_file(tiny: Path) -> None:
    parent = tiny / "file"
    parent.write_text("x")
    with pytest.raises(DestinationError, match="is a file, not a directory"):
        new_workspace("demo", parent, template="tiny")


def test_a_destination_that_is_a_file_is_refused(tiny: Path) -> None:
    (tiny / "demo").write_text("x")
    with pytest.raises(DestinationError, match="exists and is not a directory"):
        create(tiny, force=True)
    assert (tiny / "demo").read_text() == "x"


def test_a_missing_parent_is_refused_with_mkdir(tiny: Path) -> None:
    with pytest.raises(DestinationError) as err:
        new_workspace("demo", tiny / "nope", template="tiny")
    assert "mkdir -p" in (err.value.hint or "")


def test_a_path_that_is_not_utf8_is_refused_clearly() -> None:
    path = Path(os.fsdecode(b"/tmp/x\xff"))
    with pytest.raises(DestinationError) as err:
        check_utf8(path)
    assert "is not valid UTF-8" in err.value.message
    assert "cargo and rustc need UTF-8 paths" in err.value.message
    check_utf8(Path("/tmp/sörter"))
