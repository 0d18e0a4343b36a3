"""Build plans are plain data (plan), and the pipeline decides them once (pipeline): the
backends (accumulated), the codegens, --kernel-artifact files, and the host step."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu import pipeline
from rgpu.artifacts import manifest
from rgpu.backends import BACKENDS, check_codegen, get_backend, parse_backends
from rgpu.errors import UsageError
from rgpu.host import state
from rgpu.plan import Plan, Step
from rgpu.workspace import Workspace
from tests.unit.projects import demo_workspace, options


def hermetic_env(tmp_path: Path) -> dict[str, str]:
    """No rustup, no tools, rgpu's cache in tmp: probes find nothing and change nothing."""
    return {"PATH": str(tmp_path / "empty"), "RGPU_CACHE_DIR": str(tmp_path / "cache")}


def test_plan_renders_env_and_cwd(tmp_path: Path) -> None:
    step = Step(
        name="x", description="demo", argv=("cargo", "build"), cwd=tmp_path, env={"A": "1"},
        unset_env=("RUSTFLAGS",),
    )  # fmt: skip
    text = Plan(steps=(step,), notes=("why",)).render()
    assert "# note: why" in text
    assert f"(cd {tmp_path} && env -u RUSTFLAGS A=1 cargo build)" in text
    assert step.child_env({"RUSTFLAGS": "-g", "PATH": "/bin"}) == {"PATH": "/bin", "A": "1"}


def test_plans_add_up_and_serialize(tmp_path: Path) -> None:
    one = Plan(steps=(Step(name="a", description="a", argv=("a",), cwd=tmp_path),), notes=("n",))
    two = Plan(steps=(Step(name="b", description="b", argv=("b",), cwd=tmp_path),))
    both = one + two
    assert [s["name"] for s in both.to_dict()["steps"]] == ["a", "b"]  # type: ignore[attr-defined]
    assert both.notes == ("n",)


def test_unknown_backend_suggests_the_close_one() -> None:
    with pytest.raises(UsageError) as err:
        get_backend("cdua")
    assert "did you mean `cuda`" in err.value.message


def test_a_cpu_build_is_the_host_step_alone(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    parts = pipeline.plan_build(ws, options(), parse_backends(["cpu"]), env=hermetic_env(tmp_path))
    assert parts.kernels == ()
    (step,) = parts.whole.steps
    assert step.argv == (
        "cargo", "build", "--release", "--workspace", "--bins", "--examples", "--tests",
    )  # fmt: skip


def test_backends_built_before_stay_built_in(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    state.write(
        ws.rgpu_dir, state.State(backends=parse_backends(["ash", "cpu"]), profile="release")
    )
    assert [b.name for b in pipeline.accumulated(ws, [BACKENDS["cpu"]])] == ["cpu", "ash"]
    assert pipeline.needed_kinds(pipeline.accumulated(ws, [BACKENDS["cuda"]])) == {
        "ptx": ("cuda",),
        "spirv": ("ash",),
    }


def test_without_an_artifact_wgpu_builds_the_kernel_with_cargo_gpu(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    parts = pipeline.plan_build(ws, options(), parse_backends(["wgpu"]), env=hermetic_env(tmp_path))
    (kernel,) = parts.kernels
    assert kernel.codegen.name == "spirv" and not kernel.build.placement.in_container
    assert [s.name for s in parts.whole.steps][-2:] == ["spirv-kernel", "host-build"]
    assert parts.host_plan.steps[0].argv[-2:] == ("--features", "demo-kernel/wgpu")


def test_an_external_spirv_artifact_replaces_the_codegen(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    spv = tmp_path / "k.spv"
    parts = pipeline.plan_build(
        ws, options(), parse_backends(["wgpu", "ash"]), [spv], hermetic_env(tmp_path)
    )
    assert parts.kernels == () and parts.external == (spv,)
    assert any(f"embedding --kernel-artifact {spv}" in n for n in parts.notes)
    (host,) = parts.host_plan.steps
    assert host.argv[-2:] == ("--features", "demo-kernel/wgpu,demo-kernel/ash")
    assert host.env == {}


def test_an_artifact_no_backend_being_built_uses_is_refused(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    with pytest.raises(UsageError, match="which the cuda backend runs"):
        pipeline.plan_build(
            ws, options(), parse_backends(["wgpu"]), [tmp_path / "k.ptx"], hermetic_env(tmp_path)
        )


def remember_external(ws: Workspace, tmp_path: Path) -> manifest.Artifact:
    copy = ws.kernels_dir / "external" / "k.spv"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(b"spirv")
    given = manifest.describe(
        copy, ws.kernels_dir, kind="spirv", codegen="external", target="spirv-unknown-vulkan1.2",
        entry_points=("add_one",), source=str(tmp_path / "k.spv"),
    )  # fmt: skip
    manifest.write_manifest(ws.kernels_dir, [given])
    return given


def test_an_artifact_given_earlier_stands_in_until_recompile(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    given = remember_external(ws, tmp_path)
    env = hermetic_env(tmp_path)
    parts = pipeline.plan_build(ws, options(), parse_backends(["wgpu"]), env=env)
    assert parts.kernels == () and parts.reused_external == (given,)
    assert any("--recompile" in n and str(tmp_path / "k.spv") in n for n in parts.notes)
    again = pipeline.plan_build(ws, options(), parse_backends(["wgpu"]), env=env, recompile=True)
    assert [k.codegen.name for k in again.kernels] == ["spirv"]


def test_codegen_option_picks_the_codegen_of_the_backend_it_builds() -> None:
    backends = [BACKENDS["cuda"], BACKENDS["wgpu"]]
    chosen = pipeline.codegens_for(backends, options(codegen="nvvm"), set())
    assert [c.name for c in chosen] == ["nvvm", "spirv"]
    assert [c.name for c in pipeline.codegens_for(backends, options(), {"ptx"})] == ["spirv"]


def test_a_codegen_for_none_of_the_backends_is_refused() -> None:
    with pytest.raises(UsageError) as err:
        pipeline.codegens_for([BACKENDS["wgpu"]], options(codegen="nvvm"), set())
    assert "builds none of the backends being built (wgpu)" in err.value.message
    assert "--backend cuda" in (err.value.hint or "")
    # A mistyped name never reaches the pipeline: it is refused where it enters.
    with pytest.raises(UsageError, match="did you mean `nvvm`"):
        check_codegen("nvm", "--codegen")
