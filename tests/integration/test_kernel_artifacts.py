"""Issue 11, trust: `rgpu build --kernel-artifact FILE` checks a kernel made elsewhere before
it is embedded. Every refusal names the user's file (not rgpu's copy), exits with its
documented code, and leaves no copy under target/rgpu; an accepted file is recorded with
where it came from, reused by later builds without work, and dropped when the build no
longer asks for its arch (like the built artifacts of an arch dropped from cuda-archs).

The PTX files are real: the session's CUDA workspace built them (conftest.built_ptx)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.errors import ExitCode
from tests.conftest import run_rgpu
from tests.integration.conftest import (
    assert_clean_failure,
    files_with_mtimes,
    kernels_dir,
    manifest_of,
    new_workspace,
    ptx_of,
    started_commands,
)


@pytest.fixture(scope="module")
def fresh_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Never built: every build here is refused, so it stays that way."""
    return new_workspace(tmp_path_factory.mktemp("refused"), "refusedemo")


def user_file(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / "from-elsewhere" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def refused(ws: Path, *args: str, code: int, shows: str, user: Path) -> str:
    proc = run_rgpu("build", *args, cwd=ws, check=False)
    assert_clean_failure(proc, code)
    assert shows in proc.stderr, proc.stderr
    assert str(user) in proc.stderr  # the file as the user named it
    assert "/target/rgpu/kernels/external" not in proc.stderr  # never rgpu's copy
    rgpu_dir = ws / "target" / "rgpu"
    left = sorted(str(p.relative_to(rgpu_dir)) for p in rgpu_dir.rglob("*") if p.is_file())
    assert not [p for p in left if p.startswith("kernels")], left
    return proc.stderr


def test_ptx_for_an_arch_that_does_not_exist_is_refused(
    fresh_ws: Path, built_ptx: dict[str, Path], tmp_path: Path
) -> None:
    text = built_ptx["sm_90"].read_text(encoding="utf-8")
    bad = user_file(tmp_path, "k.ptx", text.replace(".target sm_90", ".target sm_999").encode())
    refused(fresh_ws, "--backend", "cuda", "--kernel-artifact", str(bad),
            code=ExitCode.ARTIFACT, shows="`sm_999` is not a CUDA arch", user=bad)  # fmt: skip


def test_ptx_for_an_arch_the_build_does_not_ask_for_is_refused(
    fresh_ws: Path, built_ptx: dict[str, Path]
) -> None:
    sm90 = built_ptx["sm_90"]
    err = refused(fresh_ws, "--backend", "cuda", "--arch", "sm_75", "--kernel-artifact",
                  str(sm90), code=ExitCode.ARTIFACT,
                  shows="is PTX for sm_90, but the build asks for sm_75", user=sm90)  # fmt: skip
    assert "--arch sm_90" in err  # the fix


@pytest.mark.parametrize("backend", ["wgpu", "ash"])
def test_ptx_given_to_a_vulkan_backend_is_refused(
    fresh_ws: Path, built_ptx: dict[str, Path], backend: str
) -> None:
    sm80 = built_ptx["sm_80"]
    err = refused(fresh_ws, "--backend", backend, "--kernel-artifact", str(sm80),
                  code=ExitCode.USAGE, shows="is PTX (.ptx), which the cuda backend runs",
                  user=sm80)  # fmt: skip
    assert f"SPIR-V (.spv) for {backend}" in err


@pytest.mark.parametrize(
    ("name", "data", "shows"),
    [
        ("empty.ptx", b"", "is empty, not PTX"),
        ("blank.ptx", b"\n  \n", "is empty, not PTX"),
        ("binary.ptx", bytes(range(256)) * 4, "is not PTX (not text)"),
        ("prose.ptx", b"this is not a kernel\n", "no .version, .target, .entry line"),
    ],
)
def test_empty_or_garbage_ptx_is_refused(
    fresh_ws: Path, tmp_path: Path, name: str, data: bytes, shows: str
) -> None:
    bad = user_file(tmp_path, name, data)
    refused(fresh_ws, "--backend", "cuda", "--kernel-artifact", str(bad),
            code=ExitCode.ARTIFACT, shows=shows, user=bad)  # fmt: skip


@pytest.mark.parametrize(
    ("data", "shows"),
    [(b"", "is not a SPIR-V module (0 bytes)"), (b"\0" * 64, "SPIR-V magic number")],
    ids=["empty", "garbage"],
)
def test_empty_or_garbage_spirv_is_refused(
    fresh_ws: Path, tmp_path: Path, data: bytes, shows: str
) -> None:
    bad = user_file(tmp_path, "k.spv", data)
    refused(fresh_ws, "--backend", "wgpu", "--kernel-artifact", str(bad),
            code=ExitCode.ARTIFACT, shows=shows, user=bad)  # fmt: skip


def test_ptx_that_ptxas_rejects_is_refused_with_ptxas_words(
    fresh_ws: Path, built_ptx: dict[str, Path], tmp_path: Path
) -> None:
    text = built_ptx["sm_80"].read_text(encoding="utf-8")
    assert "\tret;" in text
    bad = user_file(
        tmp_path, "broken.ptx", text.replace("\tret;", "\tnot_an_instruction;", 1).encode()
    )
    err = refused(fresh_ws, "--backend", "cuda", "--kernel-artifact", str(bad),
                  code=ExitCode.ARTIFACT, shows="ptxas rejected --kernel-artifact",
                  user=bad)  # fmt: skip
    assert "not_an_instruction" in err


def test_ptx_without_the_workspaces_kernels_is_refused(
    fresh_ws: Path, built_ptx: dict[str, Path], tmp_path: Path
) -> None:
    text = built_ptx["sm_80"].read_text(encoding="utf-8")
    other = user_file(
        tmp_path, "other.ptx", text.replace("bitonic_tile", "some_other_kernel").encode()
    )
    refused(fresh_ws, "--backend", "cuda", "--kernel-artifact", str(other),
            code=ExitCode.ARTIFACT, shows="lacks the workspace's kernels bitonic_tile",
            user=other)  # fmt: skip


def test_two_ptx_for_one_arch_are_refused_and_neither_is_copied(
    fresh_ws: Path, built_ptx: dict[str, Path], tmp_path: Path
) -> None:
    first = built_ptx["sm_80"]
    second = user_file(tmp_path, "again-sm_80.ptx", first.read_bytes())
    refused(fresh_ws, "--backend", "cuda", "--kernel-artifact", str(first),
            "--kernel-artifact", str(second), code=ExitCode.USAGE,
            shows="are both PTX (.ptx) for sm_80", user=second)  # fmt: skip


# --- accepted: recorded, reused without work, dropped when stale --------------------------


@pytest.fixture(scope="module")
def ext_ws(tmp_path_factory: pytest.TempPathFactory, built_ptx: dict[str, Path]) -> Path:
    """Built once with an external sm_80 PTX instead of compiling (the tests below run in
    order: each leaves the state the next one starts from)."""
    ws = new_workspace(tmp_path_factory.mktemp("external"), "extdemo")
    proc = run_rgpu(
        "build", "--backend", "cuda", "--kernel-artifact", str(built_ptx["sm_80"]), cwd=ws
    )
    assert "note: embedding --kernel-artifact" in proc.stderr
    assert not any("nvptx64-nvidia-cuda" in c for c in started_commands(proc.stderr))
    return ws


def test_an_accepted_ptx_is_copied_and_recorded_with_its_source(
    ext_ws: Path, built_ptx: dict[str, Path]
) -> None:
    cubin, artifact = manifest_of(ext_ws)
    given = built_ptx["sm_80"]
    assert artifact.codegen == "external" and artifact.source == str(given.resolve())
    assert artifact.target == "sm_80" and artifact.path == f"external/{given.name}"
    assert artifact.extra["ptxas"] == "accepted"
    copy = kernels_dir(ext_ws) / artifact.path
    assert copy.read_bytes() == given.read_bytes()
    # ptxas's check of it wrote its SASS, embedded beside it.
    assert (cubin.kind, cubin.codegen, cubin.target) == ("cubin", "external", "sm_80")
    assert cubin.path == f"external/{given.stem}.cubin" and cubin.source == artifact.source
    assert cubin.extra["ptx_sha256"] == artifact.sha256


def test_later_builds_reuse_it_without_any_work(ext_ws: Path, built_ptx: dict[str, Path]) -> None:
    before = files_with_mtimes(kernels_dir(ext_ws))
    plain = run_rgpu("build", cwd=ext_ws)
    assert "reusing" in plain.stderr and str(built_ptx["sm_80"].resolve()) in plain.stderr
    again = run_rgpu("build", "--backend", "cuda", "--kernel-artifact", str(built_ptx["sm_80"]),
                     cwd=ext_ws)  # fmt: skip
    for proc in (plain, again):
        assert started_commands(proc.stderr) == []
        assert "up to date, cargo not started" in proc.stderr
    assert files_with_mtimes(kernels_dir(ext_ws)) == before


def test_an_external_ptx_for_an_arch_no_longer_asked_for_is_dropped(
    ext_ws: Path, built_ptx: dict[str, Path]
) -> None:
    proc = run_rgpu("build", "--backend", "cuda", "--arch", "sm_90", cwd=ext_ws)
    given = str(built_ptx["sm_80"].resolve())
    assert f"no longer embedding {given}" in proc.stderr
    assert [(a.codegen, a.target) for a in ptx_of(ext_ws)] == [("nvptx", "sm_90")]
    assert sorted(p.name for p in kernels_dir(ext_ws).rglob("*")) == [
        "extdemo_kernel-sm_90.cubin",
        "extdemo_kernel-sm_90.ptx",
        "manifest.json",
    ]


def test_built_artifacts_of_an_arch_no_longer_asked_for_are_removed(ext_ws: Path) -> None:
    run_rgpu("build", "--backend", "cuda", "--arch", "sm_75,sm_90", cwd=ext_ws)
    assert sorted(a.target for a in ptx_of(ext_ws)) == ["sm_75", "sm_90"]
    sm75 = kernels_dir(ext_ws) / "extdemo_kernel-sm_75.ptx"
    assert sm75.is_file()
    run_rgpu("build", "--backend", "cuda", "--arch", "sm_90", cwd=ext_ws)
    assert [a.target for a in ptx_of(ext_ws)] == ["sm_90"]
    assert not sm75.exists() and not sm75.with_suffix(".cubin").exists()
    assert sorted(p.name for p in kernels_dir(ext_ws).iterdir()) == [
        "extdemo_kernel-sm_90.cubin",
        "extdemo_kernel-sm_90.ptx",
        "manifest.json",
    ]
