"""End to end: the credit suites with real fio on emulated volumes whose bucket a controller runs
(needs root), and their skip reasons on a real device.

Time scales are chosen so each check takes seconds: at 200 a full 100 GiB gp2 bursts 10 s.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.common import (
    SUITES,
    fio_descendants,
    interrupt_once_fio_runs,
    needs_fio,
    needs_root,
    run_on_a_terminal,
)

pytestmark = [needs_root, needs_fio]

GP2 = SUITES / "gp2" / "test_gp2_credits.py"
DURATION = f"{GP2}::test_a_burst_lasts_balance_over_burst_minus_baseline"
NO_KNEE = f"{GP2}::test_volumes_of_1000_gib_or_more_have_no_knee"
AFTER_KNEE = f"{GP2}::test_after_the_knee_the_volume_holds_its_baseline"
ST1_DURATION = (f"{SUITES}/st1/test_st1_credits.py::"
                "test_a_burst_lasts_balance_over_burst_minus_baseline")
EMPTY_BASELINE = (f"{SUITES}/gp2/test_gp2.py::"
                  "test_empty_bucket_holds_the_3_iops_per_gib_baseline")
FAST = ("--emulate", "--emulate-timescale=200", "-p", "no:cacheprovider")
ROWS_HOOK = """
import json
def pytest_ebsperf_report_rows(rows, config):
    with open("rows.json", "w") as handle:
        json.dump(rows, handle)
