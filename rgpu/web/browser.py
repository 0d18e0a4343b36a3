"""Headless Chromium for `rgpu run --backend webgpu`: find it, start it on a page, wait
for the page's exit status, stop it."""

from __future__ import annotations

import json
import tempfile
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from rgpu.errors import CommandFailedError, ToolMissingError
from rgpu.util import cmd

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
BROWSER_ENV = "RGPU_BROWSER"
TIMEOUT_ENV = "RGPU_BROWSER_TIMEOUT"
DEFAULT_TIMEOUT_S = 600.0
INSTALL_HINT = "sudo apt-get install -y chromium (or set RGPU_BROWSER to a Chromium 137+)"

# WebGPU in headless Chromium on Linux: --enable-unsafe-webgpu turns it on where it is
# off by default (Linux); with no GPU, Chromium's Dawn runs on SwiftShader (its own Vulkan
# on the CPU). --no-sandbox: root in containers and CI; the page is ours, on 127.0.0.1.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--enable-unsafe-webgpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-first-run",
    "--no-default-browser-check",
)


def find_chromium(env: dict[str, str]) -> str | None:
    """The browser rgpu runs pages in: RGPU_BROWSER, else the first Chromium on PATH, else
    Chrome or Chromium where macOS and Windows install them (util/platform.py)."""
    # start-up: <1 ms to import util.platform; only this path pays it
    from rgpu.util.platform import browser_paths

    chosen = env.get(BROWSER_ENV)
    if chosen:
        return chosen if Path(chosen).is_file() else cmd.which(chosen, env)
    for name in CHROMIUM_NAMES:
        found = cmd.which(name, env)
        if found:
            return found
    return next((str(p) for p in browser_paths(env) if p.is_file()), None)


def require_chromium(env: dict[str, str]) -> str:
    found = find_chromium(env)
    if found is None:
        raise ToolMissingError(
            "no Chromium found to run the webgpu page (looked for "
            + ", ".join(CHROMIUM_NAMES)
            + f" on PATH and {BROWSER_ENV})",
            INSTALL_HINT,
        )
    return found


def page_url(base: str, args: Sequence[str]) -> str:
    query = urllib.parse.urlencode({"rgpu": "1", "args": json.dumps(list(args))})
    return f"{base}index.html?{query}"


def run_page(root: Path, args: Sequence[str], env: dict[str, str]) -> int:
    """Serves `root`, opens its page in headless Chromium with `args`, streams the
    program's output, and returns its exit status."""
    # start-up: ~50 ms to import web.serve; only this path pays it
    from rgpu.web.serve import PageServer

    browser = require_chromium(env)
    timeout = float(env.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S)
    with (
        PageServer(root) as server,
        tempfile.TemporaryDirectory(prefix="rgpu-chromium-", ignore_cleanup_errors=True) as profile,
    ):
        argv = [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", page_url(server.url, args)]
        with cmd.background(argv, env=env) as proc:
            while not server.run.done.wait(0.2):
                timeout -= 0.2
                if proc.poll() is not None:
                    raise CommandFailedError(
                        f"{browser} exited ({proc.returncode}) before the page finished",
                        "run it by hand to see why: " + cmd.format_argv(argv),
                        returncode=proc.returncode or 1,
                    )
                if timeout <= 0:
                    limit = env.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S
                    raise CommandFailedError(
                        f"the page did not finish within {limit} s",
                        f"raise {TIMEOUT_ENV}, or open {server.url}index.html in a browser",
                    )
    status = server.run.status
    return 1 if status is None else status
