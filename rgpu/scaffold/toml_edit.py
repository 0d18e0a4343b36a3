"""Round-trip edits of Cargo.toml files with tomlkit: comments, key order and formatting of
everything rgpu does not touch stay as the user wrote them.

Only additions are made (a key, an array item, a table); a value that is there already is
compared, never replaced, and a different one is the caller's conflict to report.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import tomlkit
from tomlkit.container import Container
from tomlkit.items import AoT, Array, Comment, InlineTable, Item, Key, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from rgpu.errors import ConfigError, RgpuError

# A table in a document: a real [table], an inline one, or the document itself.
Tableish = Table | InlineTable | TOMLDocument | Container


def parse(text: str, shown_as: str, command: str) -> TOMLDocument:
    """Parse a Cargo.toml for editing; invalid TOML is a ConfigError naming the file."""
    try:
        tomllib.loads(text)
        return tomlkit.parse(text)
    except (tomllib.TOMLDecodeError, tomlkit.exceptions.ParseError) as exc:
        raise ConfigError(
            f"{shown_as} is not valid TOML: {exc}",
            f"fix the syntax in {shown_as} (cargo refuses it too), then run `{command}` again",
        ) from None


def dumps(doc: TOMLDocument, shown_as: str) -> str:
    """The edited text, checked to be TOML that Python's own parser reads."""
    text = tomlkit.dumps(doc)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # a tomlkit bug: refuse to write it
        raise RgpuError(
            f"rgpu's edit of {shown_as} is not valid TOML ({exc}); nothing was written",
            "report this as an rgpu bug, with the Cargo.toml",
        ) from None
    return text


def plain(value: Any) -> Any:
    """A tomlkit value as plain Python (dicts, lists, strings, ...)."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def inline(values: Mapping[str, str | bool]) -> Item:
    """An inline table written as cargo's documentation writes them: `{ key = value }`."""
    body = ", ".join(f"{key} = {tomlkit.item(value).as_string()}" for key, value in values.items())
    item: Item = tomlkit.parse(f"x = {{ {body} }}\n")["x"]
    return item


def is_table(value: object) -> TypeGuard[Table | InlineTable]:
    return isinstance(value, Table | InlineTable)


def child_table(parent: Tableish, key: str, *, super_table: bool = False) -> Table | None:
    """``parent[key]`` when it is a table; created (empty) when missing. None when it is
    there but is not a table (the caller reports that)."""
    if key not in parent:
        parent[key] = tomlkit.table(is_super_table=super_table)
    value = parent[key]  # the document's own item (assigning may copy it)
    return value if isinstance(value, Table) else None


def string_list(value: object) -> list[str] | None:
    """A TOML array of strings as a list; None for anything else."""
    if not isinstance(value, Array | list):
        return None
    items = [plain(v) for v in value]
    return items if all(isinstance(v, str) for v in items) else None


def glob_matches(pattern: str, path: str) -> bool:
    """Whether a workspace `members`/`exclude` entry names ``path`` (cargo's globs: `*`
    stays within one directory level)."""
    pattern, path = pattern.strip("/"), path.strip("/")
    if "**" in pattern:
        return fnmatch.fnmatchcase(path, pattern)
    parts, names = pattern.split("/"), path.split("/")
    return len(parts) == len(names) and all(
        fnmatch.fnmatchcase(n, p) for p, n in zip(parts, names, strict=True)
    )


def show(value: object) -> str:
    """A value as it would read in a Cargo.toml, for messages."""
    value = plain(value)
    if isinstance(value, dict):
        return inline(value).as_string() if _flat(value) else repr(value)
    try:
        return tomlkit.item(value).as_string()
    except (TypeError, ValueError):
        return repr(value)


def _flat(value: Mapping[str, Any]) -> bool:
    return all(isinstance(v, str | bool) for v in value.values())


def add(table: Table, entries: Sequence[tuple[str | Key | None, Any]]) -> None:
    """Add keys (and comments: key None) to an existing table, after its last key/value.

    tomlkit keeps the blank lines and comments that end a table (often the next table's
    heading comment) in the table, so a plain ``table[key] = value`` would land after them.
    """
    if not entries:
        return
    body = table.value.body
    keyed = [i for i, (k, v) in enumerate(body) if k is not None and not _is_sub_table(k, v)]
    if keyed:
        at = keyed[-1] + 1
    else:  # no keys yet: after the comments that open the table
        at = 0
        while at < len(body) and isinstance(body[at][1], Comment):
            at += 1
    if at >= len(body):
        last = body[-1][1] if body else None
        if last is not None and not isinstance(last, Whitespace) and "\n" not in last.trivia.trail:
            last.trivia.trail += "\n"  # a file that ends without a newline
        for key, value in entries:
            table.add(value) if key is None else table.add(key, value)
        return
    for key, value in entries:
        item = tomlkit.item(value) if not isinstance(value, Item) else value
        if key is None:
            _insert_unkeyed(table.value, at, item)
        else:
            # Private, but the one way to insert mid-table; kept in step with the map.
            table.value._insert_at(at, key, item)
        at += 1
    if _is_sub_table(*body[at]):  # a [sub-table] follows: keep a blank line before it
        _insert_unkeyed(table.value, at, tomlkit.ws("\n"))


def _is_sub_table(key: Key | None, item: Item) -> bool:
    """A [table.sub] or [[table.sub]] of its own (a dotted key `a.b = 1` is a value)."""
    return isinstance(item, Table | AoT) and not (key is not None and key.is_dotted())


def _insert_unkeyed(container: Container, at: int, item: Item) -> None:
    """Insert a comment at ``at``, shifting the container's key map like `_insert_at`."""
    for key, index in container._map.items():
        if isinstance(index, tuple):
            container._map[key] = tuple(i + 1 if i >= at else i for i in index)
        elif index >= at:
            container._map[key] = index + 1
    container.body.insert(at, (None, item))
