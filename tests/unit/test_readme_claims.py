"""What README.md (and docs/commands.md) say about the features a build passes and `rgpu init`
adds is what the code does (a new user once read `--features cpu,<B>`, which no workspace
has)."""

from __future__ import annotations

from pathlib import Path

from rgpu.backends import BACKENDS
from rgpu.host import build as host
from rgpu.scaffold import manifest_edits
from tests.conftest import REPO
from tests.unit.projects import demo_workspace

README = (REPO / "README.md").read_text(encoding="utf-8")
COMMANDS = (REPO / "docs" / "commands.md").read_text(encoding="utf-8")


def test_the_host_build_passes_the_kernel_crates_backend_features(tmp_path: Path) -> None:
    ws = demo_workspace(tmp_path / "ws")
    step = host.host_step(ws, [BACKENDS["cpu"], BACKENDS["cuda"], BACKENDS["wgpu"]], "release")
    assert step.argv[-2:] == ("--features", "demo-kernel/cuda,demo-kernel/wgpu")
    assert "`cargo build --features\n<kernel-crate>/<backend>`" in README
    assert "--features <kernel-crate>/<B>,..." in COMMANDS
    for text in (README, COMMANDS):  # there is no cpu feature: it is always built in
        assert "--features cpu" not in text


def test_the_features_rgpu_init_adds_are_the_ones_readme_lists() -> None:
    assert tuple(b.name for b in BACKENDS.values() if b.feature) == manifest_edits.BACKENDS
    listed = "/".join(f"`{b}`" for b in manifest_edits.BACKENDS)
    assert f"features {listed}" in README.replace("\n", " ")
