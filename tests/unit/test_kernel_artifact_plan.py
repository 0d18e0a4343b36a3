"""`rgpu build --kernel-artifact`: an external SPIR-V module replaces the spirv codegen."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu import build, config, external
from rgpu.backends import get_backend
from rgpu.errors import UsageError
from rgpu.project import Project
from tests.unit.projects import demo_project


def project(root: Path) -> Project:
    (root / "kernel" / "spirv").mkdir(parents=True, exist_ok=True)
    (root / "kernel" / "spirv" / "Cargo.toml").write_text("[package]\n")
    return demo_project(root)


def options() -> config.Options:
    return config.resolve(metadata={}, env={}, cli={})


def test_without_an_artifact_wgpu_builds_the_kernel_with_cargo_gpu(tmp_path: Path) -> None:
    parts = build.plan_build(project(tmp_path), options(), [get_backend("wgpu")])
    assert [s.name for s in parts.kernel_plan.steps][-1] == "spirv-kernel"
    (host,) = parts.host_plan.steps
    assert host.argv[-2:] == ("--features", "cpu,wgpu")


def test_an_external_spirv_artifact_replaces_the_codegen(tmp_path: Path) -> None:
    backends = [get_backend("wgpu"), get_backend("ash")]
    parts = build.plan_build(project(tmp_path), options(), backends, [tmp_path / "k.spv"])
    assert parts.kernel_plan.steps == ()
    (host,) = parts.host_plan.steps
    assert host.argv[-2:] == ("--features", "cpu,wgpu,ash")
    assert "RGPU_MANIFEST" in host.env


def test_artifact_kinds_come_from_the_file_suffix() -> None:
    assert external.kinds([Path("a.spv"), Path("b.spv")]) == {"spirv"}
    with pytest.raises(UsageError, match="unknown kind"):
        external.kind_of(Path("kernel.bin"))
