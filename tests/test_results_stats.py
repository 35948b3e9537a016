"""The statistics behind "statistically clear": Student t, Welch, autocorrelation, intervals.

Reference values are closed forms of the t distribution (df = 1 is the Cauchy distribution,
df = 2 has an elementary CDF) and the normal limit, not numbers copied from a library.
"""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf.results import stats


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 12.706, 100.0])
def test_the_t_tail_with_one_degree_of_freedom_is_the_cauchy_tail(t: float) -> None:
    assert stats.t_two_sided_p(t, 1) == pytest.approx(1 - 2 / math.pi * math.atan(t), rel=1e-9)


@pytest.mark.parametrize("t", [0.1, 1.5, 4.303, 30.0])
def test_the_t_tail_with_two_degrees_of_freedom_has_its_closed_form(t: float) -> None:
    assert stats.t_two_sided_p(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-9)


def test_with_infinite_degrees_of_freedom_the_t_tail_is_the_normal_tail() -> None:
    assert stats.t_two_sided_p(1.959964, math.inf) == pytest.approx(0.05, rel=1e-5)


@pytest.mark.parametrize("df", [1, 2, 5, 30])
def test_the_quantile_inverts_the_tail(df: int) -> None:
    q = stats.t_quantile(0.995, df)
    assert stats.t_two_sided_p(q, df) == pytest.approx(0.01, rel=1e-6)


def test_welch_finds_a_clear_drop_between_two_quiet_runs() -> None:
    before = stats.summarize([4003.0, 3999.0, 4001.0, 3998.0])
    now = stats.summarize([3402.0, 3398.0, 3401.0])
    test = stats.welch(now, before)
    assert test is not None and test.p < 1e-6
    assert test.diff == pytest.approx(now.mean - before.mean)


def test_welch_does_not_call_a_difference_inside_the_noise_clear() -> None:
    before = stats.summarize([3000.0, 4200.0, 3500.0, 4400.0, 2900.0])
    now = stats.summarize([3100.0, 3900.0, 3300.0, 4100.0, 2800.0])
    test = stats.welch(now, before)
    assert test is not None and test.p > 0.3


def test_welch_needs_two_samples_on_each_side_and_the_pooled_test_steps_in() -> None:
    one = stats.summarize([3400.0])
    many = stats.summarize([4000.0, 4004.0, 3996.0])
    assert stats.welch(one, many) is None
    pooled = stats.pooled(one, many)
    assert pooled is not None and pooled.p < 1e-4 and "Student" in pooled.name
    assert stats.t_test(one, many) == pooled
    assert stats.t_test(one, stats.summarize([4000.0])) is None


def test_two_constant_runs_differ_clearly_or_not_at_all() -> None:
    a, b = stats.summarize([2611.0] * 3), stats.summarize([2611.0] * 3)
    test = stats.welch(a, b)
    assert test is not None and test.p == 1.0
    different = stats.welch(stats.summarize([2600.0] * 3), b)
    assert different is not None and different.p == 0.0


def test_autocorrelated_samples_count_as_fewer_independent_ones() -> None:
    trend = [4000.0 + 10 * i for i in range(20)]  # a slow drift: each second like the last
    summary = stats.summarize(trend)
    assert summary.lag1 > 0.5
    assert summary.n_eff < summary.n / 3
    assert summary.se > summary.sd / math.sqrt(summary.n)


def test_short_runs_are_not_corrected_for_autocorrelation() -> None:
    assert stats.lag1_autocorrelation([1.0, 2.0, 3.0]) == 0.0


def test_the_relative_change_interval_contains_the_change_and_narrows_with_less_noise() -> None:
    before = stats.summarize([4000.0, 4010.0, 3990.0, 4005.0])
    quiet = stats.summarize([3400.0, 3402.0, 3398.0, 3401.0])
    noisy = stats.summarize([3000.0, 3800.0, 3200.0, 3600.0])
    q = stats.relative_change(quiet, before, stats.t_test(quiet, before))
    n = stats.relative_change(noisy, before, stats.t_test(noisy, before))
    assert q is not None and n is not None
    assert q.low < q.change < q.high
    assert q.change == pytest.approx(quiet.mean / before.mean - 1)
    assert (q.high - q.low) < (n.high - n.low)


def test_no_ratio_against_a_zero_baseline() -> None:
    zero = stats.summarize([0.0, 0.0])
    assert stats.relative_change(stats.summarize([1.0, 2.0]), zero, None) is None
