"""Container builds: which engine (containers.engine, against fake engine programs), where a
codegen compiles (containers.placement, with the packaged pins), and the `docker run` each
step becomes (containers.runner, pure)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rgpu.containers import engine as engines
from rgpu.containers import placement, runner
from rgpu.errors import ContainerError
from rgpu.plan import Step
from tests.unit.projects import fake_program, options, pin

WS = Path("/home/u/ws")
CACHE = Path("/home/u/.cache/rgpu")
DOCKER = engines.Engine(program="/usr/bin/docker", kind="docker", rootless=False, version="24")
ROOTLESS = engines.Engine(program="/usr/bin/podman", kind="podman", rootless=True, version="5")


# --- the engine ---------------------------------------------------------------------------


def test_rgpu_container_engine_names_the_engine(tmp_path: Path) -> None:
    podman = fake_program(tmp_path / "bin", "podman", "exit 0\n")
    fake_program(tmp_path / "bin", "docker", "exit 0\n")
    env = {"PATH": str(tmp_path / "bin")}
    assert engines.find_engine(env) == str(tmp_path / "bin" / "docker")
    assert engines.find_engine({**env, engines.ENGINE_ENV: "podman"}) == str(podman)
    assert engines.find_engine({**env, engines.ENGINE_ENV: str(podman)}) == str(podman)


def test_podman_is_used_when_docker_is_missing(tmp_path: Path) -> None:
    podman = fake_program(tmp_path, "podman", "exit 0\n")
    assert engines.find_engine({"PATH": str(tmp_path)}) == str(podman)


def test_missing_engine_from_env_says_how_to_fix() -> None:
    with pytest.raises(ContainerError) as err:
        engines.find_engine({engines.ENGINE_ENV: "/nonexistent/docker", "PATH": "/usr/bin"})
    assert "/nonexistent/docker" in err.value.message and engines.ENGINE_ENV in err.value.message
    assert err.value.hint is not None and "--no-docker" in err.value.hint


def test_no_engine_on_path_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ContainerError) as err:
        engines.find_engine({"PATH": str(tmp_path)})
    assert "neither docker nor podman" in err.value.message
    assert err.value.hint is not None and "apt-get install docker.io" in err.value.hint


def test_probe_reads_version_and_rootless_from_docker_info(tmp_path: Path) -> None:
    docker = fake_program(
        tmp_path, "docker", """echo '24.0.5|["name=seccomp","name=rootless"]'\n"""
    )
    found = engines.probe(str(docker), {"PATH": str(tmp_path)})
    assert found == engines.Engine(str(docker), "docker", rootless=True, version="24.0.5")
    assert not found.maps_user and found.userns_flags == ()


def test_a_rootful_docker_maps_the_user_in_the_host_namespace(tmp_path: Path) -> None:
    docker = fake_program(tmp_path, "docker", """echo '27.1.0|["name=seccomp"]'\n""")
    found = engines.probe(str(docker), {})
    assert (found.version, found.rootless) == ("27.1.0", False)
    assert found.maps_user and found.userns_flags == ("--userns", "host")


def test_probe_reads_podman_rootless_flag(tmp_path: Path) -> None:
    podman = fake_program(tmp_path, "podman", "echo '5.2.1|true'\n")
    found = engines.probe(str(podman), {})
    assert (found.kind, found.version, found.rootless) == ("podman", "5.2.1", True)


def test_a_daemon_that_does_not_answer_says_how_to_start_it(tmp_path: Path) -> None:
    docker = fake_program(
        tmp_path,
        "docker",
        "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n",
    )
    with pytest.raises(ContainerError) as err:
        engines.probe(str(docker), {})
    assert "not answering" in err.value.message and "Cannot connect" in err.value.message
    assert "systemctl start docker" in (err.value.hint or "")
    assert "--no-docker" in (err.value.hint or "")


def test_permission_denied_on_the_socket_says_to_join_the_group(tmp_path: Path) -> None:
    docker = fake_program(
        tmp_path, "docker", "echo 'permission denied while trying to connect' >&2\nexit 1\n"
    )
    with pytest.raises(ContainerError) as err:
        engines.probe(str(docker), {})
    assert "usermod -aG docker" in (err.value.hint or "")


def test_default_image_hint_is_the_offline_build_command() -> None:
    assert "--target offline" in engines.BUILD_IMAGE_HINT
    assert engines.DEFAULT_IMAGE in engines.BUILD_IMAGE_HINT
    assert engines.image_hint(DOCKER, engines.DEFAULT_IMAGE) == engines.BUILD_IMAGE_HINT
    assert "docker pull other:1" in engines.image_hint(DOCKER, "other:1")


def test_a_missing_image_is_refused_with_the_hint(tmp_path: Path) -> None:
    docker = fake_program(tmp_path, "docker", "exit 1\n")
    engine = DOCKER._replace(program=str(docker))
    with pytest.raises(ContainerError, match="`img:1` is not available") as err:
        engines.require_image(engine, "img:1", {}, "pull it")
    assert err.value.hint == "pull it"


def test_with_consent_a_missing_image_is_pulled_once_but_rgpus_own_never(tmp_path: Path) -> None:
    # A fake docker whose `pull` makes the image present (a marker file), logging each call.
    docker = fake_program(
        tmp_path,
        "docker",
        f"""
        echo "$*" >> {tmp_path}/calls
        case "$1" in
          pull) : > {tmp_path}/pulled ;;
          image) [ -f {tmp_path}/pulled ] || exit 1 ;;
        esac
        """,
    )
    engine = DOCKER._replace(program=str(docker))
    env = {"PATH": "/usr/bin:/bin"}
    with pytest.raises(ContainerError):
        engines.require_image(engine, engines.DEFAULT_IMAGE, env, "build it", pull=True)
    assert "pull" not in (tmp_path / "calls").read_text()
    engines.require_image(engine, "img:1", env, "pull it", pull=True)
    engines.require_image(engine, "img:1", env, "pull it", pull=True)
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls.count("pull img:1") == 1


# --- placement ----------------------------------------------------------------------------


def test_nvptx_builds_locally_by_default() -> None:
    where = placement.decide(pin("nvptx"), options(), {})
    assert not where.in_container and where.image is None
    assert "locally by default" in where.why


def test_docker_flag_puts_nvptx_in_rgpus_image_and_says_why() -> None:
    where = placement.decide(pin("nvptx"), options(docker=True), {})
    assert where.in_container and where.image == engines.DEFAULT_IMAGE
    assert where.why == "--docker (--docker)"


def test_the_why_carries_where_docker_was_set() -> None:
    where = placement.decide(pin("nvptx"), options({"RGPU_DOCKER": "1"}), {})
    assert where.in_container and where.why == "--docker (RGPU_DOCKER=1)"


def test_no_docker_keeps_nvvm_local_even_without_llvm7(tmp_path: Path) -> None:
    where = placement.decide(
        pin("nvvm"), options(docker=False), {"PATH": str(tmp_path)}, image="rc:12"
    )
    assert not where.in_container and where.image is None
    assert where.why == "--no-docker (--no-docker)"


def test_image_option_overrides_the_codegen_image() -> None:
    where = placement.decide(pin("nvvm"), options(docker=True, image="mine:1"), {}, image="rc:12")
    assert where.image == "mine:1"


def test_nvvm_defaults_to_the_given_container_without_llvm7(tmp_path: Path) -> None:
    where = placement.decide(pin("nvvm"), options(), {"PATH": str(tmp_path)}, image="rc:12")
    assert where.in_container and where.image == "rc:12"
    assert "no LLVM 7 here" in where.why


def test_nvvm_builds_locally_when_llvm_config_7_is_found(tmp_path: Path) -> None:
    fake = fake_program(tmp_path, "llvm-config", "echo 7.1.0\n")
    env = {"PATH": str(tmp_path / "none"), "LLVM_CONFIG": str(fake)}
    where = placement.decide(pin("nvvm"), options(), env, image="rc:12")
    assert not where.in_container and str(fake) in where.why and "7.1.0" in where.why


def test_nvvm_with_another_llvm_major_still_goes_to_the_container(tmp_path: Path) -> None:
    fake = fake_program(tmp_path, "llvm-config", "echo 22.1.8\n")
    where = placement.decide(pin("nvvm"), options(), {"LLVM_CONFIG": str(fake)}, image="rc:12")
    assert where.in_container


def test_the_pin_files_container_default_is_read() -> None:
    nvptx = pin("nvptx")
    tables = {**nvptx.tables, "container": {"default": "container", "image": "x:1"}}
    where = placement.decide(nvptx._replace(tables=tables), options(), {})
    assert where.in_container and where.image == "x:1"


# --- the `docker run` of a step ------------------------------------------------------------


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


def spec(s: Step, env: dict[str, str], keep: bool = False, tty: bool = False) -> runner.RunSpec:
    return runner.RunSpec(
        image="img:1",
        name="rgpu-x",
        mounts=runner.plan_mounts(WS, CACHE, env, s),
        env=runner.container_env(s, env, runner.cargo_home(env)),
        cwd=s.cwd,
        uid=1000,
        gid=1001,
        tty=tty,
        keep=keep,
        labels={engines.LABEL: "1"},
    )


def test_run_argv_mounts_same_paths_maps_user_and_ends_with_the_step() -> None:
    env = {"HOME": "/home/u", "CARGO_TARGET_DIR": "/srv/target"}
    argv = runner.run_argv(DOCKER, spec(step(), env), step().argv)
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
    argv = runner.run_argv(ROOTLESS, spec(step(), {"HOME": "/home/u"}), ("true",))
    assert "--user" not in argv and "--userns" not in argv


def test_keep_drops_rm_and_tty_adds_t() -> None:
    argv = runner.run_argv(DOCKER, spec(step(), {"HOME": "/h"}, keep=True, tty=True), ("x",))
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
    env = runner.container_env(step(), host, runner.cargo_home(host))
    assert env == {
        "CARGO_HOME": "/home/u/.cargo",
        "CARGO_NET_RETRY": "5",
        "RUST_BACKTRACE": "1",
        "RUSTC_BOOTSTRAP": "1",
    }


def test_env_flags_are_sorted_env_pairs() -> None:
    argv = runner.run_argv(DOCKER, spec(step(), {"HOME": "/home/u", "NO_COLOR": "1"}), ("x",))
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "--env"]
    assert pairs == ["CARGO_HOME=/home/u/.cargo", "NO_COLOR=1", "RUSTC_BOOTSTRAP=1"]


def test_mounts_inside_another_mount_are_dropped() -> None:
    env = {"HOME": "/home/u", "RGPU_CACHE_DIR": "/home/u/ws/target/cache"}
    mounts = runner.plan_mounts(WS, WS / "target" / "cache", env, step(cwd=WS / "kernel"))
    assert set(mounts.paths) == {WS, Path("/home/u/.cargo")}


def test_container_names_are_unique() -> None:
    assert runner.container_name(step()) != runner.container_name(step())
    assert runner.container_name(step()).startswith("rgpu-nvptx-sm_80-")


def test_chown_back_runs_as_root_then_returns_every_mount_to_the_user() -> None:
    s = dataclasses.replace(spec(step(), {"HOME": "/home/u"}), chown_back=True)
    argv = runner.run_argv(DOCKER, s, ("cargo", "build"))
    assert "--user" not in argv
    image = argv.index("img:1")
    assert argv[image + 1 : image + 3] == ["sh", "-c"]
    script = argv[image + 3]
    assert script.startswith('status=0; "$@" || status=$?; chown -R 1000:1001 ')
    assert script.endswith("; exit $status") and str(WS) in script
    assert argv[image + 4 :] == ["rgpu-step", "cargo", "build"]


def test_as_root_mounts_only_the_cargo_registry_and_git_and_masks_nothing() -> None:
    mounts = runner.plan_mounts(WS, CACHE, {"HOME": "/root"}, step(), as_root=True)
    assert Path("/root/.cargo") not in mounts.paths
    assert {Path("/root/.cargo/registry"), Path("/root/.cargo/git")} <= set(mounts.paths)
    assert mounts.masked == ()


def test_the_runner_labels_its_containers_with_the_workspace() -> None:
    env = {"HOME": "/home/u", runner.KEEP_ENV: "1"}
    made = runner.ContainerRunner(DOCKER, "img:1", WS, CACHE, env).spec(step())
    assert made.labels == {engines.LABEL: "1", f"{engines.LABEL}.workspace": str(WS)}
    assert made.keep and made.image == "img:1" and made.cwd == WS
