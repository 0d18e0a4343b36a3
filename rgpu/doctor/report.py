"""`rgpu doctor`: what this machine has for each backend, and the command that fixes the rest.

Checks are plain data (Check). The machine's are doctor's own (doctor/checks.py); each
codegen reports its toolchain through the same `toolchain` probe a build uses
(Codegen.checks), so doctor and build cannot disagree. Probes run in parallel threads, so
doctor stays quick. A backend's verdict
says whether rgpu can *build* it here; whether it can also *run* here is reported next to it.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from rgpu import __version__
from rgpu import codegens as registry
from rgpu.backends import BACKENDS, Backend, codegen_names, resolve_codegen, run_keys
from rgpu.check import Check
from rgpu.doctor import devices as device_lists
from rgpu.doctor.checks import (
    check_containers,
    check_disk,
    check_driver,
    check_tool,
    check_vulkan,
    check_web,
    survey_tools,
    tool_checks,
)
from rgpu.errors import RgpuError
from rgpu.toolchains.pins import Pin, load_all
from rgpu.toolchains.rustup import child_env


def ci_note(env: Mapping[str, str]) -> tuple[str, ...]:
    """Which codegens rgpu's own test suite does not execute (their pin says so)."""
    names = [p.name for p in load_all(env) if not p.exercised_in_ci]
    if not names:
        return ()
    return (
        f"the {' and '.join(names)} codegen{'s' if len(names) > 1 else ''} "
        f"{'are' if len(names) > 1 else 'is'} not executed by rgpu's own test suite "
        "(see `rgpu toolchain show NAME`): doctor's checks say what they need",
    )


@dataclass(frozen=True)
class Verdict:
    backend: str
    codegen: str | None
    builds: bool  # rgpu can build this backend here
    runs: bool  # and the machine can run what it built
    why: str  # one line: what blocks it, or what it will use
    fix: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Report:
    checks: tuple[Check, ...]
    verdicts: tuple[Verdict, ...]
    notes: tuple[str, ...]
    # Each backend's devices, in the order a program counts them (RGPU_DEVICE=N).
    devices: tuple[device_lists.Listing, ...] = ()
    # Each build tool as a build finds it (doctor/checks.py survey_tools).
    tools: tuple[dict[str, Any], ...] = ()
    # What the text report calls required (a failing check of another key reads as "needed
    # only for ..."): building anything (cargo), and what `--backend B` needs.
    required: frozenset[str] = frozenset({"cargo"})

    def verdict(self, backend: str) -> Verdict:
        return next(v for v in self.verdicts if v.backend == backend)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rgpu_version": __version__,
            "ok": all(c.status != "fail" for c in self.checks),
            "checks": [c.to_dict() for c in self.checks],
            "backends": {v.backend: v.to_dict() for v in self.verdicts},
            "devices": {d.backend: d.to_dict() for d in self.devices},
            "tools": {t["name"]: dict(t) for t in self.tools},
            "notes": list(self.notes),
        }


def _python() -> list[Check]:
    version = platform.python_version()
    ok = sys.version_info >= (3, 11)
    return [
        Check(
            "python",
            "ok" if ok else "fail",
            f"Python {version} at {sys.executable}",
            None if ok else "install Python 3.11 or newer",
        )
    ]


def codegen_checks(name: str, pin: Pin, env: Mapping[str, str]) -> list[Check]:
    """A codegen's lines, from the toolchain a local build of it would use."""
    # start-up: <1 ms to import containers.placement; only this path pays it
    from rgpu.containers.placement import Placement

    codegen = registry.get(name)
    return codegen.checks(pin, codegen.toolchain(pin, Placement.local("doctor"), env))


def _codegen_probes(
    pins: Mapping[str, Pin], env: Mapping[str, str]
) -> list[Callable[[], list[Check]]]:
    return [partial(codegen_checks, n, pins[n], env) for n in codegen_names() if n in pins]


def _probes(
    pins: Mapping[str, Pin], env: Mapping[str, str], survey: Sequence[Mapping[str, Any]]
) -> list[Callable[[], list[Check]]]:
    """The probes in report order (they run in parallel; the order is only for reading)."""
    return [
        _python,
        partial(check_tool, "cargo", ["cargo", "--version"], env, "https://rustup.rs"),
        partial(check_tool, "rustup", ["rustup", "--version"], env, "https://rustup.rs"),
        *_codegen_probes(pins, env),
        partial(tool_checks, survey),
        partial(check_driver, env),
        partial(check_vulkan, env),
        partial(check_web, env),
        partial(check_containers, env, list(pins.values())),
        partial(check_disk, env),
    ]


def run_checks(
    env: Mapping[str, str] | None = None, survey: Sequence[Mapping[str, Any]] | None = None
) -> list[Check]:
    env = child_env(env)
    pins = {p.name: p for p in load_all(env)}
    probes = _probes(pins, env, survey_tools(env) if survey is None else survey)
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(_safely, probes))
    return [check for result in results for check in result]


def _safely(probe: Callable[[], list[Check]]) -> list[Check]:
    """A probe whose tool answered unexpectedly becomes a failed line, not a crashed doctor."""
    try:
        return probe()
    except RgpuError as error:
        func = getattr(probe, "func", probe)
        area = getattr(func, "__name__", "probe").removeprefix("check_").replace("_", " ")
        return [Check(area, "fail", error.message, error.hint or "run `rgpu --traceback doctor`")]


