"""The host half of `--backend webgpu`: the programs built for wasm32-unknown-unknown,
wasm-bindgen's JS for each, and the page that runs it (target/rgpu/web/<program>/).

Tools, found by one function each and installed only with consent (`--yes`, RGPU_YES=1):
the rustup target `wasm32-unknown-unknown` of the host toolchain, and wasm-bindgen-cli at
exactly the wasm-bindgen version of the workspace's Cargo.lock, installed with `cargo
install` into rgpu's cache (`<cache>/wasm-bindgen-<version>/bin`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from rgpu.artifacts.kernels import find
from rgpu.artifacts.manifest import Artifact, read_kernels
from rgpu.config import cache_dir
from rgpu.errors import ArtifactError, ToolMissingError
from rgpu.plan import CARGO_INSTALL_NOTES
from rgpu.util import cmd
from rgpu.util.files import write_atomic
from rgpu.util.output import reporter
from rgpu.util.platform import executable
from rgpu.web.page import NODE_JS, PAGE_JS, index_html, node_js, page_js
from rgpu.workspace import Workspace

WASM_TARGET = "wasm32-unknown-unknown"


def wasm_bindgen_version(ws: Workspace) -> str | None:
    """The wasm-bindgen version the workspace's Cargo.lock holds (None before one exists)."""
    lock = ws.root / "Cargo.lock"
    if not lock.is_file():
        return None
    found = re.search(
        r'\[\[package\]\]\nname = "wasm-bindgen"\nversion = "([^"]+)"', lock.read_text()
    )
    return found.group(1) if found else None


def wasm_bindgen_path(version: str, env: Mapping[str, str]) -> Path:
    return cache_dir(env) / f"wasm-bindgen-{version}" / "bin" / executable("wasm-bindgen")


def install_wasm_bindgen_argv(version: str, env: Mapping[str, str]) -> list[str]:
    root = wasm_bindgen_path(version, env).parent.parent
    return ["cargo", "install", "wasm-bindgen-cli", "--version", f"={version}", "--root", str(root)]


def has_wasm_target(env: Mapping[str, str], cwd: Path) -> bool:
    result = cmd.run(
        ["rustc", "--print", "sysroot"], cwd=cwd, env=env, capture=True, check=False, echo=False
    )
    if result.returncode != 0:
        return False
    sysroot = Path(result.stdout.strip())
    return (sysroot / "lib" / "rustlib" / WASM_TARGET / "lib").is_dir()


def _consent(what: str, argv: Sequence[str], yes: bool) -> None:
    if not yes:
        command = cmd.format_argv(argv)
        raise ToolMissingError(
            f"the webgpu backend needs {what}, and rgpu installs it only when asked",
            f"run `{command}`, or pass --yes (or set RGPU_YES=1)",
        )


def ensure_tools(ws: Workspace, env: Mapping[str, str], yes: bool) -> None:
    """The wasm target of the host toolchain, installed with consent."""
    if not has_wasm_target(env, ws.root):
        argv = ["rustup", "target", "add", WASM_TARGET]
        _consent(f"the rustup target {WASM_TARGET}", argv, yes)
        cmd.run(argv, cwd=ws.root, env=env, keep_output=True, hide=CARGO_INSTALL_NOTES)


def ensure_wasm_bindgen(ws: Workspace, env: Mapping[str, str], yes: bool) -> Path:
    """wasm-bindgen at the version Cargo.lock holds (the lock exists after the host build)."""
    version = wasm_bindgen_version(ws)
    if version is None:
        raise ToolMissingError(
            "Cargo.lock has no wasm-bindgen: the host was not built with the webgpu feature",
            "run `rgpu build --backend webgpu`",
        )
    path = wasm_bindgen_path(version, env)
    if not path.is_file():
        argv = install_wasm_bindgen_argv(version, env)
        _consent(f"wasm-bindgen-cli {version} (the version in Cargo.lock)", argv, yes)
        cmd.run(argv, cwd=ws.root, env=env, keep_output=True, hide=CARGO_INSTALL_NOTES)
    return path


def missing_wgsl(required: Sequence[str], artifacts: Sequence[Artifact]) -> list[str]:
    """The kernels no WGSL artifact has as an entry point."""
    have = {e for a in artifacts if a.kind == "wgsl" for e in a.entry_points}
    return [k for k in required if k not in have]


def check_wgsl(
    ws: Workspace, artifacts: Sequence[Artifact], required: Sequence[str] = ()
) -> list[str]:
    """The kernels without WGSL (the crate's, and those of the libraries of kernels it
    depends on), before a program is built for the browser: a
    warning (the spirv build said why each cannot run on WebGPU; launching one there is an
    `rgpu::Error`), or an error when the project requires WebGPU (`require-platforms`)."""
    listed = read_kernels(ws.kernels_dir)
    names = find(ws.kernel_dir) if listed is None else tuple(k.name for k in listed)
    missing = missing_wgsl(names, artifacts)
    if not missing:
        return []
    what = (
        f"no WGSL for the kernels {', '.join(missing)}: the webgpu backend runs each "
        "kernel's WGSL, written from its SPIR-V by the spirv codegen (kernels that use "
        "f64 or 64-bit integers have none: WebGPU has neither)"
    )
    if "webgpu" in required:
        raise ArtifactError(
            what,
            "change those kernels to 32-bit types, or pass the WGSL with "
            "`rgpu build --backend webgpu --kernel-artifact NAME.wgsl`",
        )
    reporter().warn(f"{what}; the program builds, and launching one of them there fails")
    return missing


def wasm_build_argv(ws: Workspace, profile: str) -> list[str]:
    return [
        "cargo",
        "build",
        *(["--release"] if profile == "release" else []),
        "--target",
        WASM_TARGET,
        "--workspace",
        "--bins",
        "--features",
        ws.feature("webgpu"),
        "--message-format=json-render-diagnostics",
    ]


def build_programs(ws: Workspace, profile: str, env: Mapping[str, str]) -> list[Path]:
    """cargo build for wasm32; the .wasm of every binary built."""
    wasms: list[Path] = []

    def on_line(line: str) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if message.get("reason") != "compiler-artifact":
            return
        if "bin" not in message.get("target", {}).get("kind", []):
            return
        wasms.extend(Path(f) for f in message.get("filenames", []) if f.endswith(".wasm"))

    cmd.stream(wasm_build_argv(ws, profile), on_line, cwd=ws.root, env=env)
    return wasms


def web_dir(ws: Workspace) -> Path:
    return ws.rgpu_dir / "web"


def write_page(ws: Workspace, wasm: Path, wasm_bindgen: Path, env: Mapping[str, str]) -> Path:
    """wasm-bindgen's JS and wasm for one program, and its page; the page's directory."""
    name = wasm.stem
    out = web_dir(ws) / name
    out.mkdir(parents=True, exist_ok=True)
    cmd.run(
        [str(wasm_bindgen), "--target", "web", "--no-typescript", "--out-dir", str(out), str(wasm)],
        cwd=ws.root,
        env=env,
        stdout_to_stderr=True,
    )
    write_atomic(out / "index.html", index_html(name).encode())
    write_atomic(out / PAGE_JS, page_js(name).encode())
    write_atomic(out / NODE_JS, node_js(name).encode())
    return out


def build_pages(ws: Workspace, profile: str, env: Mapping[str, str], yes: bool) -> list[Path]:
    ensure_tools(ws, env, yes)
    wasms = build_programs(ws, profile, env)
    wasm_bindgen = ensure_wasm_bindgen(ws, env, yes)
    return [write_page(ws, wasm, wasm_bindgen, env) for wasm in wasms]
