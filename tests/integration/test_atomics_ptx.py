"""The atomics of the kernel API on rustc's nvptx codegen, for real: the portability
corpus's `atomic_ops` and `message_passing` (tests/corpus/kernels.rs) built to PTX for
sm_80 and accepted by ptxas, with each operation and ordering lowered to the PTX instruction
docs/kernel-api.md names: `.gpu` scope and the `.global` state space for `Global`, `.cta`
and `.shared` for `Shared`, `fence.sc` before a `SeqCst` operation, no `.sys` scope.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from rgpu.artifacts.manifest import read_manifest
from tests.conftest import run_rgpu
from tests.corpus_table import make_workspace
from tests.integration.conftest import kernels_dir


@pytest.fixture(scope="module")
def ptx(tmp_path_factory: pytest.TempPathFactory) -> str:
    parent = tmp_path_factory.mktemp("atomics")
    run_rgpu("new", "atomicsptx", "--dir", str(parent))
    ws = parent / "atomicsptx"
    make_workspace(ws)
    run_rgpu("build", "--backend", "cuda", "--arch", "sm_80", cwd=ws)
    (entry,) = [a for a in read_manifest(kernels_dir(ws)) if a.kind == "ptx"]
    assert entry.extra["ptxas"] == "accepted", entry.extra
    return Path(kernels_dir(ws) / entry.path).read_text(encoding="utf-8")


def instructions(ptx: str, kernel: str) -> Counter[str]:
    """The memory instructions with a semantics or scope in one entry point's body."""
    start = ptx.index(f".entry {kernel}(")
    end = ptx.find(".entry ", start + 1)
    body = ptx[start : end if end >= 0 else None]
    semantics = r"(?:relaxed|acquire|release|acq_rel|sc)"
    return Counter(re.findall(rf"\b((?:atom|ld|st|red|fence)\.{semantics}\S*?)[\s;]", body))


def test_every_atomic_operation_and_ordering_has_its_ptx_instruction(ptx: str) -> None:
    found = instructions(ptx, "atomic_ops")
    want = {
        # Global<u32>, the relaxed methods
        "atom.relaxed.gpu.global.add.u32",
        "atom.relaxed.gpu.global.max.u32",
        "atom.relaxed.gpu.global.min.u32",
        "atom.relaxed.gpu.global.and.b32",
        "atom.relaxed.gpu.global.or.b32",
        "atom.relaxed.gpu.global.xor.b32",
        "atom.relaxed.gpu.global.exch.b32",
        "atom.relaxed.gpu.global.cas.b32",
        # the ordered handle (fetch_sub is an add of the negation)
        "atom.release.gpu.global.add.u32",
        "atom.acq_rel.gpu.global.add.u32",
        "atom.acquire.gpu.global.or.b32",
        "atom.acq_rel.gpu.global.xor.b32",
        "atom.acq_rel.gpu.global.and.b32",
        "atom.acquire.gpu.global.max.u32",
        "atom.release.gpu.global.min.u32",
        "atom.acq_rel.gpu.global.exch.b32",
        "atom.acq_rel.gpu.global.cas.b32",
        "ld.acquire.gpu.global.b32",
        "st.release.gpu.global.b32",
        "fence.sc.gpu",
        # i32: signed min and max
        "atom.relaxed.gpu.global.min.s32",
        "atom.relaxed.gpu.global.max.s32",
        "atom.acquire.gpu.global.min.s32",
        "atom.release.gpu.global.max.s32",
        # Shared: workgroup scope on the shared window
        "atom.relaxed.cta.shared.add.u32",
        "atom.relaxed.cta.shared.min.u32",
        "atom.relaxed.cta.shared.max.u32",
        "atom.relaxed.cta.shared.and.b32",
        "atom.relaxed.cta.shared.or.b32",
        "atom.relaxed.cta.shared.xor.b32",
        "atom.relaxed.cta.shared.cas.b32",
        "atom.acq_rel.cta.shared.add.u32",
        "atom.acq_rel.cta.shared.min.s32",
        "atom.relaxed.cta.shared.max.s32",
        "ld.relaxed.cta.shared.b32",
        "ld.acquire.cta.shared.b32",
        "fence.sc.cta",
    }
    assert want <= set(found), sorted(want - set(found))
    assert not [i for i in found if ".sys" in i], found


def test_message_passing_is_release_stores_and_acquire_loads_at_gpu_scope(ptx: str) -> None:
    found = instructions(ptx, "message_passing")
    assert found["st.release.gpu.global.b32"] == 1, found
    assert found["ld.acquire.gpu.global.b32"] >= 1, found
    assert "atom.relaxed.gpu.global.add.u32" in found, found
    assert "ld.relaxed.gpu.global.b32" in found and "st.relaxed.gpu.global.b32" in found, found
    assert not [i for i in found if ".sys" in i or i.startswith("fence")], found
