"""Importing this module registers every command on the `rgpu` group."""

from rgpu.cli import build, ci, doctor, scaffold, toolchain
from rgpu.cli.group import add_common_options, cli

add_common_options(cli)

__all__ = ["build", "ci", "doctor", "scaffold", "toolchain"]
