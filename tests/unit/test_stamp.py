"""The no-op stamp (host.stamp): cargo is skipped only when nothing it reads has changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rgpu.host import stamp

NAME = "host"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace whose last build made `target/release/demo` from src/main.rs."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text("[package]\n")
    (root / "src" / "main.rs").write_text("fn main() {}\n")
    binary = root / "target" / "release" / "demo"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF")
    dep_info(root).write_text(f"{binary}: {root / 'src' / 'main.rs'}\n")
    return root


def env(root: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin", "HOME": str(root.parent / "home")}


def binary(root: Path) -> Path:
    return root / "target" / "release" / "demo"


def dep_info(root: Path) -> Path:
    return root / "target" / "release" / "demo.d"


def stamps(root: Path) -> Path:
    return root / "target" / "rgpu"


def key(root: Path, *extra: str) -> str:
    return stamp.request_key(["cargo", "build", *extra], env(root))


def record(root: Path, k: str | None = None) -> None:
    k = k or key(root)
    stamp.record(stamps(root), NAME, k, [binary(root)], [dep_info(root)], root, env(root))


def fresh(root: Path, k: str | None = None) -> bool:
    return stamp.is_fresh(stamps(root), NAME, k or key(root), root, env(root))


def touch(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_unchanged_inputs_are_fresh(ws: Path) -> None:
    record(ws)
    assert fresh(ws)
    assert stamp.stored_outputs(stamps(ws), NAME) == [binary(ws)]


def test_a_dep_info_rewritten_with_the_same_content_is_still_fresh(ws: Path) -> None:
    record(ws)
    text = dep_info(ws).read_text()
    dep_info(ws).unlink()
    dep_info(ws).write_text(text)  # what a no-op `cargo build` does
    touch(dep_info(ws))
    assert fresh(ws)


def test_a_touched_source_listed_in_the_dep_info_is_not_fresh(ws: Path) -> None:
    record(ws)
    touch(ws / "src" / "main.rs")
    assert not fresh(ws)


def test_a_touched_cargo_toml_is_not_fresh(ws: Path) -> None:
    record(ws)
    touch(ws / "Cargo.toml")
    assert not fresh(ws)


def test_a_new_cargo_config_is_not_fresh(ws: Path) -> None:
    record(ws)
    (ws / ".cargo").mkdir()
    (ws / ".cargo" / "config.toml").write_text("[build]\n")
    assert not fresh(ws)


def test_a_changed_key_is_not_fresh(ws: Path) -> None:
    record(ws)
    assert not fresh(ws, key(ws, "--features", "demo-kernel/cuda"))


def test_a_missing_output_is_not_fresh(ws: Path) -> None:
    record(ws)
    binary(ws).unlink()
    assert not fresh(ws)


def test_no_stamp_is_not_fresh(ws: Path) -> None:
    assert not fresh(ws)


def test_a_corrupt_stamp_is_not_fresh(ws: Path) -> None:
    record(ws)
    (stamps(ws) / stamp.STAMPS / f"{NAME}.json").write_text("{")
    assert not fresh(ws)


def test_a_run_without_outputs_forgets_the_stamp(ws: Path) -> None:
    record(ws)
    stamp.record(stamps(ws), NAME, key(ws), [], [], ws, env(ws))
    assert not fresh(ws)
    assert stamp.stored_outputs(stamps(ws), NAME) == []


def test_request_key_follows_flags_and_the_environment_cargo_reads(ws: Path) -> None:
    base = env(ws)
    k = stamp.request_key(["cargo", "build"], base)
    assert stamp.request_key(["cargo", "build"], {**base, "RUSTFLAGS": "-Ctarget-cpu=native"}) != k
    assert stamp.request_key(["cargo", "build"], {**base, "CARGO_PROFILE_X": "1"}) != k
    assert stamp.request_key(["cargo", "build", "--features", "cuda"], base) != k
    assert stamp.request_key(["cargo", "build"], {**base, "UNRELATED": "1"}) == k


def test_dep_info_paths_with_escaped_spaces_are_read(tmp_path: Path) -> None:
    d = tmp_path / "x.d"
    d.write_text("/t/x: /src/a\\ b.rs /src/c.rs \\\n /src/d.rs\n\n/src/a\\ b.rs:\n")
    assert stamp.dep_info_files(d) == [Path("/src/a b.rs"), Path("/src/c.rs"), Path("/src/d.rs")]


def test_a_new_example_is_not_fresh(ws: Path) -> None:
    """cargo builds examples/*.rs without a Cargo.toml entry: a new one must start cargo,
    though no dep-info names it yet."""
    record(ws)
    (ws / "examples").mkdir()
    (ws / "examples" / "newone.rs").write_text("fn main() {}\n")
    assert not fresh(ws)
    record(ws)
    assert fresh(ws)
    (ws / "examples" / "second.rs").write_text("fn main() {}\n")
    assert not fresh(ws)


def test_a_deleted_binary_source_is_not_fresh(ws: Path) -> None:
    (ws / "src" / "bin").mkdir()
    (ws / "src" / "bin" / "tool.rs").write_text("fn main() {}\n")
    record(ws)
    assert fresh(ws)
    (ws / "src" / "bin" / "tool.rs").unlink()
    assert not fresh(ws)
