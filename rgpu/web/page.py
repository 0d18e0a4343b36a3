"""The static page that runs one wasm-bindgen program in a browser.

Files, in `target/rgpu/web/<program>/`: `index.html`, `rgpu-page.js` (the program's I/O and
JSPI), and wasm-bindgen's `<program>.js` + `<program>_bg.wasm`. The page calls the
program's `main` through `WebAssembly.promising`, so the runtime can wait for the browser
(`WebAssembly.Suspending`, crates/rgpu-runtime/src/webgpu/wait.rs); its arguments come
from the URL (`?args=<JSON list>`), its output goes to the page and, when served by `rgpu
run` (`?rgpu=1`), to the server as POSTs to /rgpu/out/<fd> and /rgpu/exit.

`rgpu-node.mjs` runs the same program under Node instead (`rgpu run --engine dawn`,
rgpu/web/dawn.py): `node rgpu-node.mjs DAWN_NODE [ARGS...]` loads Dawn's Node addon (npm's
`webgpu` package) as `navigator.gpu`, gives `rgpu-page.js` its arguments and output as
`globalThis.rgpuHost` (stdout, stderr, the process's exit status), and runs `main` as the
page does.
"""

from __future__ import annotations

import json

PAGE_JS = "rgpu-page.js"
NODE_JS = "rgpu-node.mjs"

_INDEX = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>__NAME__ (rgpu, WebGPU)</title>
<script type="importmap">{"imports": {"rgpu-page": "./rgpu-page.js"}}</script>
</head>
<body>
<pre id="out"></pre>
<script type="module">
import { run } from "./rgpu-page.js";
import init from "./__NAME__.js";
run(init, __WASM__);
</script>
</body>
</html>
"""

_PAGE_JS = """// rgpu's page glue (written by `rgpu build --backend webgpu`; do not edit).
// Where the program's arguments come from and its output goes: in a browser, the URL and the
// page (and `rgpu run`'s server); under Node, what rgpu-node.mjs sets as `globalThis.rgpuHost`.
const host = globalThis.rgpuHost || browserHost();
const programArgs = [__PROGRAM__, ...host.args];

function browserHost() {
  const query = new URLSearchParams(location.search);
  const reporting = query.get("rgpu") === "1";
  let sending = Promise.resolve();
  function post(path, body) {
    if (!reporting) return;
    sending = sending.then(() => fetch(path, { method: "POST", body }).catch(() => {}));
    return sending;
  }
  return {
    args: JSON.parse(query.get("args") || "[]"),
    write(fd, text) {
      document.getElementById("out").textContent += text;
      (fd === 2 ? console.error : console.log)(text);
      post(`/rgpu/out/${fd}`, text);
    },
    exit: (status) => post("/rgpu/exit", String(status)),
    compile: (url) => WebAssembly.compileStreaming(fetch(url)),
    where: "in the browser",
    noJspi: "this browser has no JSPI (WebAssembly.promising): use Chromium 137 or newer",
    noGpu: "this browser has no WebGPU (navigator.gpu): start Chromium with --enable-unsafe-webgpu",
  };
}

function write(fd, text) {
  host.write(fd, text);
}

// One turn of the event loop (a message, not a 4 ms-clamped timer).
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()();
function turn() {
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
}

// JSPI: wasm calls this to give the browser a turn while a WebGPU promise is pending.
export const suspend = new WebAssembly.Suspending(turn);

globalThis.rgpuPage = { args: () => programArgs, write };

// Kernels with subgroup operations need WebGPU's "subgroups" feature (WGSL `enable
// subgroups;`), which wgpu 30's WebGPU backend cannot name: the page adds it to every device
// request when the adapter has it.
if (globalThis.GPUAdapter) {
  const requestDevice = GPUAdapter.prototype.requestDevice;
  GPUAdapter.prototype.requestDevice = function (descriptor = {}) {
    const wanted = ["subgroups"].filter((f) => this.features.has(f));
    const required = [...(descriptor.requiredFeatures || []), ...wanted];
    return requestDevice.call(this, { ...descriptor, requiredFeatures: [...new Set(required)] });
  };
}

