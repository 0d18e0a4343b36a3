"""What differs between Linux, macOS and Windows, in one place: executable names, rgpu's
cache directory, and where a browser is installed.

Each function reads `sys.platform` when it is called (tests set it to another system's).
Linux is where rgpu has run; macOS and Windows follow their own conventions here but have
not been run (docs/platforms.md).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path


def system() -> str:
    """ "linux", "macos" or "windows" (other Unix systems count as Linux)."""
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


def executable(name: str) -> str:
    """A program's file name here: `cargo-gpu`, or `cargo-gpu.exe` on Windows."""
    return f"{name}.exe" if system() == "windows" else name


def home(env: Mapping[str, str]) -> Path:
    key = "USERPROFILE" if system() == "windows" else "HOME"
    return Path(env.get(key) or env.get("HOME") or str(Path.home()))


def cache_base(env: Mapping[str, str]) -> Path:
    """Where per-user caches live: $XDG_CACHE_HOME where set (any system), else ~/.cache on
    Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on Windows."""
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"])
    kind = system()
    if kind == "macos":
        return home(env) / "Library" / "Caches"
    if kind == "windows":
        local = env.get("LOCALAPPDATA")
        return Path(local) if local else home(env) / "AppData" / "Local"
    return home(env) / ".cache"


def browser_paths(env: Mapping[str, str]) -> list[Path]:
    """Where Chromium or Chrome is installed outside PATH (macOS apps, Windows programs)."""
    kind = system()
    if kind == "macos":
        apps = [Path("/Applications"), home(env) / "Applications"]
        names = [
            ("Google Chrome.app", "Google Chrome"),
            ("Chromium.app", "Chromium"),
        ]
        return [a / app / "Contents" / "MacOS" / exe for a in apps for app, exe in names]
    if kind == "windows":
        roots = [env.get(k) for k in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
        return [
            Path(r) / vendor / "Application" / "chrome.exe"
            for r in roots
            if r
            for vendor in (Path("Google") / "Chrome", Path("Chromium"))
        ]
    return []
