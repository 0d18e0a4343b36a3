"""doctor's pure parts: verdicts from check lines, rendering, parsed tool output, pin lines."""

from __future__ import annotations

from pathlib import Path

from rgpu.backends import BACKENDS
from rgpu.check import Check
from rgpu.doctor import checks as machine
from rgpu.doctor import devices, probes, report
from rgpu.doctor import pins as pin_lines
from rgpu.errors import ToolchainError
from rgpu.toolchains import rustup
from tests.unit.projects import fake_program, pin


def _checks(*fails: tuple[str, tuple[str, ...]]) -> list[Check]:
    base = [Check("cargo", "ok", "cargo 1.95.0", None, ("cargo",))]
    return base + [Check(name, "fail", "broken", "do this", need) for name, need in fails]


def test_a_failing_codegen_check_blocks_only_its_backends() -> None:
    checks = _checks(("spirv toolchain", ("spirv",)))
    assert not report.verdict_for(BACKENDS["wgpu"], None, checks).builds
    assert report.verdict_for(BACKENDS["wgpu"], None, checks).fix == "do this"
    assert report.verdict_for(BACKENDS["cuda"], None, checks).builds
    assert report.verdict_for(BACKENDS["cpu"], None, checks).builds


def test_the_verdict_of_cuda_follows_the_codegen_asked_for() -> None:
    checks = _checks(("nvvm llvm", ("nvvm",)))
    assert report.verdict_for(BACKENDS["cuda"], "nvptx", checks).builds
    assert not report.verdict_for(BACKENDS["cuda"], "nvvm", checks).builds


def test_a_missing_driver_means_builds_but_does_not_run() -> None:
    checks = [*_checks(), Check("nvidia driver", "warn", "none", "get one", ("cuda-run",))]
    verdict = report.verdict_for(BACKENDS["cuda"], "nvptx", checks)
    assert verdict.builds and not verdict.runs
    assert "does not run here" in verdict.why


def test_render_prints_one_line_per_check_with_its_fix() -> None:
    checks = _checks(("nvvm llvm", ("nvvm",)))
    found = report.Report(
        tuple(checks),
        (report.verdict_for(BACKENDS["cuda"], "nvvm", checks),),
        ("a note",),
        required=frozenset({"cargo", "nvvm"}),  # doctor --backend cuda --codegen nvvm
    )
    lines = report.render(found)
    assert lines[0].startswith("ok    cargo")
    assert lines[1].startswith("FAIL  nvvm llvm") and lines[1].endswith("-> fix: do this")
    assert "note: a note" in lines
    assert found.to_dict()["ok"] is False


def test_what_nobody_asked_for_reads_as_needed_only_for_it() -> None:
    checks = [
        *_checks(("nvvm llvm", ("nvvm",)), ("wasm target", ("wasm",))),
        Check("python", "fail", "Python 3.9", "install 3.11", ()),
    ]
    cpu = report.verdict_for(BACKENDS["cpu"], None, checks)
    webgpu = report.verdict_for(BACKENDS["webgpu"], None, checks)
    found = report.Report(tuple(checks), (cpu, webgpu), ())
    lines = report.render(found)
    assert lines[1].startswith("--    nvvm llvm    needed only for --backend cuda --codegen nvvm:")
    assert lines[1].endswith("-> fix: do this")  # the fix stays
    assert lines[2].startswith("--    wasm target  needed only for --backend webgpu: broken")
    assert lines[3].startswith("FAIL  python")  # needed by everything: a failure
    assert "backend webgpu (spirv): cannot build here: wasm target: broken" in "\n".join(lines)
    # The JSON report is complete and unchanged: the checks keep their status.
    assert [c["status"] for c in found.to_dict()["checks"]] == ["ok", "fail", "fail", "fail"]
    # Asked for (doctor --backend cuda --codegen nvvm), the nvvm lines are failures.
    asked = report.Report(
        tuple(checks),
        (report.verdict_for(BACKENDS["cuda"], "nvvm", checks),),
        (),
        required=frozenset({"cargo", "nvvm", "cuda-run"}),
    )
    lines = report.render(asked)
    assert lines[1].startswith("FAIL  nvvm llvm") and lines[2].startswith("--    wasm target")
    assert any(ln.startswith("backend cuda (nvvm): FAIL: nvvm llvm") for ln in lines)


def test_nvidia_smi_output_gives_driver_cuda_and_gpus() -> None:
    # The shape nvidia-smi prints (driver 580 / CUDA 13 as on the project's H100 machine).
    query = "580.95.05, NVIDIA H100 80GB HBM3\n"
    header = (
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 580.95.05        Driver Version: 580.95.05    CUDA Version: 13.0  |\n"
    )
    driver = probes.parse_nvidia_smi(query, header)
    assert driver == probes.Driver("580.95.05", "13.0", ("NVIDIA H100 80GB HBM3",))
    assert probes.newest_ptx_isa(driver.cuda) == "9.0"


def test_newest_ptx_isa_a_driver_accepts() -> None:
    cases = {"13.0": "9.0", "12.8": "8.7", "12.6": "8.5", "11.8": "7.8", "10.2": None, "x": None}
    assert {cuda: probes.newest_ptx_isa(cuda) for cuda in cases} == cases


def test_a_probe_that_raises_becomes_a_failed_line_with_a_fix() -> None:
    def check_broken_thing() -> list[Check]:
        raise ToolchainError("rustup answered nonsense", "reinstall rustup")

    (line,) = report._safely(check_broken_thing)
    assert (line.name, line.status, line.fix) == ("broken thing", "fail", "reinstall rustup")


