"""GPU tier (skipped without an NVIDIA GPU): the demo's `--bench --json` reports the device's
facts and, for each kernel the sort launched, the driver's statistics: CUDA's function
attributes, and on ash NVIDIA's VK_KHR_pipeline_executable_properties (issue 19's lever:
registers and spills per kernel on both APIs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import requires_gpu, run_rgpu

WORKSPACES: dict[str, Path] = {}


def workspace(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Path:
    """A demo built for `backend` alone (once per backend), so a cuda run needs no SPIR-V
    toolchain and an ash run no PTX one."""
    if backend not in WORKSPACES:
        parent = tmp_path_factory.mktemp(f"stats-{backend}")
        run_rgpu("new", "statsdemo", "--dir", str(parent))
        ws = parent / "statsdemo"
        arch = ("--arch", "native") if backend == "cuda" else ()
        run_rgpu("build", "--backend", backend, *arch, cwd=ws)
        WORKSPACES[backend] = ws
    return WORKSPACES[backend]


def bench_json(ws: Path, backend: str, algorithm: str) -> dict[str, Any]:
    proc = run_rgpu(
        "run", "--backend", backend, "--", "--algorithm", algorithm, "--len", "1000000",
        "--bench", "--json", cwd=ws,
    )  # fmt: skip
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1]
    result: dict[str, Any] = json.loads(line)
    # The lead reads these in the test log (pytest -s): registers and spills per kernel.
    print(json.dumps({k: result[k] for k in ("backend", "algorithm", "device_ms")}))
    for kernel in result["kernel_stats"] or []:
        print(json.dumps(kernel))
    return result


def registers(kernel: dict[str, Any]) -> int:
    """The summary field, else the driver's own register-named statistic."""
    if kernel["registers"] is not None:
        return int(kernel["registers"])
    named = [s["value"] for s in kernel["stats"] if "regist" in s["name"].lower()]
    assert named, f"no register statistic in {kernel['kernel']}: {kernel['stats']}"
    return int(named[0])


@requires_gpu
@pytest.mark.parametrize("algorithm", ["radix", "bitonic"])
@pytest.mark.parametrize("backend", ["cuda", "ash"])
def test_the_driver_reports_registers_for_each_demo_kernel(
    tmp_path_factory: pytest.TempPathFactory, backend: str, algorithm: str
) -> None:
    result = bench_json(workspace(tmp_path_factory, backend), backend, algorithm)
    assert result["sorted"] is True
    facts = result["device_facts"]
    assert facts["subgroup_size"] == 32 and facts["compute_unit"] == "SM", facts
    assert facts["compute_units"] > 0
    assert result["kernel_stats"], result.get("kernel_stats_unavailable")
    names = [k["kernel"] for k in result["kernel_stats"]]
    prefix = "prim_radix_" if algorithm == "radix" else "bitonic_"
    assert all(n.startswith(prefix) for n in names), names
    for kernel in result["kernel_stats"]:
        assert registers(kernel) > 0, kernel
        if backend == "cuda":
            assert kernel["source"] == "cuFuncGetAttribute"
            assert kernel["local_bytes"] is not None and kernel["shared_bytes"] is not None
        else:
            assert kernel["source"] == "VK_KHR_pipeline_executable_properties"
