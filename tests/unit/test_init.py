"""`rgpu init` (scaffold.init): an existing Cargo project becomes an rgpu workspace through
round-trip edits planned in memory; conflicts stop it before anything is written; Ctrl-C
undoes every write. No cargo runs here (tests/integration/test_init_story.py builds one)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from rgpu import __version__
from rgpu.cli import main
from rgpu.errors import ConfigError, DestinationError, ExitCode, InterruptedByUser, UsageError
from rgpu.scaffold import changes, init, rollback
from rgpu.scaffold.init import Request, plan_project
from rgpu.scaffold.vendor import crate_files

VENDOR = f"vendor/rgpu-{__version__}"
RGPU_DEP = f'rgpu = {{ version = "={__version__}", path = "{VENDOR}/rgpu" }}'

BIN_MANIFEST = """\
# histo: brightness histograms
[package]
name = "histo"  # the binary's name too
version = "0.3.0"
edition = "2021"

[dependencies]
# none yet

[profile.release]
lto = true
"""

BIN_AFTER = f"""\
# histo: brightness histograms
[package]
name = "histo"  # the binary's name too
version = "0.3.0"
edition = "2021"

[dependencies]
# none yet
kernel = {{ package = "histo-kernel", path = "kernel" }}
rgpu = {{ workspace = true }}

[profile.release]
lto = true

[features]
# GPU backends, for plain `cargo build --features cuda` (rgpu build uses the kernel crate's).
cuda = ["kernel/cuda"]
wgpu = ["kernel/wgpu"]
ash = ["kernel/ash"]
webgpu = ["kernel/webgpu"]

[workspace]
members = ["kernel"]
exclude = ["vendor"]

[workspace.dependencies]
{RGPU_DEP}

[workspace.metadata.rgpu]
# rgpu reads this table; cargo ignores it.
kernel = "kernel"
binary = "histo"
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def snapshot(directory: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(directory).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(directory.rglob("*"))
    }


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


def do_init(root: Path, **request: Any) -> init.InitPlan:
    plan = plan_project(root, Request(**request))
    init.apply(plan)
    return plan


def manifest(root: Path, rel: str = "Cargo.toml") -> dict[str, Any]:
    return tomllib.loads((root / rel).read_text())


def words(plan: init.InitPlan) -> dict[str, str]:
    return {c.path: c.word for c in plan.changes}


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    """A binary package, with a build script of its own."""
    return write(
        tmp_path / "histo",
        {
            "Cargo.toml": BIN_MANIFEST,
            "src/main.rs": "fn main() {}\n",
            "build.rs": 'fn main() { println!("cargo:rerun-if-changed=build.rs"); }\n',
        },
    )


# -- the shapes of project ----------------------------------------------------------------


def test_a_binary_package_gets_the_kernel_crate_the_vendored_crates_and_round_trip_edits(
    binary: Path,
) -> None:
    before = (binary / "build.rs").read_bytes()
    plan = do_init(binary)
    assert (binary / "Cargo.toml").read_text() == BIN_AFTER
    w = words(plan)
    assert w["Cargo.toml"] == "change"
    assert w["kernel/Cargo.toml"] == w["kernel/src/lib.rs"] == "create"
    assert {p for p, word in w.items() if p.startswith("vendor/")} == set(crate_files())
    kernel = manifest(binary, "kernel/Cargo.toml")
    assert kernel["package"]["name"] == "histo-kernel"
    assert kernel["features"] == {
        "cuda": ["rgpu/cuda"],
        "wgpu": ["rgpu/wgpu"],
        "ash": ["rgpu/ash"],
        "webgpu": ["rgpu/webgpu"],
    }
    assert kernel["dependencies"] == {"rgpu": {"workspace": True}}
    lib = (binary / "kernel/src/lib.rs").read_text()
    assert "#![no_std]" in lib and "rgpu::embed_kernels!();" in lib
    assert lib.count("\n#[rgpu::kernel]\n") == 1 and "pub fn saxpy(" in lib
    assert 'rgpu::testing::each_backend("saxpy"' in lib
    assert (binary / "build.rs").read_bytes() == before  # rgpu writes no build script
    assert (binary / VENDOR / "rgpu" / "Cargo.toml").is_file()


