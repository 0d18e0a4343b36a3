"""`rgpu new NAME --template minimal`, from rgpu's real template (no cargo runs here; the
integration tier builds, tests and runs it): one SAXPY kernel, a host binary, a parity test,
a README; `--force` over a user's files leaves them byte for byte."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from rgpu import __version__, workspace
from rgpu.cli import main
from rgpu.scaffold.new import new_workspace
from rgpu.scaffold.vendor import crate_files
from tests.unit.test_init import snapshot

TEMPLATE_FILES = {
    ".gitignore",
    "Cargo.toml",
    "README.md",
    "kernel/Cargo.toml",
    "kernel/src/lib.rs",
    "src/main.rs",
    "examples/split.rs",
    "examples/allreduce.rs",
    "tests/parity.rs",
}


def run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as done:
        main(args)
    return int(done.value.code or 0)


@pytest.fixture
def minimal(tmp_path: Path) -> Path:
    dest, statuses = new_workspace("m", tmp_path, template="minimal")
    assert {s.word for s in statuses} == {"create"}
    assert {s.path for s in statuses} == TEMPLATE_FILES | set(crate_files())
    return dest


def test_minimal_is_one_saxpy_kernel_a_binary_and_a_parity_test(minimal: Path) -> None:
    data = tomllib.loads((minimal / "Cargo.toml").read_text())
    assert data["workspace"]["metadata"]["rgpu"] == {
        "template": "minimal",
        "template-version": __version__,
        "kernel": "kernel",
        "binary": "m",
        "ci-run": ["--", "--check"],
    }
    assert data["workspace"]["exclude"] == ["vendor"]
    assert data["workspace"]["dependencies"]["rgpu"] == {
        "version": f"={__version__}",
        "path": f"vendor/rgpu-{__version__}/rgpu",
    }
    assert data["dependencies"]["kernel"] == {"package": "m-kernel", "path": "kernel"}
    assert data["features"] == {
        "cuda": ["kernel/cuda"],
        "wgpu": ["kernel/wgpu"],
        "ash": ["kernel/ash"],
        "webgpu": ["kernel/webgpu"],
    }
    ws = workspace.load(minimal, env={})
    assert (ws.kernel_package, ws.default_binary) == ("m-kernel", "m")
    lib = (minimal / "kernel/src/lib.rs").read_text()
    assert "#![no_std]" in lib and lib.count("#[rgpu::kernel]\npub fn") == 1
    assert "pub fn saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32)" in lib
    main_rs = (minimal / "src/main.rs").read_text()
    assert "rgpu::Device::select()" in main_rs and "kernel::saxpy(" in main_rs
    assert 'rgpu::testing::each_backend("saxpy"' in (minimal / "tests/parity.rs").read_text()


def test_the_readme_says_how_to_run_test_build_ci_and_move_to_a_newer_rgpu(
    minimal: Path,
) -> None:
    readme = (minimal / "README.md").read_text()
    for command in (
        "rgpu run",
        "rgpu test",
        "rgpu build --backend cuda",
        "rgpu build --backend wgpu",
        "ash",
        "rgpu ci init",
        "rgpu vendor",
    ):
        assert command in readme, command


def test_ci_init_writes_a_run_step_with_check(
    minimal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["ci", "init", "-C", str(minimal), "--rgpu-source", f"rgpu-cli=={__version__}"])
    assert code == 0, capsys.readouterr().err
    workflow = (minimal / ".github/workflows/rgpu.yml").read_text()
    assert "rgpu run --backend cpu -- --check" in workflow


def test_force_over_a_users_files_leaves_them_byte_for_byte(tmp_path: Path) -> None:
    dest = tmp_path / "m"
    mine = {
        "README.md": b"# my notes\r\n\x00binary too\n",
        "src/main.rs": b'fn main() { println!("mine"); }\n',
        "kernel/src/lib.rs": b"#![no_std]\n// my kernels\n",
        "notes.txt": b"not the template's\n",
    }
    for rel, data in mine.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(data)
    _, statuses = new_workspace("m", tmp_path, template="minimal", force=True)
    words = {s.path: s.word for s in statuses}
    assert {p for p, w in words.items() if w == "conflict"} == {
        "README.md",
        "src/main.rs",
        "kernel/src/lib.rs",
    }
    for rel, data in mine.items():
        assert (dest / rel).read_bytes() == data, rel
    assert words["Cargo.toml"] == words["tests/parity.rs"] == "create"
    assert (dest / "tests/parity.rs").is_file()
    again = snapshot(dest)
    _, statuses = new_workspace("m", tmp_path, template="minimal", force=True)
    assert {s.word for s in statuses} == {"identical", "conflict"}
    assert snapshot(dest) == again


def test_bitonic_stays_the_default_template(tmp_path: Path) -> None:
    dest, _ = new_workspace("sorter", tmp_path)
    meta = tomllib.loads((dest / "Cargo.toml").read_text())["workspace"]["metadata"]["rgpu"]
    assert meta["template"] == "bitonic"


def test_init_in_a_workspace_rgpu_new_made_changes_nothing(minimal: Path) -> None:
    from rgpu.scaffold import init

    before = snapshot(minimal)
    plan = init.plan_project(minimal, init.Request())
    assert not plan.writes
    assert (plan.kernel_package, plan.hosts) == ("m-kernel", ("m",))
    assert set(plan.kept) == {"kernel/Cargo.toml", "kernel/src/lib.rs"}  # the template's own
    init.apply(plan)
    assert snapshot(minimal) == before
