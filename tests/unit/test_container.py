"""The `docker run` rgpu builds for a step, and where a codegen's build runs (pure parts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgpu import container, placement
from rgpu.config import resolve
from rgpu.errors import ContainerError
from rgpu.plan import Step

WS = Path("/home/u/ws")
CACHE = Path("/home/u/.cache/rgpu")
DOCKER = container.Engine(program="/usr/bin/docker", kind="docker", rootless=False)
ROOTLESS = container.Engine(program="/usr/bin/podman", kind="podman", rootless=True)


def step(**kw: object) -> Step:
    base: dict[str, object] = {
        "name": "nvptx-sm_80",
        "description": "kernel",
        "argv": ("/usr/bin/cargo", "rustc", "--release"),
        "cwd": WS,
        "env": {"RUSTC_BOOTSTRAP": "1"},
        "unset_env": ("CARGO_TARGET_DIR",),
        "container_ok": True,
    }
    base.update(kw)
    return Step(**base)  # type: ignore[arg-type]


def spec(s: Step, env: dict[str, str], keep: bool = False, tty: bool = False) -> container.RunSpec:
    return container.RunSpec(
        image="img:1",
        name="rgpu-x",
        mounts=container.plan_mounts(WS, CACHE, env, s),
        env=container.container_env(s, env, container.cargo_home(env)),
        cwd=s.cwd,
        uid=1000,
        gid=1001,
        tty=tty,
        keep=keep,
        labels={container.LABEL: "1"},
    )


def test_run_argv_mounts_same_paths_maps_user_and_ends_with_the_step() -> None:
    env = {"HOME": "/home/u", "CARGO_TARGET_DIR": "/srv/target"}
    argv = container.run_argv(DOCKER, spec(step(), env), step().argv)
    text = " ".join(argv)
    assert argv[:2] == ["/usr/bin/docker", "run"]
    assert "--rm" in argv and "--init" in argv and "-t" not in argv
    assert "--network host" in text
    assert "--userns host --user 1000:1001" in text
    for path in (WS, CACHE, Path("/home/u/.cargo"), Path("/srv/target")):
        assert f"type=bind,source={path},target={path}" in text
    assert "type=tmpfs,target=/home/u/.cargo/bin" in text
    assert argv[-4:] == ["img:1", "/usr/bin/cargo", "rustc", "--release"]
    assert argv[argv.index("--workdir") + 1] == str(WS)


def test_rootless_engine_gets_no_user_flag() -> None:
    argv = container.run_argv(ROOTLESS, spec(step(), {"HOME": "/home/u"}), ("true",))
    assert "--user" not in argv and "--userns" not in argv


def test_keep_drops_rm_and_tty_adds_t() -> None:
    argv = container.run_argv(DOCKER, spec(step(), {"HOME": "/h"}, keep=True, tty=True), ("x",))
    assert "--rm" not in argv and "-t" in argv


def test_env_is_an_allow_list_minus_reserved_and_unset() -> None:
    host = {
        "HOME": "/home/u",
        "PATH": "/home/u/.cargo/bin:/usr/bin",
        "SECRET_TOKEN": "x",
        "CARGO_NET_RETRY": "5",
        "CARGO_BUILD_RUSTC_WRAPPER": "sccache",
        "CARGO_TARGET_DIR": "/srv/target",
        "RUST_BACKTRACE": "1",
    }
    env = container.container_env(step(), host, container.cargo_home(host))
    assert env == {
        "CARGO_HOME": "/home/u/.cargo",
        "CARGO_NET_RETRY": "5",
        "RUST_BACKTRACE": "1",
        "RUSTC_BOOTSTRAP": "1",
    }


def test_mounts_inside_another_mount_are_dropped() -> None:
    env = {"HOME": "/home/u", "RGPU_CACHE_DIR": "/home/u/ws/target/cache"}
    mounts = container.plan_mounts(WS, WS / "target" / "cache", env, step(cwd=WS / "kernel"))
    assert set(mounts.paths) == {WS, Path("/home/u/.cargo")}


def test_container_names_are_unique() -> None:
    assert container.container_name(step()) != container.container_name(step())
    assert container.container_name(step()).startswith("rgpu-nvptx-sm_80-")


def test_missing_engine_from_env_says_how_to_fix() -> None:
    with pytest.raises(ContainerError) as err:
        container.find_engine({container.ENGINE_ENV: "/nonexistent/docker", "PATH": "/usr/bin"})
    assert "/nonexistent/docker" in err.value.message
    assert err.value.hint is not None and "--no-docker" in err.value.hint


def test_no_engine_on_path_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ContainerError) as err:
        container.find_engine({"PATH": str(tmp_path)})
    assert "neither docker nor podman" in err.value.message
    assert err.value.hint is not None and "apt-get install docker.io" in err.value.hint


def options(**cli: object) -> object:
    return resolve(metadata={}, env={}, cli=cli)


def test_nvptx_builds_locally_unless_docker_is_asked_for() -> None:
    table: dict[str, object] = {}
    local = placement.decide("nvptx", options(), {}, table=table)  # type: ignore[arg-type]
    assert not local.in_container
    forced = placement.decide("nvptx", options(docker=True), {}, table=table)  # type: ignore[arg-type]
    assert forced.in_container and forced.image == container.DEFAULT_IMAGE


def test_image_option_overrides_the_codegen_image() -> None:
    where = placement.decide(
        "nvvm",
        options(docker=True, image="mine:1"),  # type: ignore[arg-type]
        {},
        image_for_codegen="ghcr.io/rust-gpu/rust-cuda-ubuntu24-cuda12:latest",
        table={},
    )
    assert where.image == "mine:1"


def test_nvvm_defaults_to_a_container_without_llvm7(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    where = placement.decide("nvvm", options(), env, image_for_codegen="rc:12", table={})  # type: ignore[arg-type]
    assert where.in_container and where.image == "rc:12"


def test_nvvm_builds_locally_when_llvm_config_7_is_found(tmp_path: Path) -> None:
    fake = tmp_path / "llvm-config"  # named fixture: an llvm-config that reports 7.1.0
    fake.write_text("#!/bin/sh\necho 7.1.0\n")
    fake.chmod(0o755)
    env = {"PATH": str(tmp_path), "LLVM_CONFIG": str(fake)}
    where = placement.decide("nvvm", options(), env, table={})  # type: ignore[arg-type]
    assert not where.in_container and str(fake) in where.why


def test_toolchain_file_container_default_is_read() -> None:
    table = {"container": {"default": "container", "image": "x:1"}}
    where = placement.decide("nvptx", options(), {}, table=table)  # type: ignore[arg-type]
    assert where.in_container and where.image == "x:1"


def test_chown_back_runs_as_root_then_returns_every_mount_to_the_user() -> None:
    env = {"HOME": "/home/u"}
    s = spec(step(), env)
    s = container.RunSpec(**{**s.__dict__, "chown_back": True})
    argv = container.run_argv(DOCKER, s, ("cargo", "build"))
    assert "--user" not in argv
    image = argv.index("img:1")
    assert argv[image + 1 : image + 3] == ["sh", "-c"]
    script = argv[image + 3]
    assert script.startswith('status=0; "$@" || status=$?; chown -R 1000:1001 ')
    assert script.endswith("; exit $status") and str(WS) in script
    assert argv[image + 4 :] == ["rgpu-step", "cargo", "build"]


def test_default_image_hint_is_the_offline_build_command() -> None:
    assert "--target offline" in container.BUILD_IMAGE_HINT
    assert container.DEFAULT_IMAGE in container.BUILD_IMAGE_HINT


def test_as_root_mounts_only_the_cargo_registry_and_git_and_masks_nothing() -> None:
    env = {"HOME": "/root"}
    mounts = container.plan_mounts(WS, CACHE, env, step(), as_root=True)
    assert Path("/root/.cargo") not in mounts.paths
    assert {Path("/root/.cargo/registry"), Path("/root/.cargo/git")} <= set(mounts.paths)
    assert mounts.masked == ()
