"""Where rgpu's data files are: inside the wheel (rgpu/_data), or beside the source tree."""

from __future__ import annotations

from pathlib import Path

from rgpu.errors import RgpuError

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise RgpuError(
        f"rgpu's `{name}` data directory is missing from its installation",
        "reinstall rgpu: `pip install --force-reinstall .` from its source directory",
    )


def templates_dir() -> Path:
    return data_dir("templates")


def toolchains_dir() -> Path:
    return data_dir("toolchains")


def crates_dir() -> Path:
    return data_dir("crates")