def test_a_library_package_has_no_binary_to_name(tmp_path: Path) -> None:
    root = write(
        tmp_path / "lib",
        {"Cargo.toml": '[package]\nname = "blur"\nversion = "0.1.0"\n', "src/lib.rs": ""},
    )
    plan = do_init(root)
    data = manifest(root)
    assert plan.hosts == ("blur",)
    assert data["workspace"]["metadata"]["rgpu"] == {"kernel": "kernel"}
    assert data["dependencies"]["kernel"] == {"package": "blur-kernel", "path": "kernel"}
    assert data["features"]["wgpu"] == ["kernel/wgpu"]


def test_a_library_and_binaries_name_the_one_binary_or_none(tmp_path: Path) -> None:
    one = write(
        tmp_path / "one",
        {
            "Cargo.toml": '[package]\nname = "tool"\nversion = "0.1.0"\n',
            "src/lib.rs": "",
            "src/main.rs": "fn main() {}\n",
        },
    )
    do_init(one)
    assert manifest(one)["workspace"]["metadata"]["rgpu"]["binary"] == "tool"
    two = write(
        tmp_path / "two",
        {
            "Cargo.toml": '[package]\nname = "tool"\nversion = "0.1.0"\n\n'
            '[[bin]]\nname = "extra"\npath = "src/extra.rs"\n',
            "src/lib.rs": "",
            "src/main.rs": "fn main() {}\n",
            "src/extra.rs": "fn main() {}\n",
            "src/bin/third.rs": "fn main() {}\n",
        },
    )
    plan = do_init(two)
    assert plan.binaries == ("extra", "tool", "third")
    assert "binary" not in manifest(two)["workspace"]["metadata"]["rgpu"]


VIRTUAL = """\
[workspace]
# the crates
members = [
    "crates/*",
]
resolver = "2"
"""


@pytest.fixture
def virtual(tmp_path: Path) -> Path:
    """A virtual workspace: an app (binary), a library and a tool (binary)."""
    pkg = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n'
    return write(
        tmp_path / "Photo Tools",
        {
            "Cargo.toml": VIRTUAL,
            "crates/app/Cargo.toml": pkg.format("app") + "\n[dependencies]\ncore = { path = "
            '"../core" }\n',
            "crates/app/src/main.rs": "fn main() {}\n",
            "crates/core/Cargo.toml": pkg.format("core"),
            "crates/core/src/lib.rs": "",
            "crates/tool/Cargo.toml": pkg.format("tool"),
            "crates/tool/src/main.rs": "fn main() {}\n",
        },
    )


def test_a_virtual_workspace_gets_a_kernel_member_and_its_binaries_become_hosts(
    virtual: Path,
) -> None:
    plan = do_init(virtual)
    assert plan.kernel_package == "photo-tools-kernel"  # the directory's name, as a crate name
    assert plan.hosts == ("app", "tool")
    text = (virtual / "Cargo.toml").read_text()
    assert text.startswith(
        '[workspace]\n# the crates\nmembers = [\n    "crates/*",\n    "kernel",\n]\n'
        'resolver = "2"\nexclude = ["vendor"]\n'
    )
    data = manifest(virtual)
    assert "package" not in data
    assert data["workspace"]["metadata"]["rgpu"] == {"kernel": "kernel"}  # two binaries
    app = manifest(virtual, "crates/app/Cargo.toml")
    assert app["dependencies"] == {
        "core": {"path": "../core"},
        "kernel": {"package": "photo-tools-kernel", "path": "../../kernel"},
        "rgpu": {"workspace": True},
    }
    assert app["features"]["ash"] == ["kernel/ash"]
    assert app["features"]["webgpu"] == ["kernel/webgpu"]
    assert "kernel" not in manifest(virtual, "crates/core/Cargo.toml").get("dependencies", {})
    assert "crates/core/Cargo.toml" not in words(plan)


