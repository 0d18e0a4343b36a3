"""The host half of a build: the `cargo build` step and what its JSON messages say
(host.build), choosing and running a program (host.run), and the per-backend test summary
(host.test)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rgpu.backends import BACKENDS, parse_backends
from rgpu.cuda_archs import CudaArchs
from rgpu.errors import BackendUnavailableError, UsageError
from rgpu.host import build as host
from rgpu.host import run as host_run
from rgpu.host import state
from rgpu.host import test as host_test
from rgpu.workspace import Workspace
from tests.unit.projects import demo_workspace, options


def workspace(root: Path, default_binary: str | None = None) -> Workspace:
    return Workspace(
        root=root,
        kernel_dir=root / "kernel",
        kernel_package="demo-kernel",
        metadata={},
        target_dir=root / "target",
        default_binary=default_binary,
    )


# --- host.build ---------------------------------------------------------------------------


def test_cpu_host_build_is_plain_cargo_build_of_every_target(tmp_path: Path) -> None:
    step = host.host_step(workspace(tmp_path), [BACKENDS["cpu"]], "release")
    assert step.argv == (
        "cargo", "build", "--release", "--workspace", "--bins", "--examples", "--tests",
    )  # fmt: skip
    assert step.cwd == tmp_path
    assert step.env == {} and step.unset_env == ()


def test_gpu_backends_add_the_kernel_crates_features(tmp_path: Path) -> None:
    backends = [BACKENDS["cpu"], BACKENDS["cuda"], BACKENDS["wgpu"], BACKENDS["cuda"]]
    step = host.host_step(workspace(tmp_path), backends, "debug")
    assert step.argv == (
        "cargo", "build", "--workspace", "--bins", "--examples", "--tests",
        "--features", "demo-kernel/cuda,demo-kernel/wgpu",
    )  # fmt: skip
    assert step.env == {}


def test_the_host_plan_is_the_one_step(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path)
    (step,) = host.host_plan(ws, [BACKENDS["ash"]], "release").steps
    assert step.argv[-2:] == ("--features", "demo-kernel/ash")


def artifact_line(root: Path, manifest: Path, kind: str, name: str, **extra: object) -> str:
    record: dict[str, object] = {
        "reason": "compiler-artifact",
        "manifest_path": str(manifest),
        "target": {"kind": [kind], "name": name},
        "profile": {"test": False},
        "filenames": [],
        "executable": None,
    }
    record.update(extra)
    return json.dumps(record)


def test_cargo_messages_give_the_workspaces_programs_and_outputs(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    release = root / "target" / "release"
    passed: list[str] = []
    messages = host.ArtifactMessages(root, passed.append)
    lines = [
        artifact_line(
            root, tmp_path / "home/.cargo/registry/src/bytemuck-1.0/Cargo.toml", "lib",
            "bytemuck", filenames=[str(release / "deps/libbytemuck-1.rlib")],
        ),
        artifact_line(
            root, root / "kernel/Cargo.toml", "lib", "demo_kernel",
            filenames=[str(release / "deps/libdemo_kernel-2.rlib")],
        ),
        artifact_line(
            root, root / "Cargo.toml", "bin", "demo",
            filenames=[str(release / "demo")], executable=str(release / "demo"),
        ),
        artifact_line(
            root, root / "Cargo.toml", "example", "bench",
            executable=str(release / "examples/bench"),
        ),
        artifact_line(
            root, root / "Cargo.toml", "bin", "demo", profile={"test": True},
            executable=str(release / "deps/demo-3"),
        ),
        '{"reason":"build-finished","success":true}',
        "running 1 test",
    ]  # fmt: skip
    for line in lines:
        messages(line)
    assert messages.targets == [
        state.Target(name="demo", kind="bin", path=str(release / "demo")),
        state.Target(name="bench", kind="example", path=str(release / "examples/bench")),
    ]
    assert release / "deps/libbytemuck-1.rlib" not in messages.outputs
    assert release / "deps/libdemo_kernel-2.rlib" in messages.outputs
    assert release / "deps/demo-3" in messages.outputs
    assert passed == lines[-2:]  # everything but artifacts goes to the inner handler


def test_without_an_inner_handler_plain_lines_are_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = host.ArtifactMessages(tmp_path, None)
    messages("test result: ok")
    messages('{"reason":"build-finished"}')
    assert capsys.readouterr().out == "test result: ok\n"


def test_dep_infos_are_the_d_files_of_the_outputs_that_exist(tmp_path: Path) -> None:
    release = tmp_path / "release"
    (release / "deps").mkdir(parents=True)
    for name in ("demo.d", "deps/demo_kernel-2.d"):
        (release / name).write_text("")
    outputs = [
        release / "demo",
        release / "deps/libdemo_kernel-2.rlib",
        release / "deps/libdemo_kernel-2.rmeta",
        release / "examples/bench",
    ]
    assert host.dep_infos(outputs) == [release / "demo.d", release / "deps/demo_kernel-2.d"]


# --- host.run -----------------------------------------------------------------------------

TARGETS = [
    state.Target(name="demo", kind="bin", path="/t/demo"),
    state.Target(name="tool", kind="bin", path="/t/tool"),
    state.Target(name="bench", kind="example", path="/t/examples/bench"),
]


def test_run_chooses_the_named_bin_or_example(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert host_run.choose(TARGETS, ws, "tool", None).path == "/t/tool"
    assert host_run.choose(TARGETS, ws, None, "bench").path == "/t/examples/bench"


def test_run_uses_the_default_binary_of_the_workspace(tmp_path: Path) -> None:
    assert host_run.choose(TARGETS, workspace(tmp_path, "demo"), None, None).name == "demo"


def test_run_uses_the_only_binary(tmp_path: Path) -> None:
    only = [TARGETS[0], TARGETS[2]]
    assert host_run.choose(only, workspace(tmp_path), None, None).name == "demo"


def test_run_with_several_binaries_lists_them(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        host_run.choose(TARGETS, workspace(tmp_path), None, None)
    assert "has 2 binaries (demo, tool)" in err.value.message
    assert "--bin NAME" in (err.value.hint or "")


def test_run_of_an_unknown_binary_lists_what_was_built(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        host_run.choose(TARGETS, workspace(tmp_path), "tol", None)
    assert "no bin named `tol`" in err.value.message and "did you mean `tool`" in err.value.message
    assert err.value.hint == "bins built: demo, tool"


def test_run_without_binaries_says_how_to_add_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        host_run.choose([TARGETS[2]], workspace(tmp_path), None, None)
    assert "has 0 binaries (none)" in err.value.message
    assert "--example NAME" in (err.value.hint or "")


def test_a_program_killed_by_a_signal_exits_128_plus_n_and_says_so(
    messages: io.StringIO,
) -> None:
    assert host_run.exit_code(-6, "/t/release/demo") == 134
    text = messages.getvalue()
    assert "demo was killed by SIGABRT (6)" in text and "128+N" in text


def test_a_normal_exit_code_passes_through(messages: io.StringIO) -> None:
    assert host_run.exit_code(3, "/t/demo") == 3
    assert messages.getvalue() == ""


# --- host.test ----------------------------------------------------------------------------


def record(backend: str, status: str, test: str = "t", reason: str = "") -> dict[str, str]:
    return {"backend": backend, "status": status, "test": test, "reason": reason}


def test_summary_is_per_backend_and_never_calls_a_skip_passed() -> None:
    records = [
        record("cpu", "passed", "sorts"),
        record("cpu", "passed", "empty"),
        record("cuda", "passed", "sorts"),
        record("cuda", "failed", "empty", "got 3, want 4"),
        record("wgpu", "skipped", "sorts", "no Vulkan device"),
    ]
    results = host_test.summarize(["cpu", "cuda", "wgpu", "ash"], records)
    assert results == [
        host_test.BackendResult("cpu", "passed", "empty, sorts"),
        host_test.BackendResult("cuda", "failed", "empty: got 3, want 4"),
        host_test.BackendResult("wgpu", "skipped", "no Vulkan device"),
        host_test.BackendResult("ash", "not reported", "no test reported a result for it"),
    ]


def test_a_backend_whose_one_record_is_a_skip_is_skipped_with_its_reason() -> None:
    (result,) = host_test.summarize(["wgpu"], [record("wgpu", "skipped", "a", "no device")])
    assert (result.status, result.detail) == ("skipped", "no device")


def test_a_passed_backend_names_only_the_tests_that_passed() -> None:
    records = [record("wgpu", "skipped", "a", "no device"), record("wgpu", "passed", "b")]
    (result,) = host_test.summarize(["wgpu"], records)
    assert (result.status, result.detail) == ("passed", "b")


def test_the_report_file_keeps_only_backend_records(tmp_path: Path) -> None:
    path = tmp_path / "report.jsonl"
    path.write_text(
        '{"backend": "cpu", "status": "passed", "test": "t"}\nnot json\n{"other": 1}\n[]\n'
    )
    assert host_test.read_report(path) == [{"backend": "cpu", "status": "passed", "test": "t"}]
    assert host_test.read_report(tmp_path / "missing") == []


def test_testing_a_backend_not_built_in_says_how_to_build_it() -> None:
    built = state.State(backends=parse_backends(["cpu", "wgpu"]), profile="release")
    host_test.require_built([BACKENDS["cpu"]], built)
    with pytest.raises(BackendUnavailableError) as err:
        host_test.require_built(parse_backends(["wgpu", "cuda"]), built)
    assert "backend cuda is not built in (built: cpu, wgpu)" in err.value.message
    assert err.value.hint == "build it first: `rgpu build --backend cuda`"


def test_asked_backends_are_required_and_the_only_ones_tested(tmp_path: Path) -> None:
    report = tmp_path / "r.jsonl"
    env = host_test.test_env(
        parse_backends(["wgpu", "ash"]), report, {"RGPU_REQUIRE_BACKENDS": "cpu"}
    )
    assert env == {
        "RGPU_TEST_REPORT": str(report),
        "RGPU_REQUIRE_BACKENDS": "cpu,wgpu,ash",
        "RGPU_TEST_BACKENDS": "wgpu,ash",
    }
    assert host_test.test_env([], report, {}) == {"RGPU_TEST_REPORT": str(report)}


def test_the_test_step_is_cargo_test_with_the_built_features(tmp_path: Path) -> None:
    built = state.State(
        backends=parse_backends(["cpu", "cuda"]), profile="debug", features=("demo-kernel/cuda",)
    )
    (step,) = host_test.test_plan(workspace(tmp_path), built, {"A": "1"}).steps
    assert step.argv == ("cargo", "test", "--workspace", "--features", "demo-kernel/cuda")
    assert step.env == {"A": "1"}


def test_build_state_round_trips_and_a_broken_one_reads_as_none(tmp_path: Path) -> None:
    built = state.State(
        backends=(BACKENDS["cpu"],), profile="release", targets=(TARGETS[0],), features=("x/cuda",)
    )
    state.write(tmp_path, built)
    assert state.read(tmp_path) == built
    (tmp_path / state.BUILD_STATE).write_text("{}")
    assert state.read(tmp_path) is None


def test_rgpu_test_and_run_build_again_with_the_last_builds_settings(tmp_path: Path) -> None:
    built = options(cuda_archs=CudaArchs.parse(["sm_90"]), codegen="nvvm", docker=True)
    recorded = state.State(
        backends=(BACKENDS["cuda"],), profile="debug", settings=state.settings_of(built)
    )
    state.write(tmp_path, recorded)
    back = state.read(tmp_path)
    assert back is not None and back.settings["cuda_archs"] == ["sm_90"]
    now = options()  # the defaults: what `rgpu test` resolved before it read build.json
    again = state.again(now, back, profile_given=False)
    assert (again.cuda_archs.names(), again.codegen, again.docker) == (("sm_90",), "nvvm", True)
    assert again.profile == "debug" and "last build" in again.docker_source
    assert state.again(now, back, profile_given=True).profile == now.profile  # --release wins
    assert state.again(now, None, profile_given=False) == now  # no build yet
