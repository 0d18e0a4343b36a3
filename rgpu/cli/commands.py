"""Importing this module registers every command on the `rgpu` group."""

from rgpu.cli import build, ci, doctor, scaffold, toolchain

__all__ = ["build", "ci", "doctor", "scaffold", "toolchain"]
