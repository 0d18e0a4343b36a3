"""host/lockfile.py: what a build changed in Cargo.lock, said in one line per moved package."""

from __future__ import annotations

from rgpu.host import lockfile


def lock(*packages: tuple[str, str, list[str]]) -> bytes:
    parts = ["version = 4\n"]
    for name, version, deps in packages:
        parts.append(f'\n[[package]]\nname = "{name}"\nversion = "{version}"\n')
        if deps:
            parts.append("dependencies = [\n" + "".join(f' "{d}",\n' for d in deps) + "]\n")
    return "".join(parts).encode()


BEFORE = lock(("bytemuck", "1.17.0", []), ("histo", "0.4.1", ["bytemuck"]))
AFTER = lock(
    ("bytemuck", "1.25.2", []),
    ("histo", "0.4.1", ["bytemuck", "histo-kernel"]),
    ("histo-kernel", "0.1.0", ["rgpu"]),
    ("rgpu", "0.2.0", ["bytemuck", "rgpu-runtime"]),
    ("rgpu-runtime", "0.2.0", ["bytemuck 1.25.2"]),
)


def test_a_moved_package_is_named_with_the_new_packages_that_need_it() -> None:
    assert lockfile.changes(BEFORE, AFTER) == [
        "Cargo.lock: bytemuck 1.17.0 -> 1.25.2 (needed by rgpu 0.2.0, rgpu-runtime 0.2.0)",
        "Cargo.lock: 3 packages added (histo-kernel, rgpu, rgpu-runtime)",
    ]


def test_nothing_is_said_when_nothing_changed_or_the_build_wrote_the_first_lock() -> None:
    assert lockfile.changes(BEFORE, BEFORE) == []
    assert lockfile.changes(None, AFTER) == []
    removed = lockfile.changes(AFTER, BEFORE)
    assert removed[0] == "Cargo.lock: bytemuck 1.25.2 -> 1.17.0 (used by histo 0.4.1)"
    assert removed[1] == "Cargo.lock: 3 packages removed (histo-kernel, rgpu, rgpu-runtime)"
