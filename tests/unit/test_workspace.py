"""Finding the rgpu workspace and reading its layout (workspace.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu import workspace
from rgpu.errors import ConfigError, ExitCode, NotAWorkspaceError
from tests.unit.projects import demo_workspace, write_workspace


def test_root_is_found_from_a_directory_below_it(tmp_path: Path) -> None:
    write_workspace(tmp_path / "ws")
    assert workspace.find_root(tmp_path / "ws" / "kernel" / "src") == tmp_path / "ws"


def test_a_path_with_dot_dot_is_normalized_and_searches_the_real_parents(tmp_path: Path) -> None:
    write_workspace(tmp_path / "ws")
    # A workspace in the sibling the path climbs out of must not be found instead.
    write_workspace(tmp_path / "other")
    found = workspace.find_root(tmp_path / "other" / ".." / "ws" / "kernel")
    assert found == tmp_path / "ws" and ".." not in found.parts


def test_a_plain_cargo_package_is_told_to_run_rgpu_init(tmp_path: Path) -> None:
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "plain"\n')
    (tmp_path / "src").mkdir()
    with pytest.raises(NotAWorkspaceError) as err:
        workspace.find_root(tmp_path / "src")
    assert err.value.exit_code == ExitCode.NOT_A_WORKSPACE
    assert "without rgpu" in err.value.message
    assert f"rgpu init -C {tmp_path}" in (err.value.hint or "")


def test_a_cargo_workspace_without_the_rgpu_table_is_told_to_run_rgpu_init(
    tmp_path: Path,
) -> None:
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["a"]\n')
    with pytest.raises(NotAWorkspaceError) as err:
        workspace.find_root(tmp_path)
    assert f"rgpu init -C {tmp_path}" in (err.value.hint or "")


def test_a_file_given_as_the_directory_is_said_to_be_a_file(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(NotAWorkspaceError) as err:
        workspace.find_root(file)
    assert "is a file, not a directory" in err.value.message
    assert "does not exist" not in err.value.message
    assert f"-C {tmp_path}" in (err.value.hint or "")


def test_a_missing_directory_is_said_not_to_exist(tmp_path: Path) -> None:
    with pytest.raises(NotAWorkspaceError, match="does not exist"):
        workspace.find_root(tmp_path / "nope")


def test_no_cargo_project_at_all_suggests_rgpu_new(tmp_path: Path) -> None:
    with pytest.raises(NotAWorkspaceError) as err:
        workspace.find_root(tmp_path)
    assert "rgpu new NAME" in (err.value.hint or "")


def test_load_reads_the_kernel_crate_and_its_package(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path, "sortdemo", metadata='binary = "sorter"')
    assert ws.root == tmp_path
    assert ws.kernel_dir == tmp_path / "kernel"
    assert ws.kernel_package == "sortdemo-kernel"
    assert ws.kernel_crate_name == "sortdemo_kernel"
    assert ws.feature("cuda") == "sortdemo-kernel/cuda"
    assert ws.default_binary == "sorter"
    assert ws.target_dir == tmp_path / "target"
    assert ws.kernels_dir == tmp_path / "target" / "rgpu" / "kernels"


def test_rgpu_files_stay_in_the_workspace_with_a_shared_target_dir(tmp_path: Path) -> None:
    write_workspace(tmp_path)
    ws = workspace.load(tmp_path, env={"CARGO_TARGET_DIR": "shared-target"})
    assert ws.target_dir == tmp_path / "shared-target"
    assert ws.rgpu_dir == tmp_path / "target" / "rgpu"


def test_kernel_setting_names_the_kernel_crate_directory(tmp_path: Path) -> None:
    write_workspace(tmp_path, metadata='kernel = "gpu"')
    with pytest.raises(ConfigError) as err:
        workspace.load(tmp_path, env={})
    assert str(tmp_path / "gpu" / "Cargo.toml") in err.value.message
    (tmp_path / "kernel").rename(tmp_path / "gpu")
    assert workspace.load(tmp_path, env={}).kernel_dir == tmp_path / "gpu"


def test_a_kernel_setting_that_is_not_a_string_is_a_config_error(tmp_path: Path) -> None:
    write_workspace(tmp_path, metadata="kernel = 3")
    with pytest.raises(ConfigError, match="not a directory name"):
        workspace.load(tmp_path, env={})


def test_invalid_toml_names_the_file(tmp_path: Path) -> None:
    write_workspace(tmp_path)
    (tmp_path / "kernel" / "Cargo.toml").write_text("[package\n")
    with pytest.raises(ConfigError) as err:
        workspace.load(tmp_path, env={})
    assert str(tmp_path / "kernel" / "Cargo.toml") in err.value.message
    assert "not valid TOML" in err.value.message
