"""The runtime crate's own tests (crates/rgpu-runtime: its unit tests and tests/*.rs) with the
Vulkan backends built, on lavapipe: the cpu executor, device listing and selection (two
Vulkan devices), the Vulkan launch and transfer tests, and reliability: a kernel that never
ends is `Error::Timeout` naming it on cpu, ash and wgpu, and the process whose kernel timed
out still exits at once (each in a child process); load on one device from 8 threads. The
cuda tests need a GPU: the GPU tier runs them (scripts/gpu-tier.sh)."""

from __future__ import annotations

import os
import re
import subprocess

from tests.conftest import REPO
from tests.integration.conftest import LAVAPIPE


def test_the_runtime_crates_own_tests_pass_on_lavapipe() -> None:
    proc = subprocess.run(
        ["cargo", "test", "-p", "rgpu-runtime", "--features", "wgpu,ash", "--no-fail-fast"],
        cwd=REPO / "crates",
        # Every backend that can open here must: a Vulkan test never skips itself.
        env={**os.environ, **LAVAPIPE, "RGPU_REQUIRE_VULKAN": "1"},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "FAILED" not in proc.stdout, out[-4000:]
    passed = sum(int(n) for n in re.findall(r"test result: ok\. (\d+) passed", proc.stdout))
    assert passed >= 120, out[-3000:]
    # The endless kernels' children exited 0 in time (the parent test asserts it).
    for backend in ("ash", "wgpu"):
        assert f"test an_endless_kernel_times_out_on_{backend} ... ok" in proc.stdout, out[-3000:]
