"""The statistics core: Student t, Welch and batch means, paired blocks, trends.

Reference values are closed forms of the t distribution (df = 1 is the Cauchy distribution,
df = 2 has an elementary CDF) and the normal limit, not numbers copied from a library.
"""

from __future__ import annotations

import math
import random
import statistics

import pytest

from pytest_ebsperf.verdicts import comparison, stats


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


def test_a_series_is_judged_on_ten_blocks_of_consecutive_seconds() -> None:
    assert stats.block_plan(60) == (10, 6)
    assert stats.block_plan(600) == (10, 60)
    assert stats.block_plan(9) == (9, 1)  # under 20 s: single seconds
    series = [float(i % 6) for i in range(60)]  # every block holds 0..5: the same mean
    summary = stats.summarize(series)
    assert (summary.blocks, summary.block_s, summary.df) == (10, 6, 9.0)
    assert summary.se == 0.0  # the blocks agree exactly, whatever the seconds did


def test_a_drift_within_the_run_widens_the_interval_as_the_blocks_see_it() -> None:
    trend = [4000.0 + 10 * i for i in range(60)]  # a slow drift: each second like the last
    summary = stats.summarize(trend)
    means = stats.batch_means(trend)
    assert len(means) == 10
    assert summary.se == pytest.approx(statistics.stdev(means) / math.sqrt(10))
    # far wider than the naive standard error of 60 independent seconds
    assert summary.se > 2 * summary.sd / math.sqrt(summary.n)


def test_batch_means_intervals_hold_their_level_on_autocorrelated_seconds() -> None:
    # AR(1) seconds with phi 0.5: 2,000 series of 60 s, the one-sided 95 % upper bound of
    # the mean must miss the true mean in about 5 % of them (the t interval on the ten
    # blocks' means: 6.9 % in 20,000 series; a naive interval of the 60 seconds misses in
    # about 17 %). docs/verdicts.md has the table for phi 0 to 0.8.
    rng = random.Random(3)
    misses = naive = 0
    trials = 2000
    for _ in range(trials):
        x, series = rng.gauss(0, 1), []
        for _ in range(60):
            x = 0.5 * x + rng.gauss(0, 0.866)
            series.append(100.0 + x)
        summary = stats.summarize(series)
        misses += summary.bounds(0.05)[1] < 100.0
        naive_high = summary.mean + stats.t_quantile(0.95, 59) * summary.sd / math.sqrt(60)
        naive += naive_high < 100.0
    assert 0.03 < misses / trials < 0.095
    assert naive / trials > 0.12


def test_paired_differences_give_one_sided_bounds_on_k_minus_one() -> None:
    d = comparison.paired([0.10, 0.12, 0.08, 0.11])
    assert d.df == 3.0
    assert d.inflation == 1.0  # neighbouring pairs anti-correlated: never narrower
    half = stats.t_quantile(0.999, 3) * d.sd / 2.0
    assert d.lower(0.001) == pytest.approx(d.mean - half)
    assert d.upper(0.001) == pytest.approx(d.mean + half)
    assert d.p_below(0.2) < 0.01 and d.p_above(0.0) < 0.01
    assert comparison.log_ratios([200.0, 100.0], [100.0, 100.0]) == pytest.approx(
        [math.log(2), 0.0])


def test_correlated_neighbouring_pairs_widen_the_interval_as_a_moving_average_would() -> None:
    # pairs in the A B, B A order share a device at their boundary: a slow device spell
    # that spans it moves two neighbouring d's alike
    pairs = [0.10, 0.11, 0.12, 0.12, 0.10, 0.09, 0.09, 0.11]
    d = comparison.paired(pairs)
    r = stats.lag1_correlation(pairs)
    assert r > 0.3
    # the estimate of 8 pairs is biased low by about (1 + 3 r) / 8: corrected
    assert d.inflation == pytest.approx(1.0 + 2.0 * (r + (1 + 3 * r) / 8) * 7 / 8)
    assert d.se == pytest.approx(statistics.stdev(pairs) * math.sqrt(d.inflation / 8))
    plain = stats.t_quantile(0.999, 7) * d.sd / math.sqrt(8)
    assert d.mean - d.lower(0.001) == pytest.approx(plain * math.sqrt(d.inflation))