// wasm-bindgen's glue runs a binary's `main` from `__wbindgen_start` while it
// initializes, which is not a JSPI entry; rgpu's page keeps that call from running (the
// glue gets exports whose `__wbindgen_start` does nothing) and calls `main` itself through
// `WebAssembly.promising`, with its exit status as the result.
async function instantiate(init, wasmUrl) {
  const module = await host.compile(wasmUrl);
  const real = WebAssembly.instantiate;
  let exports;
  WebAssembly.instantiate = async (mod, imports) => {
    const instance = await real(mod, imports);
    exports = instance.exports;
    const glue = { ...instance.exports, __wbindgen_start() {} };
    return Object.create(WebAssembly.Instance.prototype, { exports: { value: glue } });
  };
  try {
    await init({ module_or_path: module });
  } finally {
    WebAssembly.instantiate = real;
  }
  return exports;
}

export async function run(init, wasmUrl) {
  let status;
  try {
    if (typeof WebAssembly.promising !== "function") throw new Error(host.noJspi);
    if (!globalThis.navigator || !navigator.gpu) throw new Error(host.noGpu);
    const exports = await instantiate(init, wasmUrl);
    const main = WebAssembly.promising(exports.main);
    status = await main(0, 0);
  } catch (e) {
    write(2, `error: the program stopped ${host.where}: ${e}\\n`);
    status = 101;
  }
  await host.exit(status);
}
"""

_NODE_JS = """// rgpu's Node runner (written by `rgpu build --backend webgpu`; do not edit):
//   node rgpu-node.mjs DAWN_NODE [ARGS...]
// runs this page's program with Dawn (DAWN_NODE: npm's `webgpu` package's dawn.node) as
// navigator.gpu; the program's output goes to stdout and stderr, its status is node's.
import { readFileSync, writeSync } from "node:fs";
import { createRequire, registerHooks } from "node:module";

const [dawnNode, ...args] = process.argv.slice(2);
const { create, globals } = createRequire(import.meta.url)(dawnNode);
Object.assign(globalThis, globals);
// wgpu looks for navigator.gpu where a page has it: on a global that has `Window`.
globalThis.Window ??= function Window() {};
// allow_unsafe_apis: what Chromium's --enable-unsafe-webgpu allows (rgpu's group kernels'
// WGSL enables chromium_disable_uniformity_analysis: docs/backends.md).
navigator.gpu = create(["enable-dawn-features=allow_unsafe_apis"]);

// wasm-bindgen's glue imports the module `rgpu-page` (the page's import map names it).
const page = new URL("./rgpu-page.js", import.meta.url).href;
registerHooks({
  resolve: (specifier, context, next) =>
    specifier === "rgpu-page" ? { url: page, shortCircuit: true } : next(specifier, context),
});

globalThis.rgpuHost = {
  args,
  write: (fd, text) => writeSync(fd === 2 ? 2 : 1, text),
  exit: (status) => process.exit(status),
  compile: (url) => WebAssembly.compile(readFileSync(new URL(url, import.meta.url))),
  where: "in Node (Dawn)",
  noJspi: `node ${process.version} has no JSPI (WebAssembly.promising): use node 25 or newer`,
  noGpu: `${dawnNode} gave no navigator.gpu`,
};
const { run } = await import(page);
const { default: init } = await import(__GLUE__);
await run(init, __WASM__);
"""


def index_html(program: str) -> str:
    return _INDEX.replace("__NAME__", program).replace(
        "__WASM__", json.dumps(f"./{program}_bg.wasm")
    )


def page_js(program: str) -> str:
    return _PAGE_JS.replace("__PROGRAM__", json.dumps(program))


def node_js(program: str) -> str:
    return _NODE_JS.replace("__GLUE__", json.dumps(f"./{program}.js")).replace(
        "__WASM__", json.dumps(f"./{program}_bg.wasm")
    )