def test_a_missing_cargo_fails_and_a_missing_rustup_only_warns(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    (cargo,) = machine.check_tool("cargo", ["cargo", "--version"], env, "https://rustup.rs")
    (rustup_line,) = machine.check_tool("rustup", ["rustup", "--version"], env, "https://rustup.rs")
    assert (cargo.status, cargo.needed_for) == ("fail", ("cargo",))
    assert rustup_line.status == "warn" and "rustup.rs" in (rustup_line.fix or "")


def test_a_failing_tool_is_reported_with_its_command(tmp_path: Path) -> None:
    fake_program(tmp_path, "cargo", "echo 'error: broken install' >&2\nexit 1\n")
    (line,) = machine.check_tool("cargo", ["cargo", "--version"], {"PATH": str(tmp_path)}, "x")
    assert line.status == "fail"
    assert line.detail == "`cargo --version` failed: error: broken install"


def test_an_uninstalled_pin_is_three_failed_lines_with_the_install_command() -> None:
    spirv = pin("spirv")
    lines = pin_lines.pin_checks(spirv, rustup.Status(spirv, None, {}, spirv.components))
    assert [c.name for c in lines] == ["spirv toolchain", "spirv components", "spirv commit hash"]
    assert all(c.failed and c.fix == "rgpu toolchain install spirv" for c in lines)
    assert "not exercised in rgpu's CI" not in lines[0].detail  # test_rust_gpu.py runs it
    nvvm = pin("nvvm")
    nvvm_lines = pin_lines.pin_checks(nvvm, rustup.Status(nvvm, None, {}, nvvm.components))
    assert "not exercised in rgpu's CI" in nvvm_lines[0].detail


def test_a_pin_rustup_cannot_answer_for_says_so() -> None:
    lines = pin_lines.pin_checks(pin("nvvm"), None, "`rustup toolchain list` failed: x")
    assert lines[0].detail.startswith("rustup did not answer: `rustup toolchain list` failed")


# A FIXTURE: `vulkaninfo --summary` of a machine with two GPUs and an old one (its layout as
# vulkan-tools 1.3 prints it; here only lavapipe enumerates).
VULKANINFO_SUMMARY = """\
Devices:
========
GPU0:
\tapiVersion         = 1.3.277
\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
\tdeviceName         = NVIDIA H100 80GB HBM3
GPU1:
\tapiVersion         = 1.3.277
\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
\tdeviceName         = NVIDIA H100 80GB HBM3
GPU2:
\tapiVersion         = 1.1.130
\tdeviceType         = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU
\tdeviceName         = Old iGPU
"""


def test_vulkan_devices_are_listed_in_vulkaninfo_order_with_the_old_ones_unusable() -> None:
    found = devices.parse_vulkaninfo(VULKANINFO_SUMMARY)
    assert [(d.index, d.name, d.kind) for d in found] == [
        (0, "NVIDIA H100 80GB HBM3", "discrete GPU"),
        (1, "NVIDIA H100 80GB HBM3", "discrete GPU"),
        (2, "Old iGPU", "integrated GPU"),
    ]
    assert [d.unusable for d in found] == [None, None, "Vulkan 1.1: the ash backend needs 1.2"]
    assert devices.parse_vulkaninfo("ERROR: no driver\n") == ()


def test_a_device_line_is_written_as_the_runtime_writes_it() -> None:
    # The same text as rgpu-runtime's DeviceInfo Display (src/devices.rs, its unit test).
    h100 = devices.Device(1, "NVIDIA H100 80GB HBM3", "discrete GPU", 80 << 30, "0000:19:00.0")
    assert h100.line() == "1: NVIDIA H100 80GB HBM3 (discrete GPU, 80.0 GiB, PCI 0000:19:00.0)"
    old = devices.Device(
        0, "old", "integrated GPU", unusable="Vulkan 1.1: the ash backend needs 1.2"
    )
    assert old.line() == "0: old (integrated GPU, unusable: Vulkan 1.1: the ash backend needs 1.2)"


def test_the_cpu_device_is_named_from_proc(tmp_path: Path) -> None:
    (tmp_path / "cpuinfo").write_text("processor\t: 0\nmodel name\t: AMD EPYC 7B13\n")
    (tmp_path / "meminfo").write_text("MemTotal:       24684096 kB\nMemFree: 1 kB\n")
    assert devices.cpu_device(tmp_path) == devices.Device(
        0, "AMD EPYC 7B13", "CPU", 24684096 * 1024
    )
    assert devices.cpu_device(tmp_path / "missing") == devices.Device(0, "CPU", "CPU")


def test_render_lists_each_backends_devices_or_why_it_has_none() -> None:
    listings = (
        devices.Listing("cuda", (), "no CUDA driver (libcuda.so.1 does not load)"),
        devices.Listing("cpu", (devices.Device(0, "AMD EPYC", "CPU"),), None),
    )
    found = report.Report((), (), (), listings)
    lines = report.render(found)
    assert "devices cuda: none: no CUDA driver (libcuda.so.1 does not load)" in lines
    assert "devices cpu: 0: AMD EPYC (CPU)" in lines
    assert found.to_dict()["devices"]["cpu"]["devices"][0]["name"] == "AMD EPYC"


def test_nccl_and_gpu_peers_lines_say_what_collectives_and_copies_can_use() -> None:
    # This machine: NCCL loads or not, and no second CUDA GPU (no peer line).
    found = probes.nccl_version()
    (nccl, *rest) = machine.check_several_gpus()
    assert nccl.name == "nccl"
    if found is None:
        assert nccl.status == "warn" and "libnccl.so.2" in nccl.detail
        assert nccl.fix is not None and "nvidia-nccl-cu12" in nccl.fix
    else:
        assert nccl.status == "ok" and nccl.detail.startswith(f"NCCL {found[1]} ({found[0]})")
    if devices.cuda_peers() is None:
        assert rest == []