def test_host_picks_the_packages_explicitly(virtual: Path) -> None:
    plan = do_init(virtual, hosts=("core",))
    assert plan.hosts == ("core",)
    assert "kernel" in manifest(virtual, "crates/core/Cargo.toml")["dependencies"]
    assert "kernel" not in manifest(virtual, "crates/app/Cargo.toml")["dependencies"]


def test_an_unknown_host_is_a_usage_error_with_did_you_mean(virtual: Path) -> None:
    before = snapshot(virtual)
    with pytest.raises(UsageError) as err:
        plan_project(virtual, Request(hosts=("ap",)))
    assert "--host ap" in err.value.message and "did you mean `app`" in err.value.message
    assert snapshot(virtual) == before


def test_a_package_with_a_workspace_table_keeps_it_and_its_members(tmp_path: Path) -> None:
    root = write(
        tmp_path / "game",
        {
            "Cargo.toml": '[package]\nname = "game"\nversion = "0.1.0"\n\n'
            '[workspace]\nmembers = ["physics"]\n\n[workspace.dependencies]\n'
            'glam = "0.29"  # math\n',
            "src/main.rs": "fn main() {}\n",
            "physics/Cargo.toml": '[package]\nname = "physics"\nversion = "0.1.0"\n',
            "physics/src/lib.rs": "",
        },
    )
    plan = do_init(root)
    assert plan.hosts == ("game",)  # the root package, not the members
    text = (root / "Cargo.toml").read_text()
    assert '[workspace]\nmembers = ["physics", "kernel"]\nexclude = ["vendor"]\n' in text
    assert f'[workspace.dependencies]\nglam = "0.29"  # math\n{RGPU_DEP}\n' in text
    assert manifest(root)["workspace"]["metadata"]["rgpu"]["binary"] == "game"


def test_kernel_picks_the_directory_and_the_names_follow_it(binary: Path) -> None:
    plan = do_init(binary, kernel="gpu/shaders")
    assert (plan.kernel_dir, plan.kernel_package, plan.kernel_key) == (
        "gpu/shaders",
        "histo-shaders",
        "shaders",
    )
    data = manifest(binary)
    assert data["dependencies"]["shaders"] == {"package": "histo-shaders", "path": "gpu/shaders"}
    assert data["features"]["cuda"] == ["shaders/cuda"]
    assert data["workspace"]["members"] == ["gpu/shaders"]
    assert data["workspace"]["metadata"]["rgpu"]["kernel"] == "gpu/shaders"
    assert (binary / "gpu/shaders/src/lib.rs").is_file()
    # Run again without --kernel: the workspace's own kernel crate, nothing to change.
    again = plan_project(binary, Request())
    assert not again.writes and again.kernel_dir == "gpu/shaders"


@pytest.mark.parametrize("kernel", ["../out", "/abs", "vendor/k", "target", "a b", "gpu/fn"])
def test_a_kernel_directory_that_cannot_be_is_a_usage_error(binary: Path, kernel: str) -> None:
    with pytest.raises(UsageError) as err:
        plan_project(binary, Request(kernel=kernel))
    assert "--kernel" in err.value.message and err.value.hint


# -- comments, idempotence, what is left alone --------------------------------------------


def test_comments_order_and_formatting_survive(tmp_path: Path) -> None:
    original = """\
# top comment
[package]
name    = "fmt"   # aligned on purpose
version = "0.1.0"
authors = [
  "Someone",  # trailing
]

[dependencies]
serde = { version = "1", features = ["derive"] }  # keep me

# a comment between tables
[features]
default = ["fast"]
fast = []

[dev-dependencies.proptest]
version = "1"
"""
    root = write(tmp_path / "fmt", {"Cargo.toml": original, "src/lib.rs": ""})
    do_init(root)
    text = (root / "Cargo.toml").read_text()
    expected_start = original.replace(
        '  # keep me\n', '  # keep me\nkernel = { package = "fmt-kernel", path = "kernel" }\n'
        'rgpu = { workspace = true }\n'
    ).replace(
        'fast = []\n',
        'fast = []\n# GPU backends, for plain `cargo build --features cuda` (rgpu build uses the '
        "kernel crate's).\n"
        'cuda = ["kernel/cuda"]\nwgpu = ["kernel/wgpu"]\nash = ["kernel/ash"]\n'
        'webgpu = ["kernel/webgpu"]\n',
    )  # fmt: skip
    assert text.startswith(expected_start)
    assert text[len(expected_start) :].startswith("\n[workspace]\n")


