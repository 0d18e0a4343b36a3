"""What a cold build prints about the tools rgpu installs into its own cache: cargo's note
"be sure to add `<root>/bin` to your PATH" is not passed on (rgpu calls the tools by full
path, so the advice is wrong), and the rest of cargo's output is. With the real cargo, on a
tiny local crate installed the way rgpu installs cargo-gpu and rgpu-naga."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rgpu.plan import CARGO_INSTALL_NOTES

SCRIPT = """
import sys
from pathlib import Path
from rgpu.plan import CARGO_INSTALL_NOTES, Step
from rgpu.runner import run_step
crate, root = Path(sys.argv[1]), sys.argv[2]
run_step(Step("install", "install a tool into rgpu's cache", ("cargo", "install", "--path",
         str(crate), "--root", root), crate, keep_output=True, hide=CARGO_INSTALL_NOTES))
"""


def tiny_crate(root: Path) -> Path:
    crate = root / "tool"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "tool"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (crate / "src" / "main.rs").write_text("fn main() {}\n")
    return crate


def test_cargos_path_note_for_rgpus_own_cache_is_not_shown(tmp_path: Path) -> None:
    crate = tiny_crate(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    plain = subprocess.run(
        ["cargo", "install", "--path", str(crate), "--root", str(tmp_path / "plain")],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    note = [ln for ln in plain.stderr.splitlines() if "to your PATH" in ln]
    assert len(note) == 1, plain.stderr  # cargo says it: the pattern must match its words
    import re

    assert any(re.fullmatch(p, note[0]) for p in CARGO_INSTALL_NOTES), note[0]
    ours = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(crate), str(tmp_path / "cache")],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "to your PATH" not in ours.stderr + ours.stdout
    assert "Installed package `tool v0.1.0" in ours.stderr  # the rest is passed on
    assert (tmp_path / "cache" / "bin" / "tool").is_file()
