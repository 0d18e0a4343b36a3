"""The kernels' list read from what the macro left in each crate's metadata
(artifacts/kernels.py): `marks` over metadata bytes, `from_messages` over cargo's JSON
messages and the metadata files they name. A real `cargo check` of real crates, with
kernels from macro_rules! and fakes in comments and strings: tests/integration/
test_kernel_list.py."""

from __future__ import annotations

import json
from pathlib import Path

from rgpu.artifacts import kernels


def ident(name: str) -> bytes:
    """An identifier as rustc writes it into metadata: its length (LEB128), its bytes."""
    data = name.encode()
    return kernels._leb128(len(data)) + data + b"\xc1"


def test_a_mark_preceded_by_its_length_is_a_kernel() -> None:
    data = b"\x00junk" + ident("__rgpu_kernel_saxpy") + ident("__rgpu_params_saxpy")
    data += ident("__rgpu_kernel_tile_sort") + ident("__rgpu_kernel_saxpy")
    assert kernels.marks(data) == ("saxpy", "tile_sort")


def test_a_mark_inside_longer_text_is_not_a_kernel() -> None:
    # A doc comment or a string that mentions a mark: one symbol, the mark in its middle.
    doc = "see __rgpu_kernel_fake for how"
    text = "__rgpu_kernel_alsofake is not"  # at the start, but its length is the whole text's
    assert kernels.marks(ident(doc) + ident(text)) == ()


def test_a_mark_without_a_name_or_length_is_not_a_kernel() -> None:
    assert kernels.marks(b"__rgpu_kernel_") == ()
    assert kernels.marks(b"\x0e__rgpu_kernel_") == ()  # the length is right, no name
    assert kernels.marks(b"__rgpu_kernel_x") == ()  # nothing before it
    assert kernels.marks(b"\x05__rgpu_kernel_x") == ()  # another length


def test_a_long_name_has_a_two_byte_length() -> None:
    name = "k" * 200
    assert kernels._leb128(len("__rgpu_kernel_" + name)) == bytes([0xD6, 0x01])
    assert kernels.marks(ident("__rgpu_kernel_" + name)) == (name,)


def artifact(manifest: Path, files: list[Path], kind: str = "lib", fresh: bool = False) -> str:
    return json.dumps(
        {
            "reason": "compiler-artifact",
            "package_id": f"path+file://{manifest.parent}#0.1.0",
            "manifest_path": str(manifest),
            "target": {"kind": [kind], "name": manifest.parent.name,
                       "src_path": str(manifest.parent / "src" / "lib.rs")},
            "filenames": [str(f) for f in files],
            "fresh": fresh,
        }
    )  # fmt: skip


def package(directory: Path, name: str, *kernel_names: str) -> tuple[Path, Path]:
    """A crate's Cargo.toml and the metadata file cargo would name for it."""
    directory.mkdir(parents=True)
    manifest = directory / "Cargo.toml"
    manifest.write_text(f'[package]\nname = "{name}"\nversion = "0.1.0"\n')
    rmeta = directory / f"lib{name.replace('-', '_')}-0123.rmeta"
    rmeta.write_bytes(b"rust" + b"".join(ident("__rgpu_kernel_" + k) for k in kernel_names))
    return manifest, rmeta


def test_the_kernel_crate_comes_first_then_each_crate_with_marks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    kernel = package(ws / "kernel", "demo-kernel")  # no kernels of its own: still first
    inner = package(ws / "inner", "inner", "inner_k", "inner_j")
    outer = package(tmp_path / "outer", "outer", "outer_k")
    plain = package(ws / "plain", "plain")
    facade = package(ws / "vendor" / "rgpu", "rgpu", "not_read")
    macros = package(ws / "vendor" / "rgpu-macros", "rgpu-macros", "not_read")
    lines = [
        "warning: a line that is not JSON",
        artifact(*facade[:1], [facade[1]]),
        artifact(*macros[:1], [macros[1]], kind="proc-macro"),
        artifact(*plain[:1], [plain[1]]),
        artifact(*outer[:1], [outer[1]], fresh=True),  # up to date: read all the same
        artifact(*inner[:1], [inner[1], tmp_path / "libinner.rlib"]),
        artifact(*kernel[:1], [kernel[1]]),
        json.dumps({"reason": "build-finished", "success": True}),
    ]
    found = kernels.from_messages(lines, ws, "demo-kernel")
    assert [(c.package, c.kernels, c.outside) for c in found] == [
        ("demo-kernel", (), False),
        ("inner", ("inner_j", "inner_k"), False),
        ("outer", ("outer_k",), True),
    ]
    assert found[1].src_dir == ws / "inner" / "src" and found[1].manifest == inner[0]


def test_a_metadata_file_that_is_gone_lists_nothing(tmp_path: Path) -> None:
    manifest, rmeta = package(tmp_path / "kernel", "k", "a")
    rmeta.unlink()
    (crate,) = kernels.from_messages([artifact(manifest, [rmeta])], tmp_path, "k")
    assert crate.kernels == ()


def test_the_check_is_of_the_kernel_crates_library_with_json_messages(tmp_path: Path) -> None:
    from rgpu.workspace import Workspace

    ws = Workspace(tmp_path, tmp_path / "kernel", "demo-kernel", {}, tmp_path / "target")
    argv = kernels.check_argv(ws)
    assert argv[:2] == ["cargo", "check"] and "--message-format=json" in argv
    assert argv[argv.index("--package") + 1] == "demo-kernel" and "--lib" in argv


def test_without_a_message_for_the_kernel_crate_it_is_first_all_the_same(tmp_path: Path) -> None:
    inner = package(tmp_path / "inner", "inner", "inner_k")
    found = kernels.from_messages([artifact(*inner[:1], [inner[1]])], tmp_path, "k")
    assert [(c.package, c.kernels) for c in found] == [("k", ()), ("inner", ("inner_k",))]


def test_the_files_a_stamp_of_the_list_watches(tmp_path: Path) -> None:
    kernel = package(tmp_path / "kernel", "k", "a")
    lines = [artifact(kernel[0], [kernel[1], tmp_path / "libk.rlib"])]
    assert kernels.metadata_files(lines) == (kernel[1],)
    assert kernels.manifests([*lines, *lines]) == (kernel[0],)


def test_the_list_is_kept_as_json_and_read_back() -> None:
    crates = (
        kernels.KernelCrate(
            "k", Path("/w/kernel/src"), Path("/w/kernel/Cargo.toml"), False, ("a",)
        ),
        kernels.KernelCrate("lib", Path("/o/src"), Path("/o/Cargo.toml"), True, ("b", "c")),
    )
    assert kernels.from_json(kernels.to_json(crates)) == crates
    for bad in ("", "[]", '{"version": 2, "crates": []}', '{"version": 1, "crates": [{}]}'):
        assert kernels.from_json(bad) is None
