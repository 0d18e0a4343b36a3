"""Pure parts of toolchains and doctor: the packaged pins, name parsing, plans, verdicts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rgpu import doctor, probes, toolchains
from rgpu.doctor_checks import Check
from rgpu.errors import ToolchainError

PINS = {p.name: p for p in toolchains.load_all({})}
HEX40 = re.compile(r"^[0-9a-f]{40}$")


def test_packaged_pins_are_spirv_nvvm_nvptx() -> None:
    assert set(PINS) == {"spirv", "nvvm", "nvptx"}


@pytest.mark.parametrize("name", ["spirv", "nvvm", "nvptx"])
def test_every_pin_records_where_and_when_it_was_confirmed(name: str) -> None:
    pin = PINS[name]
    assert pin.source.repository.startswith("https://github.com/")
    assert pin.source.rev and pin.source.file
    assert pin.source.confirmed == "2026-11-22"
    assert "Confirmed 2026-11-22" in pin.path.read_text(encoding="utf-8")


def test_spirv_pin_has_channel_and_full_commit_hash() -> None:
    pin = PINS["spirv"]
    assert pin.channel == "nightly-2026-04-08"
    assert HEX40.match(pin.commit_hash)
    assert HEX40.match(pin.source.rev)
    assert set(pin.components) == {"rust-src", "rustc-dev", "llvm-tools"}
    assert not pin.exercised_in_ci


def test_nvvm_pin_needs_llvm_7_cuda_12_and_has_an_image_per_cuda_major() -> None:
    pin = PINS["nvvm"]
    assert pin.channel == "nightly-2026-04-02"
    assert pin.tables["llvm"]["major"] == 7
    assert pin.tables["cuda"]["min_version"] == "12.0"
    assert set(pin.tables["images"]) == {"12", "13"}
    assert all(i.startswith("ghcr.io/rust-gpu/rust-cuda-") for i in pin.tables["images"].values())


def test_nvptx_accepts_any_nightly_and_names_a_system_toolchain() -> None:
    pin = PINS["nvptx"]
    assert pin.any_nightly
    assert set(pin.components) == {"rust-src", "llvm-tools", "llvm-bitcode-linker"}
    assert pin.tables["system"]["rustc"] == "/usr/bin/rustc"
    assert pin.exercised_in_ci


@pytest.mark.parametrize(
    ("name", "channel", "host"),
    [
        (
            "nightly-2026-04-08-x86_64-unknown-linux-gnu",
            "nightly-2026-04-08",
            "x86_64-unknown-linux-gnu",
        ),
        ("stable-aarch64-apple-darwin", "stable", "aarch64-apple-darwin"),
        ("1.95.0-x86_64-pc-windows-msvc", "1.95.0", "x86_64-pc-windows-msvc"),
        ("my-custom-toolchain", "my-custom-toolchain", None),
    ],
)
def test_split_host_keeps_dashes_inside_the_channel(
    name: str, channel: str, host: str | None
) -> None:
    assert toolchains.split_host(name) == (channel, host)


def test_component_names_lose_their_host_and_old_spelling() -> None:
    assert toolchains.normalize_component("llvm-tools-x86_64-unknown-linux-gnu") == "llvm-tools"
    assert toolchains.normalize_component("llvm-tools-preview") == "llvm-tools"
    assert toolchains.normalize_component("rust-src") == "rust-src"


def test_rustc_vv_parsing_gives_hash_and_llvm_major() -> None:
    info = toolchains.parse_rustc_vv(
        "rustc 1.96.0 (ac68faa20 2026-05-25)\nbinary: rustc\ncommit-hash: ac68faa2\n"
        "release: 1.96.0\nLLVM version: 22.1.8\n"
    )
    assert info["commit-hash"] == "ac68faa2"
    assert toolchains.llvm_major(info) == 22


def test_missing_toolchain_installs_with_minimal_profile_and_every_component() -> None:
    found = toolchains.Status(PINS["spirv"], None, {}, PINS["spirv"].components)
    assert found.install_argv() == [
        "rustup", "toolchain", "install", "nightly-2026-04-08", "--profile", "minimal",
        "-c", "rust-src", "-c", "rustc-dev", "-c", "llvm-tools",
    ]  # fmt: skip


def test_installed_toolchain_adds_only_the_missing_components() -> None:
    name = "nightly-2026-04-08-x86_64-unknown-linux-gnu"
    info = {"commit-hash": PINS["spirv"].commit_hash}
    found = toolchains.Status(PINS["spirv"], name, info, ("rustc-dev",))
    assert found.install_argv() == ["rustup", "component", "add", "--toolchain", name, "rustc-dev"]
    complete = toolchains.Status(PINS["spirv"], name, info, ())
    assert complete.ok and complete.install_argv() is None


def test_a_different_commit_hash_is_not_ok() -> None:
    found = toolchains.Status(PINS["spirv"], "nightly-2026-04-08", {"commit-hash": "0" * 40}, ())
    assert found.hash_ok is False and not found.ok
    assert "!= pinned" in found.summary()


@pytest.mark.parametrize(
    ("tty", "env", "expected"),
    [
        (True, {}, True),
        (False, {}, False),
        (True, {"CI": "true"}, False),
        (True, {"CI": "1"}, False),
    ],
)
def test_rgpu_prompts_only_a_person_at_a_terminal(
    tty: bool, env: dict[str, str], expected: bool
) -> None:
    assert toolchains.can_prompt(tty, env) is expected


def test_rgpu_yes_env() -> None:
    assert toolchains.yes_from_env({"RGPU_YES": "1"})
    assert not toolchains.yes_from_env({"RGPU_YES": "0"})
    assert not toolchains.yes_from_env({})


def test_unknown_pin_name_suggests_the_close_one() -> None:
    with pytest.raises(ToolchainError, match="did you mean `spirv`"):
        toolchains.load("spirvv", {})


def test_broken_pin_file_is_a_toolchain_error(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("name = 'bad'\n", encoding="utf-8")
    with pytest.raises(ToolchainError, match="cannot read toolchain pin"):
        toolchains.load_all({"RGPU_TOOLCHAINS_DIR": str(tmp_path)})


@pytest.mark.parametrize(
    ("cuda", "isa"),
    [("13.0", "9.0"), ("12.8", "8.7"), ("12.6", "8.5"), ("11.8", "7.8"), ("10.2", None)],
)
def test_newest_ptx_isa_a_driver_accepts(cuda: str, isa: str | None) -> None:
    assert probes.newest_ptx_isa(cuda) == isa


def _checks(*fails: tuple[str, tuple[str, ...]]) -> list[Check]:
    base = [Check("cargo", "ok", "cargo 1.95.0", None, ("cargo",))]
    return base + [Check(name, "fail", "broken", "do this", need) for name, need in fails]


def test_a_failing_codegen_check_blocks_only_its_backends() -> None:
    checks = _checks(("spirv toolchain", ("spirv",)))
    assert not doctor.verdict_for("wgpu", None, checks).builds
    assert doctor.verdict_for("wgpu", None, checks).fix == "do this"
    assert doctor.verdict_for("cuda", None, checks).builds
    assert doctor.verdict_for("cpu", None, checks).builds


def test_a_missing_driver_means_builds_but_does_not_run() -> None:
    checks = [*_checks(), Check("nvidia driver", "warn", "none", "get one", ("cuda-run",))]
    verdict = doctor.verdict_for("cuda", "nvptx", checks)
    assert verdict.builds and not verdict.runs
    assert "does not run here" in verdict.why


def test_render_prints_one_line_per_check_with_its_fix() -> None:
    checks = _checks(("nvvm llvm", ("nvvm",)))
    report = doctor.Report(tuple(checks), (doctor.verdict_for("cpu", None, checks),), ("a note",))
    lines = doctor.render(report)
    assert lines[0].startswith("ok    cargo")
    assert lines[1].startswith("FAIL  nvvm llvm") and lines[1].endswith("-> fix: do this")
    assert "note: a note" in lines


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


def test_a_probe_that_raises_becomes_a_failed_line_with_a_fix() -> None:
    def check_broken_thing() -> list[Check]:
        raise ToolchainError("rustup answered nonsense", "reinstall rustup")

    (line,) = doctor._safely(check_broken_thing)
    assert (line.name, line.status, line.fix) == ("broken thing", "fail", "reinstall rustup")
