"""`rgpu doc [--open]`: the kernel API's documentation, built by rustdoc from the rgpu crates
the workspace uses (vendored or from crates.io), so it matches the version being built with.

It documents `rgpu` and `rgpu-runtime` as the host (and the cpu backend) compiles them: the
launch side (`Device`, `Buffer`, `Error`) and the kernel side under the same names as on the
GPU codegens (`Item`, `Group` with its subgroup operations, `Shared`, `Global`, the
`Float` and `MulAdd` traits), each with its documentation. docs/kernel-api.md in rgpu's
repository lists what each becomes on each backend.
"""

from __future__ import annotations

from pathlib import Path

from rgpu.plan import Step
from rgpu.util import cmd
from rgpu.workspace import Workspace

PACKAGES = ("rgpu", "rgpu-runtime")


def doc_step(ws: Workspace, open_browser: bool) -> Step:
    packages = [arg for name in PACKAGES for arg in ("-p", name)]
    return Step(
        name="doc",
        description="the kernel API's documentation (rustdoc)",
        argv=("cargo", "doc", "--no-deps", *packages, *(("--open",) if open_browser else ())),
        cwd=ws.root,
    )


def index(ws: Workspace) -> Path:
    return ws.target_dir / "doc" / "rgpu" / "index.html"


def build_docs(ws: Workspace, open_browser: bool) -> Path:
    step = doc_step(ws, open_browser)
    cmd.run(
        step.argv,
        cwd=step.cwd,
        hint="the workspace must build on the host: `rgpu build` shows why it does not",
    )
    return index(ws)