def test_running_twice_changes_nothing_and_reports_identical(
    binary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["init", "-C", str(binary)]) == 0
    after_first = snapshot(binary)
    capsys.readouterr()
    assert run(["init", "-C", str(binary)]) == 0
    err = capsys.readouterr().err
    statuses = [line.split() for line in err.splitlines() if line.startswith(" ")]
    # One line for them all (kernel/Cargo.toml, lib.rs, Cargo.toml and the vendored crates).
    assert [s[:3] for s in statuses] == [["identical", str(3 + len(crate_files())), "files"]]
    assert f"{len(crate_files())} in vendor/rgpu-" in err and "-v lists them" in err
    assert "nothing to change" in err
    assert snapshot(binary) == after_first
    # -v (before or after the command name) lists every file.
    for args in (["-v", "init", "-C", str(binary)], ["init", "-C", str(binary), "--verbose"]):
        assert run(args) == 0
        err = capsys.readouterr().err
        listed = [line.split()[0] for line in err.splitlines() if line.startswith(" ")]
        assert set(listed) == {"identical"} and len(listed) == 3 + len(crate_files())


def test_a_second_run_keeps_the_users_kernels(binary: Path) -> None:
    do_init(binary)
    lib = binary / "kernel/src/lib.rs"
    lib.write_text(lib.read_text() + "\n// my kernels\n")
    plan = plan_project(binary, Request())
    assert not plan.writes
    assert plan.kept == ("kernel/src/lib.rs",)
    assert "kernel/src/lib.rs" not in words(plan)


# -- conflicts: nothing written, the place named, the fix given ---------------------------


def refused(root: Path, error: type[Exception], **request: Any) -> Any:
    before = snapshot(root)
    with pytest.raises(error) as err:
        plan_project(root, Request(**request))
    assert snapshot(root) == before
    return err.value


def test_an_existing_kernel_directory_is_a_conflict(binary: Path) -> None:
    (binary / "kernel").mkdir()
    (binary / "kernel" / "notes.md").write_text("mine")
    err = refused(binary, DestinationError)
    assert err.message.startswith("kernel/ exists already")
    assert "nothing was written" in err.message
    assert "--kernel OTHER" in err.hint


def test_a_package_named_like_the_kernel_crate_is_a_conflict(virtual: Path) -> None:
    write(
        virtual,
        {"crates/k/Cargo.toml": '[package]\nname = "photo-tools-kernel"\nversion = "0.1.0"\n'},
    )
    (virtual / "crates/k/src").mkdir(parents=True)
    (virtual / "crates/k/src/lib.rs").write_text("")
    err = refused(virtual, DestinationError)
    assert "crates/k/Cargo.toml [package] name" in err.message
    assert "--kernel OTHER" in err.hint


@pytest.mark.parametrize(
    ("dependency", "where"),
    [
        ('kernel = { path = "../elsewhere" }', "Cargo.toml [dependencies] kernel"),
        ('histo-kernel = "1"', "Cargo.toml [dependencies] histo-kernel"),
        ('k = { package = "histo-kernel", version = "1" }', "Cargo.toml [dependencies] k"),
    ],
)
def test_a_dependency_named_like_the_kernel_crate_is_a_conflict(
    binary: Path, dependency: str, where: str
) -> None:
    text = BIN_MANIFEST.replace("# none yet\n", f"{dependency}\n")
    (binary / "Cargo.toml").write_text(text)
    err = refused(binary, ConfigError)
    assert err.message.startswith(where) and "in the way of the kernel crate" in err.message
    assert err.exit_code == ExitCode.CONFIG


def test_another_rgpu_dependency_is_a_conflict(binary: Path) -> None:
    (binary / "Cargo.toml").write_text(BIN_MANIFEST.replace("# none yet\n", 'rgpu = "0.0.1"\n'))
    err = refused(binary, ConfigError)
    assert err.message.startswith('Cargo.toml [dependencies] rgpu = "0.0.1" is not the ')
    assert "rgpu = { workspace = true }" in err.hint


