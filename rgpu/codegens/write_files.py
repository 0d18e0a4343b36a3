"""`python -m rgpu.codegens.write_files DIR FILES_JSON`: the plan step that writes a
generated crate (FILES_JSON maps relative paths to their text). Files whose content is
unchanged are left alone, so cargo sees nothing new."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rgpu.util.files import write_text_if_changed


def write(directory: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = (directory / rel).resolve()
        if not target.is_relative_to(directory.resolve()):
            raise ValueError(f"{rel} would leave {directory}")
        write_text_if_changed(target, text)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m rgpu.codegens.write_files DIR FILES_JSON", file=sys.stderr)
        return 2
    write(Path(argv[0]), json.loads(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
