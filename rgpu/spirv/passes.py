"""The SPIR-V passes rgpu runs on rust-gpu's modules, with one interface, in the order the
spirv codegen runs them.

A pass takes a module's bytes and gives a `PassResult`: the module it made (the same bytes
when it changed nothing) and its report, the value the build's manifest records under the
pass's name (None: the manifest records nothing for it). A pass raises ValueError on a module
it cannot read; the caller says which file and what to do.

The order, as the spirv codegen runs them on each module cargo-gpu wrote
(codegens/spirv_post.py, then codegens/spirv.py):

1. BEFORE_OPT: in a checked build, each panic's DebugPrintf turned into stores to the fault
   record (faults; only then), then the index checks a guard proves (range_checks), then
   NoContraction on float arithmetic (contraction; not with `float-contraction = true`), so
   that spirv-opt's -O neither keeps the checks nor fuses a*b+c into one Fma;
2. spirv-opt (SPIRV-Tools; not with `spirv-opt = false`), outside this package;
3. AFTER_OPT: NoContraction again, on what the optimizer made anew;
4. FOR_NAGA: what naga (wgpu on Metal and DX12, the WGSL/MSL/HLSL translations) needs of the
   module: without the dead pointer-holding values (pointer_values), 8- and 16-bit integers
   in memory moved into 32-bit words (narrow_memory) and their values computed in 32 bits
   (narrow_ints), the operands naga's reader loses across blocks copied into their users'
   blocks (naga_scopes). Each needs the one before it: narrow_ints computes the values
   narrow_memory loads, and naga_scopes sees the 32-bit values.

Passes over naga's IR (rgpu-naga's flatten.rs and coalesce.rs) are Rust, in
crates/rgpu-naga/src: they run inside rgpu-naga on the module naga read, after every pass here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rgpu.spirv import (
    contraction,
    faults,
    naga_scopes,
    narrow_ints,
    narrow_memory,
    pointer_values,
    range_checks,
)

# What the manifest says in place of a pass that the workspace's config turned off.
FLOAT_CONTRACTION = "float-contraction"
# What turns the fault records off: a build that is not checked (rgpu/checked.py).
UNCHECKED = "unchecked"


@dataclass(frozen=True)
class PassResult:
    data: bytes  # the module after the pass
    report: object  # what the manifest records under the pass's name; None: nothing


@dataclass(frozen=True)
class Pass:
    name: str  # the manifest's key for its report
    run: Callable[[bytes], PassResult]
    off_with: str | None = None  # the config setting that turns it off, if any


def _faults(data: bytes) -> PassResult:
    recorded = faults.record_faults(data)
    report = {
        "set": faults.FAULT_SET,
        "binding": faults.FAULT_BINDING,
        "sites": list(recorded.sites),
    }
    return PassResult(recorded.data, report if recorded.sites else None)


def _range_checks(data: bytes) -> PassResult:
    folded, proven = range_checks.fold_proven_checks(data)
    return PassResult(folded, proven)


def _no_contraction(data: bytes) -> PassResult:
    decorated, _ = contraction.add_no_contraction(data)
    floats, _ = contraction.count_no_contraction(decorated)
    return PassResult(decorated, floats)


def _pointer_values(data: bytes) -> PassResult:
    return PassResult(pointer_values.drop_dead_pointer_values(data).data, None)


def _narrow_memory(data: bytes) -> PassResult:
    lowered = narrow_memory.lower_narrow_memory(data)
    report = {"variables": lowered.variables, "rewritten": lowered.values, "kept": lowered.refused}
    return PassResult(lowered.data, report)


def _narrow_ints(data: bytes) -> PassResult:
    promoted = narrow_ints.promote_narrow_ints(data)
    report = {
        "promoted": promoted.values,
        "capabilities_removed": list(promoted.capabilities_removed),
    }
    return PassResult(promoted.data, report)


def _naga_scopes(data: bytes) -> PassResult:
    rescoped = naga_scopes.rescope_for_naga(data)
    return PassResult(rescoped.data, {"copied": rescoped.copied, "addresses": rescoped.addresses})


FAULTS = Pass("checked_faults", _faults, off_with=UNCHECKED)
RANGE_CHECKS = Pass("bounds_checks_proven", _range_checks)
NO_CONTRACTION = Pass("no_contraction", _no_contraction, off_with=FLOAT_CONTRACTION)
POINTER_VALUES = Pass("pointer_values", _pointer_values)
NARROW_MEMORY = Pass("narrow_memory", _narrow_memory)
NARROW_INTS = Pass("narrow_ints", _narrow_ints)
NAGA_SCOPES = Pass("naga_scopes", _naga_scopes)

BEFORE_OPT: tuple[Pass, ...] = (FAULTS, RANGE_CHECKS, NO_CONTRACTION)
AFTER_OPT: tuple[Pass, ...] = (NO_CONTRACTION,)
FOR_NAGA: tuple[Pass, ...] = (POINTER_VALUES, NARROW_MEMORY, NARROW_INTS, NAGA_SCOPES)


def run(
    passes: Iterable[Pass], data: bytes, off: frozenset[str] = frozenset()
) -> tuple[bytes, dict[str, object]]:
    """``data`` after each of ``passes`` in turn (those ``off`` turns off skipped), and their
    reports by name (a later pass of the same name replaces an earlier one's)."""
    reports: dict[str, object] = {}
    for each in passes:
        if each.off_with is not None and each.off_with in off:
            continue
        result = each.run(data)
        data = result.data
        if result.report is not None:
            reports[each.name] = result.report
    return data, reports
