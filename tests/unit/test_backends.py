"""What a backend is lives in one table (rgpu/backends.py): the facts other places use are
read from it, and the published JSON schema says the same."""

from __future__ import annotations

import json
from pathlib import Path

import rgpu
from rgpu.backends import BACKENDS, of_artifact, run_keys
from rgpu.ci import workflow
from rgpu.doctor import devices, report


def test_the_doctor_schema_names_the_backends_of_the_table() -> None:
    schema = json.loads(
        (Path(rgpu.__file__).parent / "schemas" / "doctor.schema.json").read_text(encoding="utf-8")
    )
    props = schema["properties"]
    assert props["backends"]["propertyNames"]["enum"] == list(BACKENDS)
    listed = [b.name for b in BACKENDS.values() if b.devices]
    assert sorted(props["devices"]["propertyNames"]["enum"]) == sorted(listed)
    verdict = schema["$defs"]["verdict"]["properties"]["backend"]["enum"]
    assert verdict == list(BACKENDS)


def test_doctor_and_ci_read_the_table() -> None:
    assert run_keys() == report.RUN_KEYS
    assert run_keys()["vulkan-run"] == ("wgpu", "ash")
    assert of_artifact("spirv") == ("wgpu", "ash")
    listed = [listing.backend for listing in devices.list_all({"PATH": ""})]
    assert listed == ["cuda", "wgpu", "ash", "cpu"]  # the GPUs first, each backend once
    assert [b.name for b in workflow.DEFAULT_BACKENDS] == ["cpu", "wgpu", "ash", "cuda"]
    browser = BACKENDS["webgpu"]
    assert workflow.job_commands(browser, (), None) == (("rgpu", "build", "--backend", "webgpu"),)
    cuda = workflow.job_commands(BACKENDS["cuda"], (), None)
    assert cuda[-1] == ("rgpu", "ci", "check-ptx")
