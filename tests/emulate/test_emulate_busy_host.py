"""A healthy emulated volume beside neighbours that take both CPUs and stream through memory
(at the lowest priority, which shares out neither memory bandwidth nor wake-ups) is never
FAILed as a volume: the seconds its emulator fell behind are the host's, and a check left
undecided says the emulator was the cause (docs/emulation.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.busy import neighbours
from support.common import SUITES, needs_fio, needs_root, run_pytest

pytestmark = [needs_root, needs_fio, pytest.mark.alone(machine=True)]  # loads every CPU itself

IO1_READ = f"{SUITES}/io1/test_io1.py::test_random_read_holds_provisioned_iops_999_percent_of_seconds"


def test_a_healthy_emulated_volume_beside_busy_neighbours_is_never_failed(
        tmp_path: Path) -> None:
    with neighbours(2) as procs:
        ran = run_pytest(tmp_path, IO1_READ, "--emulate", "--emulate-latency=auto",
                         "--ebsperf-runtime=12", "-rA", timeout=300)
        assert all(proc.poll() is None for proc in procs)  # they were there throughout
    out = ran.done.stdout
    checks = ran.report.get("checks", [])
    assert checks, out[-3000:]
    for check in checks:
        assert check["outcome"] != "fail", check["message"]
        if check["outcome"] == "inconclusive":
            said = check["message"].lower()
            assert "emulat" in said or "host" in said, check["message"]