def test_a_backend_feature_with_other_content_is_a_conflict(binary: Path) -> None:
    text = BIN_MANIFEST + '\n[features]\ncuda = ["dep:cudarc"]\n'
    (binary / "Cargo.toml").write_text(text)
    err = refused(binary, ConfigError)
    assert err.message.startswith('Cargo.toml [features] cuda = ["dep:cudarc"] exists with other')
    assert '"kernel/cuda"' in err.hint


def test_a_backend_feature_that_forwards_already_is_kept(binary: Path) -> None:
    text = BIN_MANIFEST + '\n[features]\ncuda = ["kernel/cuda", "fast"]\nfast = []\n'
    (binary / "Cargo.toml").write_text(text)
    do_init(binary)
    assert manifest(binary)["features"]["cuda"] == ["kernel/cuda", "fast"]
    assert manifest(binary)["features"]["ash"] == ["kernel/ash"]


def test_an_optional_dependency_named_like_a_backend_is_a_conflict(binary: Path) -> None:
    text = BIN_MANIFEST.replace("# none yet\n", 'wgpu = { version = "26", optional = true }\n')
    (binary / "Cargo.toml").write_text(text)
    err = refused(binary, ConfigError)
    assert err.message.startswith("Cargo.toml [dependencies] wgpu is optional")
    assert '"dep:wgpu"' in err.hint
    # Named as `dep:wgpu` by another feature, it has no feature of its own: no conflict.
    (binary / "Cargo.toml").write_text(text + '\n[features]\nvulkan = ["dep:wgpu"]\n')
    do_init(binary)
    assert manifest(binary)["features"]["wgpu"] == ["kernel/wgpu"]


def test_rgpu_metadata_with_another_kernel_is_a_conflict(binary: Path) -> None:
    text = BIN_MANIFEST + '\n[workspace]\n\n[workspace.metadata.rgpu]\nkernel = "gpu"\n'
    (binary / "Cargo.toml").write_text(text)
    err = refused(binary, ConfigError, kernel="kernel")
    assert err.message.startswith('Cargo.toml [workspace.metadata.rgpu] kernel = "gpu", but')


def test_an_older_vendored_rgpu_says_rgpu_vendor(binary: Path) -> None:
    text = BIN_MANIFEST + (
        '\n[workspace]\n\n[workspace.dependencies]\n'
        'rgpu = { version = "=0.1.0", path = "vendor/rgpu-0.1.0/rgpu" }\n'
    )  # fmt: skip
    (binary / "Cargo.toml").write_text(text)
    err = refused(binary, ConfigError)
    assert err.message.startswith("Cargo.toml [workspace.dependencies] rgpu = ")
    assert "rgpu vendor" in err.hint


def test_changed_vendored_files_are_a_conflict(binary: Path) -> None:
    first = next(iter(crate_files()))
    write(binary, {first: "// patched\n"})
    err = refused(binary, DestinationError)
    assert err.message.startswith(f"{VENDOR}/ exists with files that differ")
    assert "rgpu vendor" in err.hint


def test_several_conflicts_are_listed_together(binary: Path) -> None:
    text = BIN_MANIFEST.replace("# none yet\n", 'rgpu = "0.0.1"\n') + "\n[features]\nash = []\n"
    (binary / "Cargo.toml").write_text(text)
    (binary / "kernel").mkdir()
    err = refused(binary, DestinationError)
    assert err.message.startswith("3 conflicts; nothing was written:")
    for where in ("kernel/", "Cargo.toml [dependencies] rgpu", "Cargo.toml [features] ash"):
        assert f"\n  {where} " in err.message
    assert err.message.count("    fix: ") == 3


