"""The crates holding kernels (artifacts/kernels.py `crates`): the kernel crate and the crates
of its normal dependency graph that depend on `rgpu` and declare kernels, found from the
Cargo.toml files, [patch], Cargo.lock and cargo's unpacked registry sources (written here,
as cargo lays them out); the manifest's `kernels` list; the RGPU_WORKSPACE requirement; a
name in two crates; portability findings naming a library's crate. No cargo runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.artifacts import kernels, manifest, portability
from rgpu.errors import ConfigError
from rgpu.workspace import configured_workspace, require_workspace_env
from tests.unit.projects import demo_workspace

KERNEL = "#![no_std]\n#[rgpu::kernel]\npub fn {name}(#[item] x: &mut u32) {{}}\n"
CONFIG = '[env]\nRGPU_WORKSPACE = { value = ".", relative = true }\n'


def crate(
    directory: Path, name: str, deps: str = "rgpu = { path = '../vendor/rgpu' }", src: str = ""
) -> Path:
    (directory / "src").mkdir(parents=True, exist_ok=True)
    (directory / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.1.0"\n\n[dependencies]\n{deps}\n'
    )
    (directory / "src" / "lib.rs").write_text(src)
    return directory


def graph(tmp_path: Path) -> Path:
    """A workspace whose kernel crate depends on a library inside it (`inner`, with a
    kernel), a plain crate (`plain`, no rgpu), a library elsewhere on disk (`outer`, reached
    through `mid`, which has no kernels), a registry crate with kernels (`fromreg`) and a
    dev-dependency with kernels (`devonly`, not compiled into the kernels)."""
    deps = (
        "rgpu = { workspace = true }\n"
        'inner = { path = "../inner" }\n'
        'plain = { path = "../plain" }\n'
        f'mid = {{ path = "{tmp_path / "elsewhere" / "mid"}" }}\n'
        'fromreg = "1.2"\n\n'
        "[dev-dependencies]\n"
        'devonly = { path = "../devonly" }\n'
    )
    ws = demo_workspace(tmp_path / "ws", dependencies=deps).root
    crate(ws / "inner", "inner", src=KERNEL.format(name="inner_k"))
    crate(ws / "plain", "plain", deps="", src=KERNEL.format(name="not_really"))
    crate(ws / "devonly", "devonly", src=KERNEL.format(name="dev_k"))
    crate(tmp_path / "elsewhere" / "mid", "mid", deps='outer = { path = "../outer" }')
    crate(tmp_path / "elsewhere" / "outer", "outer", src=KERNEL.format(name="outer_k"))
    (ws / "Cargo.lock").write_text(
        "version = 4\n\n"
        '[[package]]\nname = "fromreg"\nversion = "1.2.3"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        'dependencies = ["rgpu"]\n'
    )
    registry = tmp_path / "cargo-home" / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f"
    crate(
        registry / "fromreg-1.2.3",
        "fromreg",
        deps='rgpu = "0.2.0"',
        src=KERNEL.format(name="reg_k"),
    )
    return ws


def found(ws: Path, tmp_path: Path) -> tuple[kernels.KernelCrate, ...]:
    return kernels.crates(ws, ws / "kernel", {"CARGO_HOME": str(tmp_path / "cargo-home")})


def test_the_kernel_crate_and_every_dependency_with_kernels_are_found(tmp_path: Path) -> None:
    ws = graph(tmp_path)
    crates = found(ws, tmp_path)
    assert [(c.package, c.kernels, c.outside) for c in crates] == [
        ("demo-kernel", ("add_one",), False),
        ("inner", ("inner_k",), False),
        ("fromreg", ("reg_k",), True),
        ("outer", ("outer_k",), True),
    ]
    assert [k.to_dict() for k in kernels.kernels_of(crates)] == [
        {"name": "add_one", "package": "demo-kernel"},
        {"name": "inner_k", "package": "inner"},
        {"name": "outer_k", "package": "outer"},
        {"name": "reg_k", "package": "fromreg"},
    ]


def test_a_registry_crate_not_yet_unpacked_or_without_a_lock_is_not_read(tmp_path: Path) -> None:
    ws = graph(tmp_path)
    (ws / "Cargo.lock").unlink()
    assert "fromreg" not in [c.package for c in found(ws, tmp_path)]


def test_a_patched_crate_is_read_where_the_patch_points(tmp_path: Path) -> None:
    ws = graph(tmp_path)
    crate(tmp_path / "patched", "fromreg", src=KERNEL.format(name="patched_k"))
    root = ws / "Cargo.toml"
    root.write_text(
        root.read_text() + f'\n[patch.crates-io]\nfromreg = {{ path = "{tmp_path / "patched"}" }}\n'
    )
    names = kernels.names(found(ws, tmp_path))
    assert "patched_k" in names and "reg_k" not in names


def test_a_kernel_name_in_two_crates_is_refused_with_both_crates(tmp_path: Path) -> None:
    ws = graph(tmp_path)
    (ws / "inner" / "src" / "lib.rs").write_text(KERNEL.format(name="add_one"))
    with pytest.raises(
        ConfigError, match=r"`add_one` is declared in two crates, demo-kernel and inner"
    ):
        kernels.kernels_of(found(ws, tmp_path))


def test_a_doc_comment_example_is_not_a_kernel() -> None:
    text = "//! ```\n//! #[rgpu::kernel]\n//! pub fn example() {}\n//! ```\n"
    assert kernels.kernel_names(text) == []


def test_library_kernels_need_rgpu_workspace_in_the_cargo_config(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    with pytest.raises(ConfigError) as error:
        require_workspace_env(ws, {}, ["inner", "outer"])
    assert "(inner, outer)" in error.value.message
    assert (
        error.value.hint is not None
        and 'RGPU_WORKSPACE = { value = ".", relative = true }' in error.value.hint
    )
    (ws.root / ".cargo").mkdir()
    (ws.root / ".cargo" / "config.toml").write_text(CONFIG)
    assert configured_workspace(ws.root, {}) == ws.root
    require_workspace_env(ws, {}, ["inner"])
    with pytest.raises(ConfigError, match="points at /elsewhere, not this workspace"):
        require_workspace_env(ws, {"RGPU_WORKSPACE": "/elsewhere"}, ["inner"])


def test_the_manifest_keeps_each_kernels_package(tmp_path: Path) -> None:
    listed = (kernels.Kernel("a", "k"), kernels.Kernel("prim_b", "rgpu-primitives"))
    manifest.write_manifest(tmp_path, [], listed)
    assert manifest.read_kernels(tmp_path) == listed
    manifest.write_manifest(tmp_path, [])
    assert manifest.read_kernels(tmp_path) is None


def test_a_finding_names_the_library_crate_of_its_kernel() -> None:
    spv = manifest.Artifact(
        path="k.spv", kind="spirv", codegen="spirv", target="t", entry_points=("own", "lib_k"),
        size=1, sha256="x",
        extra={"portability": {"own": {"metal": "f64"}, "lib_k": {"metal": "f64"}}},
    )  # fmt: skip
    found = [f for f in portability.findings_of([spv], {"lib_k": "mylib"}) if f.platform == "metal"]
    assert [f.line().split(" will")[0] for f in found] == ["`lib_k` (from mylib)", "`own`"]
    assert found[0].to_dict()["crate"] == "mylib" and "crate" not in found[1].to_dict()


def test_a_module_without_a_librarys_kernels_names_the_use_to_add(tmp_path: Path) -> None:
    ws = graph(tmp_path)
    crates = found(ws, tmp_path)
    modules = [("k-sm_90.ptx", ("add_one", "inner_k", "outer_k", "reg_k"))]
    kernels.require_linked(modules, crates, ws / "kernel" / "src" / "lib.rs")
    with pytest.raises(ConfigError) as error:
        kernels.require_linked([("k.spv", ("add_one", "inner_k"))], crates, ws / "lib.rs")
    assert "(fromreg: reg_k; outer: outer_k)" in error.value.message
    assert error.value.hint is not None
    assert "`use fromreg as _;` `use outer as _;`" in error.value.hint
