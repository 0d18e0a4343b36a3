"""doctor's lines for a pinned rustup toolchain: installed, components, commit hash."""

from __future__ import annotations

from rgpu.check import Check
from rgpu.toolchains.pins import Pin
from rgpu.toolchains.rustup import Status


def pin_checks(
    pin: Pin, found: Status | None, problem: str | None = None, problem_fix: str | None = None
) -> list[Check]:
    """Three lines for one pin. `found` is what rustup has (None with `problem`: rustup did
    not answer, and `problem_fix` is how to make it answer: installing the pin would fail
    the same way)."""
    fix = f"rgpu toolchain install {pin.name}"
    where = "" if pin.exercised_in_ci else " (not exercised in rgpu's CI)"
    need = (pin.name,)
    if found is None:
        why = f"rustup did not answer: {problem}"
        fix = problem_fix or f"run `rustup toolchain list` and fix what it reports, then `{fix}`"
        return [
            Check(f"{pin.name} toolchain", "fail", f"{why}{where}", fix, need),
            Check(f"{pin.name} components", "fail", "unknown: rustup did not answer", fix, need),
            Check(f"{pin.name} commit hash", "fail", "unknown: rustup did not answer", fix, need),
        ]
    if found.toolchain is None:
        why = found.summary()
        if found.rustup_missing:
            fix = f"install rustup from https://rustup.rs, then run `{fix}`"
        return [
            Check(f"{pin.name} toolchain", "fail", f"{why}{where}", fix, need),
            Check(
                f"{pin.name} components",
                "fail",
                f"needs {', '.join(pin.components)}; toolchain not installed",
                fix,
                need,
            ),
            Check(
                f"{pin.name} commit hash",
                "fail",
                f"needs {pin.commit_hash or 'channel ' + pin.channel}; toolchain not installed",
                fix,
                need,
            ),
        ]
    release = found.rustc.get("release", "?")
    checks = [
        Check(f"{pin.name} toolchain", "ok", f"{found.toolchain} ({release}){where}", None, need)
    ]
    if found.missing:
        add = found.install_argv() or []
        checks.append(
            Check(
                f"{pin.name} components",
                "fail",
                f"missing {', '.join(found.missing)}",
                " ".join(add),
                need,
            )
        )
    else:
        checks.append(Check(f"{pin.name} components", "ok", ", ".join(pin.components), None, need))
    checks.append(hash_check(found))
    return checks


def hash_check(found: Status) -> Check:
    pin = found.pin
    actual = found.rustc.get("commit-hash", "?")
    name, need = f"{pin.name} commit hash", (pin.name,)
    if found.hash_ok is None:
        return Check(name, "ok", f"{actual} (upstream pins the channel only)", None, need)
    if found.hash_ok:
        return Check(name, "ok", actual, None, need)
    return Check(
        name,
        "fail",
        f"{found.toolchain} reports {actual}, the pin needs {pin.commit_hash}",
        f"rustup toolchain uninstall {pin.channel} && rgpu toolchain install {pin.name} --yes",
        need,
    )
