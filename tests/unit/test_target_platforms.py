"""`target-platforms`: the platforms a project targets. naga's findings for the others are no
warnings (a project for CUDA and Vulkan only hears nothing about Metal on every build); those
for a required platform stay errors; all of them stay in `rgpu build --json`."""

from __future__ import annotations

import io

import pytest

from rgpu import config, pipeline
from rgpu.artifacts.manifest import Artifact
from rgpu.errors import ArtifactError, ConfigError
from rgpu.util.output import Reporter, set_reporter
from tests.unit.projects import options

TABLE = {
    "mandelbrot": {"webgpu": "ok", "metal": "Capability FLOAT64 is required", "dx12": "ok"},
    "blur": {"webgpu": "8-bit memory", "metal": "8-bit memory", "dx12": "8-bit memory"},
}
SPV = Artifact(
    path="k.spv", kind="spirv", codegen="spirv", target="spirv-unknown-vulkan1.2",
    entry_points=("mandelbrot", "blur"), size=1, sha256="0" * 64, source="built",
    extra={"portability": TABLE},
)  # fmt: skip


def warnings_of(opts: config.Options) -> tuple[list[str], list[dict[str, str]]]:
    out = io.StringIO()
    set_reporter(Reporter(out))
    try:
        found = pipeline.report_portability([SPV], opts)
    finally:
        set_reporter(Reporter())
    return [ln for ln in out.getvalue().splitlines() if ln.startswith("warning:")], found


def test_every_platform_is_a_target_by_default() -> None:
    shown, found = warnings_of(options())
    assert len(shown) == len(found) == 4


def test_a_project_for_cuda_and_vulkan_hears_of_no_other_platform() -> None:
    shown, found = warnings_of(options(target_platforms=("cuda", "vulkan")))
    assert shown == [] and len(found) == 4  # --json still lists them
    metal_only, _ = warnings_of(options(target_platforms=("metal",)))
    assert len(metal_only) == 2 and all("Metal" in ln for ln in metal_only)


def test_a_required_platform_is_a_target_and_an_error() -> None:
    opts = options(target_platforms=("vulkan",), require_platforms=("webgpu",))
    with pytest.raises(ArtifactError, match="required platforms"):
        warnings_of(opts)


def test_the_key_the_variable_and_the_option_are_typed() -> None:
    table = config.resolve(metadata={"target-platforms": ["cuda", "vulkan"]}, env={}, cli={})
    assert table.target_platforms == ("cuda", "vulkan")
    env = config.resolve(metadata={}, env={"RGPU_TARGET_PLATFORMS": "metal,dx12"}, cli={})
    assert env.target_platforms == ("metal", "dx12")
    assert config.resolve(metadata={"target-platforms": []}, env={}, cli={}).target_platforms == ()
    assert config.resolve(metadata={}, env={}, cli={}).target_platforms is None
    with pytest.raises(ConfigError, match=r"unknown platform `vulcan`.*vulkan"):
        config.resolve(metadata={"target-platforms": ["vulcan"]}, env={}, cli={})
