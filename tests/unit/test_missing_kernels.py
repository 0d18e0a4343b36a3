"""rgpu/host/missing_kernels.py: which host files call kernels the kernel crate lacks."""

from __future__ import annotations

from pathlib import Path

from rgpu.host.missing_kernels import hint, kernel_key, missing_calls
from rgpu.workspace import Workspace

ROOT_MANIFEST = """[workspace]
members = ["kernel"]

[package]
name = "demo"

[dependencies]
kernel = { path = "kernel", package = "demo-kernel" }
"""


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
    text = hint(ws)
    assert text is not None
    assert "examples/split.rs calls `saxpy`" in text and "its kernels: axpy" in text
    assert "src/main.rs" not in text


def test_nothing_is_said_when_every_call_has_its_function(tmp_path: Path) -> None:
    ws = workspace(tmp_path, RENAMED, {"src/main.rs": "fn main() { kernel::axpy(&d); }\n"})
    assert missing_calls(ws) == []
    assert hint(ws) is None


def test_a_reexported_function_is_not_missing(tmp_path: Path) -> None:
    src = RENAMED + "pub use rgpu_primitives::{sort_keys, sum as total};\n"
    calls = "fn main() { kernel::sort_keys(&d); kernel::total(&d); kernel::saxpy(&d); }\n"
    ws = workspace(tmp_path, src, {"src/main.rs": calls})
    assert missing_calls(ws) == [("src/main.rs", "saxpy")]


def test_a_glob_reexport_turns_the_check_off(tmp_path: Path) -> None:
    src = RENAMED + "pub use rgpu_primitives::*;\n"
    ws = workspace(tmp_path, src, {"src/main.rs": "fn main() { kernel::sort_keys(&d); }\n"})
    assert missing_calls(ws) == []
