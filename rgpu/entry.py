"""The `rgpu` console script: the first code of rgpu that runs.

Ctrl-C is answered from the first instruction on: while the CLI's modules load (click alone
takes tens of milliseconds) an interrupt exits 130 with one line, not a traceback; once the
CLI runs, it handles KeyboardInterrupt itself (except inside an import: see
`_keyboard_interrupt`).
"""

from __future__ import annotations

import os
import signal
import sys

# `typing` costs milliseconds to import; the handler below must be in place before that.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


def _interrupted(signum: int, frame: Any) -> None:
    os.write(2, b"error: interrupted\n")
    os._exit(130)


def _keyboard_interrupt(signum: int, frame: Any) -> None:
    """Once the CLI runs: KeyboardInterrupt, so that rgpu stops what it started and cleans
    up (cli.main turns it into one line and exit 130). Except inside Python's import
    system: raised there, it can leave the import lock held (or be swallowed by one of its
    callbacks), and the next import, in any thread, waits forever; there rgpu stops at
    once, as during start-up."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            _interrupted(signum, frame)
        frame = frame.f_back
    raise KeyboardInterrupt


def main() -> NoReturn:
    signal.signal(signal.SIGINT, _interrupted)
    # Imported after the handler is in place: a Ctrl-C while the CLI loads is one line.
    from rgpu.cli import main as run

    signal.signal(signal.SIGINT, _keyboard_interrupt)
    try:
        run(sys.argv[1:])
    except KeyboardInterrupt:  # one that reached past the CLI's own handling
        _interrupted(signal.SIGINT, None)
    finally:
        # Leaving: the error message is written, and Python's shutdown (atexit, joining
        # doctor's probe threads) is no place for a KeyboardInterrupt: stop at once.
        signal.signal(signal.SIGINT, _interrupted)
    raise SystemExit(0)  # unreachable: run() always exits


if __name__ == "__main__":
    main()
