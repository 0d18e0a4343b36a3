"""Options resolve in one documented order: defaults, workspace metadata, env, CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.config import DEFAULTS, cache_dir, resolve
from rgpu.errors import ConfigError


def test_defaults_apply_with_an_empty_environment() -> None:
    options = resolve(metadata={}, env={}, cli={})
    assert options.backend == DEFAULTS["backend"] == "cpu"
    assert options.profile == "release"
    assert options.cuda_archs == ("sm_75", "sm_80", "sm_90")
    assert options.yes is False


def test_metadata_then_env_then_cli_win_in_order() -> None:
    metadata = {"profile": "debug", "backend": "cuda", "cuda-archs": ["sm_80"]}
    env = {"RGPU_BACKEND": "wgpu", "RGPU_CUDA_ARCHS": "sm_86, sm_90"}
    options = resolve(metadata=metadata, env=env, cli={"backend": "ash"})
    assert options.profile == "debug"
    assert options.cuda_archs == ("sm_86", "sm_90")
    assert options.backend == "ash"


def test_unknown_metadata_key_suggests_the_right_one() -> None:
    with pytest.raises(ConfigError) as err:
        resolve(metadata={"profil": "debug"}, env={}, cli={})
    assert "did you mean `profile`" in err.value.message


def test_bad_profile_and_bad_boolean_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        resolve(metadata={"profile": "fast"}, env={}, cli={})
    with pytest.raises(ConfigError):
        resolve(metadata={}, env={"RGPU_YES": "maybe"}, cli={})


def test_yes_comes_from_cli_or_env() -> None:
    assert resolve(metadata={}, env={"RGPU_YES": "1"}, cli={}).yes
    assert resolve(metadata={}, env={}, cli={"yes": True}).yes


def test_cache_dir_order() -> None:
    assert cache_dir({"RGPU_CACHE_DIR": "/c"}) == Path("/c")
    assert cache_dir({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/rgpu")
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/rgpu")