def test_invalid_toml_names_the_file_and_exits_9(
    binary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (binary / "Cargo.toml").write_text('[package]\nname = "histo\n')
    before = snapshot(binary)
    assert run(["init", "-C", str(binary)]) == ExitCode.CONFIG == 9
    err = capsys.readouterr().err
    assert "error: Cargo.toml is not valid TOML" in err and "fix: fix the syntax" in err
    assert snapshot(binary) == before


def test_invalid_toml_in_a_member_names_the_member(virtual: Path) -> None:
    (virtual / "crates/tool/Cargo.toml").write_text("[package\n")
    err = refused(virtual, ConfigError)
    assert err.message.startswith("crates/tool/Cargo.toml is not valid TOML")


def test_a_directory_without_cargo_toml_is_not_a_cargo_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["init", "-C", str(tmp_path)]) == ExitCode.DESTINATION == 4
    err = capsys.readouterr().err
    assert f"{tmp_path} is not a Cargo project (no Cargo.toml)" in err
    assert "cargo init" in err and "rgpu new NAME" in err
    assert list(tmp_path.iterdir()) == []


def test_a_member_of_another_workspace_points_at_its_root(virtual: Path) -> None:
    err = refused(virtual / "crates/app", ConfigError)
    assert "is inside the Cargo workspace of" in err.message
    assert f"rgpu init -C {virtual.resolve()}" in err.hint


# -- dry run, interruption ----------------------------------------------------------------


