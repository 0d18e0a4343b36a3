"""The static page that runs one wasm-bindgen program in a browser.

Files, in `target/rgpu/web/<program>/`: `index.html`, `rgpu-page.js` (the program's I/O and
JSPI), and wasm-bindgen's `<program>.js` + `<program>_bg.wasm`. The page calls the
program's `main` through `WebAssembly.promising`, so the runtime can wait for the browser
(`WebAssembly.Suspending`, crates/rgpu-runtime/src/webgpu/wait.rs); its arguments come
from the URL (`?args=<JSON list>`), its output goes to the page and, when served by `rgpu
run` (`?rgpu=1`), to the server as POSTs to /rgpu/out/<fd> and /rgpu/exit.
"""

from __future__ import annotations

import json

PAGE_JS = "rgpu-page.js"

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
const query = new URLSearchParams(location.search);
const reporting = query.get("rgpu") === "1";
const programArgs = [__PROGRAM__, ...JSON.parse(query.get("args") || "[]")];
let sending = Promise.resolve();

function post(path, body) {
  if (!reporting) return;
  sending = sending.then(() => fetch(path, { method: "POST", body }).catch(() => {}));
  return sending;
}

function write(fd, text) {
  document.getElementById("out").textContent += text;
  (fd === 2 ? console.error : console.log)(text);
  post(`/rgpu/out/${fd}`, text);
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
  const module = await WebAssembly.compileStreaming(fetch(wasmUrl));
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
    if (typeof WebAssembly.promising !== "function") {
      throw new Error(
        "this browser has no JSPI (WebAssembly.promising): use Chromium 137 or newer");
    }
    if (!navigator.gpu) {
      throw new Error(
        "this browser has no WebGPU (navigator.gpu): start Chromium with --enable-unsafe-webgpu");
    }
    const exports = await instantiate(init, wasmUrl);
    const main = WebAssembly.promising(exports.main);
    status = await main(0, 0);
  } catch (e) {
    write(2, `error: the program stopped in the browser: ${e}\\n`);
    status = 101;
  }
  await post("/rgpu/exit", String(status));
}
"""


def index_html(program: str) -> str:
    return _INDEX.replace("__NAME__", program).replace(
        "__WASM__", json.dumps(f"./{program}_bg.wasm")
    )


def page_js(program: str) -> str:
    return _PAGE_JS.replace("__PROGRAM__", json.dumps(program))
