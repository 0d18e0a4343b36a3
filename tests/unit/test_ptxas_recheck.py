"""Issue 20, item 3: a PTX that was checked without ptxas is checked again once a ptxas
appears or changes (the nvptx kernel stamp's key holds what checks it), and the warning
names the file the build wrote (`<kernel>-sm_XX.ptx`), not cargo's intermediate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rgpu import kernel_build
from rgpu.codegens import nvptx
from rgpu.cuda_archs import Arch
from rgpu.toolchains import tools
from tests.unit.projects import fake_program, tiny_ptx
from tests.unit.test_nvptx import build


def test_the_stamp_key_changes_when_ptxas_appears_or_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found: list[str | None] = [None]
    monkeypatch.setattr(tools, "find_ptxas", lambda env: found[0])
    none = kernel_build.checker_identity("ptx", {})
    assert none == "ptxas=none"
    ptxas = fake_program(tmp_path / "bin", "ptxas", "exit 0\n")
    found[0] = str(ptxas)
    appeared = kernel_build.checker_identity("ptx", {})
    assert appeared != none and str(ptxas) in appeared
    st = ptxas.stat()
    os.utime(ptxas, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a new ptxas in its place
    assert kernel_build.checker_identity("ptx", {}) not in (none, appeared)
    assert kernel_build.checker_identity("spirv", {}) == ""  # SPIR-V is not ptxas's


def test_the_warning_names_the_file_the_build_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(tools, "find_ptxas", lambda env: None)
    b = build(tmp_path, archs="sm_80")
    source = nvptx.built_ptx(b, Arch(80))
    source.parent.mkdir(parents=True)
    source.write_text(tiny_ptx("sm_80"))
    (artifact,) = nvptx.CODEGEN.collect(b)  # the PTX alone: no ptxas, no SASS
    err = capsys.readouterr().err
    assert "demo_kernel-sm_80.ptx: ptxas check not run" in err
    assert "no SASS for sm_80: the CUDA driver JIT-compiles the PTX" in err
    assert "demo_kernel.ptx:" not in err
    assert artifact.extra["ptxas"].startswith("not run")
    assert not (b.out_dir / "demo_kernel-sm_80.cubin").exists()


def test_an_arch_this_ptxas_does_not_know_gets_ptx_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """CUDA 13's ptxas has no sm_70: that PTX is embedded unchecked and without SASS (the
    driver JIT-compiles it), the other archs get their cubins."""
    ptxas = fake_program(
        tmp_path / "bin",
        "ptxas",
        'case "$1" in -arch=sm_70) echo "ptxas fatal   : Value \'sm_70\' is not defined for '
        "option 'gpu-name'\" >&2; exit 1;; esac\n"
        'while [ $# -gt 0 ]; do [ "$1" = -o ] && printf "\\177ELF" > "$2"; shift; done\n',
    )
    monkeypatch.setattr(tools, "find_ptxas", lambda env: str(ptxas))
    b = build(tmp_path, archs="sm_70,sm_80")
    for arch in ("sm_70", "sm_80"):
        source = nvptx.built_ptx(b, Arch.parse(arch))
        source.parent.mkdir(parents=True)
        source.write_text(tiny_ptx(arch))
    kinds = [(a.kind, a.target) for a in nvptx.CODEGEN.collect(b)]
    assert kinds == [("ptx", "sm_70"), ("ptx", "sm_80"), ("cubin", "sm_80")]
    err = capsys.readouterr().err
    assert "demo_kernel-sm_70.ptx: ptxas check not run: this ptxas does not support sm_70" in err
    assert "no SASS for sm_70" in err and "sm_80" not in err
