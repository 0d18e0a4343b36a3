"""The kernels' list is the macro's word (artifacts/kernels.py), for real: a workspace made by
`rgpu new --template minimal` whose kernel crate has a kernel made by a `macro_rules!` macro
and fake kernels in comments and a string, and depends on a library of kernels
(tests/fixtures/primitives/inner) that it does not `use`. Built for cuda (the nvptx
codegen, one arch: 2 cores), the build stops naming the `use` to add; with the `use`, the
manifest lists every real kernel with its crate and no fake one; a kernel added to the
library alone (the kernel crate is not compiled again) joins the list."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from rgpu.artifacts.manifest import read_kernels
from rgpu.errors import ExitCode
from tests.conftest import REPO, run_rgpu
from tests.integration.conftest import assert_clean_failure, kernels_dir, manifest_of

NAME = "kl"
FIXTURE = REPO / "tests" / "fixtures" / "primitives" / "inner"
CONFIG = '[env]\nRGPU_WORKSPACE = { value = ".", relative = true }\n'
KERNELS = """
// A kernel a macro_rules! macro makes: a kernel all the same.
macro_rules! scale_kernel {
    ($name:ident, $factor:expr) => {
        #[rgpu::kernel]
        pub fn $name(#[item] x: &mut f32) {
            *x *= $factor;
        }
    };
}
scale_kernel!(double_it, 2.0);

// Not kernels: commented out, in a block comment, in a string.
// #[rgpu::kernel]
// fn commented_out(#[item] x: &mut f32) {}
/*
#[rgpu::kernel]
fn in_a_block_comment(#[item] x: &mut f32) {}
*/
pub const NOT_A_KERNEL: &str = "#[rgpu::kernel] fn in_a_string(#[item] x: &mut f32) {}";
"""
USE = "use inner_kernels as _; // its kernels, linked into this crate's modules\n"
BUILD = ("build", "--backend", "cuda", "--arch", "sm_80")


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("kernel-list")
    run_rgpu("new", NAME, "--template", "minimal", "--dir", str(parent))
    ws = parent / NAME
    shutil.copytree(FIXTURE, ws / "inner")
    root = ws / "Cargo.toml"
    root.write_text(
        root.read_text().replace('members = ["kernel"]', 'members = ["kernel", "inner"]')
    )
    kernel = ws / "kernel" / "Cargo.toml"
    kernel.write_text(
        kernel.read_text().replace(
            "rgpu.workspace = true\n",
            'rgpu.workspace = true\ninner-kernels = { path = "../inner" }\n',
        )
    )
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + KERNELS)
    (ws / ".cargo").mkdir()
    (ws / ".cargo" / "config.toml").write_text(CONFIG)
    return ws


def entries(ws: Path) -> set[str]:
    (ptx,) = [a for a in manifest_of(ws) if a.kind == "ptx"]
    return set(re.findall(r"\.entry (\w+)\(", (kernels_dir(ws) / ptx.path).read_text()))


def owners(ws: Path) -> dict[str, str]:
    return {k.name: k.package for k in read_kernels(kernels_dir(ws)) or ()}


def test_a_library_the_kernel_crate_does_not_use_stops_the_build_with_the_use(ws: Path) -> None:
    proc = run_rgpu(*BUILD, cwd=ws, check=False)
    assert_clean_failure(proc, ExitCode.CONFIG)
    assert "the built kernels lack those of crates the kernel crate depends on" in proc.stderr
    assert "(inner-kernels: inner_triple)" in proc.stderr, proc.stderr
    assert "add `use inner_kernels as _;` to" in proc.stderr


def test_with_the_use_every_kernel_and_no_fake_is_listed_with_its_crate(ws: Path) -> None:
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + USE)
    run_rgpu(*BUILD, cwd=ws)
    assert owners(ws) == {
        "double_it": f"{NAME}-kernel",
        "saxpy": f"{NAME}-kernel",
        "inner_triple": "inner-kernels",
    }
    assert {"double_it", "saxpy", "inner_triple"} <= entries(ws)


def test_a_kernel_added_to_the_library_alone_joins_the_list(ws: Path) -> None:
    source = ws / "inner" / "src" / "lib.rs"
    added = (
        "\nmacro_rules! plus_kernel {\n"
        "    ($name:ident) => {\n"
        "        #[rgpu::kernel]\n"
        "        pub fn $name(#[item] x: &mut u32) {\n"
        "            *x += 1;\n"
        "        }\n"
        "    };\n"
        "}\n"
        "plus_kernel!(inner_plus);\n"
    )
    source.write_text(source.read_text() + added)
    built = run_rgpu(*BUILD, cwd=ws)
    assert "+ cargo check --lib --package kl-kernel" in built.stderr
    assert owners(ws)["inner_plus"] == "inner-kernels"
    assert "inner_plus" in entries(ws)
    # A build with nothing changed keeps the list, and starts no cargo check.
    again = run_rgpu(*BUILD, cwd=ws)
    assert "cargo check" not in again.stderr
    assert owners(ws)["inner_plus"] == "inner-kernels"
