"""Where CI should install rgpu from: the exact commit this rgpu was installed from.

rgpu's distribution name is ``rgpu-cli`` (the command is ``rgpu``): the PyPI name ``rgpu``
belongs to an unrelated project (0.1.0 and 0.1.1 there, checked November 2026), so a
requirement naming ``rgpu`` would install the wrong package and is refused. rgpu-cli is not
on PyPI yet, so the workflow pins a git commit by default: the one recorded by pip in
``direct_url.json`` (PEP 610) for a git install, or the HEAD of the checkout an editable
install points at, when that checkout has an ``origin`` remote.
"""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from rgpu.errors import UsageError
from rgpu.util import cmd
from rgpu.util.output import reporter

DIST_NAME = "rgpu-cli"
_NAME = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(@|==|>=|<=|~=|!=|>|<|;|$)"
)
REMOTE_PREFIXES = ("https://", "http://", "ssh://", "git@", "git+https://", "git+ssh://")


def _direct_url() -> dict[str, Any] | None:
    try:
        text = metadata.distribution(DIST_NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    data = json.loads(text)
    return data if isinstance(data, dict) else None


def git_requirement(url: str, commit: str) -> str:
    url = url.removeprefix("git+")
    if url.startswith("git@"):  # scp-like ssh form; pip wants a URL
        host, _, path = url[len("git@") :].partition(":")
        url = f"https://{host}/{path}"
    return f"{DIST_NAME} @ git+{url}@{commit}"


def _from_checkout(directory: Path) -> str | None:
    def git(*args: str) -> str:
        result = cmd.run(
            ["git", "-C", str(directory), *args], capture=True, check=False, echo=False
        )
        return result.stdout.strip() if result.returncode == 0 else ""

    if cmd.which("git") is None:
        return None
    remote, commit = git("remote", "get-url", "origin"), git("rev-parse", "HEAD")
    # A local path or file:// remote means nothing on a GitHub runner.
    if not remote.startswith(REMOTE_PREFIXES) or not commit:
        return None
    if git("status", "--porcelain", "--untracked-files=no"):
        reporter().warn(f"{directory} has uncommitted changes; CI installs commit {commit[:12]}")
    reporter().warn(f"CI will install rgpu commit {commit[:12]}: make sure it is pushed")
    return git_requirement(remote, commit)


def detect_source() -> str | None:
    data = _direct_url()
    if data is None:
        return None
    vcs = data.get("vcs_info")
    url = str(data.get("url", ""))
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and vcs.get("commit_id"):
        return git_requirement(url, str(vcs["commit_id"]))
    parsed = urlparse(url)
    if parsed.scheme == "file":
        return _from_checkout(Path(unquote(parsed.path)))
    return None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_requirement(source: str) -> str:
    """A --rgpu-source must install rgpu: the rgpu-cli distribution (a version, or
    `rgpu-cli @ URL`), or a bare URL/path pip installs directly. Any other name, `rgpu`
    above all (an unrelated PyPI project), is refused."""
    text = source.strip()
    if "://" in text.split("@")[0] or text.startswith((".", "/", "git+")):
        return text  # a URL or a path: pip reads the name from the project itself
    match = _NAME.match(text)
    if match is None:
        raise UsageError(
            f"--rgpu-source {source!r} is not a pip requirement",
            f"pass e.g. `{DIST_NAME} @ git+https://github.com/ORG/rgpu@<commit>`",
        )
    name = _normalized(match.group(1))
    if name != DIST_NAME:
        what = (
            f"the PyPI project `rgpu`, not this rgpu ({DIST_NAME}): `rgpu` on PyPI is an "
            "unrelated project (a PyTorch remote-GPU device)"
            if name == "rgpu"
            else f"`{match.group(1)}`, not rgpu: `{match.group(1)}` is not rgpu's distribution"
        )
        raise UsageError(
            f"--rgpu-source {source!r} would install {what}",
            f"rgpu is published as `{DIST_NAME}`: pass e.g. "
            f"`{DIST_NAME} @ git+https://github.com/ORG/rgpu@<commit>`",
        )
    return text
