"""GPU tier (skipped without an NVIDIA GPU): build for this GPU, sort, and run the parity
checks with the CUDA backend required (all key types, both orders, 0 .. 2^24 keys)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import requires_gpu, run_rgpu


@requires_gpu
def test_cuda_sorts_and_matches_rusts_sort(tmp_path: Path) -> None:
    run_rgpu("new", "gpudemo", "--dir", str(tmp_path))
    ws = tmp_path / "gpudemo"
    run_rgpu("build", "--backend", "cuda", "--arch", "native", cwd=ws)
    proc = run_rgpu("run", "--backend", "cuda", "--", "--len", "1000000", "--verify", cwd=ws)
    assert "on cuda [" in proc.stdout and "verified: identical to Rust's sort" in proc.stdout
    proc = run_rgpu("test", cwd=ws, env={"RGPU_REQUIRE_BACKENDS": "cuda"})
    assert "PASSED cuda" in proc.stderr
