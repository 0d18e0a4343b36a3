"""The checked setting (rgpu/checked.py): where it is read, what it passes to the nvptx and
spirv builds, what it writes in the manifest, and the builds it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rgpu import checked, config
from rgpu.artifacts.manifest import write_manifest
from rgpu.codegens import spirv
from rgpu.codegens.nvptx import rustflags
from rgpu.cuda_archs import CudaArchs
from rgpu.errors import ConfigError


def test_the_setting_comes_from_the_table_the_environment_and_the_command_line() -> None:
    table = "[workspace.metadata.rgpu]"
    assert config.resolve(metadata={}, env={}, cli={}).checked is False
    assert config.resolve(metadata={"checked": True}, env={}, cli={}).checked is True
    assert config.resolve(metadata={}, env={"RGPU_CHECKED": "1"}, cli={}).checked is True
    got = config.resolve(metadata={"checked": True}, env={}, cli={"checked": False})
    assert got.checked is False
    with pytest.raises(ConfigError) as caught:
        config.resolve(metadata={"checked": "yes"}, env={}, cli={})
    assert caught.value.message == f'{table} checked is "yes", not a boolean'


def test_only_a_checked_build_passes_the_cfg() -> None:
    (arch,) = CudaArchs.parse(["sm_90"]).exact
    assert rustflags(arch) == ("-Ctarget-cpu=sm_90", "-Zmir-enable-passes=-JumpThreading")
    assert rustflags(arch, True)[-2:] == ("--cfg", "rgpu_checked")


def test_only_a_checked_build_asks_rust_gpu_for_the_printf_aborts() -> None:
    assert spirv.codegen_env(False) == {"RUSTGPU_CODEGEN_ARGS": "--no-spirv-opt"}
    assert spirv.codegen_env(True) == {
        "RUSTGPU_CODEGEN_ARGS": "--no-spirv-opt --abort-strategy=debug-printf+backtrace",
        "RUSTGPU_RUSTFLAGS": "--cfg rgpu_checked",
    }


def test_the_manifest_says_checked_only_when_it_is(tmp_path: Path) -> None:
    plain = json.loads(write_manifest(tmp_path, []).read_text(encoding="utf-8"))
    assert plain == {"artifacts": [], "version": plain["version"]}
    data = json.loads(write_manifest(tmp_path, [], checked=True).read_text(encoding="utf-8"))
    assert data["checked"] is True


def test_codegens_that_cannot_check_are_refused() -> None:
    checked.require_codegen(True, "nvptx")
    checked.require_codegen(True, "spirv")
    checked.require_codegen(False, "nvvm")
    with pytest.raises(ConfigError, match="codegen nvvm"):
        checked.require_codegen(True, "nvvm")
