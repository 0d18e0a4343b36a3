"""A new workspace, built and run by the real cargo on the CPU backend, as a user would: the
demo for every key type, order and edge size, its file formats and errors, and the
workspace's own checks (cargo test, fmt, clippy with every backend feature) with plain cargo.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TARGET_DIR, run_rgpu

KEY_TYPES = ("u32", "i32", "f32")
ORDERS = ("asc", "desc")
EDGE_SIZES = (0, 1, 2, 3, 1000, 2047, 2049, 1 << 16, (1 << 20) + 7)


@pytest.fixture(scope="module")
def built(sortdemo: Path) -> Path:
    """The demo binary, built once through `rgpu build`."""
    result = run_rgpu("build", "--json", cwd=sortdemo)
    data = json.loads(result.stdout)
    assert data["ok"] and data["backends"] == ["cpu"] and data["features"] == []
    assert data["artifacts"] == []  # the cpu backend embeds no kernels
    (binary,) = [Path(t["path"]) for t in data["targets"] if t["kind"] == "bin"]
    assert binary == TARGET_DIR / "release" / "sortdemo"
    assert binary.is_file()
    return binary


def demo(binary: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(binary), *args], capture_output=True, text=True, check=False, timeout=600
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.mark.parametrize("key_type", KEY_TYPES)
@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("algorithm", ("bitonic", "radix"))
def test_demo_sorts_every_type_order_and_edge_size(
    built: Path, key_type: str, order: str, algorithm: str
) -> None:
    for n in EDGE_SIZES:
        out = demo(built, "--backend", "cpu", "--algorithm", algorithm, "--len", str(n),
                   "--type", key_type, "--order", order, "--verify", "--json")  # fmt: skip
        result = json.loads(out.stdout)
        assert result == {
            "backend": "cpu", "device": 0, "algorithm": algorithm, "len": n, "type": key_type,
            "order": order, "sorted": True, "verified": True, "ms": result["ms"],
            "device_ms": result["device_ms"],
        }  # fmt: skip
        assert isinstance(result["ms"], float) and result["ms"] >= 0
        # The time of the sort's launches (on the cpu backend, the host's cores); with under
        # two keys nothing is launched.
        if n < 2:
            assert result["device_ms"] is None
        else:
            assert isinstance(result["device_ms"], float) and result["device_ms"] >= 0


def test_bench_json_adds_the_device_facts_and_why_the_cpu_has_no_kernel_stats(
    built: Path,
) -> None:
    """`--bench --json` keeps every key of the plain JSON and adds what the device says:
    subgroups of 1 and the worker threads; the cpu has no driver statistics, and says so."""
    result = json.loads(
        demo(built, "--backend", "cpu", "--len", "5000", "--bench", "--json").stdout
    )
    plain = json.loads(demo(built, "--backend", "cpu", "--len", "5000", "--json").stdout)
    assert set(plain) < set(result)
    assert set(result) - set(plain) == {"device_facts", "kernel_stats", "kernel_stats_unavailable"}
    assert {k: result[k] for k in ("backend", "len", "sorted")} == {
        "backend": "cpu", "len": 5000, "sorted": True
    }  # fmt: skip
    facts = result["device_facts"]
    assert (facts["subgroup_size"], facts["subgroup_min"], facts["subgroup_max"]) == (1, 1, 1)
    assert isinstance(facts["compute_units"], int) and facts["compute_units"] >= 1
    assert facts["compute_unit"] == "thread"
    assert result["kernel_stats"] is None
    reason = result["kernel_stats_unavailable"]
    assert reason.startswith("cpu: no per-kernel statistics: the cpu backend runs kernels as Rust")
    assert "use the cuda or ash backend" in reason


def test_user_data_round_trips_through_text_with_float_specials(
    built: Path, tmp_path: Path
) -> None:
    keys = ["3", "-0.0", "NaN", "", "inf", "-inf", "-NaN", "1e-45", "0.0", "-2.5"]
    (tmp_path / "in.txt").write_text("\n".join(keys) + "\n")
    demo(built, "--type", "f32", "--input", str(tmp_path / "in.txt"),
         "--output", str(tmp_path / "out.txt"), "--verify")  # fmt: skip
    lines = (tmp_path / "out.txt").read_text().split()
    assert lines == ["-NaN", "-inf", "-2.5", "-0.0", "0.0", "1e-45", "3.0", "inf", "NaN"]
    demo(built, "--type", "f32", "--order", "desc", "--input", str(tmp_path / "in.txt"),
         "--output", str(tmp_path / "desc.txt"), "--verify")  # fmt: skip
    assert (tmp_path / "desc.txt").read_text().split() == lines[::-1]


def test_binary_format_round_trips(built: Path, tmp_path: Path) -> None:
    values = [5, -1, 2**31 - 1, -(2**31), 0, 7]
    (tmp_path / "in.bin").write_bytes(struct.pack(f"<{len(values)}i", *values))
    demo(built, "--type", "i32", "--format", "bin", "--input", str(tmp_path / "in.bin"),
         "--output", str(tmp_path / "out.bin"))  # fmt: skip
    data = (tmp_path / "out.bin").read_bytes()
    assert list(struct.unpack(f"<{len(values)}i", data)) == sorted(values)


@pytest.mark.parametrize(
    ("content", "key_type", "message"),
    [
        ("1\n2\nabc\n", "u32", ":3: `abc` is not a valid u32"),
        ("1\n4294967296\n", "u32", ":2: `4294967296` does not fit in u32"),
        ("-1\n", "u32", ":1: `-1` does not fit in u32"),
        ("0\n2147483648\n", "i32", ":2: `2147483648` does not fit in i32"),
        ("1.5\n1e39\n", "f32", ":2: `1e39` does not fit in f32"),
        ("1.5\n1,5\n", "f32", ":2: `1,5` is not a valid f32"),
    ],
)
def test_bad_input_lines_are_named(
    built: Path, tmp_path: Path, content: str, key_type: str, message: str
) -> None:
    path = tmp_path / "in.txt"
    path.write_text(content)
    out = demo(built, "--type", key_type, "--input", str(path),
               "--output", str(tmp_path / "out.txt"), check=False)  # fmt: skip
    assert out.returncode == 1
    assert f"error: {path}{message}" in out.stderr
    assert not (tmp_path / "out.txt").exists()


def test_binary_file_of_the_wrong_size_is_refused(built: Path, tmp_path: Path) -> None:
    path = tmp_path / "in.bin"
    path.write_bytes(b"\x01\x02\x03\x04\x05")
    out = demo(built, "--format", "bin", "--input", str(path), check=False)
    assert out.returncode == 1
    assert "5 bytes is not a whole number of 4-byte keys" in out.stderr


@pytest.mark.parametrize("backend", ["cuda", "wgpu", "ash"])
def test_backends_not_built_in_say_how_to_get_them(built: Path, backend: str) -> None:
    out = demo(built, "--backend", backend, "--len", "10", check=False)
    assert out.returncode == 1
    assert f"built without the {backend} feature: run rgpu build --backend {backend}" in out.stderr


def test_auto_falls_back_to_cpu_and_says_so(built: Path) -> None:
    out = demo(built, "--backend", "auto", "--len", "100", "--verify")
    assert "notice: sorting on cpu" in out.stderr
    assert "on cpu [CPU" in out.stdout
    assert "verified: identical to Rust's sort" in out.stdout


def test_workspace_passes_cargo_test_fmt_and_clippy_without_rgpu(sortdemo: Path) -> None:
    """The checks README.md and the CI jobs run, with plain cargo; clippy with every GPU
    backend's feature too (the launchers and hosts rgpu build would compile in)."""
    env = {**os.environ, "CARGO_TARGET_DIR": str(TARGET_DIR)}
    clippy = ["cargo", "clippy", "--workspace", "--all-targets"]
    for argv in (
        ["cargo", "fmt", "--check"],
        [*clippy, "--", "-D", "warnings"],
        [*clippy, "--features", "cuda,wgpu,ash", "--", "-D", "warnings"],
        ["cargo", "test", "--release"],
    ):
        proc = subprocess.run(argv, cwd=sortdemo, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    assert "every_built_backend_matches_rusts_sort ... ok" in proc.stdout
    assert "the_kernels_sort_on_the_cpu_executor ... ok" in proc.stdout
    assert "test result: FAILED" not in proc.stdout


def test_rgpu_run_and_test_work_from_a_subdirectory(sortdemo: Path, built: Path) -> None:
    out = run_rgpu("run", "--", "--len", "1000", "--verify", cwd=sortdemo / "kernel" / "src")
    assert "verified: identical to Rust's sort" in out.stdout
    tested = run_rgpu("test", "-C", str(sortdemo / "src"))
    assert "test result: ok" in tested.stdout + tested.stderr


def test_dry_run_prints_the_plan_and_builds_nothing(sortdemo: Path) -> None:
    out = run_rgpu("build", "--dry-run", "--debug", "-C", str(sortdemo))
    assert f"(cd {sortdemo} && cargo build --workspace --bins --examples --tests)" in out.stdout
    as_json = json.loads(run_rgpu("build", "--dry-run", "--json", "-C", str(sortdemo)).stdout)
    assert as_json["dry_run"] is True
    assert as_json["plan"]["steps"][0]["argv"][:2] == ["cargo", "build"]


def test_second_build_with_nothing_changed_does_not_start_cargo(
    sortdemo: Path, built: Path
) -> None:
    again = run_rgpu("build", "-C", str(sortdemo))
    assert "up to date, cargo not started" in again.stderr
    main_rs = sortdemo / "src" / "main.rs"
    main_rs.write_text(main_rs.read_text())  # same content, new mtime
    rebuilt = run_rgpu("build", "-C", str(sortdemo))
    assert "+ cargo build" in rebuilt.stderr
