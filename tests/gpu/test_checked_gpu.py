"""GPU tier (skipped without an NVIDIA GPU): a checked build's out-of-range read on cuda is
an `rgpu::Error` naming the kernel and the place, and the CUDA context gives the next
launch's right result (a release build's trap would have lost it). Where the GPU machine
has no cargo, scripts/checked-gpu.sh runs the same program built here."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import requires_gpu, run_rgpu
from tests.integration.test_checked import checked_workspace, fault_program


@requires_gpu
def test_a_checked_cuda_launch_returns_the_fault_and_the_context_goes_on(tmp_path: Path) -> None:
    ws = checked_workspace(tmp_path)
    run_rgpu("build", "--backend", "cuda", "--arch", "native", "--checked", cwd=ws)
    first, count, after = fault_program("cuda").splitlines()
    assert first.startswith(
        "read_past_end: error: kernel `read_past_end` failed on cuda at kernel/src/lib.rs:21:"
    )
    assert "index out of bounds: the len is 64 but the index is 64 of parameter `x`" in first
    assert count.startswith(
        "count_past_end: error: kernel `count_past_end` failed on cuda at kernel/src/lib.rs:27:12:"
        " Global: index 64 is past the 64 elements of the buffer of parameter `counts`"
    )
    assert after == "saxpy after: right"