def test_the_distributions_are_scipys() -> None:
    # scipy.special's functions, as scipy.stats's distributions evaluate them (stats.py loads
    # only scipy.special for a verdict): equal on grids of every argument a verdict uses
    scipy_stats = pytest.importorskip("scipy.stats")
    assert stats.binomial_tail(2, 60, 0.001) == pytest.approx(
        scipy_stats.binom.sf(1, 60, 0.001), rel=1e-12)
    assert stats.chi2_quantile(0.95, 9) == pytest.approx(16.918977, rel=1e-6)
    assert stats.clopper_pearson_upper(0, 60, 0.95) == pytest.approx(1 - 0.05 ** (1 / 60))
    levels = (1e-9, 1e-6, 2.5e-4, 0.001, 0.0125, 0.05, 0.1, 0.5, 0.9, 0.95, 0.999, 1 - 1e-6)
    for df in (1, 2, 3, 5, 9, 15, 31, 59, 299, 3599, math.inf):
        for q in levels:
            want = scipy_stats.norm.ppf(q) if math.isinf(df) else scipy_stats.t.ppf(q, df)
            assert stats.t_quantile(q, df) == pytest.approx(want, rel=1e-9, abs=1e-12)
        for t in (-40.0, -3.0, -0.5, 0.0, 0.7, 2.0, 6.5, 40.0):
            want = scipy_stats.norm.sf(t) if math.isinf(df) else scipy_stats.t.sf(t, df)
            assert stats.t_sf(t, df) == pytest.approx(want, rel=1e-9, abs=1e-300)
    for n in (1, 17, 60, 300, 3600, 86400):
        for p in (1e-6, 0.001, 0.01, 0.1, 0.5):
            for k in sorted({1, 2, n // 100 + 1, n // 10 + 1, n // 2, n}):
                assert stats.binomial_tail(k, n, p) == pytest.approx(
                    scipy_stats.binom.sf(k - 1, n, p), rel=1e-9, abs=1e-300), (k, n, p)
            for x in sorted({0, 1, n // 10, n - 1} - {n}):
                assert stats.clopper_pearson_upper(x, n, 0.95) == pytest.approx(
                    scipy_stats.beta.ppf(0.95, x + 1, n - x), rel=1e-9), (x, n)
    for df in (1, 2, 9, 59, 299):
        for q in levels:
            assert stats.chi2_quantile(q, df) == pytest.approx(
                scipy_stats.chi2.ppf(q, df), rel=1e-9), (q, df)
        for x in (0.0, 0.5, 9.0, 60.0, 400.0):
            assert stats.chi2_cdf(x, df) == pytest.approx(
                scipy_stats.chi2.cdf(x, df), rel=1e-9, abs=1e-300), (x, df)


def test_a_verdict_loads_scipy_special_and_not_scipy_stats() -> None:
    # scipy.stats costs 1.0 s of CPU to load, scipy.special 0.47 s, in every pytest run
    # that judges a check; only a trend (history) needs scipy.stats
    import subprocess
    import sys
    code = ("import sys\nfrom pytest_ebsperf.verdicts import stats\n"
            "stats.t_quantile(0.975, 9); stats.binomial_tail(3, 60, 0.01)\n"
            "stats.clopper_pearson_upper(1, 60, 0.95); stats.chi2_quantile(0.95, 9)\n"
            "print('scipy.special' in sys.modules, 'scipy.stats' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["True", "False"], done.stdout + done.stderr


def test_mann_kendall_finds_a_monotone_trend_and_theil_sen_its_slope() -> None:
    rising = [10.0, 11.0, 12.5, 13.0, 14.2, 15.0, 16.1, 17.0]
    found = stats.trend(rising)
    assert found is not None and found.p_value < 0.001 and found.slope == pytest.approx(1.0, 0.1)
    flat = stats.trend([10.0, 10.2, 9.9, 10.1, 9.8, 10.0, 10.3, 9.9])
    assert flat is not None and flat.p_value > 0.05


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
