"""Project names: everything cargo, the file system and Rust accept, nothing else."""

from __future__ import annotations

import pytest

from rgpu.errors import InvalidNameError
from rgpu.scaffold.naming import validate_crate_name


@pytest.mark.parametrize("name", ["sortdemo", "my-sort", "my_sort", "Sort2", "a"])
def test_valid_names_are_accepted(name: str) -> None:
    assert validate_crate_name(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        ("1sort", "starts with a digit"),
        ("fn", "Rust keyword"),
        ("self", "Rust keyword"),
        ("async", "Rust keyword"),
        ("my sort", "whitespace"),
        ("a/b", "is a path"),
        ("..", "is a path"),
        ("sörter", "non-ASCII"),
        ("core", "reserved"),
        ("test", "reserved"),
        ("nul", "reserved"),
        ("kernel", "clashes"),
        ("-sort", "contains"),
        ("sort!", "'!'"),
        ("x" * 65, "longer than 64"),
    ],
)
def test_invalid_names_say_why(name: str, why: str) -> None:
    with pytest.raises(InvalidNameError) as err:
        validate_crate_name(name)
    assert why in err.value.message
    assert err.value.hint
