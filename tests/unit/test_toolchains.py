"""What the machine has for compiling kernels: the pins (toolchains.pins), rustup
(toolchains.rustup, against a fake `rustup` program) and the other tools (toolchains.tools:
ptxas, the CUDA root, llvm-config, a system rustc), each found with the environment passed
in, so nothing here depends on this machine's toolchains."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rgpu.artifacts import ptx
from rgpu.errors import ToolchainError, ToolMissingError
from rgpu.toolchains import nvptx_routes, pins, rustup, tools
from tests.unit.projects import fake_program

PINS = {p.name: p for p in pins.load_all({})}
HEX40 = re.compile(r"^[0-9a-f]{40}$")
HOST = "x86_64-unknown-linux-gnu"


# --- pins ---------------------------------------------------------------------------------


def test_packaged_pins_are_spirv_nvvm_nvptx() -> None:
    assert set(PINS) == {"spirv", "nvvm", "nvptx"}


@pytest.mark.parametrize("name", ["spirv", "nvvm", "nvptx"])
def test_every_pin_records_where_and_when_it_was_confirmed(name: str) -> None:
    pin = PINS[name]
    assert pin.source.repository.startswith("https://")
    assert pin.source.rev and pin.source.file
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", pin.source.confirmed)
    assert f"Confirmed {pin.source.confirmed}" in pin.path.read_text(encoding="utf-8")


def test_spirv_pin_is_the_crates_io_release_with_its_nightly_and_hash() -> None:
    pin = PINS["spirv"]
    assert pin.channel == "nightly-2026-08-15"
    assert HEX40.match(pin.commit_hash)
    assert pin.table("cargo-gpu")["version"] == pin.source.rev == "0.11.0"
    assert set(pin.components) == {"rust-src", "rustc-dev", "llvm-tools"}
    assert pin.exercised_in_ci  # tests/integration/test_rust_gpu.py


def test_nvvm_pin_needs_llvm_7_cuda_12_and_has_an_image_per_cuda_major() -> None:
    pin = PINS["nvvm"]
    assert pin.channel == "nightly-2026-04-02"
    assert HEX40.match(pin.source.rev)
    assert pin.table("llvm")["major"] == 7
    assert pin.table("cuda")["min_version"] == "12.0"
    assert set(pin.table("images")) == {"12", "13"}
    assert all(i.startswith("ghcr.io/rust-gpu/rust-cuda-") for i in pin.table("images").values())
    assert pin.table("container")["default"] == "unless-llvm7"


def test_nvptx_pins_a_dated_nightly_and_names_a_system_toolchain() -> None:
    pin = PINS["nvptx"]
    assert pin.channel == "nightly-2026-10-30" and HEX40.match(pin.commit_hash)
    assert not pin.any_nightly
    assert pin.table("system")["packages"] == ["rustc-web", "cargo-web", "rust-web-src", "llvm-22"]
    assert set(pin.components) == {"rust-src", "llvm-tools", "llvm-bitcode-linker"}
    assert pin.table("system")["rustc"] == "/usr/bin/rustc"
    assert pin.table("container")["default"] == "local"
    assert pin.exercised_in_ci


def test_a_missing_table_reads_as_empty() -> None:
    assert PINS["nvptx"].table("images") == {}


def write_pin(directory: Path, name: str, channel: str = "nightly") -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.toml").write_text(
        f'name = "{name}"\nchannel = "{channel}"\ncomponents = ["rust-src"]\n'
        '[source]\nrepository = "https://example.com/x"\nrev = "1"\n',
        encoding="utf-8",
    )


def test_rgpu_toolchains_dir_replaces_the_packaged_pins(tmp_path: Path) -> None:
    write_pin(tmp_path, "nvptx", channel="nightly-2030-01-01")
    env = {pins.TOOLCHAINS_DIR_ENV: str(tmp_path)}
    assert [p.name for p in pins.load_all(env)] == ["nvptx"]
    pin = pins.load("nvptx", env)
    assert pin.channel == "nightly-2030-01-01" and pin.path == tmp_path / "nvptx.toml"
    with pytest.raises(ToolchainError, match="no pinned toolchain `spirv`"):
        pins.load("spirv", env)


def test_a_missing_rgpu_toolchains_dir_is_a_toolchain_error(tmp_path: Path) -> None:
    env = {pins.TOOLCHAINS_DIR_ENV: str(tmp_path / "nope")}
    with pytest.raises(ToolchainError) as err:
        pins.load_all(env)
    assert f"RGPU_TOOLCHAINS_DIR={tmp_path / 'nope'}" in err.value.message
    assert "unset it" in (err.value.hint or "")
    with pytest.raises(ToolchainError):
        pins.load("nvptx", env)


@pytest.mark.parametrize(
    "text",
    ["name = 'bad'\n", "name = \n", "\xff"],
    ids=["missing-channel", "bad-toml", "not-utf8"],
)
def test_a_broken_pin_file_is_a_toolchain_error_naming_the_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "bad.toml").write_bytes(text.encode("latin-1"))
    with pytest.raises(ToolchainError) as err:
        pins.load_all({pins.TOOLCHAINS_DIR_ENV: str(tmp_path)})
    assert f"cannot read toolchain pin {tmp_path / 'bad.toml'}" in err.value.message


def test_unknown_pin_name_suggests_the_close_one() -> None:
    with pytest.raises(ToolchainError, match="did you mean `spirv`"):
        pins.load("spirvv", {})


@pytest.mark.parametrize(
    ("name", "channel", "host"),
    [
        (f"nightly-2026-04-08-{HOST}", "nightly-2026-04-08", HOST),
        ("stable-aarch64-apple-darwin", "stable", "aarch64-apple-darwin"),
        ("1.95.0-x86_64-pc-windows-msvc", "1.95.0", "x86_64-pc-windows-msvc"),
        ("my-custom-toolchain", "my-custom-toolchain", None),
    ],
)
def test_split_host_keeps_dashes_inside_the_channel(
    name: str, channel: str, host: str | None
) -> None:
    assert pins.split_host(name) == (channel, host)


def test_component_names_lose_their_host_and_old_spelling() -> None:
    assert pins.normalize_component(f"llvm-tools-{HOST}") == "llvm-tools"
    assert pins.normalize_component("llvm-tools-preview") == "llvm-tools"
    assert pins.normalize_component("rust-src") == "rust-src"


# --- rustup: what it has, what is missing -------------------------------------------------


def test_missing_toolchain_installs_with_minimal_profile_and_every_component() -> None:
    found = rustup.Status(PINS["spirv"], None, {}, PINS["spirv"].components)
    assert found.install_argv() == [
        "rustup", "toolchain", "install", "nightly-2026-08-15", "--profile", "minimal",
        "--no-self-update", "-c", "rust-src", "-c", "rustc-dev", "-c", "llvm-tools",
    ]  # fmt: skip


def test_installed_toolchain_adds_only_the_missing_components() -> None:
    name = f"nightly-2026-08-15-{HOST}"
    info = {"commit-hash": PINS["spirv"].commit_hash}
    found = rustup.Status(PINS["spirv"], name, info, ("rustc-dev",))
    assert found.install_argv() == ["rustup", "component", "add", "--toolchain", name, "rustc-dev"]
    complete = rustup.Status(PINS["spirv"], name, info, ())
    assert complete.ok and complete.install_argv() is None


def test_a_different_commit_hash_is_not_ok() -> None:
    found = rustup.Status(PINS["spirv"], "nightly-2026-08-15", {"commit-hash": "0" * 40}, ())
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
    assert rustup.can_prompt(tty, env) is expected


def test_rgpu_yes_env() -> None:
    assert rustup.yes_from_env({"RGPU_YES": "1"})
    assert not rustup.yes_from_env({"RGPU_YES": "0"})
    assert not rustup.yes_from_env({})


def test_child_env_drops_the_toolchain_override() -> None:
    assert rustup.child_env({"RUSTUP_TOOLCHAIN": "stable", "A": "1"}) == {"A": "1"}


# A fake rustup that answers the commands rgpu runs from a directory of toolchains (one file
# per toolchain listing its components) and installs toolchains into it.
FAKE_RUSTUP = """
home="{home}"
case "$1 $2" in
  "toolchain list")
    for f in "$home"/toolchains/*; do [ -e "$f" ] && echo "${{f##*/}}"; done; : ;;
  "component list")
    while read -r line; do echo "$line-{host}"; done < "$home/toolchains/$5" ;;
  "run "*)
    read -r commit < "$home/commit"
    printf 'rustc 1.97.0-nightly\\ncommit-hash: %s\\nrelease: 1.97.0-nightly\\n' "$commit"
    printf 'LLVM version: 22.1.0\\n' ;;
  "toolchain install")
    file="$home/toolchains/$3-{host}"; : > "$file"; shift 3
    while [ $# -gt 0 ]; do
      if [ "$1" = "-c" ]; then echo "$2" >> "$file"; shift; fi
      shift
    done ;;
  *) echo "error: unexpected: $*" >&2; exit 1 ;;
