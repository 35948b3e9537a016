"""The relative claims as their sources meant them, on emulated twins with real fio:

* S0-08: gp2 several times faster than a Magnetic twin on seed 000's job (4 jobs at QD 1,
  random 16 KiB 50/50); a gp2 made slow per I/O (20 ms: 4 / 20 ms = 200 IOPS, as fast as
  the twin's 200) fails it.
* S2-17: the encryption check knows which twin is encrypted (emulated twins are marked),
  and says INCONCLUSIVE - before any fio run - when nothing tells.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.common import ROOT, needs_fio, needs_root, run_pytest

from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.checks import twins

#: Times rates and latencies closely: never beside the shared pass's CPU-bound tests
#: (conftest). Emulated twins hold the host run by run (checks/paired.py: held): a
#: comparison that decides in one stage of pairs runs in scripts/test.sh's lanes.
pytestmark = pytest.mark.alone

S0_08 = (f"{ROOT}/suites/gp2/test_gp2.py::"
         "test_on_a_large_working_set_gp2_stays_several_times_faster_than_magnetic")
ENCRYPTION = f"{ROOT}/suites/encryption/test_encryption.py"


#: 1 s blocks after a 0.25 s ramp (the emulated default: 2 s after 0.5 s); the looks take the
#: same pairs, in 60 % of the seconds
BLOCKS = ("--ebsperf-block=1", "--ebsperf-ramp=0.25")
#: A twin made slower fails at any level: these tests are about the slowness reaching the
#: check and the message, so they spend a run's false-red budget of 5 % (the default 0.1 %
#: took 16 pairs and a fresh 16 to confirm, up to 111 s); the comparison's levels are
#: simulated in benchmarks/bench_verdicts.py
RELAXED = "--ebsperf-false-alarm=0.05"


def _run(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[dict]]:
    ran = run_pytest(tmp_path, "-rA", "--emulate", *args)
    return ran.done, ran.checks


@needs_root
@needs_fio
def test_gp2_is_several_times_faster_than_its_magnetic_twin(tmp_path: Path) -> None:
    done, checks = _run(tmp_path, S0_08, *BLOCKS)
    assert done.returncode == 0, done.stdout[-3000:]
    (check,) = checks
    assert check["claim"] == "S0-08" and check["outcome"] == "pass"
    # gp2's 3,000 IOPS against the emulated Magnetic volume's 200, in pairs of blocks
    assert check["measured"]["value"] >= 10, check["message"]
    assert "standard" in check["binding"] and "at least 3.00x required" in check["message"]
    assert "Seed 000 measured gp2 3,064 vs Magnetic 416 IOPS" in check["message"]
    evidence = check["details"]["paired"]
    assert evidence["pairs"] == 4 and len(evidence["blocks"]["a"]) == 4
    assert evidence["looks"][-1]["said"] == "pass"
    gp2 = [m for m in json.loads((tmp_path / "report.json").read_text())["measurements"]
           if m["role"] == "device"]
    assert len(gp2) == 4 and all(m["phase"] == "pair" for m in gp2)  # a fresh run per block


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)  # twins judged to a few percent, or a FAIL that needs two
# stages of pairs: by itself (in the lanes, beside tests that time their own rates, the
# twin three times as slow took 107.6 s and the slow gp2 59.7 s, against 44 and 33 s)
def test_a_gp2_slow_per_io_fails_against_the_magnetic_twin(tmp_path: Path) -> None:
    # 10 ms per I/O at 4 jobs of one I/O: 400 IOPS against the twin's 200, a ratio of 2.0;
    # its bucket is full (the ledger says so), so the slowness is the volume's own: judged,
    # and the message says no burst came where the balance says there must be one
    done, checks = _run(tmp_path, S0_08, *BLOCKS, RELAXED, "--emulate-device-latency=10")
    assert done.returncode == 1, done.stdout[-3000:]
    (check,) = checks
    assert check["outcome"] == "fail", check["message"]
    assert 1.6 <= check["measured"]["value"] <= 2.4, check["message"]
    assert "at least 3.00x required" in check["message"]
    assert "below the 3.00x required" in check["reason"]
    assert "No burst where the balance says there must be one" in check["message"]
    stages = [look["stage"] for look in check["details"]["paired"]["looks"]]
    assert stages[-1] == "confirm"  # a first stage and a fresh one agreed


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)  # twins judged to a few percent, or a FAIL that needs two
# stages of pairs: by itself (in the lanes, beside tests that time their own rates, the
# twin three times as slow took 107.6 s and the slow gp2 59.7 s, against 44 and 33 s)
def test_an_encrypted_twin_ten_percent_slower_fails(tmp_path: Path) -> None:
    # S2-17 within 5 %: the encrypted twin at 0.9 of its rates. The factor holds through every
    # run's pacing (it was once set at the start only, and each block's pacing undid it:
    # 3,998 vs 3,997 IOPS, PASS)
    done, checks = _run(tmp_path, ENCRYPTION, *BLOCKS, RELAXED, "--emulate-device-factor=0.9")
    assert done.returncode == 1, done.stdout[-3000:]
    iops = checks[0]
    assert iops["outcome"] == "fail", iops["message"]
    assert 0.85 <= iops["measured"]["value"] <= 0.95, iops["message"]
    assert "within 5 % required" in iops["message"]


@needs_root
@needs_fio
def test_when_nothing_says_which_twin_is_encrypted_the_check_is_inconclusive_unmeasured(
        tmp_path: Path) -> None:
    done, checks = _run(tmp_path, ENCRYPTION, "--volume-encrypted=yes")
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 inconclusive" in done.stdout
    (check,) = checks
    assert check["outcome"] == "inconclusive"
    assert "pass --reference-encrypted=yes|no" in check["message"]
    assert "Nothing was measured" in check["message"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["measurements"] == []


def test_twin_facts_decide_the_encryption_pair() -> None:
    def facts(dev: bool | None, ref: bool | None, rtype: str | None = "io1"
              ) -> twins.TwinFacts:
        return twins.TwinFacts("/dev/a", "/dev/b", twins.Fact("io1", "given"),
                               twins.Fact(rtype, "given"), twins.Fact(dev, "discovered"),
                               twins.Fact(ref, "given"))

    ok = twins.encryption_pair(facts(True, False))
    assert ok.status == "ok" and ok.encrypted == "device"
    assert twins.encryption_pair(facts(False, True)).encrypted == "reference"
    assert twins.encryption_pair(facts(None, False)).status == "unknown"
    assert "--volume-encrypted=yes|no" in twins.encryption_pair(facts(None, False)).sentence
    both = twins.encryption_pair(facts(True, True))
    assert both.status == "contradiction" and "both encrypted" in both.sentence
    other = twins.encryption_pair(facts(True, False, "standard"))
    assert other.status == "other" and "S0-08" in other.sentence
    marked = twins.emulated_facts(Volume("io1"), "a", "b", reference_type=None,
                                  device_encrypted=None, reference_encrypted=None,
                                  type_source="emulated")
    assert twins.encryption_pair(marked).encrypted == "device"


def test_the_magnetic_pair_needs_a_standard_reference() -> None:
    def facts(rtype: str | None) -> twins.TwinFacts:
        unknown = twins.Fact(None, "")
        return twins.TwinFacts("/dev/a", "/dev/b", twins.Fact("gp2", "given"),
                               twins.Fact(rtype, "given"), unknown, unknown)

    assert twins.type_pair(facts("standard"), "standard", "S0-08").status == "ok"
    said = twins.type_pair(facts(None), "standard", "S0-08")
    assert said.status == "other" and "--reference-volume-type=standard" in said.sentence
    assert twins.type_pair(facts("gp2"), "standard", "S0-08").status == "other"


@needs_root
@needs_fio
def test_s2_09_is_the_claim_a_1000_gib_gp2_is_checked_against(tmp_path: Path) -> None:
    """S2-09 (seed 002's 1 TB gp2: 3,000 IOPS) is cited where it is measured."""
    done, checks = _run(tmp_path, f"{ROOT}/suites/gp2/test_gp2.py::"
                        "test_random_read_bursts_to_3000_iops", "--volume-type=gp2",
                        "--volume-size=1000", "--ebsperf-runtime=3",
                        "--ebsperf-miss-spell=1")  # a 3 s count that can FAIL: its PASS counts
    assert done.returncode == 0, done.stdout[-3000:]
    (check,) = checks
    assert check["claim"] == "S2-09" and check["outcome"] == "pass", check["message"]
    assert check["expected"]["value"] == 3000
    assert "gp2 1 TB baseline" in check["what"]
