"""Every bad input: one clear message (what, why, the command that fixes it), a documented
exit code, no traceback, and the disk as it was. Issue 11: wrong types in
[workspace.metadata.rgpu], a workspace under a directory whose name is not UTF-8, Ctrl-C
while rgpu starts, a --dir that is a file, a rustup that fails, the wrong PyPI project as
--rgpu-source."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rgpu.errors import ExitCode
from tests.conftest import REPO, run_rgpu
from tests.integration.conftest import (
    assert_clean_failure,
    environ,
    fake_tool,
    new_workspace,
    rgpu_in,
)


def snapshot(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@pytest.fixture(scope="module")
def plain_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Scaffolded, never built: dry runs and refusals only."""
    return new_workspace(tmp_path_factory.mktemp("bad"), "baddemo")


# --- names and destinations ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "1abc", "fn", "my sort", "a/b", "..", "sörter", "core"])
def test_invalid_names_create_nothing(tmp_path: Path, name: str) -> None:
    out = run_rgpu("new", name, "--dir", str(tmp_path), check=False)
    assert_clean_failure(out, ExitCode.INVALID_NAME)
    assert out.stderr.startswith("error: ")
    assert snapshot(tmp_path) == []


def test_existing_destination_is_refused_without_force(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "keep.txt").write_text("mine")
    before = snapshot(tmp_path)
    out = run_rgpu("new", "demo", "--dir", str(tmp_path), check=False)
    assert_clean_failure(out, ExitCode.DESTINATION)
    assert "already exists and is not empty" in out.stderr and "--force" in out.stderr
    assert snapshot(tmp_path) == before
    forced = run_rgpu("new", "demo", "--dir", str(tmp_path), "--force", "-v")
    assert re.search(r"create\s+Cargo.toml", forced.stderr)  # -v: every file its line
    assert (tmp_path / "demo" / "keep.txt").read_text() == "mine"
    again = run_rgpu("new", "demo", "--dir", str(tmp_path), "--force")
    # Without -v the identical files are one line; keep.txt is none of rgpu's.
    assert re.search(r"identical\s+\d+ files \(\d+ in vendor/rgpu-", again.stderr), again.stderr
    assert "create" not in again.stderr


def test_dir_that_is_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("not a directory")
    out = run_rgpu("new", "demo", "--dir", str(afile), check=False)
    assert_clean_failure(out, ExitCode.DESTINATION)
    assert f"--dir {afile} is a file, not a directory" in out.stderr
    built = run_rgpu("build", "-C", str(afile), check=False)
    assert_clean_failure(built, ExitCode.NOT_A_WORKSPACE)
    assert f"{afile} is a file, not a directory" in built.stderr
    assert f"-C {tmp_path}" in built.stderr  # the fix: its directory
    assert afile.read_text() == "not a directory"


def test_unwritable_parent_is_refused(tmp_path: Path) -> None:
    # Under /tmp itself, so that an unprivileged user can reach it.
    parent = Path(tempfile.mkdtemp(prefix="rgpu-readonly-", dir="/tmp"))
    parent.chmod(0o555)
    argv = [sys.executable, "-m", "rgpu", "new", "demo", "--dir", str(parent)]
    if os.geteuid() == 0:
        # Root writes anywhere: run as an unprivileged user to make the parent unwritable.
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot drop privileges")
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    try:
        out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", check=False)
        assert_clean_failure(out, ExitCode.DESTINATION)
        assert "not writable" in out.stderr
        assert snapshot(parent) == []
    finally:
        parent.chmod(0o755)
        shutil.rmtree(parent)


@pytest.mark.parametrize("command", [["build"], ["run"], ["test"], ["ci", "init"]])
def test_commands_outside_a_workspace_say_how_to_start_one(
    tmp_path: Path, command: list[str]
) -> None:
    out = run_rgpu(*command, "-C", str(tmp_path), check=False)
    assert_clean_failure(out, ExitCode.NOT_A_WORKSPACE)
    assert "no rgpu workspace found" in out.stderr and "rgpu new NAME" in out.stderr


def test_unknown_backend_is_a_usage_error(plain_ws: Path) -> None:
    out = run_rgpu("build", "--backend", "cdua", "-C", str(plain_ws), check=False)
    assert_clean_failure(out, ExitCode.USAGE)
    assert "unknown backend `cdua` (did you mean `cuda`?)" in out.stderr


def test_json_errors_are_json(tmp_path: Path) -> None:
    out = run_rgpu("build", "--json", "-C", str(tmp_path), check=False)
    data = json.loads(out.stdout)
    assert data["ok"] is False and data["exit_code"] == ExitCode.NOT_A_WORKSPACE
    assert data["hint"]


