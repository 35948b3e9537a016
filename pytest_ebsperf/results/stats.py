"""Statistics for comparing two runs from their per-second samples (stdlib only).

A regression gate must not cry wolf on noise, so a difference between a run and its baseline
counts only when it is *statistically clear*: Welch's unequal-variance t-test on the
per-second samples of both runs (Student's pooled test when one run logged a single second).

Per-second samples of a storage run are not independent: a slow second tends to be followed
by another (a busy neighbour, a credit bucket, a throttle window). Treating them as
independent makes the standard error too small and the test too eager. The variance of each
mean is therefore inflated by the AR(1) factor ``(1 + r) / (1 - r)``, ``r`` being the lag-1
autocorrelation of the samples (clipped to [0, :data:`MAX_LAG1`]); ``n_eff = n (1 - r) / (1 + r)``
is what the Welch-Satterthwaite degrees of freedom use. Below :data:`MIN_SAMPLES_FOR_LAG1`
samples ``r`` cannot be estimated and is taken as 0.

The Student t distribution comes from the regularised incomplete beta function (continued
fraction, Lentz's method), so no scipy is needed.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: Autocorrelation is estimated from this many samples up; fewer give a meaningless r.
MIN_SAMPLES_FOR_LAG1 = 8
#: Clip r so a nearly constant trend cannot shrink the effective sample size to nothing.
MAX_LAG1 = 0.9


@dataclass(frozen=True)
class SampleSummary:
    """Mean and noise of one run's per-second samples.

    ``sd`` is the sample standard deviation, ``lag1`` the lag-1 autocorrelation used (0 when
    not estimable), ``n_eff`` the effective number of independent samples and ``se`` the
    standard error of the mean after the autocorrelation correction.
    """

    n: int
    mean: float
    sd: float
    lag1: float
    n_eff: float
    se: float

    @property
    def cv(self) -> float:
        """Coefficient of variation (sd / mean); 0 for a zero mean."""
        return self.sd / abs(self.mean) if self.mean else 0.0


def lag1_autocorrelation(values: Sequence[float]) -> float:
    """Lag-1 autocorrelation of ``values``, clipped to [0, MAX_LAG1]; 0 when not estimable.

    Negative values are clipped to 0: alternating samples would otherwise *raise* the
    effective sample size, which is the optimistic direction for a gate.
    """
    n = len(values)
    if n < MIN_SAMPLES_FOR_LAG1:
        return 0.0
    mean = math.fsum(values) / n
    dev = [v - mean for v in values]
    denom = math.fsum(d * d for d in dev)
    if denom == 0:
        return 0.0
    r = math.fsum(dev[i] * dev[i + 1] for i in range(n - 1)) / denom
    return min(max(r, 0.0), MAX_LAG1)


def summarize(values: Sequence[float]) -> SampleSummary:
    """Mean, sd and autocorrelation-corrected standard error of ``values`` (n >= 1)."""
    n = len(values)
    if n == 0:
        raise ValueError("no samples to summarise")
    mean = math.fsum(values) / n
    sd = statistics.stdev(values) if n > 1 else 0.0
    r = lag1_autocorrelation(values)
    n_eff = n * (1 - r) / (1 + r)
    se = sd / math.sqrt(n_eff) if n > 1 else math.inf
    return SampleSummary(n, mean, sd, r, n_eff, se)


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
    """Welch's t-test on two summaries; None when either has fewer than two samples."""
    if a.n < 2 or b.n < 2:
        return None
    va, vb = a.se**2, b.se**2
    # Welch-Satterthwaite, with the effective sample sizes of autocorrelated samples.
    denom = va**2 / max(a.n_eff - 1, 1e-9) + vb**2 / max(b.n_eff - 1, 1e-9)
    df = (va + vb) ** 2 / denom if denom else math.inf
    return _finish("Welch's t-test", a.mean - b.mean, va, vb, df)


def pooled(a: SampleSummary, b: SampleSummary) -> TTest | None:
    """Student's t-test with one variance for both runs.

    For the case Welch cannot handle: one run has a single per-second sample (fio's IOPS log
    often lacks the last window, so a 2-second run can log one). Its noise is then taken to be
    the other run's, which is the assumption of this test. None with fewer than three samples
    in all or none with a spread.
    """
    if a.n + b.n < 3 or max(a.n, b.n) < 2:
        return None
    sp2 = ((a.n - 1) * a.sd**2 + (b.n - 1) * b.sd**2) / (a.n + b.n - 2)
    inflation = (1 + max(a.lag1, b.lag1)) / (1 - max(a.lag1, b.lag1))
    va, vb = sp2 * inflation / a.n, sp2 * inflation / b.n
    df = max((a.n + b.n) / inflation - 2, 1.0)
    return _finish("Student's t-test (one run's noise for both)", a.mean - b.mean, va, vb, df)


def t_test(a: SampleSummary, b: SampleSummary) -> TTest | None:
    """Welch's t-test, or Student's pooled test when one run has a single sample."""
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


# -- Student t distribution ----------------------------------------------------------------
def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    if math.isinf(df):
        return math.erfc(abs(t) / math.sqrt(2.0))
    x = df / (df + t * t)
    return min(1.0, max(0.0, betainc(df / 2.0, 0.5, x)))


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile (0.5 < q < 1) of Student's t, by bisection on the CDF (kept: a
    history asks for the same few quantiles thousands of times)."""
    if not 0.5 < q < 1.0:
        raise ValueError(f"quantile must be in (0.5, 1), got {q}")
    if math.isinf(df):
        df = 1e12  # the normal limit; the beta function handles a huge df fine
    target = 2.0 * (1.0 - q)  # two-sided tail mass at the quantile
    low, high = 0.0, 1.0
    while t_two_sided_p(high, df) > target:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_two_sided_p(mid, df) > target:
            low = mid
        else:
            high = mid
        if high - low <= 1e-13 * high:
            break
    return (low + high) / 2.0


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry above.
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_cf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_cf(b, a, 1.0 - x) / b


def _beta_cf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


# -- the relative change and its confidence interval ---------------------------------------
@dataclass(frozen=True)
class RelativeChange:
    """``current / baseline - 1`` with a confidence interval (delta method on the ratio)."""

    change: float
    low: float
    high: float
    level: float


def relative_change(current: SampleSummary, baseline: SampleSummary, test: TTest | None,
                    level: float = 0.99) -> RelativeChange | None:
    """``current / baseline - 1`` and its ``level`` confidence interval (delta method:
    var(a / b) ~ var(a) / b^2 + a^2 var(b) / b^4, with the variances of ``test``).

    None when the baseline mean is 0 (no ratio); an unbounded interval without a test.
    """
    if baseline.mean == 0:
        return None
    change = current.mean / baseline.mean - 1.0
    if test is None:
        return RelativeChange(change, -math.inf, math.inf, level)
    b2 = baseline.mean**2
    se = math.sqrt(test.var_a / b2 + current.mean**2 * test.var_b / b2**2)
    half = t_quantile(0.5 + level / 2.0, test.df) * se if se else 0.0
    return RelativeChange(change, change - half, change + half, level)
