"""Resolve options in one place: defaults, [workspace.metadata.rgpu], RGPU_* env, then CLI.

Every setting has a declared type. A value of the wrong type is a ConfigError (exit 9) that
names the key, where it came from, the value and the accepted forms; nothing is guessed (a
TOML string "false" is not a boolean). The environment is passed in as a mapping so that
tests can pass ``env={}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from rgpu.backends import BACKENDS, Backend, check_codegen, parse_backends
from rgpu.cuda_archs import CudaArchs
from rgpu.errors import ConfigError, did_you_mean

TABLE = "[workspace.metadata.rgpu]"
PROFILES = ("release", "debug")
BOOL_WORDS = {
    "1": True,
    "true": True,
    "yes": True,
    "on": True,
    "0": False,
    "false": False,
    "no": False,
    "off": False,
}
# The build options in [workspace.metadata.rgpu]; their defaults.
DEFAULTS: dict[str, Any] = {
    "backend": (BACKENDS["cpu"],),
    "profile": "release",
    "codegen": None,
    # sm_75 is CUDA 13's oldest arch (its ptxas rejects sm_70); PTX for sm_75 still JIT-
    # compiles for every newer GPU.
    "cuda-archs": CudaArchs.parse(["sm_75,sm_80,sm_90"]),
    "docker": None,
    "image": None,
    # Arguments `rgpu run` gets in the CI jobs `rgpu ci init` writes (none: no run step).
    "ci-run": None,
    # SPIR-V capabilities the kernels need beyond what rgpu derives from their source
    # (artifacts/capabilities.py), e.g. ["Int64Atomics"].
    "spirv-capabilities": (),
    # Platforms (webgpu, metal, dx12) a kernel that naga cannot translate for is an error
    # for, not a warning (artifacts/portability.py).
    "require-platforms": (),
    # The platforms the project targets: naga's findings for the others are not shown as
    # warnings (they stay in `rgpu build --json`). None: every platform.
    "target-platforms": None,
    # The spirv codegen's post-processing of rust-gpu's modules (codegens/spirv_post.py):
    # spirv-opt's passes, and float arithmetic left free to fuse (no NoContraction).
    "spirv-opt": True,
    "float-contraction": False,
    # Checked launches: out-of-range buffer accesses are recorded and returned as
    # rgpu::Error after the launch (cpu and cuda; rgpu/checked.py).
    "checked": False,
}
# Keys that describe the workspace itself (read by workspace.py), not build options.
LAYOUT_KEYS = ("host", "kernel", "binary", "template", "template-version", "crates")
ENV_VARS: dict[str, str] = {
    "RGPU_BUILD_BACKEND": "backend",
    "RGPU_PROFILE": "profile",
    "RGPU_CODEGEN": "codegen",
    "RGPU_CUDA_ARCHS": "cuda-archs",
    "RGPU_DOCKER": "docker",
    "RGPU_IMAGE": "image",
    "RGPU_SPIRV_CAPABILITIES": "spirv-capabilities",
    "RGPU_REQUIRE_PLATFORMS": "require-platforms",
    "RGPU_TARGET_PLATFORMS": "target-platforms",
    "RGPU_SPIRV_OPT": "spirv-opt",
    "RGPU_FLOAT_CONTRACTION": "float-contraction",
    "RGPU_CHECKED": "checked",
}


class Options(NamedTuple):
    backends: tuple[Backend, ...]
    profile: str
    codegen: str | None
    cuda_archs: CudaArchs
    docker: bool | None
    yes: bool
    # Where `docker` came from, for messages: "--docker", "RGPU_DOCKER=0", ...
    docker_source: str = "default"
    # Container image for kernel compiles run in a container (None: the codegen's default).
    image: str | None = None
    ci_run: tuple[str, ...] | None = None
    spirv_capabilities: tuple[str, ...] = ()
    require_platforms: tuple[str, ...] = ()
    # None: every platform is a target (naga's findings for each are warnings).
    target_platforms: tuple[str, ...] | None = None
    spirv_opt: bool = True
    float_contraction: bool = False
    checked: bool = False

    @property
    def backend(self) -> Backend:
        """The first backend (the one `rgpu run` prefers)."""
        return self.backends[0]


def _names(value: Any, where: str, forms: str) -> tuple[str, ...]:
    """A name list: "a,b", "a", or a TOML list of strings."""
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value if v.strip()]
    else:
        raise ConfigError(f"{where} is {_show(value)}, not a list of names", f"use {forms}")
    if not names:
        raise ConfigError(f"{where} is empty", f"use {forms}")
    return tuple(dict.fromkeys(names))


def _show(value: Any) -> str:
    """A value as the user wrote it in TOML (not as Python prints it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_show(v)}" for k, v in value.items()) + " }"
    return str(value)


