"""The build tools' logic without the network: which tools a codegen needs, what a missing
one does without consent, the archives (a .deb and a wheel made here, of the same shape as
the real ones), the download's hash check (file:// URLs), and where a tool is found."""

from __future__ import annotations

import hashlib
import io
import platform
import tarfile
import zipfile
from pathlib import Path

import pytest

from rgpu.errors import ExitCode, ToolMissingError
from rgpu.toolchains import obtain, tools
from rgpu.toolchains.tools import NVCC_WHEEL, SPIRV_TOOLS_DEB

SCRIPT = b"#!/bin/sh\necho 'SPIRV-Tools v2023.1 test'\n"


def names(found: list[tools.BuildTool]) -> list[str]:
    return [t.name for t in found]


def test_each_codegen_needs_its_tools() -> None:
    assert names(obtain.needs(["spirv"])) == ["spirv-opt", "spirv-val"]
    assert names(obtain.needs(["spirv"], spirv_opt=False)) == ["spirv-val"]
    assert names(obtain.needs(["nvptx"])) == ["ptxas"] == names(obtain.needs(["nvvm"]))
    assert names(obtain.needs(["nvptx", "spirv"])) == ["ptxas", "spirv-opt", "spirv-val"]
    assert obtain.needs([]) == []


def test_every_build_tool_has_a_pinned_download_for_linux_x86_64_and_arm64() -> None:
    for tool in tools.BUILD_TOOLS:
        assert set(tool.package.files) == {"x86_64", "aarch64"}
        for urls, sha256 in tool.package.files.values():
            assert urls and all(u.startswith("https://") for u in urls)
            assert len(sha256) == 64 and int(sha256, 16) >= 0
        assert tool.name in tool.package.members


def empty_env(tmp_path: Path) -> dict[str, str]:
    """No build tool anywhere: an empty PATH and an empty tools dir."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    return {"PATH": str(tmp_path / "bin"), tools.TOOLS_DIR_ENV: str(tmp_path / "tools")}


def test_without_consent_a_missing_spirv_opt_stops_with_the_fix(tmp_path: Path) -> None:
    env = empty_env(tmp_path)
    with pytest.raises(ToolMissingError) as info:
        obtain.ensure(["spirv"], env, yes=False)
    assert info.value.exit_code == ExitCode.TOOL_MISSING
    assert "spirv-opt" in info.value.message and "before compiling" in info.value.message
    hint = info.value.hint or ""
    assert f"`{SPIRV_TOOLS_DEB.system}`" in hint and "--yes" in hint
    if obtain.available(SPIRV_TOOLS_DEB):
        assert str(tmp_path / "tools" / "spirv-tools-2023.1-2") in hint
    assert not (tmp_path / "tools").exists()


def test_without_consent_optional_tools_are_warned_about_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = empty_env(tmp_path)
    assert obtain.ensure(["spirv"], env, yes=False, spirv_opt=False) == []
    assert "spirv-val not found" in capsys.readouterr().err
    assert obtain.ensure(["nvptx"], env, yes=False) == []  # the codegen warns per PTX


def make_tar(members: dict[str, bytes], mode: str) -> bytes:
    """A tar archive of `members` (mode "w:xz", "w:gz")."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode=mode) as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return data.getvalue()


