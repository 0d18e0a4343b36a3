"""rgpu/scaffold/add.py's edits on their own: the user's comments and formatting are kept,
a second plan changes nothing, and a shape rgpu does not edit stops with the manual edit."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.errors import ConfigError
from rgpu.scaffold import add

LIB = """//! My kernels.
#![no_std]
rgpu::embed_kernels!();

#[rgpu::kernel]
pub fn axpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {}
"""


def test_the_use_line_goes_after_the_crate_attributes_once(tmp_path: Path) -> None:
    (tmp_path / "lib.rs").write_text(LIB)
    first = add._use_line(tmp_path, "lib.rs")
    text = first.new.decode()
    assert text.splitlines()[3] == add.USE_LINE
    assert text.replace(add.USE_LINE + "\n", "") == LIB
    (tmp_path / "lib.rs").write_text(text)
    assert add._use_line(tmp_path, "lib.rs").new.decode() == text


def test_an_existing_cargo_config_keeps_its_comments_and_gains_the_variable(
    tmp_path: Path,
) -> None:
    config = tmp_path / ".cargo" / "config.toml"
    config.parent.mkdir()
    mine = '# my settings\n[build]\njobs = 4  # keep\n\n[env]\nFOO = "bar"\n'
    config.write_text(mine)
    text = add._config(tmp_path).new.decode()
    assert text == mine + 'RGPU_WORKSPACE = { value = ".", relative = true }\n'
    config.write_text(text)
    assert add._config(tmp_path).new.decode() == text


def test_no_cargo_config_gets_the_commented_one(tmp_path: Path) -> None:
    assert add._config(tmp_path).new.decode() == add.config_text()


def test_an_env_that_is_not_a_table_names_the_file_and_the_edit(tmp_path: Path) -> None:
    config = tmp_path / ".cargo" / "config.toml"
    config.parent.mkdir()
    config.write_text("env = 3\n")
    with pytest.raises(ConfigError) as error:
        add._config(tmp_path)
    assert str(config) in str(error.value)
    assert "RGPU_WORKSPACE" in (error.value.hint or "")


def test_dependencies_that_are_not_a_table_name_the_manual_edit(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "k"\ndependencies = 1\n')
    with pytest.raises(ConfigError) as error:
        add._crate_dependency(tmp_path, "Cargo.toml")
    assert "rgpu-primitives.workspace = true" in (error.value.hint or "")