# --- [workspace.metadata.rgpu] -------------------------------------------------------------


@pytest.fixture
def configured(plain_ws: Path) -> Iterator[Path]:
    """plain_ws with settings added to its table by the test; restored afterwards."""
    manifest = plain_ws / "Cargo.toml"
    original = manifest.read_text(encoding="utf-8")
    yield plain_ws
    manifest.write_text(original, encoding="utf-8")


def set_table(ws: Path, *lines: str) -> None:
    """Put `key = value` lines at the top of [workspace.metadata.rgpu], replacing the
    template's line for the same key (TOML allows a key once)."""
    manifest = ws / "Cargo.toml"
    text = manifest.read_text(encoding="utf-8")
    for line in lines:
        key = line.split("=", 1)[0].strip()
        text = re.sub(rf"^{re.escape(key)} = .*\n", "", text, flags=re.M)
    head = "[workspace.metadata.rgpu]\n"
    assert head in text
    manifest.write_text(text.replace(head, head + "\n".join(lines) + "\n"), encoding="utf-8")


@pytest.mark.parametrize("value", ['"false"', '"no"', '"0"', "0", '["false"]'])
@pytest.mark.parametrize("command", [["build", "--dry-run"], ["run"], ["test"]])
def test_docker_as_a_string_is_refused_with_the_accepted_forms(
    configured: Path, value: str, command: list[str]
) -> None:
    set_table(configured, f"docker = {value}")
    out = run_rgpu(*command, cwd=configured, check=False)
    assert_clean_failure(out, ExitCode.CONFIG)
    error = next(line for line in out.stderr.splitlines() if line.startswith("error: "))
    # The key, the value as written in TOML, and what it is not; then the accepted forms.
    assert error == f"error: [workspace.metadata.rgpu] docker is {value}, not a boolean"
    assert "`docker = true` or `docker = false`" in out.stderr


def test_docker_from_the_environment_takes_the_usual_words(configured: Path) -> None:
    for word in ("false", "no", "0", "off"):
        out = run_rgpu("build", "--dry-run", cwd=configured, env={"RGPU_DOCKER": word})
        assert out.returncode == 0
    bad = run_rgpu("build", "--dry-run", cwd=configured, env={"RGPU_DOCKER": "maybe"}, check=False)
    assert_clean_failure(bad, ExitCode.CONFIG)
    assert 'RGPU_DOCKER is "maybe", not a boolean' in bad.stderr


