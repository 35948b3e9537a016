"""Misses in spells (B-SLA): a first look's shortfall is confirmed by looks after pauses
longer than a spell; emulated volumes that miss in spells or at fixed seconds.

The statistics are checked against the chain's exact distributions; the end-to-end tests run
real fio on kernel-throttled loop devices whose throttle a thread lowers in missed seconds.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import needs_fio, needs_root
from pytest_ebsperf import evidence, verdict
from pytest_ebsperf.emulate import misses
from pytest_ebsperf.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent
IO1_READ = (f"{ROOT}/suites/io1/test_io1.py::"
            "test_random_read_holds_provisioned_iops_999_percent_of_seconds")
ALPHA = 0.001 / 40


# -- the statistics ------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.001, 0.01])
@pytest.mark.parametrize("planned", [5, 10, 30, 60, 300, 3600])
def test_the_looks_false_alarm_stays_within_half_the_checks_level(p: float, planned: int):
    plan = evidence.plan_looks(planned, p, ALPHA, 3.0)
    assert plan is not None
    assert plan.false_alarm <= ALPHA / 2
    assert plan.first_critical <= plan.robust_critical
    assert plan.gap_s == 15  # five mean spells of 3 s
    # what a slow volume (every second missed) needs: fewer seconds than the robust test,
    # which a short check cannot even reach (only the looks can fail it then)
    looked = plan.first_critical + 1 + plan.looks * plan.windows
    assert looked < plan.robust_critical + 1 or plan.robust_critical > planned


def test_a_chain_started_at_its_stationary_rate_has_the_stationary_tail():
    for k, n in ((2, 10), (5, 60), (12, 60)):
        assert evidence.chain_tail_from(k, n, 0.01, 3.0, 0.01) == pytest.approx(
            evidence.miss_tail(k, n, 0.01, 3.0), rel=1e-9)


def test_a_pause_makes_the_spell_forgotten_and_the_worst_start_is_a_miss():
    p = 0.001
    assert evidence.miss_after_gap(p, 3.0, 0) == pytest.approx(1 - 1 / 3, rel=0.01)
    assert evidence.miss_after_gap(p, 3.0, 15) < 2.6e-3  # p + (2/3) ** 16
    high = evidence.chain_tail_from(2, 3, p, 3.0, evidence.miss_after_gap(p, 3.0, 15))
    low = evidence.chain_tail_from(2, 3, p, 3.0, p)
    assert high >= low


def test_independent_misses_need_no_looks():
    assert evidence.plan_looks(60, 0.001, ALPHA, 1.0) is None


def _series(missed: set[int], n: int = 60) -> list[float]:
    return [2000.0 if i in missed else 4000.0 for i in range(n)]


def test_a_stretch_of_misses_is_a_suspicion_many_are_a_failure_and_none_a_pass():
    stretch = evidence.spell_tests(_series({3, 4, 5, 6, 7}), 3600, 0.999, alpha=ALPHA,
                                   planned=60, spell=3.0)
    assert stretch.state == evidence.SUSPECT
    assert stretch.plan is not None and stretch.plan.looks >= 1
    level = evidence.spell_tests(_series(set(range(40))), 3600, 0.999, alpha=ALPHA,
                                 planned=60, spell=3.0)
    assert level.state == evidence.FAIL and level.test.spell == 3.0
    clean = evidence.spell_tests(_series(set()), 3600, 0.999, alpha=ALPHA, spell=3.0)
    assert clean.state == evidence.PASS
    # the looks did not confirm: only the robust test is left, and 5 misses pass it
    spent = evidence.spell_tests(_series({3, 4, 5, 6, 7}), 3600, 0.999, alpha=ALPHA,
                                 planned=60, spell=3.0, first_spent=True)
    assert spent.state == evidence.PASS
    alone = evidence.spell_tests(_series({3, 4, 5, 6, 7}), 3600, 0.999, alpha=ALPHA,
                                 planned=60, spell=1.0)
    assert alone.state == evidence.FAIL  # independent seconds: the one test decides


def test_the_procedure_keeps_its_bound_on_simulated_volumes():
    """Monte Carlo of the whole procedure (first look, pauses, looks, resumed run) on
    compliant volumes missing at the SLA's 1 % in 3 s spells: false FAILs at most at the
    bound (20,000 checks: none expected), slow volumes fail within 20 s of fio."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_verdicts as bench
    finally:
        sys.path.pop(0)
    rng = random.Random(5)
    plan = evidence.plan_looks(60, 0.01, bench.ALPHA, 3.0)
    outcomes = [bench._with_looks(bench._Chain(rng, 0.01, 3.0, 1.0), 0.99, plan)[0]
                for _ in range(20_000)]
    assert outcomes.count("fail") <= 2
    slow = [bench._with_looks(bench._Chain(rng, 0.0, 1.0, 0.75), 0.99, plan)
            for _ in range(200)]
    assert all(v == "fail" for v, _, _ in slow)
    assert max(fio for _, fio, _ in slow) <= 20


