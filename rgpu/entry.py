"""The `rgpu` console script: the first code of rgpu that runs.

Ctrl-C is answered from the first instruction on: while the CLI's modules load (click alone
takes tens of milliseconds) an interrupt exits 130 with one line, not a traceback; once the
CLI runs, it handles KeyboardInterrupt itself.
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


def main() -> NoReturn:
    signal.signal(signal.SIGINT, _interrupted)
    from rgpu.cli import main as run

    signal.signal(signal.SIGINT, signal.default_int_handler)
    run(sys.argv[1:])


if __name__ == "__main__":
    main()
