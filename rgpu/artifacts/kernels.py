"""The workspace's own kernels: the `#[rgpu::kernel]` functions of its kernel crate.

Read from the crate's sources (src/**/*.rs), so rgpu knows which entry points an artifact
must have without compiling anything: an attribute `#[rgpu::kernel]` or `#[kernel]`
(with or without arguments), then other attributes or doc comments, then `fn NAME`.
Kernels declared through another macro are not seen; artifacts are then checked by the
launch itself, at run time.
"""

from __future__ import annotations

import re
from pathlib import Path

_KERNEL = re.compile(
    r"#\[\s*(?:::)?(?:rgpu\s*::\s*)?kernel\s*(?:\([^\]]*\))?\s*\]"
    r"(?:\s*(?://[^\n]*|#\[[^\]]*\]))*"
    r"\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)"
)


def kernel_names(text: str) -> list[str]:
    return _KERNEL.findall(text)


def find(kernel_dir: Path) -> tuple[str, ...]:
    """Every kernel name in the crate's sources, sorted and unique."""
    names: set[str] = set()
    for source in sorted((kernel_dir / "src").rglob("*.rs")):
        try:
            names.update(kernel_names(source.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return tuple(sorted(names))