esac
"""


def fake_rustup(
    tmp_path: Path, toolchains: dict[str, list[str]], commit: str = ""
) -> dict[str, str]:
    """The environment of a machine whose rustup has `toolchains` (name -> components)."""
    home = tmp_path / "rustup-home"
    (home / "toolchains").mkdir(parents=True)
    (home / "commit").write_text(commit + "\n")
    for name, components in toolchains.items():
        (home / "toolchains" / name).write_text("".join(f"{c}\n" for c in components))
    fake_program(tmp_path / "bin", "rustup", FAKE_RUSTUP.format(home=home, host=HOST))
    return {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path), "RUSTUP_HOME": str(home)}


def test_status_finds_a_nightly_with_every_pinned_component(tmp_path: Path) -> None:
    env = fake_rustup(
        tmp_path,
        {
            f"stable-{HOST}": ["rust-src"],
            f"nightly-2026-10-30-{HOST}": ["rust-src", "llvm-tools", "llvm-bitcode-linker"],
        },
        commit=PINS["nvptx"].commit_hash,
    )
    found = rustup.status(PINS["nvptx"], env)
    assert found.toolchain == f"nightly-2026-10-30-{HOST}"
    assert found.missing == () and found.ok
    assert found.rustc["release"] == "1.97.0-nightly"
    assert found.hash_ok is True


def test_status_names_the_missing_components(tmp_path: Path) -> None:
    env = fake_rustup(tmp_path, {f"nightly-2026-08-15-{HOST}": ["rust-src"]})
    found = rustup.status(PINS["spirv"], env)
    assert found.toolchain == f"nightly-2026-08-15-{HOST}"
    assert found.missing == ("rustc-dev", "llvm-tools") and not found.ok


def test_install_runs_only_what_is_missing_and_is_idempotent(
    tmp_path: Path, messages: object
) -> None:
    pin = PINS["spirv"]
    env = fake_rustup(tmp_path, {}, commit=pin.commit_hash)
    result = rustup.install(pin, env, yes=True, interactive=False, confirm=lambda _: False)
    assert result.before.toolchain is None
    assert result.ran == tuple(rustup.Status(pin, None, {}, pin.components).install_argv() or ())
    assert result.after.ok and result.after.toolchain == f"nightly-2026-08-15-{HOST}"
    again = rustup.install(pin, env, yes=True, interactive=False, confirm=lambda _: False)
    assert again.ran is None


def test_install_without_consent_or_terminal_says_how_to_allow_it(tmp_path: Path) -> None:
    env = fake_rustup(tmp_path, {})
    with pytest.raises(ToolchainError) as err:
        rustup.install(PINS["spirv"], env, yes=False, interactive=False, confirm=lambda _: True)
    assert "asks before installing" in err.value.message
    assert "rgpu toolchain install spirv --yes" in (err.value.hint or "")
    assert list((tmp_path / "rustup-home" / "toolchains").iterdir()) == []


def test_install_stops_on_a_toolchain_of_the_wrong_commit_hash(tmp_path: Path) -> None:
    pin = PINS["spirv"]
    env = fake_rustup(tmp_path, {f"nightly-2026-08-15-{HOST}": list(pin.components)}, "0" * 40)
    with pytest.raises(ToolchainError, match="commit hash"):
        rustup.install(pin, env, yes=True, interactive=False, confirm=lambda _: True)


def test_a_failing_rustup_is_named_not_reported_as_missing(tmp_path: Path) -> None:
    fake_program(tmp_path, "rustup", "echo 'error: settings.toml is corrupt' >&2\nexit 1\n")
    with pytest.raises(ToolchainError) as err:
        rustup._rustup(["toolchain", "list"], {"PATH": str(tmp_path)})
    assert err.value.message == "`rustup toolchain list` failed: error: settings.toml is corrupt"
    assert "install rustup" not in err.value.message + (err.value.hint or "")
    assert "run `rustup toolchain list`" in (err.value.hint or "")


def test_a_failing_rustup_without_output_gives_its_exit_code(tmp_path: Path) -> None:
    fake_program(tmp_path, "rustup", "exit 3\n")
    with pytest.raises(ToolchainError, match="failed: exit code 3"):
        rustup.rustup_toolchains({"PATH": str(tmp_path)})


def test_a_missing_rustup_says_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(ToolMissingError) as err:
        rustup._rustup(["toolchain", "list"], {"PATH": str(tmp_path)})
    assert "rustup.rs" in (err.value.hint or "")
    assert rustup.rustup_toolchains({"PATH": str(tmp_path)}) is None
    found = rustup.status(PINS["nvptx"], {"PATH": str(tmp_path)})
    assert found.rustup_missing and found.summary() == "rustup is not installed"
    with pytest.raises(ToolMissingError, match="rustup is not installed"):
        rustup.install(
            PINS["nvptx"], {"PATH": str(tmp_path)}, yes=True, interactive=False, confirm=bool
        )


def test_nvptx_prefers_a_rustup_nightly_with_its_components(tmp_path: Path) -> None:
    components = ["rust-src", "llvm-tools", "llvm-bitcode-linker"]
    env = fake_rustup(
        tmp_path,
        {f"nightly-2026-11-01-{HOST}": components, f"nightly-2026-10-30-{HOST}": components},
        commit=PINS["nvptx"].commit_hash,
    )
    toolchain = nvptx_routes.find_toolchain(PINS["nvptx"], env)
    assert toolchain.kind == "pinned"
    assert toolchain.cargo == ("cargo", "+nightly-2026-10-30")  # the pin, not another nightly
    assert toolchain.checks[0].detail.startswith("route: the pinned rustup nightly-2026-10-30")
    assert toolchain.env == {} and toolchain.ready
    assert toolchain.rustc_version == "1.97.0-nightly"


# --- tools: ptxas, CUDA, LLVM, a system rustc ----------------------------------------------


def test_ptxas_on_path_comes_first(tmp_path: Path) -> None:
    on_path = fake_program(tmp_path / "bin", "ptxas", "exit 0\n")
    fake_program(tmp_path / "cuda" / "bin", "ptxas", "exit 0\n")
    env = {"PATH": str(tmp_path / "bin"), "CUDA_PATH": str(tmp_path / "cuda")}
    assert tools.find_ptxas(env) == str(on_path)


def test_ptxas_under_cuda_path_is_found_without_path_or_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools, "_wheel_dirs", list)
    in_cuda = fake_program(tmp_path / "cuda" / "bin", "ptxas", "exit 0\n")
    env = {"PATH": str(tmp_path / "empty"), "CUDA_PATH": str(tmp_path / "cuda")}
    assert tools.find_ptxas(env) == str(in_cuda)


def test_no_ptxas_anywhere_is_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if Path("/usr/local/cuda/bin/ptxas").is_file():
        pytest.skip("this machine has /usr/local/cuda/bin/ptxas, which find_ptxas always tries")
    monkeypatch.setattr(tools, "_wheel_dirs", list)
    assert tools.find_ptxas({"PATH": str(tmp_path), "CUDA_PATH": str(tmp_path / "no")}) is None


def test_the_nvidia_cuda_nvcc_wheel_ptxas_is_found_in_this_python(tmp_path: Path) -> None:
    found = tools.find_ptxas({"PATH": str(tmp_path)})
    assert found is not None, "no ptxas: `pip install nvidia-cuda-nvcc` (setup-test-env.sh)"
    assert "/nvidia/cu" in found


def test_ptxas_version_is_its_release_line(tmp_path: Path) -> None:
    ptxas = fake_program(
        tmp_path, "ptxas", "echo 'ptxas: NVIDIA'\necho 'Cuda compilation tools, release 13.5'\n"
    )
    assert ptx.ptxas_version(str(ptxas), {}) == "Cuda compilation tools, release 13.5"


def test_cuda_root_is_the_first_variable_naming_a_directory(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    env = {"CUDA_PATH": str(tmp_path / "missing"), "CUDA_ROOT": str(tmp_path / "root")}
    assert tools.cuda_root(env, default_roots=()) == tmp_path / "root"


def test_cuda_root_falls_back_to_the_first_existing_default(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    roots = (str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "c"))
    assert tools.cuda_root({}, default_roots=roots) == tmp_path / "b"
    assert tools.cuda_root({}, default_roots=(str(tmp_path / "a"),)) is None


def test_cuda_major_comes_from_version_json(tmp_path: Path) -> None:
    (tmp_path / "version.json").write_text(json.dumps({"cuda": {"version": "13.0.2"}}))
    assert tools.cuda_major(tmp_path) == "13"
    assert tools.cuda_major(tmp_path / "missing") is None
    assert tools.cuda_major(None) is None


def test_llvm_config_from_the_variable_reports_its_major(tmp_path: Path) -> None:
    fake = fake_program(tmp_path, "llvm-config", "echo 7.1.0\n")
    found = tools.llvm_config({"LLVM_CONFIG": str(fake), "PATH": str(tmp_path / "none")})
    assert found == tools.LlvmConfig(str(fake), "7.1.0")
    assert found.major == "7"


def test_llvm_config_on_path_is_used_without_the_variable(tmp_path: Path) -> None:
    fake = fake_program(tmp_path, "llvm-config", "echo 22.1.8\n")
    found = tools.llvm_config({"PATH": str(tmp_path)})
    assert found is not None and (found.program, found.major) == (str(fake), "22")


def test_a_missing_or_failing_llvm_config_is_none(tmp_path: Path) -> None:
    assert tools.llvm_config({"PATH": str(tmp_path)}) is None
    broken = fake_program(tmp_path, "broken", "exit 1\n")
    assert tools.llvm_config({"LLVM_CONFIG": str(broken), "PATH": str(tmp_path)}) is None


def test_rustc_vv_parsing_gives_hash_and_llvm_major() -> None:
    info = tools.parse_rustc_vv(
        "rustc 1.96.0 (ac68faa20 2026-05-25)\nbinary: rustc\ncommit-hash: ac68faa2\n"
        "release: 1.96.0\nLLVM version: 22.1.8\n"
    )
    assert info["commit-hash"] == "ac68faa2"
    assert tools.llvm_major(info) == 22
    assert tools.llvm_major({}) is None


def test_a_system_rustc_with_library_sources_is_described(tmp_path: Path) -> None:
    sysroot = tmp_path / "sysroot"
    (sysroot / "lib/rustlib/src/rust/library/core").mkdir(parents=True)
    rustc = fake_program(
        tmp_path / "bin",
        "rustc",
        f"""
        if [ "$1" = "-vV" ]; then
          printf 'rustc 1.96.0\\ncommit-hash: ac68\\nrelease: 1.96.0\\nLLVM version: 22.1.8\\n'
        else
          echo {sysroot}
        fi
        """,
    )
    found = tools.system_rust(str(rustc), {})
    assert found is not None
    assert (found.release, found.commit_hash, found.llvm_major) == ("1.96.0", "ac68", 22)
    assert found.rust_src == sysroot / "lib/rustlib/src/rust/library"
    assert tools.system_rust(str(tmp_path / "no-rustc"), {}) is None