def parse_bool(value: Any, where: str) -> bool:
    """TOML booleans in the table; 1/0/true/false/yes/no/on/off in the environment."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and not where.startswith(TABLE):
        word = value.strip().lower()
        if word in BOOL_WORDS:
            return BOOL_WORDS[word]
        raise ConfigError(f"{where} is {_show(value)}, not a boolean", "set it to 1 or 0")
    key = where.split()[-1] if where.startswith(TABLE) else "docker"
    raise ConfigError(
        f"{where} is {_show(value)}, not a boolean",
        f"write a TOML boolean without quotes: `{key} = true` or `{key} = false`",
    )


def _string(value: Any, where: str, forms: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} is {_show(value)}, not a string", f"use {forms}")
    return value.strip()


def _backends(value: Any, where: str) -> tuple[Backend, ...]:
    forms = f'backend = "cuda" or backend = ["cuda", "wgpu"] (names: {", ".join(BACKENDS)})'
    return parse_backends(_names(value, where, forms), where, ConfigError)


def _codegen(value: Any, where: str) -> str:
    return check_codegen(_string(value, where, 'codegen = "nvptx"'), where, ConfigError)


def _known(
    names: tuple[str, ...], known: tuple[str, ...], what: str, where: str, forms: str
) -> tuple[str, ...]:
    """``names``, each one of ``known`` (else which is not, and the nearest name)."""
    for name in names:
        if name not in known:
            raise ConfigError(
                f"{where} names an unknown {what} `{name}`{did_you_mean(name, known)}",
                f"use {forms}",
            )
    return names


def _profile(value: Any, where: str) -> str:
    text = _string(value, where, 'profile = "release" or "debug"')
    if text not in PROFILES:
        raise ConfigError(
            f'{where} is "{text}"{did_you_mean(text, PROFILES)}',
            'use profile = "release" or "debug" (or --release / --debug)',
        )
    return text


def _archs(value: Any, where: str) -> CudaArchs:
    forms = 'cuda-archs = ["sm_80", "sm_90"] or "sm_80,sm_90"'
    return CudaArchs.parse(_names(value, where, forms), where, ConfigError, f"use {forms}")


def _ci_run(value: Any, where: str) -> tuple[str, ...]:
    forms = 'ci-run = ["--", "--verify"] (the arguments of `rgpu run` in CI)'
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{where} is {_show(value)}, not a list of strings", f"use {forms}")


def _capabilities(value: Any, where: str) -> tuple[str, ...]:
    import re

    forms = 'spirv-capabilities = ["Float64", "Int64Atomics"] (SPIR-V capability names)'
    if value == [] or value == ():
        return ()
    names = _names(value, where, forms)
    for name in names:
        if not re.fullmatch(r"[A-Z][A-Za-z0-9]*", name):
            raise ConfigError(
                f"{where} names `{name}`, not a SPIR-V capability name", f"use {forms}"
            )
    return names


def parse_platforms(value: Any, where: str) -> tuple[str, ...]:
    # start-up: ~20 ms to import artifacts.portability; only this path pays it
    from rgpu.artifacts.portability import PLATFORMS

    forms = f'require-platforms = ["metal", "webgpu"] (names: {", ".join(PLATFORMS)})'
    if value == [] or value == ():
        return ()
    return _known(_names(value, where, forms), tuple(PLATFORMS), "platform", where, forms)


# Platforms a project may target beyond those naga checks: they are always built for.
BUILT_PLATFORMS = ("cuda", "vulkan")


def parse_target_platforms(value: Any, where: str) -> tuple[str, ...]:
    # start-up: ~7 ms to import artifacts.portability; only this path pays it
    from rgpu.artifacts.portability import PLATFORMS

    known = (*BUILT_PLATFORMS, *PLATFORMS)
    forms = f'target-platforms = ["cuda", "vulkan"] (names: {", ".join(known)})'
    if value == [] or value == ():
        return ()
    return _known(_names(value, where, forms), known, "platform", where, forms)


PARSERS: dict[str, Callable[[Any, str], Any]] = {
    "backend": _backends,
    "profile": _profile,
    "codegen": _codegen,
    "cuda-archs": _archs,
    "docker": parse_bool,
    "image": lambda v, w: _string(v, w, 'image = "registry/name:tag"'),
    "ci-run": _ci_run,
    "spirv-capabilities": _capabilities,
    "require-platforms": parse_platforms,
    "target-platforms": parse_target_platforms,
    "spirv-opt": parse_bool,
    "float-contraction": parse_bool,
    "checked": parse_bool,
}


def check_metadata_keys(metadata: Mapping[str, Any]) -> None:
    known = (*DEFAULTS, *LAYOUT_KEYS)
    for key in metadata:
        if key not in known and not isinstance(metadata[key], dict):
            raise ConfigError(
                f"unknown setting `{key}` in {TABLE}{did_you_mean(key, known)}",
                f"valid settings: {', '.join(known)}",
            )


def chosen(key: str, metadata: Mapping[str, Any], env: Mapping[str, str]) -> bool:
    """Whether the workspace's metadata or an RGPU_* variable sets ``key`` (the command
    line is the caller's to check): the same sources `resolve` reads."""
    return key in metadata or any(
        env.get(var, "").strip() for var, name in ENV_VARS.items() if name == key
    )


