"""`rgpu doctor` on a machine with an NVIDIA GPU: the driver line is real there."""

from __future__ import annotations

import json

from tests.conftest import requires_gpu, run_rgpu


@requires_gpu
def test_doctor_reports_the_driver_and_the_newest_ptx_isa_it_accepts() -> None:
    report = json.loads(run_rgpu("doctor", "--json").stdout)
    driver = next(c for c in report["checks"] if c["name"] == "nvidia driver")
    assert driver["status"] == "ok", driver
    assert "newest PTX ISA" in driver["detail"] and "PTX ISA ?" not in driver["detail"]
    assert report["backends"]["cuda"]["runs"] is True
