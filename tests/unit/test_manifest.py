"""The kernels directory and its manifest (artifacts.manifest), the workspace's kernels found
in source (artifacts.kernels), and writes that keep unchanged files as they are
(util.files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rgpu.artifacts import kernels, manifest
from rgpu.errors import ArtifactError
from rgpu.util.files import write_bytes_if_changed, write_text_if_changed


def make(directory: Path, name: str, data: bytes, target: str = "sm_80") -> manifest.Artifact:
    (directory / name).parent.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data)
    return manifest.describe(
        directory / name, directory, kind="ptx", codegen="nvptx", target=target,
        entry_points=["bitonic_step"],
    )  # fmt: skip


def backdate(path: Path) -> int:
    """Set the file's mtime one minute back (so a rewrite would show); return it."""
    st = path.stat()
    old = st.st_mtime_ns - 60_000_000_000
    os.utime(path, ns=(st.st_atime_ns, old))
    return old


# --- manifest -----------------------------------------------------------------------------


def test_manifest_round_trips_and_lists_hashes(tmp_path: Path) -> None:
    a = make(tmp_path, "k-sm_80.ptx", b".version 7.0")
    path = manifest.write_manifest(tmp_path, [a])
    assert path == tmp_path / manifest.MANIFEST_NAME
    data = json.loads(path.read_text())
    assert data["version"] == manifest.MANIFEST_VERSION
    assert data["artifacts"][0]["sha256"] == manifest.sha256_file(tmp_path / "k-sm_80.ptx")
    assert data["artifacts"][0]["path"] == "k-sm_80.ptx"
    assert manifest.read_manifest(tmp_path) == [a]


def test_an_identical_manifest_is_not_rewritten(tmp_path: Path) -> None:
    a = make(tmp_path, "k-sm_80.ptx", b".version 7.0")
    path = manifest.write_manifest(tmp_path, [a])
    mtime = backdate(path)
    manifest.write_manifest(tmp_path, [a])
    assert path.stat().st_mtime_ns == mtime


def test_a_changed_manifest_is_rewritten(tmp_path: Path) -> None:
    a = make(tmp_path, "k-sm_80.ptx", b".version 7.0")
    path = manifest.write_manifest(tmp_path, [a])
    mtime = backdate(path)
    b = make(tmp_path, "k-sm_90.ptx", b".version 7.8", target="sm_90")
    manifest.write_manifest(tmp_path, [a, b])
    assert path.stat().st_mtime_ns != mtime
    assert [x.target for x in manifest.read_manifest(tmp_path)] == ["sm_80", "sm_90"]


def test_files_the_manifest_no_longer_lists_are_removed(tmp_path: Path) -> None:
    stale = make(tmp_path, "k-sm_75.ptx", b"old")
    make(tmp_path, "external/old.spv", b"old")
    manifest.write_manifest(tmp_path, [stale])
    kept = make(tmp_path, "k-sm_80.ptx", b"new")
    manifest.write_manifest(tmp_path, [kept])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k-sm_80.ptx", "manifest.json"]


def test_a_changed_artifact_is_refused_and_no_manifest_is_written(tmp_path: Path) -> None:
    a = make(tmp_path, "k.ptx", b"one")
    (tmp_path / "k.ptx").write_bytes(b"two")
    with pytest.raises(ArtifactError, match="does not match its manifest hash"):
        manifest.write_manifest(tmp_path, [a])
    assert not (tmp_path / manifest.MANIFEST_NAME).exists()


def test_verify_detects_a_hash_mismatch_and_a_missing_file(tmp_path: Path) -> None:
    a = make(tmp_path, "k.ptx", b"one")
    manifest.verify(tmp_path, a)
    (tmp_path / "k.ptx").write_bytes(b"One")
    with pytest.raises(ArtifactError) as err:
        manifest.verify(tmp_path, a)
    assert f"{tmp_path / 'k.ptx'} does not match its manifest hash" in err.value.message
    assert "rgpu build" in (err.value.hint or "")
    (tmp_path / "k.ptx").unlink()
    with pytest.raises(ArtifactError, match="is missing"):
        manifest.verify(tmp_path, a)


def test_a_corrupt_manifest_says_how_to_recover(tmp_path: Path) -> None:
    (tmp_path / manifest.MANIFEST_NAME).write_text("{")
    with pytest.raises(ArtifactError) as err:
        manifest.read_manifest(tmp_path)
    assert "rgpu build" in (err.value.hint or "")


def test_no_manifest_reads_as_no_artifacts(tmp_path: Path) -> None:
    assert manifest.read_manifest(tmp_path) == []


# --- the workspace's kernels --------------------------------------------------------------

KERNEL_SOURCES = {
    "lib.rs": """
#![no_std]
mod sort;

/// Adds one.
/// (a doc comment between the attribute and the fn)
#[rgpu::kernel]
pub fn add_one(data: &mut [u32]) {}

#[rgpu::kernel(threads = 64)]
/// Sorts one tile (a doc comment and an attribute between).
#[inline(never)]
pub(crate) fn tile_sort(keys: &mut [u32]) {}

pub fn not_a_kernel() {}

#[inline]
fn helper() {}
""",
    "sort/mod.rs": """
use rgpu::kernel;

#[kernel]
// a line comment
fn merge() {}

#[ rgpu :: kernel ]
pub unsafe fn unsafe_step() {}
""",
}


def test_kernels_are_found_in_every_source_file_of_the_crate(tmp_path: Path) -> None:
    for name, text in KERNEL_SOURCES.items():
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    (tmp_path / "build.rs").write_text("#[rgpu::kernel]\nfn outside_src() {}\n")
    assert kernels.find(tmp_path) == ("add_one", "merge", "tile_sort", "unsafe_step")


def test_plain_functions_are_not_kernels() -> None:
    assert kernels.kernel_names("pub fn a() {}\n#[inline]\nfn b() {}\n#[test]\nfn c() {}") == []


def test_a_crate_without_sources_has_no_kernels(tmp_path: Path) -> None:
    assert kernels.find(tmp_path) == ()


# --- writes that keep unchanged files -----------------------------------------------------


def test_unchanged_bytes_keep_the_file_and_its_mtime(tmp_path: Path) -> None:
    path = tmp_path / "a" / "k.ptx"
    assert write_bytes_if_changed(path, b"data")
    mtime = backdate(path)
    assert not write_bytes_if_changed(path, b"data")
    assert path.stat().st_mtime_ns == mtime


def test_changed_text_replaces_the_file_atomically(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    write_text_if_changed(path, "one")
    inode = path.stat().st_ino
    mtime = backdate(path)
    assert write_text_if_changed(path, "two")
    assert path.read_text() == "two"
    assert path.stat().st_mtime_ns != mtime
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]  # no temp file left


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    write_text_if_changed(path, "one")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_text_if_changed(path, "two")
    monkeypatch.undo()
    assert path.read_text() == "one"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