def dry_run(ws: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(run_rgpu("build", "--dry-run", "--json", cwd=ws).stdout)
    return data


def test_lists_are_accepted_where_a_list_means_something(configured: Path) -> None:
    set_table(configured, 'backend = ["cuda", "cpu"]', 'cuda-archs = ["sm_80", "sm_90"]')
    plan = dry_run(configured)
    assert plan["backends"] == ["cuda", "cpu"]
    steps = plan["plan"]["steps"]  # type: ignore[index]
    archs = [s["name"] for s in steps if s["name"].startswith("nvptx-sm_")]
    assert archs == ["nvptx-sm_80", "nvptx-sm_90"]


@pytest.mark.parametrize(
    ("line", "shown", "forms"),
    [
        ('profile = ["release"]', 'profile is ["release"], not a string', 'profile = "release"'),
        ('codegen = ["nvptx"]', 'codegen is ["nvptx"], not a string', 'codegen = "nvptx"'),
        ('image = ["a", "b"]', 'image is ["a", "b"], not a string', 'image = "registry/name:tag"'),
        ("backend = []", "backend is empty", 'backend = ["cuda", "wgpu"]'),
        ('backend = ["cpu", "cdua"]', "unknown backend `cdua` (did you mean `cuda`?)", "names:"),
        ('cuda-archs = ["sm_999"]', "names `sm_999`, not a CUDA arch", 'cuda-archs = ["sm_80"'),
        ('ci-run = "--verify"', 'ci-run is "--verify", not a list of strings', 'ci-run = ["--"'),
        ('backed = "cuda"', "unknown setting `backed`", "valid settings:"),
    ],
)
def test_a_wrong_type_is_refused_naming_key_value_and_forms(
    configured: Path, line: str, shown: str, forms: str
) -> None:
    set_table(configured, line)
    out = run_rgpu("build", "--dry-run", cwd=configured, check=False)
    assert_clean_failure(out, ExitCode.CONFIG)
    assert shown in out.stderr and forms in out.stderr
    assert "['" not in out.stderr  # TOML as the user wrote it, not a Python repr


# --- paths that are not UTF-8 ---------------------------------------------------------------


@pytest.fixture
def non_utf8_parent(tmp_path: Path) -> Iterator[bytes]:
    parent = os.fsencode(tmp_path) + b"/ws-\xff\xfe"
    os.mkdir(parent)
    yield parent
    shutil.rmtree(parent)


def run_bytes(argv: list[bytes], cwd: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [os.fsencode(sys.executable), b"-m", b"rgpu", *argv],
        cwd=cwd,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_new_under_a_non_utf8_directory_is_refused(non_utf8_parent: bytes) -> None:
    proc = run_bytes([b"new", b"demo", b"--dir", non_utf8_parent], cwd=non_utf8_parent)
    stderr = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode == ExitCode.DESTINATION, stderr
    assert "Traceback" not in stderr
    assert "ws-\\xff\\xfe/demo is not valid UTF-8" in stderr  # shown as `ls -b` shows it
    assert os.listdir(non_utf8_parent) == []


@pytest.mark.parametrize(
    "args", [[b"build"], [b"build", b"--dry-run", b"--json"], [b"run"], [b"test"]]
)
def test_a_workspace_under_a_non_utf8_directory_is_refused_up_front(
    plain_ws: Path, non_utf8_parent: bytes, args: list[bytes]
) -> None:
    ws = non_utf8_parent + b"/demo"
    shutil.copytree(os.fsdecode(plain_ws), os.fsdecode(ws), ignore=shutil.ignore_patterns("target"))
    proc = run_bytes(args, cwd=ws)
    stderr = proc.stderr.decode("utf-8", errors="replace")
    assert proc.returncode == ExitCode.CONFIG, stderr
    assert "Traceback" not in stderr and "Compiling" not in stderr
    assert "ws-\\xff\\xfe/demo is at a path that is not valid UTF-8" in stderr
    assert "fix: rename the directory" in stderr
    assert not os.path.exists(ws + b"/target")  # nothing started


# --- Ctrl-C while rgpu starts ---------------------------------------------------------------


def console_script() -> list[str]:
    """The `rgpu` console script pip wrote (what users run), else `python -m rgpu`."""
    script = Path(sys.executable).parent / "rgpu"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "rgpu"]


def start_doctor() -> subprocess.Popen[str]:
    """`rgpu doctor` as a user starts it, its output kept (for a signal while it runs)."""
    return subprocess.Popen(
        [*console_script(), "doctor"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def python_startup_ms() -> float:
    """How long this Python takes to start and import what the console script imports
    before rgpu's first line (`re`): a Ctrl-C before that reaches Python, not rgpu."""
    times = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import re, sys"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def test_ctrl_c_while_rgpu_starts_is_one_line_and_exit_130() -> None:
    """SIGINT 5-75 ms after Python's own start-up: while Python imports click, rich and rgpu's
    commands (rgpu/entry.py installs its handler before any of them), and while doctor
    probes."""
    # From this Python's own start-up time (measured now: a busy machine is slower) on.
    first = max(20, math.ceil(python_startup_ms()) + 5)
    delays = range(first, first + 71, 7)
    reached = 0
    for delay in delays:
        # On a busy machine Python's own start-up (before rgpu/entry.py's first line) can
        # take longer than it took a moment ago: such a signal is Python's, not rgpu's, so
        # that delay is tried again (a few times) instead of failing.
        for _attempt in range(5):
            proc = start_doctor()
            time.sleep(delay / 1000)
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=120)
            if not before_rgpu_started(stderr):
                break
        else:
            continue
        reached += 1
        assert "Traceback" not in stderr, f"SIGINT after {delay} ms:\n{stderr}"
        assert proc.returncode == ExitCode.INTERRUPTED, f"after {delay} ms: {proc.returncode}"
        assert stderr.strip().splitlines()[-1] == "error: interrupted", stderr
    assert reached >= len(delays) // 2, "most signals arrived before rgpu started: a busy machine"


def before_rgpu_started(stderr: str) -> bool:
    """The traceback of a SIGINT that reached Python before rgpu/entry.py's `main` installed
    its handler: raised in the console script's imports, with no frame of `main`."""
    return (
        "Traceback" in stderr
        and "from rgpu.entry import main" in stderr
        and (", in main\n" not in stderr)
    )


def test_ctrl_c_at_any_moment_of_a_run_is_never_a_traceback() -> None:
    """SIGINT spread over a whole `rgpu doctor` (its probe threads, the report, Python's
    shutdown), once and twice in a row: exit 130 with one line, or 0 when it had finished."""
    start = time.perf_counter()
    whole = subprocess.run(
        [*console_script(), "doctor"], capture_output=True, text=True, check=False
    )
    took = time.perf_counter() - start
    assert "Traceback" not in whole.stderr
    for fraction in (0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 1.0):
        for signals in (1, 2):
            proc = start_doctor()
            time.sleep(took * fraction)
            for _ in range(signals):
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                    time.sleep(0.005)
            _, stderr = proc.communicate(timeout=120)
            where = f"SIGINT x{signals} at {fraction:.0%} of {took:.2f} s"
            assert "Traceback" not in stderr and "Exception ignored" not in stderr, (
                f"{where}:\n{stderr}"
            )
            # -SIGINT: the signal came while Python itself started, before any of rgpu ran
            # (its default action; nothing is printed), or a second one came after rgpu had
            # handled the first and said so, while the process was already ending.
            ends = (0, 1, ExitCode.BACKEND_UNAVAILABLE, ExitCode.INTERRUPTED, -signal.SIGINT)
            assert proc.returncode in ends, f"{where}: {proc.returncode}\n{stderr}"
            if proc.returncode == -signal.SIGINT:
                said = stderr.strip().splitlines()
                assert said in ([], ["error: interrupted"]) or (
                    signals == 2 and said[-1:] == ["error: interrupted"]
                ), f"{where}:\n{stderr}"
            if proc.returncode == ExitCode.INTERRUPTED:
                assert stderr.strip().splitlines()[-1] == "error: interrupted", f"{where}"


# --- tools that answer badly ----------------------------------------------------------------


def test_a_failing_rustup_is_reported_as_failing_not_as_missing(tmp_path: Path) -> None:
    """A rustup whose `component list` fails (a damaged toolchain): rgpu quotes the failing
    command and rustup's own error, and never says to install rustup."""
    fake = fake_tool(
        tmp_path / "fake-rustup",
        "rustup",
        "# FAKE rustup: lists a toolchain, then fails to list its components.\n"
        'case "$1" in\n'
        '  --version) echo "rustup 1.29.0 (fake)";;\n'
        '  toolchain) echo "nightly-2026-08-15-x86_64-unknown-linux-gnu";;\n'
        "  *) echo \"error: toolchain 'nightly-2026-08-15' is damaged\" >&2; exit 1;;\n"
        "esac\n",
    )
    env = environ(PATH=f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    listed = rgpu_in(env, "toolchain", "list")
    assert_clean_failure(listed, ExitCode.TOOLCHAIN)
    assert "`rustup component list --installed --toolchain nightly-2026-08-15" in listed.stderr
    assert "is damaged" in listed.stderr
    doctor = rgpu_in(env, "doctor", "--json")
    report = json.loads(doctor.stdout)
    unanswered = [
        c
        for c in report["checks"]
        if c["name"].startswith(("spirv ", "nvvm "))
        and c["detail"].startswith("rustup did not answer")
    ]
    assert [c["name"] for c in unanswered] == ["spirv toolchain"]  # nvvm: no such channel
    for check in unanswered:
        assert check["status"] == "fail"
        # rustup's own fix: `rgpu toolchain install` would fail the same way.
        assert check["fix"].startswith("run `rustup component list"), check
    spirv = next(c for c in report["checks"] if c["name"] == "spirv toolchain")
    assert spirv["detail"].startswith("rustup did not answer: `rustup component list")
    text = json.dumps(report)
    assert "install rustup" not in text and "https://rustup.rs" not in text


# --- rgpu ci init --rgpu-source ------------------------------------------------------------


@pytest.mark.parametrize("source", ["rgpu==0.1.0", "rgpu", "RGPU>=0.1", "rgpu[extra]==0.1.1"])
def test_ci_init_refuses_the_unrelated_pypi_rgpu(plain_ws: Path, source: str) -> None:
    out = run_rgpu("ci", "init", "--rgpu-source", source, cwd=plain_ws, check=False)
    assert_clean_failure(out, ExitCode.USAGE)
    assert "the PyPI project `rgpu`" in out.stderr and "unrelated project" in out.stderr
    assert "rgpu-cli" in out.stderr  # the right name, in the fix
    assert not (plain_ws / ".github").exists()


def test_ci_init_accepts_rgpu_cli(plain_ws: Path) -> None:
    try:
        run_rgpu("ci", "init", "--rgpu-source", "rgpu-cli==0.2.0", cwd=plain_ws)
        workflow = (plain_ws / ".github" / "workflows" / "rgpu.yml").read_text(encoding="utf-8")
        assert 'RGPU_SOURCE: "rgpu-cli==0.2.0"' in workflow
    finally:
        shutil.rmtree(plain_ws / ".github", ignore_errors=True)
