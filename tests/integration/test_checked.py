"""Checked launches (`rgpu build --checked`, rgpu/checked.py) end to end with the real cargo:
a kernel reading `x[item.index() + 1]` (one past the end on the last item), then a correct
launch. On cpu, on wgpu and ash (lavapipe; wgpu also through naga) and on webgpu (headless
Chromium) the fault is an `rgpu::Error` naming the kernel, the place and the parameter
indexed there, and the device gives the next launch's right result; the checked PTX records
the fault in `RGPU_FAULT` and has no `trap`, the release PTX is the same before and after a
checked build; codegen nvvm is refused with the reason. The cuda run itself is
scripts/checked-gpu.sh (GPU)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TARGET_DIR, run_rgpu
from tests.integration.conftest import assert_clean_failure, kernels_dir

SHIFT = """

/// Reads one past its own item: on the last item, out of range.
#[rgpu::kernel]
pub fn read_past_end(item: rgpu::Item, x: &[f32], #[item] y: &mut f32) {
    *y = x[item.index() as usize + 1];
}

/// Counts each item one slot further on: the last item's slot is past the end.
#[rgpu::kernel]
pub fn count_past_end(item: rgpu::Item, counts: rgpu::Global<u32>) {
    counts.atomic_add(item.index() + 1, 1);
}
"""
PROGRAM = """//! `read_past_end` out of range, then `saxpy`.
fn main() {
    let (device, _) = rgpu::Device::select().expect("a device");
    let n = 64u32;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; n as usize];
    match kernel::read_past_end(&device, n, &x, &mut y) {
        Ok(()) => rgpu::println!("read_past_end: no error"),
        Err(e) => rgpu::println!("read_past_end: error: {e}"),
    }
    let mut counts = vec![0u32; n as usize];
    match kernel::count_past_end(&device, n, &mut counts) {
        Ok(()) => rgpu::println!("count_past_end: no error"),
        Err(e) => rgpu::println!("count_past_end: error: {e}"),
    }
    let mut z = vec![1.0f32; n as usize];
    kernel::saxpy(&device, n, 2.0, &x, &mut z).expect("saxpy");
    let right = z.iter().zip(&x).all(|(z, x)| *z == 2.0 * x + 1.0);
    rgpu::println!("saxpy after: {}", if right { "right" } else { "WRONG" });
}
"""
LINE = "kernel/src/lib.rs:21:10"
COUNT_LINE = "kernel/src/lib.rs:27:12"


def checked_workspace(parent: Path) -> Path:
    """The minimal template with `read_past_end` and the program `checked_fault` (also the GPU
    tier's: tests/gpu/test_checked_gpu.py)."""
    run_rgpu("new", "checkeddemo", "--template", "minimal", "--dir", str(parent))
    root = parent / "checkeddemo"
    with (root / "kernel" / "src" / "lib.rs").open("a", encoding="utf-8") as lib:
        lib.write(SHIFT)
    (root / "src" / "bin").mkdir(parents=True)
    (root / "src" / "bin" / "checked_fault.rs").write_text(PROGRAM, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checked_workspace(tmp_path_factory.mktemp("checked"))


def fault_program(backend: str, **extra: str) -> str:
    env = {**os.environ, "RGPU_BACKEND": backend, **extra}
    proc = subprocess.run(
        [str(TARGET_DIR / "release" / "checked_fault")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_cpu_release_panics_and_checked_returns_the_error(ws: Path) -> None:
    run_rgpu("build", "-C", str(ws))
    released = subprocess.run(
        [str(TARGET_DIR / "release" / "checked_fault")],
        env={**os.environ, "RGPU_BACKEND": "cpu"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert released.returncode != 0 and "index out of bounds" in released.stderr
    assert "checked" not in json.loads((kernels_dir(ws) / "manifest.json").read_text())

    run_rgpu("build", "-C", str(ws), "--checked")
    assert json.loads((kernels_dir(ws) / "manifest.json").read_text())["checked"] is True
    out = fault_program("cpu")
    assert out.splitlines() == expected_lines("cpu"), out


def ptx_strings(text: str) -> list[str]:
    """The PTX's byte-array globals as text (where rustc puts a panic's file name)."""
    found = re.finditer(r"\.b8 [^\[]+\[\d+\] = \{([\d, ]+)\}", text)
    return [bytes(int(b) for b in m.group(1).split(",")).decode("latin-1") for m in found]


def ptx(ws: Path) -> str:
    (file,) = sorted(kernels_dir(ws).glob("*-sm_90.ptx"))
    return file.read_text(encoding="utf-8")


def test_checked_ptx_records_the_fault_and_release_ptx_is_unchanged(ws: Path) -> None:
    build = ("build", "-C", str(ws), "--backend", "cuda", "--arch", "sm_90")
    run_rgpu(*build)
    release = ptx(ws)
    assert "RGPU_FAULT" not in release and "trap;" in release
    run_rgpu(*build, "--checked")
    checked = ptx(ws)
    assert ".visible .global .align 4 .b8 RGPU_FAULT[404];" in checked
    assert "trap;" not in checked
    # The bounds check's call still leads to the panic handler, which records and exits.
    assert "panic_bounds_check" in checked and "atom.relaxed.gpu.global.cas.b32" in checked
    # Every place a fault can name is the kernel's own source (`Global`'s check follows its
    # caller: track_caller), or the fault record's writer.
    places = {p for p in ptx_strings(checked) if p.endswith(".rs")}
    assert places == {"kernel/src/lib.rs", "vendor/rgpu-0.2.0/rgpu/src/device/nvptx/fault.rs"}
    run_rgpu(*build)
    assert ptx(ws) == release
    # The manifest of the release build says nothing of checking.
    assert "checked" not in json.loads((kernels_dir(ws) / "manifest.json").read_text())


def expected_lines(backend: str) -> list[str]:
    """What the program prints with a checked build on ``backend``: the same on every
    backend."""
    return [
        f"read_past_end: error: kernel `read_past_end` failed on {backend} at {LINE}: index "
        f"out of bounds: the len is 64 but the index is 64 of parameter `x` (checked launch): "
        f"fix the kernel at {LINE} (keep the index below the buffer's length)",
        f"count_past_end: error: kernel `count_past_end` failed on {backend} at {COUNT_LINE}: "
        f"Global: index 64 is past the 64 elements of the buffer of parameter `counts` "
        f"(checked launch): fix the kernel at {COUNT_LINE} (keep the index below the buffer's "
        f"length)",
        "saxpy after: right",
    ]


def test_checked_spirv_records_the_fault_on_lavapipe_and_in_chromium(ws: Path) -> None:
    """wgpu (passthrough and through naga) and ash on lavapipe, webgpu in headless Chromium
    (SwiftShader): the same errors as the cpu's (``Global``'s message from its checked
    build), the device usable after; the release module has no fault record and the
    manifest no sites."""
    backends = ("--backend", "wgpu", "--backend", "ash", "--backend", "webgpu")
    build = ("build", "-C", str(ws), *backends, "--yes")
    run_rgpu(*build, "--checked")
    manifest = json.loads((kernels_dir(ws) / "manifest.json").read_text())
    (spirv,) = [a for a in manifest["artifacts"] if a["kind"] == "spirv"]
    sites = spirv["extra"]["checked_faults"]
    assert (sites["set"], sites["binding"]) == (1, 0)
    assert any("index out of bounds" in s for s in sites["sites"])
    for backend, extra in (("wgpu", {}), ("wgpu", {"RGPU_WGPU_SHADER": "naga"}), ("ash", {})):
        out = fault_program(backend, **extra)
        assert out.splitlines() == expected_lines(backend), (backend, extra, out)
    web = run_rgpu("run", "-C", str(ws), "--backend", "webgpu", "--bin", "checked_fault")
    assert web.stdout.splitlines() == expected_lines("webgpu"), web.stderr[-3000:]
    run_rgpu(*build)
    manifest = json.loads((kernels_dir(ws) / "manifest.json").read_text())
    assert "checked" not in manifest
    assert all("checked_faults" not in a["extra"] for a in manifest["artifacts"])


def test_nvvm_is_refused_with_the_reason(ws: Path) -> None:
    nvvm = run_rgpu(
        "build", "-C", str(ws), "--backend", "cuda", "--codegen", "nvvm", "--checked",
        check=False,
    )  # fmt: skip
    assert_clean_failure(nvvm, 9)
    assert "codegen nvvm" in nvvm.stderr
