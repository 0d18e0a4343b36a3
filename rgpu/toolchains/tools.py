"""The tools the codegens use besides rustc, each found in exactly one way.

`rgpu build`, `rgpu doctor` and `rgpu ci check-ptx` all call these functions, so they
cannot disagree about where ptxas, the CUDA toolkit, LLVM or the system rustc are. Finders
never raise for a missing tool: they return None and the caller says what to install.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from rgpu.errors import RgpuError
from rgpu.util import cmd
from rgpu.util.platform import executable

# Where Rust-CUDA looks for the CUDA toolkit (crates/cust_raw/build/cuda_sdk.rs at the
# pinned rev): these variables in order, then these directories. toolchains/nvvm.toml's
# [cuda] table may override both.
CUDA_ROOT_ENV = ("CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR")
CUDA_DEFAULT_ROOTS = ("/usr/lib/cuda", "/usr/local/cuda", "/opt/cuda")
PTXAS_HINT = (
    "install ptxas from PyPI: `python -m pip install nvidia-cuda-nvcc` (rgpu finds it in "
    "that wheel, on PATH, or under CUDA_PATH)"
)


def run_quiet(
    argv: Sequence[str], env: Mapping[str, str], timeout: float = 20
) -> cmd.Result | None:
    """Run a probe; None when the program is missing or cannot start."""
    try:
        return cmd.run(argv, env=env, capture=True, check=False, echo=False, timeout=timeout)
    except RgpuError:
        return None


# --- ptxas -----------------------------------------------------------------------------


def _wheel_dirs() -> list[Path]:
    """Where an installed nvidia-cuda-nvcc wheel can be: this Python's site-packages (also
    when rgpu runs from a checkout) and every sys.path entry."""
    import site  # its site-packages; sysconfig would cost a no-op build a millisecond

    dirs = [*map(Path, site.getsitepackages()), *map(Path, sys.path)]
    return list(dict.fromkeys(d for d in dirs if str(d)))


def find_ptxas(env: Mapping[str, str]) -> str | None:
    """ptxas on PATH, else the nvidia-cuda-nvcc wheel's (nvidia/cu*/bin), else under
    CUDA_PATH / CUDA_HOME / /usr/local/cuda."""
    found = cmd.which("ptxas", env)
    if found:
        return found
    ptxas = executable("ptxas")
    for base in _wheel_dirs():
        if not (base / "nvidia").is_dir():  # one stat instead of a glob (no-op builds ask)
            continue
        for candidate in sorted(base.glob(f"nvidia/cu*/bin/{ptxas}"), reverse=True):
            if candidate.is_file():
                return str(candidate)
    for root in (env.get("CUDA_PATH"), env.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / ptxas).is_file():
            return str(Path(root) / "bin" / ptxas)
    return None


def ptxas_version(ptxas: str, env: Mapping[str, str]) -> str | None:
    result = run_quiet([ptxas, "--version"], env)
    if result is None or result.returncode != 0:
        return None
    lines = [ln for ln in result.stdout.splitlines() if "release" in ln]
    if lines:
        return lines[-1].strip()
    rest = result.stdout.strip().splitlines()
    return rest[-1] if rest else None


# --- the CUDA toolkit ------------------------------------------------------------------


def cuda_root(
    env: Mapping[str, str],
    root_env: Sequence[str] = CUDA_ROOT_ENV,
    default_roots: Sequence[str] = CUDA_DEFAULT_ROOTS,
) -> Path | None:
    """The CUDA toolkit root: the first variable of `root_env` naming a directory, else the
    first existing directory of `default_roots`."""
    for name in root_env:
        if env.get(name) and Path(env[name]).is_dir():
            return Path(env[name])
    return next((Path(r) for r in default_roots if Path(r).is_dir()), None)


def cuda_major(root: Path | None) -> str | None:
    """ "13" from `<root>/version.json` (CUDA 11.1+ ships it)."""
    import json

    try:
        data = json.loads((root / "version.json").read_text()) if root else {}
    except (OSError, ValueError):
        return None
    version = data.get("cuda", {}).get("version", "") if isinstance(data, dict) else ""
    return str(version).split(".")[0] or None


# --- LLVM -------------------------------------------------------------------------------


class LlvmConfig(NamedTuple):
    program: str
    version: str

    @property
    def major(self) -> str:
        return self.version.split(".")[0]


def llvm_config(env: Mapping[str, str]) -> LlvmConfig | None:
    """LLVM_CONFIG, else `llvm-config` on PATH, and the version it reports: the rule of
    Rust-CUDA's crates/rustc_codegen_nvvm/build.rs at the pinned rev."""
    program = env.get("LLVM_CONFIG") or cmd.which("llvm-config", env)
    if not program:
        return None
    result = run_quiet([program, "--version"], env)
    if result is None or result.returncode != 0:
        return None
    return LlvmConfig(program, result.stdout.strip())


# --- a system (non-rustup) rustc, e.g. Debian's rustc-web --------------------------------


class SystemRust(NamedTuple):
    """A non-rustup rustc such as Debian's rustc-web: usable for nvptx with build-std."""

    rustc: str
    release: str
    commit_hash: str
    llvm_major: int | None
    sysroot: Path | None
    rust_src: Path | None  # <sysroot>/lib/rustlib/src/rust/library, for -Zbuild-std=core


def parse_rustc_vv(text: str) -> dict[str, str]:
    info: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            info[key.strip()] = value.strip()
    return info


def llvm_major(info: Mapping[str, str]) -> int | None:
    head = info.get("LLVM version", "").split(".", 1)[0]
    return int(head) if head.isdigit() else None


def _probe(argv: Sequence[str], env: Mapping[str, str]) -> cmd.Result | None:
    """A probe of a system program (its own file is in the fingerprint), remembered."""
    from rgpu.toolchains import probe_cache

    started: list[cmd.Result | None] = []

    def start() -> cmd.Result:
        result = run_quiet(argv, env)
        started.append(result)
        return result or cmd.Result(tuple(argv), 127, "", "")

    result = probe_cache.run(argv, env, (), start)
    return None if started and started[0] is None else result


def system_rust(rustc: str, env: Mapping[str, str]) -> SystemRust | None:
    if not Path(rustc).is_file():
        return None
    vv = _probe([rustc, "-vV"], env)
    if vv is None or vv.returncode != 0:
        return None
    info = parse_rustc_vv(vv.stdout)
    root = _probe([rustc, "--print", "sysroot"], env)
    sysroot = Path(root.stdout.strip()) if root and root.returncode == 0 else None
    src = sysroot / "lib/rustlib/src/rust/library" if sysroot else None
    return SystemRust(
        rustc=rustc,
        release=info.get("release", "?"),
        commit_hash=info.get("commit-hash", ""),
        llvm_major=llvm_major(info),
        sysroot=sysroot,
        rust_src=src if src and (src / "core").is_dir() else None,
    )