def build_keys(backend: Backend, codegen: str | None) -> set[str]:
    """The requirement keys (Check.needed_for) of building `backend` with `codegen`
    (already resolved)."""
    return {"cargo", *([codegen] if codegen else []), *(["wasm"] if backend.host_target else [])}


def verdict_for(backend: Backend, codegen: str | None, checks: list[Check]) -> Verdict:
    codegen = resolve_codegen(backend.name, codegen)
    build_keys_ = build_keys(backend, codegen)
    run_key = backend.run_key
    blocking = [c for c in checks if c.status == "fail" and build_keys_ & set(c.needed_for)]
    run_blocks = [c for c in checks if c.status != "ok" and run_key in c.needed_for]
    if blocking:
        first = blocking[0]
        return Verdict(
            backend.name, codegen, False, not run_blocks, f"{first.name}: {first.detail}", first.fix
        )
    using = [c.detail for c in checks if codegen and c.name == f"{codegen} toolchain"]
    why = f"builds with {codegen}: {using[0]}" if using else "builds with cargo"
    if run_blocks:
        why += f"; does not run here ({run_blocks[0].name}: {run_blocks[0].detail})"
    return Verdict(
        backend.name, codegen, True, not run_blocks, why, run_blocks[0].fix if run_blocks else None
    )


def diagnose(
    env: Mapping[str, str] | None = None,
    *,
    backend: Backend | None = None,
    codegen: str | None = None,
) -> Report:
    if backend is not None:  # fail on a codegen that cannot build it before probing anything
        resolve_codegen(backend.name, codegen)
    survey = survey_tools(child_env(env))
    checks = run_checks(env, survey)
    chosen = [backend] if backend else list(BACKENDS.values())
    verdicts = [verdict_for(b, codegen if b == backend else None, checks) for b in chosen]
    required = {"cargo"}
    if backend is not None:
        required |= build_keys(backend, resolve_codegen(backend.name, codegen))
        required |= {k for k, names in RUN_KEYS.items() if backend.name in names}
    listings = device_lists.list_all(child_env(env))
    if backend:
        listings = tuple(d for d in listings if d.backend == backend.name)
    return Report(
        tuple(checks),
        tuple(verdicts),
        ci_note(os.environ if env is None else env),
        listings,
        tuple(survey),
        frozenset(required),
    )


_MARKS = {
    "ok": ("ok", "green"),
    "warn": ("warn", "yellow"),
    "fail": ("FAIL", "bold red"),
    "optional": ("--", "dim"),
}

# What each requirement key of a check (Check.needed_for) is needed for, in words.
NEEDED_FOR = {
    "nvptx": "--backend cuda",
    "nvvm": "--backend cuda --codegen nvvm",
    "spirv": "--backend wgpu, ash or webgpu",
    "wasm": "--backend webgpu",
    "cuda-run": "running --backend cuda",
    "vulkan-run": "running --backend wgpu or ash",
    "browser-run": "running --backend webgpu",
    "dawn-run": "running --backend webgpu --engine dawn",
}
# The backends whose programs each run key is about.
RUN_KEYS = run_keys()


def optional(check: Check, required: frozenset[str]) -> bool:
    """A failed check that only something not asked for needs (the nvvm codegen, CUDA, the
    wasm target for a cpu or wgpu user): the text report says what it is needed for instead
    of FAIL. The JSON report keeps its status."""
    keys = set(check.needed_for)
    return check.failed and bool(keys) and keys <= set(NEEDED_FOR) and not keys & required


def render(report: Report, *, colour: bool = False) -> list[str]:
    """One line per check (status, name, detail, fix), then one line per backend."""
    width = max((len(c.name) for c in report.checks), default=10)
    lines = []
    for check in report.checks:
        extra = optional(check, report.required)
        mark, style = _MARKS["optional" if extra else check.status]
        fix = f"  -> fix: {check.fix}" if check.fix and check.status != "ok" else ""
        detail = check.detail
        if extra:
            uses = " or ".join(dict.fromkeys(NEEDED_FOR[k] for k in check.needed_for))
            detail = f"needed only for {uses}: {detail}"
        text = f"{mark:<4}  {check.name:<{width}}  {detail}{fix}"
        lines.append(_styled(text, style) if colour else text)
    lines.append("")
    asked = len(report.verdicts) == 1
    for verdict in report.verdicts:
        cannot = "FAIL" if asked else "cannot build here"
        word = ("builds, runs" if verdict.runs else "builds only") if verdict.builds else cannot
        codegen = f" ({verdict.codegen})" if verdict.codegen else ""
        fix = f"  -> fix: {verdict.fix}" if verdict.fix and not verdict.builds else ""
        lines.append(f"backend {verdict.backend}{codegen}: {word}: {verdict.why}{fix}")
    for listing in report.devices:
        found = "; ".join(d.line() for d in listing.devices) or f"none: {listing.why}"
        lines.append(f"devices {listing.backend}: {found}")
    if report.devices:
        lines.append(
            "note: device N of the backend a program chooses is what RGPU_DEVICE=N (or a part "
            "of its name) opens, and Device::open_on(backend, N) in code"
        )
    lines += [f"note: {note}" for note in report.notes]
    return lines


def _styled(text: str, style: str) -> str:
    from rich.console import Console
    from rich.text import Text

    console = Console(force_terminal=True, soft_wrap=True, highlight=False)
    with console.capture() as capture:
        console.print(Text(text, style=style), end="")
    return capture.get()
