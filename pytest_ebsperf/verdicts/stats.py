"""The statistics core: every interval, test and tail probability a verdict, ``judge``,
``compare`` or ``history`` states comes from here, on :mod:`scipy.stats`.

* **Distributions** (Student t, binomial, beta, chi-square): scipy's, never re-derived.
* **Means of a series of seconds** come from *batch means*: the seconds are cut into ``K``
  non-overlapping blocks of consecutive seconds, each block's mean is one observation, and
  the interval is Student's t on ``K - 1`` degrees of freedom. Per-second samples of a
  storage run are autocorrelated (a slow second is followed by another); block means of
  several seconds are nearly independent, so the interval holds its level without
  estimating a lag-1 correlation from a handful of seconds (which is biased low on short
  series and made intervals of the earlier method too narrow at the bar, 6-67 x their level).
* **Paired blocks** (:mod:`pytest_ebsperf.verdicts.comparison`) compare two devices or two
  passes: fresh runs alternate, each pair gives ``d = log(A) - log(B)``, judged with t.
* **Trends**: Mann-Kendall's test (Kendall's tau against run order) with Theil-Sen's slope.

scipy is imported on first use, so a pytest start that runs no check does not pay for it. The
distributions a verdict needs come from :mod:`scipy.special`, the functions scipy.stats's
distributions evaluate (``t.ppf`` is ``stdtrit``, ``binom.sf`` is ``bdtrc``, ``beta.ppf`` is
``betaincinv``...): loading it costs 0.47 s of CPU against scipy.stats's 1.0 s, in every
pytest run that judges a check. ``tests/verdicts/test_stats.py`` holds them equal to
scipy.stats's on grids of every argument. Only ``trend`` (Kendall's tau, Theil-Sen) loads
scipy.stats.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Blocks a series of seconds is cut into for its batch means: ten blocks of ``n // 10``
#: seconds (t on 9 degrees of freedom); a series shorter than 20 seconds is judged on its
#: single seconds (blocks of one), the most degrees of freedom it has.
TARGET_BLOCKS = 10
#: Seconds a block holds at least.
MIN_BLOCK_S = 1


def _scipy_stats() -> Any:
    # scipy.stats loads in 1.0 s of CPU: only for a trend (history), never for a verdict
    from scipy import stats

    return stats


def _special() -> Any:
    # scipy.special loads in 0.47 s of CPU: only when a verdict needs a quantile
    from scipy import special

    return special


# -- distributions -----------------------------------------------------------------------
@functools.lru_cache(maxsize=8192)
def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (normal for inf)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile must be in (0, 1), got {q}")
    sp = _special()
    if math.isinf(df):
        return float(sp.ndtri(q))
    return float(sp.stdtrit(df, q))


def t_sf(t: float, df: float) -> float:
    """P(T >= t) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    sp = _special()
    return float(sp.ndtr(-t) if math.isinf(df) else sp.stdtr(df, -t))


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    return min(1.0, 2.0 * t_sf(abs(t), df))


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return float(_special().bdtrc(k - 1, n, p))


def clopper_pearson_upper(successes: int, n: int, confidence: float) -> float:
    """Clopper-Pearson upper bound on a binomial rate (one-sided at ``confidence``): the
    ``confidence`` quantile of Beta(x + 1, n - x); 0 of 60 at 95 %: 1 - 0.05^(1/60) = 4.9 %."""
    if n <= 0 or successes >= n:
        return 1.0
    return float(_special().betaincinv(successes + 1, n - successes, confidence))


