"""`rgpu build --kernel-artifact FILE` (artifacts.external): a file of a kind a backend being
built uses, checked where the user keeps it, copied only once it passed."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from rgpu.artifacts import external, manifest
from rgpu.cuda_archs import Arch
from rgpu.errors import ArtifactError, UsageError
from rgpu.spirv import module as spirv_module
from rgpu.toolchains import tools
from tests.unit.projects import tiny_ptx

CUDA: dict[str, tuple[str, ...]] = {"ptx": ("cuda",)}
VULKAN: dict[str, tuple[str, ...]] = {"spirv": ("wgpu", "ash")}


def spirv_module_bytes(*entry_points: str) -> bytes:
    """A SPIR-V module header and one GLCompute OpEntryPoint per name (what rgpu reads)."""
    words = [spirv_module.MAGIC, 0x00010500, 0, 16, 0]
    for index, name in enumerate(entry_points, start=1):
        raw = name.encode() + b"\0"
        raw += b"\0" * (-len(raw) % 4)
        name_words = struct.unpack(f"<{len(raw) // 4}I", raw)
        count = 3 + len(name_words)
        words += [(count << 16) | spirv_module.OP_ENTRY_POINT, 5, index, *name_words]
    return struct.pack(f"<{len(words)}I", *words)


@pytest.fixture
def no_spirv_val(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spirv_module, "spirv_val_argv", lambda path, target: None)


def test_artifact_kinds_come_from_the_file_suffix() -> None:
    assert external.kind_of(Path("a.spv")) == "spirv"
    assert external.kind_of(Path("a.ptx")) == "ptx"
    with pytest.raises(UsageError, match="unknown kind"):
        external.kind_of(Path("kernel.bin"))


def test_ptx_is_refused_when_no_cuda_backend_is_built() -> None:
    with pytest.raises(UsageError) as err:
        external.check_kinds([Path("k.ptx")], VULKAN)
    assert "k.ptx is PTX (.ptx), which the cuda backend runs" in err.value.message
    assert "SPIR-V (.spv) for wgpu/ash" in err.value.message
    assert "--backend cuda" in (err.value.hint or "")


def test_spirv_is_refused_when_only_cuda_is_built() -> None:
    with pytest.raises(UsageError) as err:
        external.check_kinds([Path("k.spv")], CUDA)
    assert "which the wgpu or ash backend runs" in err.value.message
    assert "PTX (.ptx) for cuda" in err.value.message
    assert "--backend wgpu" in (err.value.hint or "")


def test_any_artifact_is_refused_for_a_cpu_only_build() -> None:
    with pytest.raises(UsageError, match="the cpu backend, which embeds no kernels"):
        external.check_kinds([Path("k.spv")], {})


def test_kinds_a_backend_uses_are_accepted() -> None:
    external.check_kinds([Path("k.ptx"), Path("k.spv")], {**CUDA, **VULKAN})


def test_a_bad_ptx_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    mine = tmp_path / "mine" / "k.ptx"
    mine.parent.mkdir()
    mine.write_text("not ptx at all\n")
    out = tmp_path / "kernels"
    with pytest.raises(ArtifactError) as err:
        external.collect([mine], out, required=(), cuda_archs=(Arch(80),), ptxas=None)
    assert err.value.message.startswith(f"--kernel-artifact {mine} is not PTX")
    assert not (out / external.EXTERNAL_DIR / "k.ptx").exists()


def test_a_bad_spirv_is_refused_before_it_is_copied(tmp_path: Path) -> None:
    mine = tmp_path / "k.spv"
    mine.write_bytes(b"#version 450\n")
    out = tmp_path / "kernels"
    with pytest.raises(ArtifactError) as err:
        external.collect([mine], out, required=(), cuda_archs=(), ptxas=None)
    assert str(mine) in err.value.message
    assert not (out / external.EXTERNAL_DIR).exists()


def test_ptx_for_an_arch_the_build_does_not_ask_for_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "k.ptx"
    mine.write_text(tiny_ptx("sm_86"))
    with pytest.raises(ArtifactError, match="but the build asks for sm_80"):
        external.collect([mine], tmp_path / "out", required=(), cuda_archs=(Arch(80),), ptxas=None)


def test_required_entry_points_come_from_the_required_argument(tmp_path: Path) -> None:
    mine = tmp_path / "k.ptx"
    mine.write_text(tiny_ptx("sm_80"))
    out = tmp_path / "out"
    with pytest.raises(ArtifactError) as err:
        external.collect([mine], out, required=("k", "merge"), cuda_archs=(), ptxas=None)
    assert err.value.message == (
        f"--kernel-artifact {mine} lacks the workspace's kernels merge (it has: k)"
    )
    assert not (out / external.EXTERNAL_DIR / "k.ptx").exists()


def test_a_spirv_module_lacking_a_kernel_is_refused(tmp_path: Path, no_spirv_val: None) -> None:
    mine = tmp_path / "k.spv"
    mine.write_bytes(spirv_module_bytes("add_one"))
    with pytest.raises(ArtifactError, match="lacks the workspace's kernels merge"):
        external.collect([mine], tmp_path / "out", required=("merge",), cuda_archs=(), ptxas=None)


def test_a_good_ptx_is_copied_under_external_and_described(tmp_path: Path) -> None:
    mine = tmp_path / "k.ptx"
    mine.write_text(tiny_ptx("sm_80"))
    out = tmp_path / "out"
    (found,) = external.collect([mine], out, required=("k",), cuda_archs=(), ptxas=None)
    assert (out / "external" / "k.ptx").read_bytes() == mine.read_bytes()
    assert (found.path, found.kind, found.codegen) == ("external/k.ptx", "ptx", "external")
    assert (found.target, found.entry_points, found.source) == ("sm_80", ("k",), str(mine))
    assert found.extra == {"ptx_isa": "7.0", "ptxas": "not run: no ptxas found"}


def test_a_good_spirv_module_is_copied_and_described(tmp_path: Path, no_spirv_val: None) -> None:
    mine = tmp_path / "k.spv"
    mine.write_bytes(spirv_module_bytes("add_one", "merge"))
    out = tmp_path / "out"
    (found,) = external.collect([mine], out, required=("merge",), cuda_archs=(), ptxas=None)
    assert (out / "external" / "k.spv").is_file()
    assert (found.kind, found.target) == ("spirv", external.SPIRV_TARGET)
    assert found.entry_points == ("add_one", "merge")
    assert found.extra["spirv_val"] == "not run: no spirv-val"


def test_two_files_of_one_kind_and_target_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "k.ptx").write_text(tiny_ptx("sm_80"))
    paths = [tmp_path / "a" / "k.ptx", tmp_path / "b" / "k.ptx"]
    with pytest.raises(UsageError, match="are both PTX"):
        external.collect(paths, tmp_path / "out", required=(), cuda_archs=(), ptxas=None)


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        external.collect(
            [tmp_path / "gone.ptx"], tmp_path / "out", required=(), cuda_archs=(), ptxas=None
        )


def artifact(kind: str, codegen: str, target: str = "t") -> manifest.Artifact:
    return manifest.Artifact(
        path=f"{codegen}.{kind}", kind=kind, codegen=codegen, target=target, entry_points=(),
        size=1, sha256="0",
    )  # fmt: skip


def test_reusable_returns_earlier_external_artifacts_of_the_kinds_asked() -> None:
    previous = [
        artifact("ptx", "external"),
        artifact("ptx", "nvptx"),
        artifact("spirv", "external"),
    ]
    assert external.reusable(previous, {"ptx"}) == [previous[0]]
    assert external.reusable(previous, ["ptx", "spirv"]) == [previous[0], previous[2]]
    assert external.reusable(previous, ()) == []


def test_a_ptx_that_ptxas_accepts_brings_its_sass(tmp_path: Path) -> None:
    """The real ptxas checks the file and its SASS is embedded beside it (external/k.cubin),
    naming the PTX it came from."""
    ptxas = tools.find_ptxas(os.environ)
    assert ptxas is not None, "no ptxas: `pip install nvidia-cuda-nvcc` (setup-test-env.sh)"
    mine = tmp_path / "k.ptx"
    mine.write_text(tiny_ptx("sm_80"))
    out = tmp_path / "out"
    ptx, cubin = external.collect([mine], out, required=("k",), cuda_archs=(), ptxas=ptxas)
    assert (cubin.path, cubin.kind, cubin.codegen) == ("external/k.cubin", "cubin", "external")
    assert (cubin.target, cubin.entry_points, cubin.source) == ("sm_80", ("k",), str(mine))
    assert cubin.extra["ptx"] == ptx.path and cubin.extra["ptx_sha256"] == ptx.sha256
    assert (out / cubin.path).read_bytes()[:4] == b"\x7fELF"


def test_an_external_ptxs_cubin_is_reused_and_dropped_with_it() -> None:
    ptx = artifact("ptx", "external", target="sm_80")
    cubin = artifact("cubin", "external", target="sm_80")
    previous = [ptx, cubin, artifact("spirv", "external")]
    assert external.reusable(previous, {"ptx"}) == [ptx, cubin]
    assert external.reusable(previous, {"ptx"}, cuda_archs=(Arch(80),)) == [ptx, cubin]
    assert external.reusable(previous, {"ptx"}, cuda_archs=(Arch(90),)) == []
    assert external.reusable(previous, {"spirv"}) == [previous[2]]
