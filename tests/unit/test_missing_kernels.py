"""rgpu/host/missing_kernels.py: which host files call kernels the kernel crate lacks."""

from __future__ import annotations

from pathlib import Path

from rgpu.artifacts import manifest
from rgpu.artifacts.kernels import Kernel
from rgpu.host.missing_kernels import hint, kernel_key, missing_calls
from rgpu.workspace import Workspace

ROOT_MANIFEST = """[workspace]
members = ["kernel"]

[package]
name = "demo"

[dependencies]
kernel = { path = "kernel", package = "demo-kernel" }
"""


# No cargo on PATH: the kernels' list, when the manifest has none, is not asked of cargo.
NO_CARGO = {"PATH": ""}


def workspace(tmp_path: Path, kernel_src: str, files: dict[str, str]) -> Workspace:
    (tmp_path / "Cargo.toml").write_text(ROOT_MANIFEST)
    (tmp_path / "kernel" / "src").mkdir(parents=True)
    (tmp_path / "kernel" / "src" / "lib.rs").write_text(kernel_src)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return Workspace(tmp_path, tmp_path / "kernel", "demo-kernel", {}, tmp_path / "target")


RENAMED = "#[rgpu::kernel]\npub fn axpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {}\n"


def test_the_key_is_the_root_packages_name_for_the_kernel_crate(tmp_path: Path) -> None:
    assert kernel_key(workspace(tmp_path, RENAMED, {})) == "kernel"


def test_calls_of_a_renamed_kernel_are_named_by_file(tmp_path: Path) -> None:
    ws = workspace(
        tmp_path,
        RENAMED,
        {
            "src/main.rs": "fn main() { kernel::axpy(&d, n, 2.0, &x, &mut y).unwrap(); }\n",
            "examples/split.rs": "fn main() { kernel::saxpy(&d, n, 2.0, &x, &mut y); }\n",
            "tests/parity.rs": "fn t() { kernel::saxpy (&d); kernel::saxpy(&d); }\n",
        },
    )
    assert missing_calls(ws) == [("examples/split.rs", "saxpy"), ("tests/parity.rs", "saxpy")]
    # The kernel crate's kernels: the manifest's list (a library's are not the crate's).
    ws.kernels_dir.mkdir(parents=True)
    listed = [Kernel("axpy", "demo-kernel"), Kernel("prim_scan", "rgpu-primitives")]
    manifest.write_manifest(ws.kernels_dir, [], listed)
    text = hint(ws, NO_CARGO)
    assert text is not None
    assert "examples/split.rs calls `saxpy`" in text and "its kernels: axpy)" in text
    assert "src/main.rs" not in text


def test_without_a_list_nor_cargo_the_calls_are_named_without_the_kernels(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, RENAMED, {"examples/split.rs": "fn main() { kernel::saxpy(); }\n"})
    text = hint(ws, NO_CARGO)
    assert text is not None and "examples/split.rs calls `saxpy`" in text
    assert "its kernels" not in text


def test_nothing_is_said_when_every_call_has_its_function(tmp_path: Path) -> None:
    ws = workspace(tmp_path, RENAMED, {"src/main.rs": "fn main() { kernel::axpy(&d); }\n"})
    assert missing_calls(ws) == []
    assert hint(ws, NO_CARGO) is None


def test_a_reexported_function_is_not_missing(tmp_path: Path) -> None:
    src = RENAMED + "pub use rgpu_primitives::{sort_keys, sum as total};\n"
    calls = "fn main() { kernel::sort_keys(&d); kernel::total(&d); kernel::saxpy(&d); }\n"
    ws = workspace(tmp_path, src, {"src/main.rs": calls})
    assert missing_calls(ws) == [("src/main.rs", "saxpy")]


def test_a_glob_reexport_turns_the_check_off(tmp_path: Path) -> None:
    src = RENAMED + "pub use rgpu_primitives::*;\n"
    ws = workspace(tmp_path, src, {"src/main.rs": "fn main() { kernel::sort_keys(&d); }\n"})
    assert missing_calls(ws) == []
