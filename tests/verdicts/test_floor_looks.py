"""A FLOOR's early looks allow for a drift of the level over the planned seconds (issue:
verdicts that are evidence): the first seconds of a run whose level rises by up to 20 % sit
below the whole run's mean, and an early look that took them for the mean FAILed a volume at
its bar (2.2 x the level in bench_oc's drift cell). A real shortfall still FAILs at the first
look."""

from __future__ import annotations

import random

import pytest

from pytest_ebsperf.awsmodel.types import FLOOR, Expectation
from pytest_ebsperf.verdicts import evidence, lower, stop_rule
from pytest_ebsperf.verdicts.verdict import lower_check

PLANNED = 60
FLOOR_1000 = Expectation("B-IS", "random read 4 KiB", FLOOR, 1000.0, "IOPS", None, low=0.9,
                         high=None)
POLICY = evidence.Policy.for_run(1e-3, 5)


def _drifting(mean: float, drift: float, seed: int = 1) -> list[float]:
    """``PLANNED`` seconds around ``mean`` rising linearly by ``drift`` (1 % noise)."""
    rng = random.Random(seed)
    return [mean * (1.0 + drift * (t / (PLANNED - 1) - 0.5)) * rng.gauss(1.0, 0.01)
            for t in range(PLANNED)]


def _first_stop(values: list[float]) -> tuple[int, str | None]:
    for n in range(1, len(values) + 1):
        said = stop_rule.settled(values[:n], FLOOR_1000, POLICY, planned=PLANNED)
        if said:
            return n, said
    return len(values), None


def test_the_allowance_is_the_drift_s_offset_of_the_seconds_seen() -> None:
    assert lower.drift_allowance(PLANNED, PLANNED) == 0.0
    assert lower.drift_allowance(10, None) == 0.0
    # the first 15 of 60 seconds of a +20 % drift average 7.6 % below the run's mean
    seconds = _drifting(900.0, lower.DRIFT)
    first = sum(seconds[:15]) / 15 / (sum(seconds) / PLANNED)
    assert 1.0 - first == pytest.approx(lower.drift_allowance(15, PLANNED), abs=0.01)


def _stepping(mean: float, first: float, seed: int = 2) -> list[float]:
    """``PLANNED`` seconds whose mean is ``mean``: the first 20 at ``first`` x ``mean``, the
    rest as much above it as makes up for them (1 % noise): a neighbour's load easing."""
    rng = random.Random(seed)
    rest = (PLANNED - 20 * first) / (PLANNED - 20)
    return [mean * (first if t < 20 else rest) * rng.gauss(1.0, 0.01) for t in range(PLANNED)]


def test_a_volume_at_its_bar_whose_level_rises_is_not_failed_at_an_early_look() -> None:
    # the run's mean sits on the threshold (90 % of 1,000): no FAIL is due, but its first
    # 20 s are 7 % lower, which an early look without the allowance takes as a shortfall
    seconds = _stepping(900.0, 0.93)
    early = seconds[:15]
    assert lower_check(early, FLOOR_1000, POLICY).state == evidence.FAIL  # as if complete
    assert lower_check(early, FLOOR_1000, POLICY, planned=PLANNED).state == evidence.OPEN
    n, said = _first_stop(seconds)
    assert said is None and n == PLANNED
    assert lower_check(seconds, FLOOR_1000, POLICY, planned=PLANNED).state != evidence.FAIL


def test_a_volume_at_its_bar_whose_level_falls_is_not_passed_early() -> None:
    # the mirror image: first seconds above the run's mean are no early PASS of a mean that
    # ends on the threshold
    seconds = _stepping(900.0, 1.07)
    assert lower_check(seconds[:15], FLOOR_1000, POLICY).state == evidence.PASS
    assert lower_check(seconds[:15], FLOOR_1000, POLICY, planned=PLANNED).state == \
        evidence.OPEN
    assert _first_stop(seconds) == (PLANNED, None)


@pytest.mark.parametrize("share", [0.70, 0.75, 0.80])
def test_a_real_shortfall_fails_at_the_look_it_did_without_the_allowance(
        share: float, monkeypatch: pytest.MonkeyPatch) -> None:
    seconds = _drifting(1000.0 * share, 0.0)
    n, said = _first_stop(seconds)
    assert n in evidence.mean_looks(PLANNED) and n < PLANNED
    assert said is not None and "below" in said
    assert lower_check(seconds[:n], FLOOR_1000, POLICY, planned=PLANNED).state == \
        evidence.FAIL
    monkeypatch.setattr(lower, "DRIFT", 0.0)
    assert _first_stop(seconds)[0] == n