# -- offline: a suspicion without looks is inconclusive ----------------------------------
def test_judged_without_a_runner_a_suspicion_says_what_would_settle_it():
    from test_verdict import cap, run, workload

    values = [v / 2 for v in _series({3, 4, 5, 6, 7})]  # a 2,000 IOPS io1 missing 5 s
    found = verdict.judge_cap(cap(), run(values, p5_ns=5e6), workload(), cpu_count=4,
                              policy=evidence.Policy(ALPHA, 3.0))
    assert found.outcome.value == "inconclusive"
    assert found.binding == "second look"
    assert "1 look(s) of 3 s after pauses of 15 s" in found.message
    assert "--ebsperf-miss-spell=1" in found.message
    confirmed = verdict.judge_cap(cap(), run(values, p5_ns=5e6), workload(), cpu_count=4,
                                  policy=evidence.Policy(ALPHA, 3.0), looks=[(3, 3)])
    assert confirmed.outcome.value == "fail"
    assert "missed again in 3 of 3 s" in confirmed.message
    assert confirmed.details["looks"] == [{"misses": 3, "seconds": 3}]


# -- emulated misses -------------------------------------------------------------------------
@pytest.mark.parametrize("text, said", [
    ("2", r"not RATE\[,SPELL_S\]"), ("0.01,0.5", r"not RATE\[,SPELL_S\]"),
    ("abc", r"not RATE\[,SPELL_S\]"), ("dip:5", "not a span of seconds"),
    ("dip:6-3", "not a span of seconds"), ("0.9,1.05", "cannot come in spells")])
def test_a_bad_misses_option_gets_a_sentence(text: str, said: str):
    with pytest.raises(ConfigError, match=said):
        misses.parse(text)


def test_the_misses_option_reads_rates_spells_and_dips():
    assert misses.parse(None) is None and misses.parse("none") is None
    assert misses.parse("0.001,3") == misses.MissPlan(rate=0.001, spell=3.0)
    assert misses.parse("dip:3-6,20-22").dips == ((3.0, 6.0), (20.0, 22.0))


class _Scale:
    def __init__(self) -> None:
        self.scales: list[float] = []

    def set_scale(self, scale: float) -> None:
        self.scales.append(scale)


def test_the_emulated_chain_misses_at_its_rate_in_spells_of_its_length():
    driver = misses.MissDriver(_Scale(), misses.MissPlan(rate=0.05, spell=3.0), seed=3)
    seconds = [driver.missing(i) for i in range(200_000)]
    rate = sum(seconds) / len(seconds)
    spells = sum(1 for i in range(1, len(seconds)) if seconds[i] and not seconds[i - 1])
    assert rate == pytest.approx(0.05, rel=0.05)
    assert sum(seconds) / spells == pytest.approx(3.0, rel=0.05)


def test_a_dip_misses_exactly_its_seconds():
    driver = misses.MissDriver(_Scale(), misses.parse("dip:3-6"))
    assert [s for s in range(10) if driver.missing(s)] == [3, 4, 5]


# -- end to end ------------------------------------------------------------------------------
def _run(tmp_path: Path, *args: str) -> dict:
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pytest", IO1_READ, "-p", "no:cacheprovider",
                           "--emulate", f"--ebsperf-report={report}", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)
    assert report.exists(), done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(report.read_text())["checks"][0]


@needs_root
@needs_fio
def test_a_compliant_volume_with_one_slow_stretch_passes_after_a_look(tmp_path: Path):
    # a 4 s dip to 50-80 % right after the ramp: the first look suspects, a look 15 s later
    # sees the volume at its rate, and the rest of the check passes under the spell test
    check = _run(tmp_path, "--emulate-misses=dip:3-7", "--ebsperf-runtime=30")
    assert check["outcome"] == "pass", check["message"]
    assert check["details"]["first_look"]["misses"] >= 2
    assert check["details"]["looks"] == [{"misses": 0, "seconds": 2}]
    assert "taken as a spell" in check["message"]
    assert "QD" not in check["message"].split("Claim")[0]  # no queue depth was blamed


@needs_root
@needs_fio
def test_a_volume_slow_for_good_fails_once_the_look_confirms(tmp_path: Path):
    check = _run(tmp_path, "--emulate-misses=dip:3-100", "--ebsperf-runtime=30")
    assert check["outcome"] == "fail", check["message"]
    looks = check["details"]["looks"]
    assert looks and all(look["misses"] >= 1 for look in looks)
    assert "after pauses of 15 s" in check["message"].lower()
    fio_seconds = check["details"]["samples"] + sum(look["seconds"] for look in looks)
    assert fio_seconds <= 20
