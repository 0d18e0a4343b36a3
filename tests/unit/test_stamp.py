"""The no-op stamp: cargo is skipped only when nothing it reads has changed."""

from __future__ import annotations

import os
from pathlib import Path

from rgpu import stamp


def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text("[package]\n")
    (root / "src" / "main.rs").write_text("fn main() {}\n")
    binary = tmp_path / "target" / "release" / "demo"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF")
    binary.with_suffix(".d").write_text(f"{binary}: {root / 'src' / 'main.rs'}\n")
    return root, binary, root / "target" / "rgpu"


ENV = {"PATH": "/usr/bin", "HOME": "/nonexistent"}


def test_unchanged_inputs_are_fresh(tmp_path: Path) -> None:
    root, binary, stamps = setup(tmp_path)
    key = stamp.request_key(["cargo", "build"], ENV)
    stamp.record(stamps, key, binary, root, ENV)
    assert stamp.is_fresh(stamps, key, binary, root, ENV)


def test_a_touched_source_or_manifest_is_not_fresh(tmp_path: Path) -> None:
    root, binary, stamps = setup(tmp_path)
    key = stamp.request_key(["cargo", "build"], ENV)
    for changed in (root / "src" / "main.rs", root / "Cargo.toml"):
        stamp.record(stamps, key, binary, root, ENV)
        st = changed.stat()
        os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        assert not stamp.is_fresh(stamps, key, binary, root, ENV)


def test_other_flags_or_environment_are_not_fresh(tmp_path: Path) -> None:
    root, binary, stamps = setup(tmp_path)
    key = stamp.request_key(["cargo", "build"], ENV)
    stamp.record(stamps, key, binary, root, ENV)
    other_env = {**ENV, "RUSTFLAGS": "-Ctarget-cpu=native"}
    assert stamp.request_key(["cargo", "build"], other_env) != key
    assert stamp.request_key(["cargo", "build", "--features", "cuda"], ENV) != key
    assert stamp.request_key(["cargo", "build"], {**ENV, "UNRELATED": "1"}) == key


def test_a_missing_binary_or_stamp_is_not_fresh(tmp_path: Path) -> None:
    root, binary, stamps = setup(tmp_path)
    key = stamp.request_key(["cargo", "build"], ENV)
    assert not stamp.is_fresh(stamps, key, binary, root, ENV)
    stamp.record(stamps, key, binary, root, ENV)
    binary.unlink()
    assert not stamp.is_fresh(stamps, key, binary, root, ENV)