"""


def rows(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((pytester.path / "rows.json").read_text())
    return found


def leftovers() -> list[str]:
    """Loop devices, throttle cgroups and fio processes of emulated runs of dead processes."""
    out = subprocess.run(["losetup", "-a"], check=False, capture_output=True,
                         text=True).stdout
    left = [line for line in out.splitlines() if "/run/ebsperf/" in line
            and not Path(f"/proc/{line.split('/run/ebsperf/')[1].split('-')[0]}").exists()]
    for root in ("/sys/fs/cgroup/blkio", "/sys/fs/cgroup"):
        if os.path.isdir(root):
            for name in os.listdir(root):
                match = re.fullmatch(r"ebsperf-[A-Za-z0-9_-]+-(\d+)-\d+", name)
                if match and not Path(f"/proc/{match.group(1)}").exists():
                    left.append(f"{root}/{name}")
    return left


def test_a_gp2_whose_bucket_holds_what_the_model_says_passes_with_a_plot(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(rows_hook=ROWS_HOOK)  # the suite is not below pytester's conftest
    result = pytester.runpytest_subprocess(DURATION, *FAST, "-p", "rows_hook")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*S0-11*gp2 burst duration*10 s*PASS*burst credits*"])
    (row,) = rows(pytester)
    assert abs(row["measured_value"] - row["expected_value"]) <= row["details"]["slack_s"]
    assert any("assumed a full bucket" in note for note in row["notes"])
    plot = Path(row["plot"])
    assert plot.parent == pytester.path / "ebsperf-results" / "plots"
    assert plot.read_bytes()[:4] == b"\x89PNG"


def _judged_again(pytester: pytest.Pytester, said: str = "judged again by its own test"
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The check in results.json and ``ebsperf judge`` of the folder it kept, given nothing
    but the folder (the verdict of its claim whose notes say ``said``)."""
    (live,) = json.loads((pytester.path / "results.json").read_text())["checks"]
    done = subprocess.run([sys.executable, "-m", "pytest_ebsperf", "judge",
                           str(pytester.path / "kept"), "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    judged = json.loads(done.stdout)
    assert judged["refused"] == [], judged
    timed = [v for v in judged["verdicts"]
             if v["claim"] == live["claim"] and any(said in n for n in v["notes"])]
    assert len(timed) == 1, judged["verdicts"]
    return live, timed[0]


def test_a_bucket_30_percent_smaller_than_claimed_fails_with_both_knee_times(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(DURATION, *FAST, "--emulate-bucket-factor=0.7",
                                           "--ebsperf-plots=none", "--ebsperf-keep-fio=kept",
                                           "--ebsperf-report=results.json")
    result.assert_outcomes(failed=1)
    # judge times the kept run's knee again from its logs and the bucket its check recorded
    live, again = _judged_again(pytester)
    assert (again["claim"], again["outcome"]) == (live["claim"], live["outcome"]) == \
        ("S0-11", "fail")
    assert again["measured"] == pytest.approx(live["measured"]["value"], abs=1e-6)
    assert again["expected"] == pytest.approx(live["expected"]["value"], abs=1e-6)
    # 0.7 x 10 s: the knee comes about 3 s early, outside the 1 s tolerance (a busy host
    # that paced the burst low moves both times: the knee is timed at the level it ran at)
    result.stdout.fnmatch_lines([
        ("*gp2 burst duration, random read 16 KiB: * s measured, * s expected (-*"
         "Credits consumed above the baseline:*Emulated bucket at time scale 200:*"
         "on a real volume. Claim S0-11*")])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_the_baseline_after_the_knee_can_fail_and_is_judged_again_on_its_seconds(
        pytester: pytest.Pytester) -> None:
    # S0-12: the bucket drained, then the baseline held long enough for the duty cycle's
    # count to FAIL at the run's level (a PASS on fewer seconds could not have failed); the
    # kept run is judged again on the seconds after the knee its check found, not on the
    # burst before it
    pytester.runpytest_subprocess(AFTER_KNEE, *FAST, "--ebsperf-plots=none",
                                  "--ebsperf-keep-fio=kept", "--ebsperf-report=results.json")
    live, again = _judged_again(pytester, "per-second figures from")
    details = live["details"]
    assert details["critical_misses"] <= details["planned_samples"], details
    assert again["claim"] == live["claim"] == "S0-12"
    assert again["measured"] == pytest.approx(live["measured"]["value"], rel=1e-9)
    # (beside other workers a live check may be undecided for the host's sake, which a
    # report cannot show: a decided one is compared)
    if live["outcome"] in ("pass", "fail"):
        assert again["outcome"] == live["outcome"], (again["message"], live["message"])


def test_a_bucket_that_starts_empty_is_no_credits_at_start_not_a_broken_volume(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(DURATION, *FAST, "--emulate-burst-balance=0",
                                           "--ebsperf-plots=none", "-rs")
    assert result.ret == 0 and result.parseoutcomes().get("inconclusive") == 1
    result.stdout.fnmatch_lines([("*no credits at start: burst level 3,000 IOPS never reached "
                                  "(ran at *, baseline 300 IOPS)*says nothing against "
                                  "the volume*")])
    ran = re.search(r"\(ran at ([\d,]+) IOPS, baseline 300 IOPS\)", result.stdout.str())
    assert ran and 270 <= int(ran.group(1).replace(",", "")) <= 360  # the baseline, +-10 %


def test_the_empty_bucket_baseline_check_runs_on_an_emulated_volume(
        pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(EMPTY_BASELINE, "--emulate", "--burst-balance=0",
                                           "--ebsperf-runtime=3", "--ebsperf-miss-spell=1",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*S0-12*300 IOPS*PASS*"])


HOLDING_ALONE = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_an_empty_bucket_earns_nothing_while_its_check_waits_for_a_comparison(
        pytester: pytest.Pytester) -> None:
    # another worker's comparison holds the host alone for 12 s as the check starts: the
    # check waits for it before its emulated bucket is born, so the bucket is as empty as the
    # model says when fio runs (born first, it earned 12 s x 300 credits, more than a
    # second of burst, and ran 3 s at 2,724 IOPS against the 300 IOPS baseline)
    from pytest_ebsperf.device import lock

    holder = subprocess.Popen([sys.executable, "-c", HOLDING_ALONE,
                               str(lock._measuring_path(lock.MEASURING_LOCK)), "12"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        result = pytester.runpytest_subprocess(EMPTY_BASELINE, "--emulate",
                                               "--burst-balance=0", "--ebsperf-runtime=3",
                                               "--ebsperf-miss-spell=1", "-p",
                                               "no:cacheprovider")
    finally:
        holder.kill()
        holder.wait()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*S0-12*300 IOPS*PASS*"])


def test_a_gp2_of_1000_gib_holds_its_baseline_with_no_knee(pytester: pytest.Pytester) -> None:
    # a full bucket's time at 1/100 (18 s), not at 1/400: that left the check the 11 s its
    # count needs to decide, so one second the emulator fell behind beside the other tests
    # (the host's, left out) made it INCONCLUSIVE with 10 clean seconds of 3,000 IOPS
    result = pytester.runpytest_subprocess(str(GP2), "--emulate", "--volume-size=1000",
                                           "--emulate-timescale=100", "--ebsperf-plots=none",
                                           "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(["*S2-11*3,000 IOPS*PASS*",
                                 "*this gp2 1,000 GiB runs at 3,000 IOPS with or without credits*"])


def test_an_st1_bucket_is_timed_in_mib_per_second(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(ST1_DURATION, "--emulate", "--emulate-timescale=500",
                                           "--ebsperf-plots=none", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*B-HDD*st1 burst duration*PASS*burst credits*"])


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_long_checks_on_a_real_device_skip_with_their_duration(
        pytester: pytest.Pytester, loop_device: Callable[..., str]) -> None:
    device = loop_device(64)
    result = pytester.runpytest_subprocess(str(GP2), f"--device={device}", "--volume-type=gp2",
                                           "--volume-size=500", "--ebsperf-no-discovery",
                                           "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=4)
    # 500 GiB: 5.4 M / (3,000 - 1,500) = 3,600 s of burst, plus tolerance and a look after it
    result.stdout.fnmatch_lines([
        "*timing the burst needs about 4,140 s on this gp2 500 GiB; pass --ebsperf-long.",
        ("*draining the bucket and holding the baseline needs about * s on this gp2 500 GiB; "
         "pass --ebsperf-long."),
        ("*emptying the bucket, idling and timing the burst the idle time bought needs about "
         "* s on this gp2 500 GiB; pass --ebsperf-long."),
        "*this claim is about gp2 volumes of 1,000 GiB or more*"])


def test_the_ledger_follows_the_emulated_bucket_across_checks(pytester: pytest.Pytester
                                                              ) -> None:
    pytester.makepyfile(test_ledger="""
        import pytest

        pytestmark = pytest.mark.ebsperf(volume_type="gp2")

        def test_two_burst_checks_then_compare(ebsperf):
            for _ in range(2):
                ebsperf.run(ebsperf.workload("randread", "16k"))
            book = ebsperf.session.credits
            controller = book.controller(ebsperf.target.emulated)
            ledger = book.ledger(ebsperf.volume)
            print(f"LEDGER {ledger.at(book.clock()):.0f} BUCKET {controller.balance:.0f}")
    """)
    result = pytester.runpytest_subprocess("--emulate", "--emulate-timescale=100", "-s",
                                           "--ebsperf-runtime=3", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    match = re.search(r"LEDGER (\d+) BUCKET (\d+)", result.stdout.str())
    assert match, result.stdout.str()
    ledger, bucket = int(match.group(1)), int(match.group(2))
    assert bucket < 54_000 - 2 * 4 * 2_000  # two 4 s runs at burst spent credits
    assert abs(ledger - bucket) < 2_700  # the model knows within a second of burst


def test_the_progress_line_updates_on_a_terminal(tmp_path: Path) -> None:
    returncode, text = run_on_a_terminal(
        [sys.executable, "-m", "pytest", DURATION, "--emulate", "--emulate-timescale=400",
         "--ebsperf-plots=none", "-p", "no:cacheprovider"], tmp_path)
    lines = re.findall(r"ebsperf burst: (\d+) s of ([\d.,]+) s \| ([\d,]+) IOPS \| "
                       r"~[\d,]+ I/O credits left \| (knee in ~\d+ s|at baseline)", text)
    assert returncode == 0, text
    assert len(lines) >= 3
    seconds = [int(line[0]) for line in lines]
    assert seconds == sorted(seconds) and len(seconds) <= int(float(lines[0][1])) + 2
    # The line updates at most once a second, so the last update may fall just before the
    # knee: what must hold is that the countdown advances, ending at or near the knee.
    def remaining(state: str) -> int:
        return 0 if state == "at baseline" else int(re.sub(r"\D", "", state))
    countdown = [remaining(line[3]) for line in lines]
    assert "knee in" in lines[0][3]
    # Up to the knee the countdown only goes down and gets there. After it the bucket is
    # empty, and a second in which fio fell below the baseline (a busy machine: seen in a
    # run beside three other tests) refills it a little: the line may show a knee a few
    # seconds off again, which is the bucket's state, not a fault of the line.
    knee = next((i for i, left in enumerate(countdown) if left <= 1), None)
    assert knee is not None, countdown
    before = countdown[:knee + 1]
    assert before == sorted(before, reverse=True) and before[-1] < before[0], countdown


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_ctrl_c_during_a_knee_check_leaves_no_device_cgroup_thread_or_fio(tmp_path: Path
                                                                          ) -> None:
    before = set(leftovers())
    pid, output = interrupt_once_fio_runs(
        [sys.executable, "-m", "pytest", DURATION, "--emulate", "--emulate-timescale=20",
         "-p", "no:cacheprovider"], tmp_path, settle_s=1.0)
    assert "KeyboardInterrupt" in output or "Interrupted" in output
    assert "Traceback" not in output.split("KeyboardInterrupt")[0]
    assert not fio_descendants(pid)
    assert not list(Path("/run/ebsperf").glob(f"{pid}-*"))
    assert set(leftovers()) <= before
