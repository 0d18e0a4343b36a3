"""Options resolve in one documented order (defaults, [workspace.metadata.rgpu], RGPU_* env,
command line), each setting with a declared type: a wrong value is a ConfigError (exit 9)
naming the key, where it came from and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu.backends import BACKENDS, Backend, parse_backends, split_names
from rgpu.config import DEFAULTS, TABLE, cache_dir, resolve
from rgpu.errors import ConfigError, ExitCode


def names(backends: tuple[Backend, ...]) -> list[str]:
    return [b.name for b in backends]


def refused(metadata: dict[str, object] | None = None, env: dict[str, str] | None = None) -> str:
    """The message of the ConfigError resolve raises (its hint appended)."""
    with pytest.raises(ConfigError) as err:
        resolve(metadata=metadata or {}, env=env or {}, cli={})
    assert err.value.exit_code == ExitCode.CONFIG == 9
    return f"{err.value.message} | {err.value.hint}"


def test_defaults_apply_with_an_empty_environment() -> None:
    options = resolve(metadata={}, env={}, cli={})
    assert options.backends == DEFAULTS["backend"] == (BACKENDS["cpu"],)
    assert options.backend.name == "cpu"
    assert options.profile == "release"
    assert options.cuda_archs.names() == ("sm_75", "sm_80", "sm_90")
    assert options.docker is None and options.docker_source == "default"
    assert options.image is None and options.codegen is None and options.ci_run is None
    assert options.yes is False
    assert options.spirv_opt is True and options.float_contraction is False


def test_spirv_opt_and_float_contraction_from_the_table_and_the_environment() -> None:
    metadata = {"spirv-opt": False, "float-contraction": True}
    options = resolve(metadata=metadata, env={}, cli={})
    assert options.spirv_opt is False and options.float_contraction is True
    env = {"RGPU_SPIRV_OPT": "1", "RGPU_FLOAT_CONTRACTION": "off"}
    options = resolve(metadata=metadata, env=env, cli={})
    assert options.spirv_opt is True and options.float_contraction is False
    text = refused(metadata={"float-contraction": "yes"})
    assert "`float-contraction = true`" in text


def test_metadata_then_env_then_cli_win_in_order() -> None:
    metadata = {"profile": "debug", "backend": "cuda", "cuda-archs": ["sm_80"]}
    env = {"RGPU_BUILD_BACKEND": "wgpu", "RGPU_CUDA_ARCHS": "sm_86, sm_90"}
    options = resolve(metadata=metadata, env=env, cli={"backend": (BACKENDS["ash"],)})
    assert options.profile == "debug"
    assert options.cuda_archs.names() == ("sm_86", "sm_90")
    assert names(options.backends) == ["ash"]


def test_the_programs_rgpu_backend_is_not_a_build_setting() -> None:
    # RGPU_BACKEND picks the backend at run time (a list, `auto`): rgpu build ignores it.
    options = resolve(metadata={}, env={"RGPU_BACKEND": "auto,cpu"}, cli={})
    assert names(options.backends) == ["cpu"]


def test_cli_values_left_unset_do_not_override() -> None:
    options = resolve(metadata={"profile": "debug"}, env={}, cli={"profile": None})
    assert options.profile == "debug"


def test_docker_as_a_toml_string_is_refused_with_the_boolean_spelling() -> None:
    text = refused(metadata={"docker": "false"})
    assert f"{TABLE} docker" in text and '"false"' in text and "not a boolean" in text
    assert "TOML boolean" in text and "`docker = false`" in text


def test_docker_as_a_toml_boolean_is_accepted() -> None:
    assert resolve(metadata={"docker": False}, env={}, cli={}).docker is False
    assert resolve(metadata={"docker": True}, env={}, cli={}).docker is True


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("1", True),
        ("0", False),
        ("true", True),
        ("false", False),
        ("yes", True),
        ("no", False),
        ("on", True),
        ("off", False),
        ("TRUE", True),
        (" Off ", False),
    ],
)
def test_rgpu_docker_accepts_the_boolean_words(word: str, value: bool) -> None:
    assert resolve(metadata={}, env={"RGPU_DOCKER": word}, cli={}).docker is value


def test_rgpu_docker_refuses_other_words_naming_the_variable_and_value() -> None:
    text = refused(env={"RGPU_DOCKER": "maybe"})
    assert "RGPU_DOCKER" in text and '"maybe"' in text and "not a boolean" in text


def test_rgpu_yes_is_a_boolean_of_the_environment_too() -> None:
    assert resolve(metadata={}, env={"RGPU_YES": "1"}, cli={}).yes
    assert resolve(metadata={}, env={}, cli={"yes": True}).yes
    assert "RGPU_YES" in refused(env={"RGPU_YES": "maybe"})


@pytest.mark.parametrize("value", ["cuda,wgpu", ["cuda", "wgpu"], " cuda , wgpu,cuda "])
def test_backend_is_a_comma_list_or_a_toml_list(value: object) -> None:
    assert resolve(metadata={"backend": value}, env={}, cli={}).backends == parse_backends(
        ["cuda", "wgpu"]
    )


def test_a_single_backend_name_is_a_list_of_one() -> None:
    assert resolve(metadata={"backend": "cuda"}, env={}, cli={}).backends == (BACKENDS["cuda"],)


def test_unknown_backend_is_refused_with_did_you_mean() -> None:
    text = refused(metadata={"backend": ["cuda", "wgpy"]})
    assert f"{TABLE} backend" in text and "`wgpy`" in text and "did you mean `wgpu`" in text


def test_unknown_backend_in_the_environment_names_the_variable() -> None:
    text = refused(env={"RGPU_BUILD_BACKEND": "cdua"})
    assert text.startswith("RGPU_BUILD_BACKEND") and "did you mean `cuda`" in text


def test_backend_of_the_wrong_type_is_refused() -> None:
    assert "not a list of names" in refused(metadata={"backend": 3})
    assert "is empty" in refused(metadata={"backend": []})


def test_cuda_archs_are_validated() -> None:
    text = refused(metadata={"cuda-archs": ["sm_80", "sm_999"]})
    assert "`sm_999`" in text and "not a CUDA arch" in text and TABLE in text
    assert "RGPU_CUDA_ARCHS" in refused(env={"RGPU_CUDA_ARCHS": "sm_80,bogus"})


def test_cuda_archs_are_lowercased_and_native_is_kept() -> None:
    options = resolve(metadata={"cuda-archs": "SM_80,native"}, env={}, cli={})
    assert options.cuda_archs.names() == ("sm_80", "native")


def test_ci_run_is_a_list_of_strings() -> None:
    options = resolve(metadata={"ci-run": ["--", "--verify"]}, env={}, cli={})
    assert options.ci_run == ("--", "--verify")
    text = refused(metadata={"ci-run": "-- --verify"})
    assert "ci-run" in text and "not a list of strings" in text
    assert "not a list of strings" in refused(metadata={"ci-run": ["--n", 3]})


def test_profile_must_be_release_or_debug() -> None:
    text = refused(metadata={"profile": "relase"})
    assert '"relase"' in text and "did you mean `release`" in text


def test_image_and_codegen_must_be_non_empty_strings() -> None:
    assert "not a string" in refused(metadata={"image": ""})
    assert "not a string" in refused(metadata={"codegen": 1})
    options = resolve(metadata={"image": "reg/img:1", "codegen": "nvvm"}, env={}, cli={})
    assert (options.image, options.codegen) == ("reg/img:1", "nvvm")


@pytest.mark.parametrize(
    ("metadata", "env", "cli", "source"),
    [
        ({}, {}, {"docker": True}, "--docker"),
        ({}, {}, {"docker": False}, "--no-docker"),
        ({}, {"RGPU_DOCKER": "1"}, {}, "RGPU_DOCKER=1"),
        ({"docker": True}, {}, {}, "docker = true in [workspace.metadata.rgpu]"),
        ({"docker": True}, {"RGPU_DOCKER": "0"}, {}, "RGPU_DOCKER=0"),
        ({"docker": False}, {"RGPU_DOCKER": "1"}, {"docker": False}, "--no-docker"),
    ],
)
def test_docker_source_says_where_docker_came_from(
    metadata: dict[str, object], env: dict[str, str], cli: dict[str, object], source: str
) -> None:
    assert resolve(metadata=metadata, env=env, cli=cli).docker_source == source


def test_unknown_metadata_key_suggests_the_right_one() -> None:
    text = refused(metadata={"profil": "debug"})
    assert "unknown setting `profil`" in text and "did you mean `profile`" in text


def test_layout_keys_and_sub_tables_are_not_unknown_settings() -> None:
    metadata = {"kernel": "kernel", "template": "bitonic", "extra": {"anything": 1}}
    assert resolve(metadata=metadata, env={}, cli={}).backends == (BACKENDS["cpu"],)


def test_cache_dir_order() -> None:
    assert cache_dir({"RGPU_CACHE_DIR": "/c"}) == Path("/c")
    assert cache_dir({"XDG_CACHE_HOME": "/x", "HOME": "/h"}) == Path("/x/rgpu")
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/rgpu")


def test_split_names_flattens_repeats_and_commas_in_order() -> None:
    assert split_names(["cuda,wgpu", " cpu ", "cuda"]) == ["cuda", "wgpu", "cpu"]


def test_chosen_says_whether_the_metadata_or_the_environment_sets_a_key() -> None:
    from rgpu.config import chosen

    assert not chosen("cuda-archs", {}, {})
    assert not chosen("cuda-archs", {}, {"RGPU_CUDA_ARCHS": " "})
    assert chosen("cuda-archs", {"cuda-archs": ["sm_90"]}, {})
    assert chosen("cuda-archs", {}, {"RGPU_CUDA_ARCHS": "sm_90"})
    assert not chosen("cuda-archs", {}, {"RGPU_CODEGEN": "nvptx"})
