"""`--json` on every command that reports (issue 36): new, init, vendor, add, ci init and doc
print one JSON object on stdout, checked against the schema rgpu publishes for it
(rgpu/schemas/), while their status lines stay on stderr. (build, doctor, test and toolchain
have theirs tested beside them; ci check-ptx in test_minimal_workspace.py, toolchain
install in test_build_tools.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from rgpu.errors import ExitCode
from tests.conftest import run_rgpu
from tests.integration.conftest import json_result

FILES = "files.schema.json"


def test_new_then_vendor_add_and_ci_init(tmp_path: Path) -> None:
    made = json_result(run_rgpu("new", "jsondemo", "--template", "minimal", "--dir",
                                str(tmp_path), "--json"), FILES)  # fmt: skip
    ws = tmp_path / "jsondemo"
    assert (made["command"], made["root"], made["wrote"]) == ("new", str(ws), True)
    assert {f["status"] for f in made["files"]} == {"create"}
    assert any(f["path"] == "kernel/src/lib.rs" for f in made["files"])
    assert made["next"] == f"cd {ws} && rgpu test"

    vendored = json_result(run_rgpu("vendor", "-C", str(ws), "--json"), FILES)
    assert not vendored["wrote"] and {f["status"] for f in vendored["files"]} == {"identical"}

    before = (ws / "Cargo.toml").read_text()
    planned = json_result(
        run_rgpu("add", "primitives", "-C", str(ws), "--dry-run", "--json"), FILES
    )
    assert planned["dry_run"] and not planned["wrote"]
    manifest = next(f for f in planned["files"] if f["path"] == "Cargo.toml")
    assert manifest["status"] == "change" and "+rgpu-primitives" in manifest["diff"]
    assert (ws / "Cargo.toml").read_text() == before  # a dry run writes nothing
    added = json_result(run_rgpu("add", "primitives", "-C", str(ws), "--json"), FILES)
    assert added["wrote"] and all(f["diff"] is None for f in added["files"])
    again = json_result(run_rgpu("add", "primitives", "-C", str(ws), "--json"), FILES)
    assert not again["wrote"]

    workflow = json_result(run_rgpu("ci", "init", "-C", str(ws), "--rgpu-source", "rgpu-cli==0.2.0",
                                    "--json"), "ci-init.schema.json")  # fmt: skip
    assert workflow["status"] == "create" and Path(workflow["workflow"]).is_file()
    assert workflow["jobs"]


def test_init_dry_run_then_init(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / "src").mkdir(parents=True)
    (project / "Cargo.toml").write_text(
        '[package]\nname = "plain"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (project / "src" / "main.rs").write_text('fn main() {\n    println!("hi");\n}\n')
    planned = json_result(run_rgpu("init", "-C", str(project), "--dry-run", "--json"), FILES)
    assert planned["dry_run"] and not planned["wrote"]
    root = next(f for f in planned["files"] if f["path"] == "Cargo.toml")
    assert root["status"] == "change" and root["diff"].startswith("--- a/Cargo.toml")
    assert not (project / "kernel").exists()
    done = json_result(run_rgpu("init", "-C", str(project), "--json"), FILES)
    assert done["wrote"] and (project / "kernel" / "src" / "lib.rs").is_file()
    assert done["next"] == "write kernels in kernel/src/lib.rs, then `rgpu test`"
    twice = json_result(run_rgpu("init", "-C", str(project), "--json"), FILES)
    assert not twice["wrote"]


def test_a_failure_is_the_error_object(tmp_path: Path) -> None:
    proc = run_rgpu("vendor", "-C", str(tmp_path), "--json", check=False)
    error = json.loads(proc.stdout)
    assert error["ok"] is False and error["message"] and error["hint"]
    assert error["exit_code"] == ExitCode.NOT_A_WORKSPACE == proc.returncode