def make_deb(members: dict[str, bytes]) -> bytes:
    """A .deb as dpkg-deb builds one: an ar archive of debian-binary, control.tar.xz and
    data.tar.xz (odd-sized members padded to 2 bytes)."""
    out = b"!<arch>\n"
    for name, body in (("debian-binary", b"2.0\n"), ("control.tar.xz", b"x"),
                       ("data.tar.xz", make_tar(members, "w:xz"))):  # fmt: skip
        header = f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(body):<10}`\n"
        out += header.encode("ascii") + body + (b"\n" if len(body) % 2 else b"")
    return out


def test_a_deb_gives_its_programs_and_licence() -> None:
    deb = make_deb(
        {
            "./usr/bin/spirv-opt": b"opt",
            "./usr/bin/spirv-val": b"val",
            "./usr/share/doc/spirv-tools/copyright": b"Apache-2.0",
        }
    )
    files = obtain.extract(deb, SPIRV_TOOLS_DEB)
    assert files == {"spirv-opt": b"opt", "spirv-val": b"val", "LICENSE": b"Apache-2.0"}


def test_an_archive_without_a_program_is_an_error_naming_it() -> None:
    with pytest.raises(ToolMissingError, match=r"has no \./usr/bin/spirv-val"):
        obtain.extract(make_deb({"./usr/bin/spirv-opt": b"opt"}), SPIRV_TOOLS_DEB)
    with pytest.raises(ToolMissingError, match="not an ar archive"):
        obtain.extract(b"PK\x03\x04", SPIRV_TOOLS_DEB)


def test_a_wheel_gives_ptxas() -> None:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as wheel:
        wheel.writestr("nvidia/cu13/bin/ptxas", b"ptxas")
        wheel.writestr(NVCC_WHEEL.licence, b"NVIDIA")
    assert obtain.extract(data.getvalue(), NVCC_WHEEL) == {"ptxas": b"ptxas", "LICENSE": b"NVIDIA"}


def test_a_download_is_checked_against_its_pinned_hash(tmp_path: Path) -> None:
    file = tmp_path / "pkg.deb"
    file.write_bytes(b"package")
    good = hashlib.sha256(b"package").hexdigest()
    missing = (tmp_path / "absent.deb").as_uri()
    assert obtain.download([missing, file.as_uri()], good) == b"package"
    with pytest.raises(ToolMissingError) as info:
        obtain.download([file.as_uri()], "0" * 64)
    assert f"sha256 {good}, not the pinned {'0' * 64}" in info.value.message


def test_installed_tools_are_found_in_the_cache_and_path_wins(tmp_path: Path) -> None:
    env = empty_env(tmp_path)
    assert tools.find_tool("spirv-opt", env) is None
    dest = tools.package_dir(SPIRV_TOOLS_DEB, env)
    obtain.install({"spirv-opt": SCRIPT, "spirv-val": SCRIPT, "LICENSE": b"l"}, dest,
                   SPIRV_TOOLS_DEB)  # fmt: skip
    ours = str(dest / "bin" / "spirv-opt")
    assert tools.find_tool("spirv-opt", env) == ours
    assert tools.tool_version("spirv-opt", ours, env) == "SPIRV-Tools v2023.1 test"
    assert (dest / obtain.MARKER).is_file() and (dest / "LICENSE").read_bytes() == b"l"
    # Again over rgpu's own copy: replaced whole, nothing left beside it.
    obtain.install({"spirv-opt": SCRIPT, "spirv-val": SCRIPT}, dest, SPIRV_TOOLS_DEB)
    assert not (dest / "LICENSE").exists()
    assert [p.name for p in dest.parent.iterdir()] == [dest.name]
    on_path = Path(env["PATH"]) / "spirv-opt"
    on_path.write_bytes(SCRIPT)
    on_path.chmod(0o755)
    assert tools.find_tool("spirv-opt", env) == str(on_path)


def test_a_directory_rgpu_did_not_make_is_never_written_over(tmp_path: Path) -> None:
    env = empty_env(tmp_path)
    theirs = tools.package_dir(SPIRV_TOOLS_DEB, env) / "notes.txt"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("mine")
    with pytest.raises(ToolMissingError, match="is not rgpu's") as info:
        obtain.obtain(SPIRV_TOOLS_DEB, env)  # refused before any download
    assert tools.TOOLS_DIR_ENV in (info.value.hint or "")
    assert theirs.read_text() == "mine"


def test_the_tools_dir_follows_the_cache_unless_set(tmp_path: Path) -> None:
    assert tools.tools_dir({"RGPU_CACHE_DIR": str(tmp_path)}) == tmp_path / "tools"
    env = {"RGPU_CACHE_DIR": str(tmp_path), tools.TOOLS_DIR_ENV: str(tmp_path / "t")}
    assert tools.tools_dir(env) == tmp_path / "t"


def local_package(tmp_path: Path, program: bytes) -> tools.Package:
    """Debian's spirv-tools as pinned, but served from a .deb made here (a file:// URL)."""
    deb = make_deb(
        {
            "./usr/bin/spirv-opt": program,
            "./usr/bin/spirv-val": program,
            SPIRV_TOOLS_DEB.licence: b"Apache-2.0",
        }
    )
    file = tmp_path / "spirv-tools.deb"
    file.write_bytes(deb)
    here = ((file.as_uri(),), hashlib.sha256(deb).hexdigest())
    return SPIRV_TOOLS_DEB._replace(files={platform.machine(): here})


def test_obtain_puts_the_programs_where_build_and_doctor_find_them(tmp_path: Path) -> None:
    env = empty_env(tmp_path)
    dest = obtain.obtain(local_package(tmp_path, SCRIPT), env)
    assert dest == tools.package_dir(SPIRV_TOOLS_DEB, env)
    for name in ("spirv-opt", "spirv-val"):
        assert tools.find_tool(name, env) == str(dest / "bin" / name)


def test_a_program_that_does_not_run_here_is_not_kept(tmp_path: Path) -> None:
    env = empty_env(tmp_path)
    with pytest.raises(ToolMissingError, match="does not run on this system") as info:
        obtain.obtain(local_package(tmp_path, b"#!/bin/sh\nexit 1\n"), env)
    assert "`sudo apt-get install spirv-tools`" in (info.value.hint or "")
    assert not tools.package_dir(SPIRV_TOOLS_DEB, env).exists()
    assert tools.find_tool("spirv-opt", env) is None


def test_a_person_who_declines_gets_exit_6_and_the_question_named_the_download(
    tmp_path: Path,
) -> None:
    env = empty_env(tmp_path)
    asked: list[str] = []

    def decline(question: str) -> bool:
        asked.append(question)
        return False

    with pytest.raises(ToolMissingError, match="stopped before compiling"):
        obtain.ensure(["spirv"], env, yes=False, confirm=decline)
    if obtain.available(SPIRV_TOOLS_DEB):
        (question,) = asked
        assert SPIRV_TOOLS_DEB.label in question
        assert str(tools.package_dir(SPIRV_TOOLS_DEB, env)) in question
    assert not (tmp_path / "tools").exists()


def test_dawn_and_its_node_come_from_npm_tarballs_and_are_found_where_run_and_doctor_look(
    tmp_path: Path,
) -> None:
    from rgpu.web import dawn

    env = empty_env(tmp_path)
    assert dawn.find(env) is None
    with pytest.raises(ToolMissingError, match="not installed") as info:
        dawn.ensure(env, yes=False, confirm=None)
    assert "--yes" in (info.value.hint or "") and not (tmp_path / "tools").exists()
    node = b"#!/bin/sh\necho v26.12.1\n"
    addon = {"package/dist/linux-x64/dawn.node": b"\x7fELF", "package/LICENSE.md": b"MIT"}
    tarballs = [
        (dawn.NODE, {"package/bin/node": node, "package/LICENSE": b"MIT"}),
        (dawn.WEBGPU, addon),  # dawn.node is an addon: obtain does not try to run it
    ]
    for package, members in tarballs:
        data = make_tar(members, "w:gz")  # an npm package: its files under package/
        (tmp_path / package.name).write_bytes(data)
        here = (((tmp_path / package.name).as_uri(),), hashlib.sha256(data).hexdigest())
        obtain.obtain(package._replace(files={platform.machine(): here}), env)
    found = dawn.find(env)
    assert found is not None
    assert found.node == tools.package_dir(dawn.NODE, env) / "bin" / "node"
    assert found.dawn_node.read_bytes() == b"\x7fELF"
    assert (found.dawn_node.parent.parent / "LICENSE").read_text() == "MIT"
    argv = dawn.argv(found, tmp_path / "page", ["--n", "5"])
    assert argv == [
        str(found.node),
        str(tmp_path / "page" / "rgpu-node.mjs"),
        str(found.dawn_node),
        "--n",
        "5",
    ]
