"""Build plans are plain data: the host step, features, and the manifest hand-off."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu import build as pipeline
from rgpu.backends import BACKENDS, get_backend, resolve_codegen
from rgpu.config import resolve
from rgpu.errors import UsageError
from rgpu.plan import Plan, Step
from rgpu.project import Project
from tests.unit.projects import demo_project


def project(root: Path) -> Project:
    return demo_project(root, "sortdemo")


def test_cpu_build_is_one_cargo_step_without_the_manifest(tmp_path: Path) -> None:
    options = resolve(metadata={}, env={}, cli={})
    parts = pipeline.plan_build(project(tmp_path), options, [BACKENDS["cpu"]])
    (step,) = parts.whole.steps
    assert step.argv == (
        "cargo", "build", "--release", "-p", "sortdemo", "--bin", "sortdemo",
        "--features", "cpu",
    )  # fmt: skip
    assert step.cwd == tmp_path
    assert step.env == {}


def test_debug_profile_drops_release_flag(tmp_path: Path) -> None:
    options = resolve(metadata={}, env={}, cli={"profile": "debug"})
    step = pipeline.host_step(project(tmp_path), ["cpu"], options.profile)
    assert "--release" not in step.argv


def test_gpu_features_always_keep_the_cpu_fallback_and_the_manifest(tmp_path: Path) -> None:
    features = pipeline.features_for([BACKENDS["cuda"], BACKENDS["wgpu"]])
    assert features == ("cpu", "cuda", "wgpu")
    env = pipeline.host_env(project(tmp_path), features)
    assert env == {"RGPU_MANIFEST": str(tmp_path / "target" / "rgpu" / "manifest.json")}


def test_unknown_backend_and_codegen_suggest_fixes() -> None:
    with pytest.raises(UsageError) as err:
        get_backend("cdua")
    assert "did you mean `cuda`" in err.value.message
    with pytest.raises(UsageError):
        resolve_codegen(BACKENDS["wgpu"], "nvptx")


def test_plan_renders_env_and_cwd(tmp_path: Path) -> None:
    step = Step(
        name="x", description="demo", argv=("cargo", "build"), cwd=tmp_path, env={"A": "1"},
        unset_env=("RUSTFLAGS",),
    )  # fmt: skip
    text = Plan(steps=(step,), notes=("why",)).render()
    assert "# note: why" in text
    assert f"(cd {tmp_path} && env -u RUSTFLAGS A=1 cargo build)" in text
    assert step.child_env({"RUSTFLAGS": "-g", "PATH": "/bin"}) == {"PATH": "/bin", "A": "1"}