def clopper_pearson_interval(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval on a binomial rate at ``confidence``."""
    if n <= 0:
        return 0.0, 1.0
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if successes <= 0 else float(
        _special().betaincinv(successes, n - successes + 1, tail))
    high = 1.0 if successes >= n else float(
        _special().betaincinv(successes + 1, n - successes, 1.0 - tail))
    return low, high


def chi2_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of chi-square with ``df`` degrees of freedom."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile level must be in (0, 1), got {q}")
    return float(2.0 * _special().gammaincinv(df / 2.0, q))


def chi2_cdf(x: float, df: float) -> float:
    """P(X <= x) for chi-square with ``df`` degrees of freedom."""
    return float(_special().chdtr(df, x))


# -- batch means ---------------------------------------------------------------------------
def block_plan(n: int, target: int = TARGET_BLOCKS, min_block: int = MIN_BLOCK_S
               ) -> tuple[int, int]:
    """(blocks, seconds per block) for a series of ``n`` seconds: ``target`` blocks of
    ``n // target`` seconds once that is at least ``min_block``, else blocks of
    ``min_block`` seconds (single seconds by default). Seconds left over at the end (fewer
    than a block) are not used for the interval."""
    if n < 2:
        return n, 1
    block = max(min_block, n // target)
    return max(1, n // block), block


def batch_means(values: Sequence[float], target: int = TARGET_BLOCKS,
                min_block: int = MIN_BLOCK_S) -> list[float]:
    """The means of the consecutive blocks of ``values`` (see :func:`block_plan`)."""
    k, b = block_plan(len(values), target, min_block)
    return [math.fsum(values[i * b:(i + 1) * b]) / b for i in range(k)]


@dataclass(frozen=True)
class SampleSummary:
    """Mean and noise of one series of seconds, from its batch means.

    ``sd`` is the per-second standard deviation (for the CV), ``blocks``/``block_s`` the
    batch plan, ``se`` the standard error of the mean from the blocks' spread and ``df``
    the degrees of freedom of its t interval (``blocks - 1``).
    """

    n: int
    mean: float
    sd: float
    blocks: int
    block_s: int
    se: float
    df: float
    #: The lag-1 correlation the standard error allows for (:func:`long_run_summary`);
    #: None for batch means.
    rho: float | None = None

    @property
    def cv(self) -> float:
        """Coefficient of variation (sd / mean) of the seconds; 0 for a zero mean."""
        return self.sd / abs(self.mean) if self.mean else 0.0

    @property
    def n_eff(self) -> float:
        """Independent observations the interval rests on: the blocks."""
        return float(self.blocks)

    def bounds(self, alpha: float) -> tuple[float, float]:
        """One-sided bounds at ``1 - alpha`` each (the mean's t interval on ``df``)."""
        if self.se == 0 or not math.isfinite(self.se):
            half = 0.0 if self.se == 0 else math.inf
        else:
            half = t_quantile(1.0 - alpha, self.df) * self.se
        return self.mean - half, self.mean + half


def summarize(values: Sequence[float], target: int = TARGET_BLOCKS,
              min_block: int = MIN_BLOCK_S) -> SampleSummary:
    """Mean, per-second sd and batch-means standard error of ``values`` (n >= 1)."""
    n = len(values)
    if n == 0:
        raise ValueError("no samples to summarise")
    mean = math.fsum(values) / n
    sd = statistics.stdev(values) if n > 1 else 0.0
    k, b = block_plan(n, target, min_block)
    if k < 2:
        return SampleSummary(n, mean, sd, k, b, math.inf, 0.0)
    means = batch_means(values, target, min_block)
    se = statistics.stdev(means) / math.sqrt(k)
    return SampleSummary(n, mean, sd, k, b, se, float(k - 1))


#: How far above its estimate the lag-1 correlation of a series is taken to be, in standard
#: errors (``sqrt((1 - r^2) / n)``): chosen by simulation (docs/benchmarks.md, "Means under
#: autocorrelation") so that the mean's one-sided bounds hold their level for AR(1) seconds
#: with lag-1 correlation 0 to 0.8 at 18-120 s, from a 5 % level down to 1e-4.
RHO_MARGIN_SE = 2.0
#: The correlation used is at most this (a series that looks like a random walk gives a
#: bound so wide that the check says "run longer").
RHO_CAP = 0.97


def lag1_correlation(values: Sequence[float]) -> float:
    """The lag-1 autocorrelation of ``values`` (0 for a constant or too short series)."""
    n = len(values)
    if n < 3:
        return 0.0
    mean = math.fsum(values) / n
    dev = [v - mean for v in values]
    var = math.fsum(d * d for d in dev)
    if var <= 0:
        return 0.0
    return math.fsum(a * b for a, b in zip(dev, dev[1:])) / var


def lag1_unbiased(values: Sequence[float]) -> float:
    """:func:`lag1_correlation` corrected for its bias on short series: the estimate of an
    AR(1) series' lag-1 correlation is low by about ``(1 + 3 rho) / n``."""
    r = lag1_correlation(values)
    return r + (1.0 + 3.0 * r) / len(values) if len(values) >= 3 else 0.0


def long_run_summary(values: Sequence[float], margin_se: float = RHO_MARGIN_SE
                     ) -> SampleSummary:
    """Mean of a series of seconds with a standard error that holds under autocorrelation.

    The variance of the mean of an AR(1) series is ``s^2 / n x (1 + rho) / (1 - rho)``. The
    lag-1 correlation ``rho`` of a short series is biased low (by about ``(1 + 3 rho) / n``)
    and noisy, and an interval built on the estimate alone is too narrow at the bar (batch
    means on 10 blocks of a 60 s series miss the true mean 22 x as often as stated at a
    1e-4 level when rho is 0.8). So ``rho`` is taken at the bias-corrected estimate plus
    ``margin_se`` standard errors (an upper confidence bound), the per-second variance is
    corrected for the correlation it hides, and Student's t has ``n_eff - 1`` degrees of
    freedom, ``n_eff = n (1 - rho) / (1 + rho)`` the independent seconds the series is
    worth. ``blocks`` is ``round(n_eff)`` and ``block_s`` 1; ``rho`` is kept on the summary.
    """
    n = len(values)
    if n == 0:
        raise ValueError("no samples to summarise")
    mean = math.fsum(values) / n
    sd = statistics.stdev(values) if n > 1 else 0.0
    if n < 3:
        return SampleSummary(n, mean, sd, n, 1, math.inf if n < 2 or sd else 0.0,
                             float(max(n - 1, 0)), RHO_CAP)
    r = lag1_unbiased(values)
    rho = r + margin_se * math.sqrt(max(1.0 - r * r, 0.01) / n)
    rho = min(RHO_CAP, max(-0.5, rho))
    factor = (1.0 + rho) / (1.0 - rho)
    variance = sd * sd / max(1.0 - factor / n, 0.2)  # s^2 is biased low by about factor / n
    n_eff = n / factor
    se = math.sqrt(variance * factor / n)
    return SampleSummary(n, mean, sd, max(1, round(n_eff)), 1, se, max(1.0, n_eff - 1.0),
                         rho)


def seconds_to_decide(summary: SampleSummary, bar: float, alpha: float,
                      limit: int = 86_400) -> int | None:
    """About how many seconds of a series like ``summary`` (same per-second noise and
    correlation) would put the mean's one-sided bound at ``alpha`` clear of ``bar``; None
    when the mean is on the bar or even ``limit`` seconds would not do."""
    gap = abs(summary.mean - bar)
    if gap <= 0 or summary.rho is None:
        return None
    factor = (1.0 + summary.rho) / (1.0 - summary.rho)
    n = max(summary.n, 3)
    while n <= limit:
        n_eff = n / factor
        half = t_quantile(1.0 - alpha, max(1.0, n_eff - 1.0)) * summary.sd * math.sqrt(
            factor / n / max(1.0 - factor / n, 0.2))
        if half < gap:
            return n
        n = int(n * 1.25) + 1
    return None


def weighted_summary(values: Sequence[float], weights: Sequence[float],
                     target: int = TARGET_BLOCKS, min_block: int = MIN_BLOCK_S
                     ) -> SampleSummary | None:
    """The mean of ``values`` weighted by ``weights`` (per-second mean latencies and each
    second's I/Os: the mean over every I/O, which is fio's) with a batch-means standard
    error: each block's weighted mean is one observation, weighted by its I/Os (a ratio
    estimator over blocks). None with fewer than two weighted seconds."""
    pairs = [(v, w) for v, w in zip(values, weights, strict=False) if w > 0]
    n = len(pairs)
    if n < 2:
        return None
    total = math.fsum(w for _, w in pairs)
    mean = math.fsum(v * w for v, w in pairs) / total
    sd = statistics.stdev([v for v, _ in pairs])
    k, b = block_plan(n, target, min_block)
    blocks = [pairs[i * b:(i + 1) * b] for i in range(k)]
    wsum = [math.fsum(w for _, w in block) for block in blocks]
    bmean = [math.fsum(v * w for v, w in block) / ws for block, ws in zip(blocks, wsum)]
    wbar = math.fsum(wsum) / k
    resid = [ws / wbar * (m - mean) for m, ws in zip(bmean, wsum)]
    se = math.sqrt(math.fsum(r * r for r in resid) / (k - 1) / k)
    return SampleSummary(n, mean, sd, k, b, se, float(k - 1))


# -- two series: Welch on batch means -------------------------------------------------------
@dataclass(frozen=True)
class TTest:
    """A t-test of ``a - b``: which test, the variances of both means, statistic, degrees of
    freedom and two-sided p-value."""

    name: str
    diff: float
    var_a: float
    var_b: float
    t: float
    df: float
    p: float

    @property
    def se(self) -> float:
        return math.sqrt(self.var_a + self.var_b)


def welch(a: SampleSummary, b: SampleSummary) -> TTest | None:
    """Welch's t-test on two series' batch means; None when either has fewer than two
    blocks."""
    if a.blocks < 2 or b.blocks < 2:
        return None
    va, vb = a.se ** 2, b.se ** 2
    denom = (va ** 2 / a.df if va else 0.0) + (vb ** 2 / b.df if vb else 0.0)
    df = (va + vb) ** 2 / denom if denom else math.inf
    return _finish("Welch's t-test on batch means", a.mean - b.mean, va, vb, df)


def pooled(a: SampleSummary, b: SampleSummary) -> TTest | None:
    """Student's t-test with one variance for both series, for the case Welch cannot
    handle: one series has a single block (fio's log of a 2-second run can hold one second).
    Its noise is then taken to be the other's, which is this test's assumption. None when
    neither series has two blocks."""
    if max(a.blocks, b.blocks) < 2 or a.n < 1 or b.n < 1:
        return None
    noisy = a if a.blocks >= 2 else b
    # the block variance of the noisy series, as per-second variance at its block length
    var_block = noisy.se ** 2 * noisy.blocks
    per_second = var_block * noisy.block_s
    va, vb = per_second / a.n, per_second / b.n
    return _finish("Student's t-test (one series' noise for both)", a.mean - b.mean, va, vb,
                   noisy.df)


def t_test(a: SampleSummary, b: SampleSummary) -> TTest | None:
    """Welch's t-test, or Student's pooled test when one series has a single block."""
    return welch(a, b) or pooled(a, b)


def _finish(name: str, diff: float, va: float, vb: float, df: float) -> TTest:
    se = math.sqrt(va + vb)
    if se == 0:
        # Two perfectly constant runs (a throttled volume can deliver exactly the same number
        # every second) have no noise at all: any difference is clear, equality is not.
        t = math.copysign(math.inf, diff) if diff else 0.0
        return TTest(name, diff, va, vb, t, math.inf, 0.0 if diff else 1.0)
    t = diff / se
    return TTest(name, diff, va, vb, t, df, t_two_sided_p(t, df))


@dataclass(frozen=True)
class RelativeChange:
    """``current / baseline - 1`` with a confidence interval (delta method on the ratio)."""

    change: float
    low: float
    high: float
    level: float


def relative_change(current: SampleSummary, baseline: SampleSummary, test: TTest | None,
                    level: float = 0.99) -> RelativeChange | None:
    """``current / baseline - 1`` and its two-sided ``level`` interval (delta method:
    var(a / b) ~ var(a) / b^2 + a^2 var(b) / b^4, with the variances of ``test``).
    None when the baseline mean is 0; an unbounded interval without a test."""
    if baseline.mean == 0:
        return None
    change = current.mean / baseline.mean - 1.0
    if test is None:
        return RelativeChange(change, -math.inf, math.inf, level)
    b2 = baseline.mean ** 2
    se = math.sqrt(test.var_a / b2 + current.mean ** 2 * test.var_b / b2 ** 2)
    half = t_quantile(0.5 + level / 2.0, test.df) * se if se else 0.0
    return RelativeChange(change, change - half, change + half, level)


# -- trends ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trend:
    """Mann-Kendall's test of a monotonic trend and Theil-Sen's slope (per run)."""

    n: int
    tau: float
    p_value: float  # two-sided
    slope: float  # per run, in the series' unit
    slope_low: float
    slope_high: float
    intercept: float


def trend(values: Sequence[float], confidence: float = 0.95) -> Trend | None:
    """Mann-Kendall (Kendall's tau of the values against their order, scipy's exact
    distribution for short series without ties) and Theil-Sen's slope with its interval.
    None with fewer than 4 values or no spread."""
    n = len(values)
    if n < 4 or max(values) == min(values):
        return None
    st = _scipy_stats()
    order = list(range(n))
    tau = st.kendalltau(order, list(values))
    sen = st.theilslopes(list(values), order, alpha=confidence)
    p = float(tau.pvalue) if math.isfinite(float(tau.pvalue)) else 1.0
    return Trend(n, float(tau.statistic), p, float(sen.slope), float(sen.low_slope),
                 float(sen.high_slope), float(sen.intercept))
