"""Command line: parse, call the library, render the result. Only `main.main()` exits."""

from rgpu.cli.main import cli, main

__all__ = ["cli", "main"]
