"""A local HTTP server for one page run: serves the page's directory on 127.0.0.1 (a free
port) and receives the program's output and exit status from it."""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path
from typing import Any


class PageRun:
    """What the page reported: its exit status once it finished."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.done = threading.Event()
        self.lock = threading.Lock()

    def output(self, fd: int, text: str) -> None:
        with self.lock:
            stream = sys.stderr if fd == 2 else sys.stdout
            stream.write(text)
            stream.flush()

    def exit(self, status: int) -> None:
        self.status = status
        self.done.set()


class _Handler(http.server.SimpleHTTPRequestHandler):
    run: PageRun

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length).decode("utf-8", errors="replace")
        if self.path.startswith("/rgpu/out/"):
            fd = 2 if self.path.endswith("/2") else 1
            self.run.output(fd, body)
        elif self.path == "/rgpu/exit":
            try:
                status = int(body.strip())
            except ValueError:
                status = 1
            self.run.exit(status)
        self.send_response(204)
        self.end_headers()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class PageServer:
    """`with PageServer(dir) as server:` serves `dir` at `server.url` until the block ends."""

    def __init__(self, root: Path) -> None:
        self.run = PageRun()
        handler = type("Handler", (_Handler,), {"run": self.run})
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
        )
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def __enter__(self) -> PageServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
