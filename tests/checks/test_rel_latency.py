"""S2-17's latency term judged with one I/O outstanding, on emulated twins that meet it and on
twins where the device under test is made slower (real fio, throttled latency-bearing loop
devices)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.common import ROOT, needs_fio, needs_root

from pytest_ebsperf.config.consistency import validate
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.errors import ConfigError

#: Times rates and latencies closely: never beside the shared pass's CPU-bound tests
#: (conftest). Emulated twins hold the host run by run (checks/paired.py: held): a
#: comparison that decides in one stage of pairs runs in scripts/test.sh's lanes.
pytestmark = pytest.mark.alone

ENCRYPTION = f"{ROOT}/suites/encryption/test_encryption.py"
#: 1 s blocks after a 0.25 s ramp, the emulated twins' defaults (checks/paired.py), given here
#: so that the procedure these tests time stays the same if those defaults move: a
#: kernel-paced twin's block medians scatter by a few percent either way
BLOCKS = ("--ebsperf-block=1", "--ebsperf-ramp=0.25")


def _checks(tmp_path: Path, *args: str) -> list[dict]:
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pytest", ENCRYPTION, "-p", "no:cacheprovider",
                           "--emulate", "--volume-type=io1", "--volume-size=100",
                           "--volume-iops=2000", *BLOCKS, f"--ebsperf-report={report}", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          check=False)
    assert report.exists(), done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(report.read_text())["checks"]


def _latency(checks: list[dict]) -> dict:
    found = [c for c in checks if "median latency at QD 1" in c["what"]]
    assert len(found) == 1, [c["what"] for c in checks]
    return found[0]


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)  # twins judged to a few percent, or a FAIL that needs two
# stages of pairs: by itself (in the lanes, beside tests that time their own rates, the
# twin three times as slow took 107.6 s and the slow gp2 59.7 s, against 44 and 33 s)
def test_twins_with_the_same_service_time_meet_the_latency_term(tmp_path: Path) -> None:
    # 3 ms twins, not 1 ms: the latency daemon's own path (0.2-0.8 ms on this VM, calibrated
    # once per twin) made two 1 ms twins measure 1.32 and 1.11 ms, a gap the term rightly
    # does not call equal (INCONCLUSIVE since it no longer passes medians that miss the
    # bound). At 3 ms the same error is a few percent.
    checks = _checks(tmp_path, "--emulate-latency=3")
    check = _latency(checks)
    # Never FAIL; PASS unless the twins' own emulators say the host held one side back. A CI
    # machine in a spell of the hypervisor's steal: 4 pairs measured again (one side at
    # 85-89 % of its setting), medians 2.7 and 2.45 ms, "not yet decided" after 32 pairs;
    # that INCONCLUSIVE names the host, as it must (the daemon follows the path's mean, so
    # steal on a few I/Os sinks the other I/Os' median: docs/benchmarks.md).
    held_back = check["outcome"] == "inconclusive" and "this host" in check["message"] and \
        (check.get("details") or {}).get("measured_again")
    assert check["outcome"] == "pass" or held_back, check["message"]
    # the IOPS term names which twin is encrypted, and why it is known (the emulator marks
    # the device under test); the latency term at QD 1 is measured whatever the IOPS term said
    iops = checks[0]
    assert iops["what"].endswith("IOPS") and len(checks) == 2
    assert "encrypted emulated" in iops["message"] and "plain emulated" in iops["message"]
    assert "encrypted: the emulated volume (marked by the emulator" in \
        " ".join(iops.get("notes") or [])
    # one I/O at a time on a 3 ms volume: the median is about the service time, not QD/IOPS
    # (16 ms and more at the IOPS term's depth), with room for the daemon's path
    assert 2.2e6 <= check["measured"]["value"] <= 4.0e6


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)  # twins judged to a few percent, or a FAIL that needs two
# stages of pairs: by itself (in the lanes, beside tests that time their own rates, the
# twin three times as slow took 107.6 s and the slow gp2 59.7 s, against 44 and 33 s)
def test_a_twin_three_times_as_slow_per_io_fails_the_latency_term(tmp_path: Path) -> None:
    # FAIL needs the pairs' lower confidence bound on A - (1.10 B + 0.05 ms) above 0, at a
    # first stage of 4 pairs and again on 4 fresh ones. A twin three times as slow puts it
    # there with room for the latency daemon's path (0.2-0.8 ms on this VM).
    checks = _checks(tmp_path, "--emulate-latency=1", "--emulate-device-latency=3")
    check = _latency(checks)
    assert check["outcome"] == "fail", check["message"]
    assert check["measured"]["value"] >= 2.4e6
    assert "S2-17" in check["message"]


def test_the_device_latency_aid_needs_emulation_and_a_mean() -> None:
    with pytest.raises(ConfigError, match="only applies with --emulate"):
        validate(Settings(emulate_device_latency="2"))
    with pytest.raises(ConfigError, match="give a mean in milliseconds"):
        validate(Settings(emulate=True, emulate_device_latency="auto"))
