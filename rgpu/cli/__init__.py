"""Command line: parse, call the library, render the result. Only `main.main()` exits."""

from rgpu.cli.group import cli
from rgpu.cli.main import main

__all__ = ["cli", "main"]
