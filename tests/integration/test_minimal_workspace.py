"""`rgpu new NAME --template minimal` end to end with the real cargo: `rgpu test` and `rgpu
run` on the cpu backend, plain cargo build/test/fmt/clippy, and `rgpu build --backend cuda`
(one arch) with PTX that ptxas accepts, and `rgpu doc` (rustdoc of the kernel API). No GPU
needed; wgpu/ash are not built (minutes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rgpu.artifacts import ptx
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import run_rgpu
from tests.integration.conftest import json_result
from tests.integration.test_init_story import cargo


@pytest.fixture(scope="module")
def minimal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("minimal")
    run_rgpu("new", "saxpydemo", "--template", "minimal", "--dir", str(parent))
    return parent / "saxpydemo"


def test_rgpu_test_reports_the_cpu_backend_passed(minimal: Path) -> None:
    proc = run_rgpu("test", "-C", str(minimal))
    assert "test every_built_backend_matches_plain_rust ... ok" in proc.stdout
    lines = [line.split() for line in proc.stderr.splitlines()]
    assert ["passed", "cpu:", "saxpy"] in lines, proc.stderr[-3000:]


def test_rgpu_run_checks_the_result_against_plain_rust(minimal: Path) -> None:
    proc = run_rgpu("run", "-C", str(minimal), "--", "--n", "100000", "--check")
    assert proc.stdout == (
        "saxpy on cpu: n = 100000, y[..4] = [0.0, 3.0, 6.0, 9.0]\ncheck: identical to plain Rust\n"
    )
    bad = run_rgpu("run", "-C", str(minimal), "--", "--colour", check=False)
    assert bad.returncode == 1 and "unknown argument `--colour`" in bad.stderr


def test_plain_cargo_builds_tests_formats_and_lints_it(minimal: Path) -> None:
    cargo("fmt", "--check", cwd=minimal)
    cargo("clippy", "--all-targets", "--", "-D", "warnings", cwd=minimal)
    cargo("build", cwd=minimal)
    assert "test every_built_backend_matches_plain_rust ... ok" in cargo("test", cwd=minimal)


def test_rgpu_build_cuda_makes_ptx_that_ptxas_accepts(minimal: Path) -> None:
    result = run_rgpu("build", "-C", str(minimal), "--backend", "cuda", "--arch", "sm_80",
                      "--json")  # fmt: skip
    data = json.loads(result.stdout)
    assert data["ok"] and "cuda" in data["backends"]
    artifact, cubin = data["artifacts"]  # the PTX and its SASS (rgpu/artifacts/sass.py)
    assert (cubin["kind"], cubin["target"]) == ("cubin", "sm_80")
    assert cubin["extra"]["ptx_sha256"] == artifact["sha256"]
    assert artifact["entry_points"] == ["saxpy"] and artifact["extra"]["ptxas"] == "accepted"
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    file = minimal / "target" / "rgpu" / "kernels" / artifact["path"]
    assert ptx.check_with_ptxas(ptxas, file, "sm_80", os.environ, file.name) == "accepted"
    # What CI's compile job runs on it, as JSON (rgpu/schemas/check-ptx.schema.json).
    checked = json_result(run_rgpu("ci", "check-ptx", "-C", str(minimal), "--json"),
                          "check-ptx.schema.json")  # fmt: skip
    assert checked["ok"] and checked["error"] is None
    assert sorted((c["kind"], c["arch"], c["ok"]) for c in checked["checks"]) == [
        ("cubin", "sm_80 SASS", True),
        ("ptx", "sm_80", True),
    ]


def test_rgpu_doc_documents_the_kernel_api(minimal: Path) -> None:
    proc = run_rgpu("doc", "-C", str(minimal), "--json")
    said = "the kernel API's documentation: "
    # In the workspace's target directory (the suite shares one: CARGO_TARGET_DIR).
    page = Path(proc.stderr.split(said, 1)[1].splitlines()[0])
    assert json_result(proc, "doc.schema.json") == {"ok": True, "page": str(page)}
    assert page.parts[-3:] == ("doc", "rgpu", "index.html") and page.is_file(), proc.stderr
    group = (page.parent / "struct.Group.html").read_text(encoding="utf-8")
    for method in ("subgroup_shuffle_xor", "subgroup_min", "subgroup_inclusive_add", "barrier"):
        assert method in group
    floats = (page.parent / "trait.Float.html").read_text(encoding="utf-8")
    assert all(f"fn.{name}" in floats or name in floats for name in ("rsqrt", "exp", "tanh"))
