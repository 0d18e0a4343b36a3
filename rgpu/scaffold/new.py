"""`rgpu new`: render a template into a new workspace, atomically, never losing a user's file.

Only files ending in ``.jinja`` are rendered (the suffix is dropped); everything else is
copied byte for byte, so Rust code full of braces stays as written. The template is
rendered into a temporary directory beside the destination first. A new destination is
then moved in at once. An existing, non-empty one (with ``--force``) only gets the files it
does not have: a file that exists with other content is a conflict, listed and left alone;
``--overwrite`` replaces conflicts, keeping each old file as ``NAME.rgpu-backup``. Ctrl-C
leaves the destination as it was (files created are removed, replaced ones restored).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rgpu import __version__
from rgpu.backends import BACKENDS
from rgpu.errors import DestinationError, InterruptedByUser, RgpuError, UsageError, did_you_mean
from rgpu.resources import templates_dir
from rgpu.scaffold.naming import validate_crate_name
from rgpu.scaffold.rollback import Rollback
from rgpu.scaffold.vendor import vendor_files
from rgpu.util.files import absolute, is_utf8, shown

JINJA_SUFFIX = ".jinja"
DEFAULT_TEMPLATE = "bitonic"
TEMPLATES = ("bitonic", "minimal")
BACKUP_SUFFIX = ".rgpu-backup"


@dataclass(frozen=True)
class FileStatus:
    word: str  # create, identical, conflict, overwrite
    path: str  # relative to the destination


def _template_files(template: Path) -> Iterator[Path]:
    for path in sorted(template.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path


def render_files(template: Path, context: dict[str, str]) -> dict[str, bytes]:
    """Render ``template`` in memory: each file's path relative to the destination, and its
    bytes (``.jinja`` files rendered, the suffix dropped; everything else verbatim)."""
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
    )
    # Every template may list the backends' cargo features (rgpu/backends.py).
    env.globals["backend_features"] = [b.feature for b in BACKENDS.values() if b.feature]
    files: dict[str, bytes] = {}
    for source in _template_files(template):
        rel = source.relative_to(template).as_posix()
        if "{{" in rel:
            rel = env.from_string(rel).render(context)
        if rel.endswith(JINJA_SUFFIX):
            rel = rel[: -len(JINJA_SUFFIX)]
        if source.name.endswith(JINJA_SUFFIX):
            text = env.from_string(source.read_text(encoding="utf-8")).render(context)
            files[rel] = text.encode("utf-8")
        else:
            files[rel] = source.read_bytes()
    return files


def render_tree(template: Path, out: Path, context: dict[str, str]) -> list[str]:
    """Render ``template`` into the existing directory ``out``; return relative paths."""
    files = render_files(template, context)
    for rel, data in files.items():
        target = (out / rel).resolve()
        if not target.is_relative_to(out.resolve()):
            raise RgpuError(f"template path {rel!r} would leave the destination")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return list(files)


def check_utf8(path: Path) -> None:
    if not is_utf8(path):
        raise DestinationError(
            f"{shown(path)} is not valid UTF-8: cargo and rustc need UTF-8 paths",
            "pick a directory whose path is valid UTF-8",
        )


def _check_destination(parent: Path, dest: Path, force: bool) -> bool:
    """Return whether ``dest`` already exists (and may be written into)."""
    check_utf8(dest)
    try:
        return _inspect_destination(parent, dest, force)
    except PermissionError as exc:
        raise DestinationError(
            f"cannot create {dest}: permission denied on {exc.filename or parent}",
            "pass a writable parent with --dir, or fix its permissions",
        ) from exc


def _inspect_destination(parent: Path, dest: Path, force: bool) -> bool:
    if parent.exists() and not parent.is_dir():
        raise DestinationError(
            f"--dir {parent} is a file, not a directory",
            "pass the directory the workspace should be created in, e.g. `--dir .`",
        )
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
            f"{dest} exists and is not a directory", "pick another name or move that file away"
        )
    if dest.is_dir():
        if any(dest.iterdir()) and not force:
            raise DestinationError(
                f"{dest} already exists and is not empty",
                "pick another name; or pass --force to add the template's files it lacks "
                "(existing files are never changed); to add rgpu to an existing Cargo "
                f"project, run `rgpu init -C {dest}`",
            )
        if not os.access(dest, os.W_OK | os.X_OK):
            raise DestinationError(f"{dest} is not writable", "fix its permissions")
        return True
    return False


def merge_into(
    rendered: Path, dest: Path, files: list[str], *, overwrite: bool
) -> list[FileStatus]:
    merge = Rollback()
    statuses = []
    try:
        for rel in files:
            source, target = rendered / rel, dest / rel
            if target.is_dir():
                raise DestinationError(
                    f"{target} is a directory, but the template has a file there",
                    f"move {target} away and run again",
                )
            if target.is_file() or target.is_symlink():
                if target.is_file() and target.read_bytes() == source.read_bytes():
                    statuses.append(FileStatus("identical", rel))
                    continue
                if not overwrite:
                    statuses.append(FileStatus("conflict", rel))
                    continue
                backup = target.with_name(target.name + BACKUP_SUFFIX)
                if backup.exists():
                    raise DestinationError(
                        f"{backup} exists already: rgpu keeps one backup per file",
                        f"move {backup} away, then run again",
                    )
                os.replace(target, backup)
                merge.backups.append((target, backup))
                os.replace(source, target)
                statuses.append(FileStatus("overwrite", rel))
                continue
            merge.mkdirs(target.parent)
            os.replace(source, target)
            merge.created.append(target)
            statuses.append(FileStatus("create", rel))
    except BaseException:
        merge.undo()
        raise
    return statuses


def new_workspace(
    name: str,
    parent: Path,
    *,
    force: bool = False,
    overwrite: bool = False,
    template: str = DEFAULT_TEMPLATE,
) -> tuple[Path, list[FileStatus]]:
    validate_crate_name(name)
    if template not in TEMPLATES:
        raise UsageError(
            f"unknown template `{template}`{did_you_mean(template, TEMPLATES)}",
            f"templates: {', '.join(TEMPLATES)} (the default is {DEFAULT_TEMPLATE})",
        )
    if overwrite and not force:
        raise UsageError("--overwrite only goes with --force", "pass --force --overwrite")
    parent = absolute(parent)
    dest = parent / name
    exists = _check_destination(parent, dest, force)
    source = templates_dir() / template
    context = {"name": name, "rgpu_version": __version__, "template": template}
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
        files += vendor_files(tmp)
        if exists:
            return dest, merge_into(tmp, dest, files, overwrite=overwrite)
        os.rename(tmp, dest)
        return dest, [FileStatus("create", rel) for rel in files]
    except KeyboardInterrupt as exc:
        raise InterruptedByUser(
            f"interrupted: {dest} was not created" if not exists else
            f"interrupted: {dest} is as it was",
            f"run `rgpu new {name}` again",
        ) from exc  # fmt: skip
    except OSError as exc:
        raise DestinationError(
            f"could not write {dest}: {exc}", "check free disk space and permissions"
        ) from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
