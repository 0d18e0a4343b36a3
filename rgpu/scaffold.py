"""Render a template into a new workspace, atomically.

Only files ending in ``.jinja`` are rendered (the suffix is dropped); everything else is
copied byte for byte, so Rust code full of braces stays as written. A new destination is
rendered into a temporary directory beside it and moved in at once; an existing one (with
``--force``) only gets the template's files written, never anything deleted.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.errors import DestinationError, InterruptedByUser, RgpuError
from rgpu.naming import validate_crate_name
from rgpu.resources import templates_dir

JINJA_SUFFIX = ".jinja"
DEFAULT_TEMPLATE = "bitonic"


@dataclass(frozen=True)
class FileStatus:
    word: str  # create, identical, overwrite
    path: str  # relative to the destination


def _template_files(template: Path) -> Iterator[Path]:
    for path in sorted(template.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path


def render_tree(template: Path, out: Path, context: dict[str, str]) -> list[str]:
    """Render ``template`` into the existing directory ``out``; return relative paths."""
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False
    )
    written = []
    for source in _template_files(template):
        rel = source.relative_to(template).as_posix()
        if "{{" in rel:
            rel = env.from_string(rel).render(context)
        if rel.endswith(JINJA_SUFFIX):
            rel = rel[: -len(JINJA_SUFFIX)]
        target = (out / rel).resolve()
        if not target.is_relative_to(out.resolve()):
            raise RgpuError(f"template path {rel!r} would leave the destination")
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.name.endswith(JINJA_SUFFIX):
            text = env.from_string(source.read_text(encoding="utf-8")).render(context)
            target.write_text(text, encoding="utf-8")
        else:
            shutil.copyfile(source, target)
        written.append(rel)
    return written


def _check_destination(parent: Path, dest: Path, force: bool) -> bool:
    """Return whether ``dest`` already exists (and may be written into)."""
    try:
        return _inspect_destination(parent, dest, force)
    except PermissionError as exc:
        raise DestinationError(
            f"cannot create {dest}: permission denied on {exc.filename or parent}",
            "pass a writable parent with --dir, or fix its permissions",
        ) from exc


def _inspect_destination(parent: Path, dest: Path, force: bool) -> bool:
    if not parent.is_dir():
        raise DestinationError(
            f"parent directory {parent} does not exist",
            f"create it first (`mkdir -p {parent}`) or pass another --dir",
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DestinationError(
            f"cannot create {dest}: {parent} is not writable",
            "pass a writable parent with --dir, or fix its permissions",
        )
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise DestinationError(
            f"{dest} exists and is not a directory", "pick another name or remove that file"
        )
    if dest.is_dir():
        if any(dest.iterdir()) and not force:
            raise DestinationError(
                f"{dest} already exists and is not empty",
                f"pick another name, or pass --force to write the template's files into it "
                f"(other files in {dest} are kept)",
            )
        if not os.access(dest, os.W_OK | os.X_OK):
            raise DestinationError(f"{dest} is not writable", "fix its permissions")
        return True
    return False


def _merge_into(rendered: Path, dest: Path, files: list[str]) -> list[FileStatus]:
    statuses = []
    for rel in files:
        source, target = rendered / rel, dest / rel
        if target.is_dir():
            raise DestinationError(
                f"{target} is a directory, but the template writes a file there",
                f"move {target} away and run again",
            )
        if target.is_file():
            if target.read_bytes() == source.read_bytes():
                statuses.append(FileStatus("identical", rel))
                continue
            word = "overwrite"
        else:
            word = "create"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        statuses.append(FileStatus(word, rel))
    return statuses


def new_workspace(
    name: str, parent: Path, *, force: bool = False, template: str = DEFAULT_TEMPLATE
) -> tuple[Path, list[FileStatus]]:
    validate_crate_name(name)
    parent = parent.absolute()
    dest = parent / name
    exists = _check_destination(parent, dest, force)
    source = templates_dir() / template
    context = {"name": name, "rgpu_version": __version__}
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.rgpu-new-", dir=parent))
    except OSError as exc:
        raise DestinationError(
            f"cannot create {dest}: {exc.strerror or exc}",
            "pass a writable parent with --dir, or fix its permissions",
        ) from exc
    try:
        # mkdtemp makes the directory private; give it the permissions mkdir would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)
        files = render_tree(source, tmp, context)
        if exists:
            return dest, _merge_into(tmp, dest, files)
        os.rename(tmp, dest)
        return dest, [FileStatus("create", rel) for rel in files]
    except KeyboardInterrupt as exc:
        raise InterruptedByUser(
            f"interrupted: {dest} was not created" if not exists else "interrupted",
            f"run `rgpu new {name}` again",
        ) from exc
    except OSError as exc:
        raise DestinationError(
            f"could not write {dest}: {exc}", "check free disk space and permissions"
        ) from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
