"""Resolve options in one place: defaults, [workspace.metadata.rgpu], RGPU_* env, then CLI.

The environment is passed in as a mapping so that tests can pass ``env={}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rgpu.backends import did_you_mean
from rgpu.errors import ConfigError

# The defaults are also the list of valid settings in [workspace.metadata.rgpu].
DEFAULTS: dict[str, Any] = {
    "backend": "cpu",
    "profile": "release",
    "codegen": None,
    # sm_75 is CUDA 13's oldest arch (its ptxas rejects sm_70); PTX for sm_75 still JIT-
    # compiles for every newer GPU.
    "cuda-archs": ["sm_75", "sm_80", "sm_90"],
    "docker": None,
    "image": None,
}
# Keys that describe the workspace itself rather than build options (read by project.py).
LAYOUT_KEYS = ("host", "binary", "kernel", "shared", "template", "template-version")

ENV_VARS: dict[str, str] = {
    "RGPU_BACKEND": "backend",
    "RGPU_PROFILE": "profile",
    "RGPU_CODEGEN": "codegen",
    "RGPU_CUDA_ARCHS": "cuda-archs",
    "RGPU_DOCKER": "docker",
    "RGPU_IMAGE": "image",
}
PROFILES = ("release", "debug")


@dataclass(frozen=True, kw_only=True)
class Options:
    backend: str
    profile: str
    codegen: str | None
    cuda_archs: tuple[str, ...]
    docker: bool | None
    # Container image for kernel compiles run in a container (None: the codegen's default).
    image: str | None = None
    yes: bool


def _parse_bool(value: str, source: str) -> bool:
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"{source}={value!r} is not a boolean", f"set {source} to 1 or 0")


def check_metadata_keys(metadata: Mapping[str, Any]) -> None:
    known = (*DEFAULTS, *LAYOUT_KEYS)
    for key in metadata:
        if key not in known and not isinstance(metadata[key], dict):
            raise ConfigError(
                f"unknown setting `{key}` in [workspace.metadata.rgpu]{did_you_mean(key, known)}",
                f"valid settings: {', '.join(known)}",
            )


def resolve(
    *,
    metadata: Mapping[str, Any],
    env: Mapping[str, str],
    cli: Mapping[str, Any],
) -> Options:
    check_metadata_keys(metadata)
    merged: dict[str, Any] = dict(DEFAULTS)
    merged.update({k: v for k, v in metadata.items() if k in DEFAULTS})
    for var, key in ENV_VARS.items():
        if var in env:
            value: Any = env[var]
            if key == "cuda-archs":
                value = [a.strip() for a in env[var].split(",") if a.strip()]
            elif key == "docker":
                value = _parse_bool(env[var], var)
            merged[key] = value
    merged.update({k.replace("_", "-"): v for k, v in cli.items() if v is not None and k != "yes"})
    profile = merged["profile"]
    if profile not in PROFILES:
        raise ConfigError(
            f"unknown profile `{profile}`{did_you_mean(str(profile), PROFILES)}",
            'use --release or --debug (or profile = "release" in [workspace.metadata.rgpu])',
        )
    archs = merged["cuda-archs"]
    if isinstance(archs, str):
        archs = [a.strip() for a in archs.split(",") if a.strip()]
    yes = bool(cli.get("yes")) or _parse_bool(env.get("RGPU_YES", "0"), "RGPU_YES")
    return Options(
        backend=str(merged["backend"]),
        profile=str(profile),
        codegen=merged["codegen"],
        cuda_archs=tuple(str(a) for a in archs),
        docker=merged["docker"],
        image=str(merged["image"]) if merged["image"] else None,
        yes=yes,
    )


def cache_dir(env: Mapping[str, str]) -> Path:
    """rgpu's own cache (toolchain helpers, cargo-gpu, builder crates): RGPU_CACHE_DIR, else
    $XDG_CACHE_HOME/rgpu, else ~/.cache/rgpu."""
    if env.get("RGPU_CACHE_DIR"):
        return Path(env["RGPU_CACHE_DIR"])
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", str(Path.home()))) / ".cache")
    return Path(base) / "rgpu"
