"""The webgpu backend's Python side, pure: the page rgpu writes, the browser's URL and
flags, the wasm build's command, the wasm-bindgen version from Cargo.lock, WGSL artifacts."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from rgpu.artifacts import external
from rgpu.artifacts.manifest import Artifact
from rgpu.backends import BACKENDS
from rgpu.errors import ArtifactError, UsageError
from rgpu.host.build import features
from rgpu.web import browser, page
from rgpu.web import build as web_build
from rgpu.workspace import Workspace

FIXTURE = Path(__file__).parents[1] / "fixtures" / "wgsl" / "saxpy_fixture.wgsl"


def workspace(root: Path) -> Workspace:
    return Workspace(
        root=root,
        kernel_dir=root / "kernel",
        kernel_package="demo-kernel",
        metadata={},
        target_dir=root / "target",
        default_binary="demo",
    )


def test_the_page_calls_main_through_jspi_with_the_program_name() -> None:
    html = page.index_html("demo")
    assert '"rgpu-page": "./rgpu-page.js"' in html  # the wasm's JSPI import module
    assert 'import init from "./demo.js";' in html and '"./demo_bg.wasm"' in html
    js = page.page_js("demo")
    assert 'const programArgs = ["demo", ...host.args];' in js
    assert 'args: JSON.parse(query.get("args") || "[]"),' in js  # the browser's host
    assert "new WebAssembly.Suspending(turn)" in js
    assert "WebAssembly.promising(exports.main)" in js
    assert 'post("/rgpu/exit", String(status))' in js
    assert '["subgroups"].filter((f) => this.features.has(f))' in js


def test_the_node_runner_loads_dawn_and_the_same_page_glue() -> None:
    js = page.node_js("demo")
    assert 'await import("./demo.js")' in js and 'await run(init, "./demo_bg.wasm");' in js
    assert 'new URL("./rgpu-page.js", import.meta.url)' in js  # the module the wasm imports
    assert 'specifier === "rgpu-page"' in js
    assert 'navigator.gpu = create(["enable-dawn-features=allow_unsafe_apis"]);' in js
    assert "globalThis.rgpuHost = {" in js and "process.exit(status)" in js
    # The page glue uses the host rgpu-node.mjs sets before it falls back to the browser's.
    assert "const host = globalThis.rgpuHost || browserHost();" in page.page_js("demo")


def test_the_browser_url_carries_the_arguments_and_headless_webgpu_flags() -> None:
    url = browser.page_url("http://127.0.0.1:1234/", ["--len", "5", "a b"])
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert url.startswith("http://127.0.0.1:1234/index.html?")
    assert query["rgpu"] == ["1"] and json.loads(query["args"][0]) == ["--len", "5", "a b"]
    assert "--enable-unsafe-webgpu" in browser.CHROMIUM_FLAGS
    assert "--headless=new" in browser.CHROMIUM_FLAGS


def test_no_chromium_is_a_missing_tool_with_the_install_command(tmp_path: Path) -> None:
    assert browser.find_chromium({"PATH": str(tmp_path)}) is None
    with pytest.raises(Exception) as err:
        browser.require_chromium({"PATH": str(tmp_path)})
    assert "apt-get install -y chromium" in str(getattr(err.value, "hint", ""))


def test_webgpu_is_built_by_its_own_wasm_step_not_into_native_programs(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    webgpu = BACKENDS["webgpu"]
    assert (webgpu.feature, webgpu.artifact, webgpu.host_target) == (
        "webgpu",
        "wgsl",
        "wasm32-unknown-unknown",
    )
    assert features(ws, [BACKENDS["wgpu"], webgpu]) == ("demo-kernel/wgpu",)
    argv = web_build.wasm_build_argv(ws, "release")
    assert argv[:3] == ["cargo", "build", "--release"]
    assert "--target" in argv and "wasm32-unknown-unknown" in argv
    assert argv[argv.index("--features") + 1] == "demo-kernel/webgpu"


def test_wasm_bindgen_is_the_version_of_the_lock_in_rgpus_cache(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    assert web_build.wasm_bindgen_version(ws) is None
    (tmp_path / "Cargo.lock").write_text(
        'version = 4\n\n[[package]]\nname = "wasm-bindgen"\nversion = "0.2.130"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n\n'
        '[[package]]\nname = "wasm-bindgen-futures"\nversion = "0.4.80"\n'
    )
    assert web_build.wasm_bindgen_version(ws) == "0.2.130"
    env = {"RGPU_CACHE_DIR": str(tmp_path / "cache")}
    path = web_build.wasm_bindgen_path("0.2.130", env)
    assert path == tmp_path / "cache" / "wasm-bindgen-0.2.130" / "bin" / "wasm-bindgen"
    assert web_build.install_wasm_bindgen_argv("0.2.130", env) == [
        "cargo",
        "install",
        "wasm-bindgen-cli",
        "--version",
        "=0.2.130",
        "--root",
        str(tmp_path / "cache" / "wasm-bindgen-0.2.130"),
    ]
    # Not installed, and no consent: the message names the command.
    with pytest.raises(Exception) as err:
        web_build.ensure_wasm_bindgen(ws, env, yes=False)
    assert "cargo install wasm-bindgen-cli --version =0.2.130" in str(
        getattr(err.value, "hint", "")
    )


def wgsl(entry: str) -> Artifact:
    return Artifact(
        path=f"k.{entry}.wgsl",
        kind="wgsl",
        codegen="spirv",
        target="webgpu",
        entry_points=(entry,),
        size=1,
        sha256="0",
    )


def test_a_kernel_without_wgsl_is_refused_before_the_browser_build_where_webgpu_is_required(
    tmp_path: Path,
) -> None:
    assert web_build.missing_wgsl(["a", "b"], [wgsl("a")]) == ["b"]
    assert web_build.missing_wgsl(["a"], [wgsl("a")]) == []
    ws = workspace(tmp_path)
    (tmp_path / "kernel" / "src").mkdir(parents=True)
    (tmp_path / "kernel" / "src" / "lib.rs").write_text(
        "#[rgpu::kernel]\npub fn mandelbrot(x: f64, #[item] y: &mut f64) {}\n"
    )
    with pytest.raises(ArtifactError) as err:
        web_build.check_wgsl(ws, [wgsl("saxpy")], required=("webgpu",))
    assert "no WGSL for the kernels mandelbrot" in err.value.message
    assert "f64" in err.value.message
    # Not required: a warning, and the program builds (launching the kernel fails there).
    assert web_build.check_wgsl(ws, [wgsl("saxpy")], required=("metal",)) == ["mandelbrot"]


def test_a_wgsl_kernel_artifact_is_checked_for_the_workspaces_kernels(tmp_path: Path) -> None:
    assert external.kind_of(FIXTURE) == "wgsl"
    found = external.collect([FIXTURE], tmp_path, required=("saxpy",), cuda_archs=(), ptxas=None)
    assert [(a.kind, a.target, a.entry_points) for a in found] == [("wgsl", "webgpu", ("saxpy",))]
    with pytest.raises(ArtifactError) as err:
        external.collect(
            [FIXTURE], tmp_path, required=("saxpy", "axpby"), cuda_archs=(), ptxas=None
        )
    assert "lacks the workspace's kernels axpby" in err.value.message
    empty = tmp_path / "empty.wgsl"
    empty.write_text("fn helper() {}\n")
    with pytest.raises(ArtifactError):
        external.collect([empty], tmp_path / "o", required=(), cuda_archs=(), ptxas=None)
    with pytest.raises(UsageError):
        external.check_kinds([FIXTURE], {"spirv": ("wgpu",)})


def test_rgpu_test_says_precisely_that_webgpu_tests_do_not_run_in_the_browser(
    tmp_path: Path,
) -> None:
    from typing import cast

    from rgpu.config import Options
    from rgpu.host.test import run_tests

    with pytest.raises(UsageError) as err:
        run_tests(
            workspace(tmp_path),
            cast(Options, None),
            [BACKENDS["webgpu"]],
            env={},
            build=lambda *_: pytest.fail("refused before building"),
        )
    assert "runs only in a browser" in err.value.message
    assert "rgpu run --backend webgpu -- ARGS" in (err.value.hint or "")
