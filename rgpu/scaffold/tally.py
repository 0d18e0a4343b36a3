"""Status lines for the files a scaffolding command writes or keeps (`rgpu new`, `init`,
`vendor`): a changed or conflicting file gets a line of its own; created and identical files
(a hundred of them are rgpu's vendored crates) one summary line per word, unless -v."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rgpu.util.output import reporter

# Words summed up into one line; every other word (change, conflict, overwrite, keep) is
# about a file of the user's and keeps its own line.
SUMMED = ("create", "identical")


def summary(paths: Sequence[str]) -> str:
    """`104 files (98 in vendor/rgpu-0.2.0/; -v lists them)`: the count, and how many lie in
    each vendored directory."""
    vendored = Counter(
        "/".join(p.split("/")[:2]) + "/"
        for p in paths
        if p.startswith("vendor/") and p.count("/") >= 2
    )
    count = f"{len(paths)} file{'s' if len(paths) != 1 else ''}"
    inside = "".join(f"{n} in {d}; " for d, n in sorted(vendored.items()))
    return f"{count} ({inside}-v lists them)"


def report(statuses: Iterable[tuple[str, str]], *, verbose: bool) -> None:
    """One status line per file with -v; otherwise created and identical files summed up."""
    items = list(statuses)
    if verbose:
        for word, path in items:
            reporter().status(word, path)
        return
    for word, path in items:
        if word not in SUMMED:
            reporter().status(word, path)
    for word in SUMMED:
        paths = [path for w, path in items if w == word]
        if paths:
            reporter().status(word, summary(paths))