def resolve(
    *,
    metadata: Mapping[str, Any],
    env: Mapping[str, str],
    cli: Mapping[str, Any],
) -> Options:
    """Defaults < [workspace.metadata.rgpu] < RGPU_* environment < command line. CLI values
    arrive already typed (click parsed them); ``cli`` keys use underscores."""
    check_metadata_keys(metadata)
    values: dict[str, Any] = dict(DEFAULTS)
    sources: dict[str, str] = {key: "default" for key in DEFAULTS}
    for key, parse in PARSERS.items():
        if key in metadata:
            values[key] = parse(metadata[key], f"{TABLE} {key}")
            sources[key] = f"{key} = {_show(metadata[key])} in {TABLE}"
    for var, key in ENV_VARS.items():
        if env.get(var, "").strip():
            values[key] = PARSERS[key](env[var], var)
            sources[key] = f"{var}={env[var]}"
    for name, value in cli.items():
        key = name.replace("_", "-")
        if value is None or key not in DEFAULTS:
            continue
        values[key] = value
        sources[key] = f"--{key}" if key != "docker" else ("--docker" if value else "--no-docker")
    return Options(
        backends=tuple(values["backend"]),
        profile=values["profile"],
        codegen=values["codegen"],
        cuda_archs=values["cuda-archs"],
        docker=values["docker"],
        docker_source=sources["docker"],
        image=values["image"],
        ci_run=values["ci-run"],
        spirv_capabilities=tuple(values["spirv-capabilities"]),
        require_platforms=tuple(values["require-platforms"]),
        target_platforms=values["target-platforms"],
        spirv_opt=values["spirv-opt"],
        float_contraction=values["float-contraction"],
        checked=values["checked"],
        yes=bool(cli.get("yes")) or parse_bool(env.get("RGPU_YES", "0") or "0", "RGPU_YES"),
    )


def cache_dir(env: Mapping[str, str]) -> Path:
    """rgpu's own cache (toolchain helpers, cargo-gpu, builder crates): RGPU_CACHE_DIR, else
    rgpu under the system's cache directory ($XDG_CACHE_HOME, ~/.cache, ~/Library/Caches on
    macOS, %LOCALAPPDATA% on Windows: util/platform.py)."""
    if env.get("RGPU_CACHE_DIR"):
        return Path(env["RGPU_CACHE_DIR"])
    # start-up: <1 ms to import util.platform; only this path pays it
    from rgpu.util.platform import cache_base

    return cache_base(env) / "rgpu"
