"""The live stop and the verdict count the same seconds (issue: a PASS is evidence): a run
stopped at a look on fio's live reports whose logged seconds do not settle the verdict goes
on for the seconds it was planned for, and both parts are judged as one run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pytest_ebsperf.awsmodel.types import FLOOR, Expectation, Limit
from pytest_ebsperf.checks.rates import RateChecks
from pytest_ebsperf.fio.live import LiveSeries
from pytest_ebsperf.fio.result import DirectionStats, FioResult, Series
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import evidence, verdict
from pytest_ebsperf.verdicts.outcome import Outcome

LIMIT = Limit("i4i.large published 4 KiB random IOPS", "instance", 27500.0, "B-IS", "")
FLOOR_IS = Expectation("B-IS", "instance store random write 4 KiB", FLOOR, 27500.0, "IOPS",
                       LIMIT, (LIMIT,), low=0.9, high=None)
POLICY = evidence.Policy.for_run(1e-3, 53, spell=3.0)


def _result(logged: list[float], live: list[float] | None = None) -> FioResult:
    series = Series(tuple(float(i + 1) for i in range(len(logged))), tuple(logged))
    result = FioResult(fio_version="fio-3.33",
                       write=DirectionStats(iops=sum(logged) / len(logged)),
                       read=DirectionStats(), series={"total_iops": series})
    if live is None:
        return result
    from dataclasses import replace
    return replace(result, live=LiveSeries(iops=list(live), window_s=[1.0] * len(live)),
                   stop_reason="the mean of 15 s is above 24,750 IOPS beyond its noise "
                               "(an early look)")


def _checks(rest: FioResult) -> tuple[RateChecks, list[Workload]]:
    ran: list[Workload] = []

    def run(workload: Workload, monitor: Any = None) -> FioResult:
        ran.append(workload)
        return rest

    core = SimpleNamespace(session=SimpleNamespace(policy=POLICY, cpu_count=2), run=run,
                           _plain_progress=lambda workload: None)
    return RateChecks(core), ran  # type: ignore[arg-type]


# 15 steady live seconds (what the stop saw), and fio's logs of the same seconds, split by
# late reports into dips and spikes about the same mean
LIVE = [27540.0] * 15
LOGGED = [27540.0 + (-5000.0 if i % 3 == 0 else 2500.0) for i in range(15)]
WORKLOAD = Workload(pattern="randwrite", bs=4096, iodepth=50, runtime_s=30.0)


def test_the_stop_holds_on_the_live_seconds_but_not_on_the_logged_ones() -> None:
    """The premise, on the project's own rules: the stop fires on the live seconds at the
    15 s look of 30, and the verdict on fio's logs of those seconds cannot tell (B-IS)."""
    from pytest_ebsperf.verdicts import stop_rule

    assert stop_rule.settled(LIVE, FLOOR_IS, POLICY, planned=30) is not None
    first = verdict.judge(FLOOR_IS, _result(LOGGED, LIVE), WORKLOAD, cpu_count=2,
                          policy=POLICY)
    assert first.outcome is Outcome.INCONCLUSIVE, first.message


def test_a_stop_the_logs_do_not_confirm_goes_on_for_the_planned_seconds() -> None:
    steady = [27400.0 + 50.0 * (i % 3) for i in range(15)]
    checks, ran = _checks(_result(steady))
    first = verdict.judge(FLOOR_IS, _result(LOGGED, LIVE), WORKLOAD, cpu_count=2,
                          policy=POLICY)
    found, _ = checks._go_on(first, FLOOR_IS, WORKLOAD, "iops", _result(LOGGED, LIVE))
    # one more run, for the 15 s left of the 30 planned, judged with the first 15 as one
    assert [w.runtime_s for w in ran] == [15.0]
    assert found.outcome is Outcome.PASS, found.message
    assert found.details["samples"] == 30
    assert found.details["first_part"]["samples"] == 15
    assert found.details["first_part"]["planned"] == 30
    assert "its logs of those seconds did not" in found.message


def test_a_stop_the_logs_confirm_is_kept_and_nothing_runs_again() -> None:
    checks, ran = _checks(_result([27500.0] * 15))
    confirmed = _result([27540.0 + 20.0 * (i % 2) for i in range(15)], LIVE)
    first = verdict.judge(FLOOR_IS, confirmed, WORKLOAD, cpu_count=2, policy=POLICY)
    assert first.outcome is Outcome.PASS, first.message
    found, _ = checks._go_on(first, FLOOR_IS, WORKLOAD, "iops", confirmed)
    assert found is first and ran == []
    # a run that was not stopped early is its own verdict, whatever it says
    whole = _result(LOGGED)
    undecided = verdict.judge(FLOOR_IS, whole, WORKLOAD, cpu_count=2, policy=POLICY)
    kept, _ = checks._go_on(undecided, FLOOR_IS, WORKLOAD, "iops", whole)
    assert kept is undecided and ran == []