def test_dry_run_prints_the_diff_and_the_files_and_writes_nothing(
    binary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(binary)
    assert run(["init", "--dry-run", "-C", str(binary)]) == 0
    out, err = capsys.readouterr()
    assert snapshot(binary) == before
    assert out.startswith("--- a/Cargo.toml\n+++ b/Cargo.toml\n")
    assert '+kernel = { package = "histo-kernel", path = "kernel" }\n' in out
    assert "+[workspace.metadata.rgpu]\n" in out
    assert "    change  Cargo.toml" in err  # a file of the user's: always its own line
    n = len(crate_files())
    assert f"    create  {n + 2} files ({n} in {VENDOR}/; -v lists them)" in err
    assert "dry run: nothing was written" in err
    assert run(["init", "--dry-run", "-v", "-C", str(binary)]) == 0
    err = capsys.readouterr().err
    assert "    create  kernel/src/lib.rs" in err and f"    create  {VENDOR}/rgpu/Cargo.toml" in err
    assert snapshot(binary) == before


def test_ctrl_c_during_the_writes_puts_everything_back(
    binary: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(binary)
    real = rollback.write_atomic
    calls: list[Path] = []

    def write_then_interrupt(path: Path, data: bytes, mode: int | None = None) -> None:
        calls.append(path)
        if path == binary / "Cargo.toml" and len(calls) == 3 + len(crate_files()):
            raise KeyboardInterrupt  # the last write: every other file is written by now
        real(path, data, mode)

    monkeypatch.setattr(rollback, "write_atomic", write_then_interrupt)
    assert run(["init", "-C", str(binary)]) == ExitCode.INTERRUPTED == 130
    monkeypatch.undo()
    assert len(calls) == 3 + len(crate_files()) + 1  # the undo restored Cargo.toml
    assert snapshot(binary) == before  # created files and directories gone, Cargo.toml as it was
    assert f"error: interrupted: {binary} is as it was" in capsys.readouterr().err


def test_ctrl_c_midway_restores_a_replaced_file(
    virtual: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(virtual)
    real = rollback.write_atomic
    written: list[Path] = []

    def interrupt_on_the_second_manifest(path: Path, data: bytes, mode: int | None = None) -> None:
        if path.name == "Cargo.toml" and path.parent.parent.name == "crates":
            written.append(path)
            if len(written) == 2:  # once: the undo's own writes go through
                raise KeyboardInterrupt
        real(path, data, mode)

    monkeypatch.setattr(rollback, "write_atomic", interrupt_on_the_second_manifest)
    plan = plan_project(virtual, Request())
    with pytest.raises(InterruptedByUser, match="is as it was"):
        init.apply(plan)
    monkeypatch.undo()
    assert written[0] != written[1]  # one host manifest was replaced before Ctrl-C
    assert written[0] in written[2:]  # and restored by the undo
    assert snapshot(virtual) == before


def test_a_failed_write_is_undone_and_reported(
    binary: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot(binary)
    real = rollback.write_atomic

    def disk_full(path: Path, data: bytes, mode: int | None = None) -> None:
        if path.name == "lib.rs":
            raise OSError(28, "No space left on device", str(path))
        real(path, data, mode)

    monkeypatch.setattr(rollback, "write_atomic", disk_full)
    plan = plan_project(binary, Request())
    with pytest.raises(DestinationError) as err:
        init.apply(plan)
    assert "No space left on device" in err.value.message
    assert snapshot(binary) == before


def test_replaced_files_keep_their_permissions(binary: Path) -> None:
    os.chmod(binary / "Cargo.toml", 0o640)
    do_init(binary)
    assert (binary / "Cargo.toml").stat().st_mode & 0o777 == 0o640


def test_the_diff_of_a_created_file_is_against_dev_null() -> None:
    text = changes.diff(changes.FileChange("a.txt", b"one\n", None))
    assert text.startswith("--- /dev/null\n+++ b/a.txt\n")
    assert changes.diff(changes.FileChange("a.txt", b"x", b"x")) == ""


def test_a_manifest_without_a_final_newline_and_an_implicit_workspace_table(
    tmp_path: Path,
) -> None:
    text = (
        '[package]\nname = "p"\nversion = "0.1.0"\n\n[workspace.dependencies]\nserde = "1"\n\n'
        '# notes on lints\n[workspace.lints.rust]\nunsafe_code = "warn"'
    )
    root = write(tmp_path / "p", {"Cargo.toml": text, "src/lib.rs": ""})
    do_init(root)
    out = (root / "Cargo.toml").read_text()
    assert out.startswith(
        '[package]\nname = "p"\nversion = "0.1.0"\n\n[workspace]\nmembers = ["kernel"]\n'
        f'exclude = ["vendor"]\n\n[workspace.dependencies]\nserde = "1"\n{RGPU_DEP}\n\n'
        '# notes on lints\n[workspace.lints.rust]\nunsafe_code = "warn"\n'
    )
    assert manifest(root)["workspace"]["metadata"]["rgpu"] == {"kernel": "kernel"}


def test_the_command_line_takes_kernel_and_host(
    virtual: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["init", "-C", str(virtual), "--kernel", "gpu", "--host", "tool", "--host", "app"])
    assert code == 0
    err = capsys.readouterr().err
    assert "kernel crate `photo-tools-gpu` in gpu/, used by tool, app" in err
    assert "`gpu::NAME(&device, n, ...)`" in err
    assert manifest(virtual, "crates/tool/Cargo.toml")["features"]["cuda"] == ["gpu/cuda"]


def test_a_conflict_on_the_command_line_exits_4_and_names_the_fix(
    binary: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (binary / "kernel").mkdir()
    assert run(["init", "-C", str(binary)]) == ExitCode.DESTINATION
    err = capsys.readouterr().err
    assert "error: kernel/ exists already" in err
    assert "fix: pick another directory: `rgpu init --kernel OTHER`" in err


def test_dotted_keys_and_sub_tables_keep_their_places(tmp_path: Path) -> None:
    text = (
        '[package]\nname = "d"\nversion = "0.1.0"\n\n[dependencies]\nserde.version = "1"\n'
        '[dependencies.log]\nversion = "0.4"\n'
    )
    root = write(tmp_path / "d", {"Cargo.toml": text, "src/lib.rs": ""})
    do_init(root)
    assert (
        (root / "Cargo.toml")
        .read_text()
        .startswith(
            '[package]\nname = "d"\nversion = "0.1.0"\n\n[dependencies]\nserde.version = "1"\n'
            'kernel = { package = "d-kernel", path = "kernel" }\nrgpu = { workspace = true }\n\n'
            '[dependencies.log]\nversion = "0.4"\n'
        )
    )
    assert not plan_project(root, Request()).writes


def test_a_workspace_that_excludes_the_kernel_directory_is_a_conflict(virtual: Path) -> None:
    text = VIRTUAL + 'exclude = ["kernel", "old"]\n'
    (virtual / "Cargo.toml").write_text(text)
    err = refused(virtual, ConfigError)
    assert err.message.startswith("Cargo.toml [workspace] exclude leaves out kernel/")
