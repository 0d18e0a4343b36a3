"""The manifest: hashes verified, written last and atomically, embed table beside it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rgpu import artifacts
from rgpu.errors import ArtifactError


def make(tmp_path: Path, name: str, data: bytes) -> artifacts.Artifact:
    (tmp_path / name).write_bytes(data)
    return artifacts.describe(
        tmp_path / name, tmp_path, kind="ptx", codegen="nvptx", target="sm_80",
        entry_points=["bitonic_step"],
    )  # fmt: skip


def test_manifest_round_trips_and_lists_hashes(tmp_path: Path) -> None:
    a = make(tmp_path, "k-sm_80.ptx", b".version 7.0")
    path = artifacts.write_manifest(tmp_path, [a])
    data = json.loads(path.read_text())
    assert data["artifacts"][0]["sha256"] == artifacts.sha256_file(tmp_path / "k-sm_80.ptx")
    assert artifacts.read_manifest(tmp_path) == [a]
    table = (tmp_path / artifacts.EMBED_TABLE_NAME).read_text()
    assert f'include_bytes!("{(tmp_path / "k-sm_80.ptx").resolve()}")' in table


def test_a_changed_artifact_is_refused(tmp_path: Path) -> None:
    a = make(tmp_path, "k.ptx", b"one")
    (tmp_path / "k.ptx").write_bytes(b"two")
    with pytest.raises(ArtifactError):
        artifacts.write_manifest(tmp_path, [a])
    assert not (tmp_path / artifacts.MANIFEST_NAME).exists()


def test_a_corrupt_manifest_says_how_to_recover(tmp_path: Path) -> None:
    (tmp_path / artifacts.MANIFEST_NAME).write_text("{")
    with pytest.raises(ArtifactError) as err:
        artifacts.read_manifest(tmp_path)
    assert "rgpu build" in (err.value.hint or "")
