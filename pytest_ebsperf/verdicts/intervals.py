"""Intervals for means of seconds: a mean's one-sided bounds that hold under the seconds'
autocorrelation (FLOOR, a CAP's upper tolerance and its least mean, mean latencies), and the
ratio of two series' means (TOST for an offline ``judge``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pytest_ebsperf.verdicts import stats
from pytest_ebsperf.verdicts.evidence import FAIL, OPEN, PASS


@dataclass(frozen=True)
class MeanInterval:
    """One-sided bounds at ``alpha`` for a mean of seconds: from their long-run variance
    (``rho`` allowed for; :func:`stats.long_run_summary`) or from batch means (latencies)."""

    n: int
    mean: float
    low: float
    high: float
    alpha: float
    blocks: int = 0
    block_s: int = 1
    rho: float | None = None
    #: Seconds of a series like this one that would decide (None: not estimated).
    needed_s: int | None = None

    def describe(self) -> str:
        if self.rho is not None:
            return (f"lag-1 correlation taken as {self.rho:.2f}, worth {self.blocks:,} "
                    "independent seconds")
        return (f"{self.blocks} blocks of {self.block_s} s" if self.block_s > 1
                else f"{self.blocks} seconds")


def _interval(summary: stats.SampleSummary, alpha: float) -> MeanInterval:
    low, high = summary.bounds(alpha)
    return MeanInterval(summary.n, summary.mean, low, high, alpha, summary.blocks,
                        summary.block_s, summary.rho)


def mean_interval(values: Sequence[float], alpha: float, *, bar: float | None = None
                  ) -> MeanInterval | None:
    """``low``/``high``: one-sided bounds at level ``1 - alpha`` each for the mean of a
    series of seconds, holding under their autocorrelation (:func:`stats.long_run_summary`);
    None with fewer than two samples. With ``bar``, ``needed_s`` says about how many such
    seconds would put the bound clear of it."""
    if len(values) < 2:
        return None
    summary = stats.long_run_summary(values)
    interval = _interval(summary, alpha)
    if bar is not None:
        interval = replace(interval, needed_s=stats.seconds_to_decide(summary, bar, alpha))
    return interval


def weighted_mean_interval(values: Sequence[float], weights: Sequence[float], alpha: float
                           ) -> MeanInterval | None:
    """The mean of ``values`` weighted by ``weights`` (per-second mean latencies and each
    second's I/Os: the average over every I/O, which is what fio's final report says), with
    one-sided bounds at ``1 - alpha`` each from blocks of consecutive seconds. A second in
    which one slow I/O held the queue has few I/Os and weighs accordingly. None with fewer
    than two weighted samples."""
    summary = stats.weighted_summary(values, weights)
    return None if summary is None else _interval(summary, alpha)


@dataclass(frozen=True)
class RatioInterval:
    """``a / b`` with one-sided bounds at ``alpha`` each."""

    ratio: float
    low: float
    high: float
    alpha: float

    def equivalence(self, max_dev: float) -> str:
        """TOST: PASS when the interval lies within 1 +- max_dev, FAIL when it lies wholly
        outside, OPEN when the samples cannot tell."""
        if 1.0 - max_dev <= self.low and self.high <= 1.0 + max_dev:
            return PASS
        if self.low > 1.0 + max_dev or self.high < 1.0 - max_dev:
            return FAIL
        return OPEN


def ratio_interval(a: Sequence[float], b: Sequence[float], alpha: float
                   ) -> RatioInterval | None:
    """The ratio of two series' means with one-sided bounds at ``alpha`` each (delta method
    on the batch means' standard errors, Welch degrees of freedom). For two measurements
    made one after the other (an offline ``judge``); checks compare in paired blocks. None
    when either series has fewer than two blocks or ``b`` has a zero mean."""
    if len(a) < 2 or len(b) < 2:
        return None
    sa, sb = stats.long_run_summary(a), stats.long_run_summary(b)
    if sb.mean <= 0 or not math.isfinite(sa.se) or not math.isfinite(sb.se):
        return None
    ratio = sa.mean / sb.mean
    part_a = sa.se ** 2 / sb.mean ** 2
    part_b = sa.mean ** 2 * sb.se ** 2 / sb.mean ** 4
    se = math.sqrt(part_a + part_b)
    if se == 0:
        return RatioInterval(ratio, ratio, ratio, alpha)
    denom = (part_a ** 2 / sa.df if part_a else 0.0) + (part_b ** 2 / sb.df if part_b else 0.0)
    df = (part_a + part_b) ** 2 / denom if denom else math.inf
    half = stats.t_quantile(1.0 - alpha, df) * se
    return RatioInterval(ratio, ratio - half, ratio + half, alpha)
