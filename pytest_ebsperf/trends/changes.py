"""Change points in a series of runs: where a check's figure moved and stayed moved.

A nightly job measures each check once a run; a regression shows as a **step** (a new kernel
costs 5 %) or a **drift** (3 % a week). A pairwise compare sees neither reliably: a step
hides in one run's noise, and a drift never exceeds a threshold between neighbours. So the
whole series is tested, the way E-divisive means (Matteson & James 2014; Apache Otava, formerly
Hunter, MongoDB's performance CI) does it:

* **The statistic** for a split before run ``t`` of ``n`` is the energy distance between
  the two sides with exponent alpha = 2, which for one-dimensional series is the weighted
  squared difference of their means: ``Q(t) = t (n - t) / n * (mean(x[:t]) - mean(x[t:]))^2``.
  Computed for every ``t`` in one pass over prefix sums.
* **The test** is a permutation test: the series' values shuffled destroy any order, so the
  share of shuffles whose best split beats the observed one is the p-value of "no change".
  It is exact whatever the noise's distribution. A split is accepted at ``p <= alpha``
  (default 0.01: a series with no change reports one with probability at most 1 %). The
  shuffles stop early once the p-value is clearly above alpha (Besag & Clifford's
  sequential test), so a quiet series costs a few dozen shuffles, not hundreds.
* **Short series** (fewer than ``PERMUTATION_MIN`` runs) cannot reach alpha by shuffling: six
  runs split 3 + 3 have only 20 distinct splits, so the smallest permutation p-value is
  0.05. There the best split is tested with Welch's t-test on the two sides' runs (the runs'
  noise taken as normal), its p-value multiplied by the number of splits tried (Bonferroni),
  so the false-alarm rate is still at most alpha.
* **Several changes**: binary segmentation. After a split, each side is tested again on its
  own, at the same alpha, until no side splits (segments of at least ``min_size`` runs).

A change is *for the worse* when the later side's mean is lower (IOPS, throughput) or higher
(latency) than the earlier side's. A drift appears as a change (or several) where it has
moved farthest; the report says so with the size of the move.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import accumulate

from pytest_ebsperf.verdicts import stats
from pytest_ebsperf.verdicts.stats import t_two_sided_p

#: Probability of reporting a change in a series that has none (per series).
DEFAULT_ALPHA = 0.01
#: Most shuffles of one test (the p-value's resolution is 1 / (MAX_SHUFFLES + 1)).
MAX_SHUFFLES = 499
#: A test stops shuffling once this many shuffles beat the observed split.
ENOUGH_EXCEEDED = 10
#: Fewest runs on each side of a change.
MIN_SIZE = 3
#: Series at least this long are tested by shuffling; shorter ones by Welch's t-test.
PERMUTATION_MIN = 12


@dataclass(frozen=True)
class Change:
    """A change before run ``index`` (0-based): ``before`` and ``after`` are the means of the
    segments on each side, ``p_value`` the permutation test's, ``relative`` the move as a
    fraction of ``before``."""

    index: int
    before: float
    after: float
    p_value: float

    @property
    def relative(self) -> float:
        return (self.after - self.before) / self.before if self.before else math.inf

    def worse(self, higher_is_better: bool = True) -> bool:
        return self.after < self.before if higher_is_better else self.after > self.before


def split_statistic(values: Sequence[float], min_size: int = MIN_SIZE) -> tuple[int, float]:
    """The best split of ``values`` and its statistic ``Q`` (index, Q); (-1, 0.0) when the
    series is too short for two sides of ``min_size``."""
    n = len(values)
    if n < 2 * min_size:
        return -1, 0.0
    sums = list(accumulate(values))
    total = sums[-1]
    best_t, best_q = -1, -1.0
    for t in range(min_size, n - min_size + 1):
        left = sums[t - 1]
        diff = left / t - (total - left) / (n - t)
        q = t * (n - t) / n * diff * diff
        if q > best_q:
            best_t, best_q = t, q
    return best_t, best_q


def _max_q(values: Sequence[float], min_size: int) -> float:
    """The statistic of the best split (no index), for the shuffles."""
    n = len(values)
    sums = list(accumulate(values))
    total = sums[-1]
    return max((t * (n - t) / n) * (sums[t - 1] / t - (total - sums[t - 1]) / (n - t)) ** 2
               for t in range(min_size, n - min_size + 1))


def permutation_p_value(values: Sequence[float], observed: float, *, alpha: float,
                        min_size: int = MIN_SIZE, rng: random.Random | None = None) -> float:
    """The share of shuffles of ``values`` whose best split is at least ``observed``, with
    the observed order counted among them; stops once the answer is clearly above alpha."""
    rng = rng or random.Random(0x5EED)
    pool = list(values)
    exceeded = 0
    # enough shuffles to resolve alpha: p = (exceeded + 1) / (done + 1) <= alpha needs
    # done >= 1 / alpha - 1 with none exceeding
    most = max(MAX_SHUFFLES, math.ceil(2.0 / alpha))
    done = 0
    for done in range(1, most + 1):
        rng.shuffle(pool)
        if _max_q(pool, min_size) >= observed:
            exceeded += 1
            if exceeded >= ENOUGH_EXCEEDED and (exceeded + 1) / (done + 1) > 2 * alpha:
                break
        if exceeded == 0 and done >= math.ceil(1.0 / alpha) * 2:
            break  # p <= 1 / (done + 1), far below alpha already
    return (exceeded + 1) / (done + 1)


def split_t_p_value(values: Sequence[float], t: int, min_size: int = MIN_SIZE) -> float:
    """Welch's t-test of the two sides of the split before ``t`` (runs taken as independent
    and normal), Bonferroni-corrected for the number of splits a series of this length
    offers (short series)."""

    left, right = values[:t], values[t:]
    ma, mb = sum(left) / len(left), sum(right) / len(right)
    va = sum((v - ma) ** 2 for v in left) / (len(left) - 1) / len(left)
    vb = sum((v - mb) ** 2 for v in right) / (len(right) - 1) / len(right)
    splits = len(values) - 2 * min_size + 1
    if va + vb == 0:  # no spread on either side: any difference is certain
        return 0.0 if ma != mb else 1.0
    df = (va + vb) ** 2 / ((va**2 / (len(left) - 1) if va else 0.0)
                           + (vb**2 / (len(right) - 1) if vb else 0.0))
    return min(1.0, t_two_sided_p((ma - mb) / math.sqrt(va + vb), df) * splits)


def change_points(values: Sequence[float], *, alpha: float = DEFAULT_ALPHA,
                  min_size: int = MIN_SIZE, seed: int = 0x5EED) -> list[Change]:
    """Every change in ``values`` that the permutation test accepts at ``alpha``, in order."""
    rng = random.Random(seed)
    found: list[int] = []
    p_values: dict[int, float] = {}
    segments = [(0, len(values))]
    while segments:
        start, end = segments.pop()
        part = values[start:end]
        t, q = split_statistic(part, min_size)
        if t < 0 or q <= 0:
            continue
        p = (permutation_p_value(part, q, alpha=alpha, min_size=min_size, rng=rng)
             if len(part) >= PERMUTATION_MIN else split_t_p_value(part, t, min_size))
        if p > alpha:
            continue
        found.append(start + t)
        p_values[start + t] = p
        segments += [(start, start + t), (start + t, end)]
    found.sort()
    bounds = [0, *found, len(values)]
    changes = []
    for k, index in enumerate(found):
        before = values[bounds[k]:index]
        after = values[index:bounds[k + 2]]
        changes.append(Change(index, sum(before) / len(before), sum(after) / len(after),
                              p_values[index]))
    return changes


def worsening_since(changes: Sequence[Change], length: int, since: int, *,
                    higher_is_better: bool = True) -> Change | None:
    """The latest change for the worse that starts within the last ``since`` runs of a
    series of ``length`` runs, or None."""
    recent = [c for c in changes if c.index >= length - since and c.worse(higher_is_better)]
    return recent[-1] if recent else None


# -- drift ---------------------------------------------------------------------------------
#: Probability of reporting a drift for the worse in a series that has none (per series).
DEFAULT_DRIFT_ALPHA = 0.005
#: Fewest runs a drift's onset test needs on each side of its start.
DRIFT_MIN_BEFORE = 2
DRIFT_MIN_AFTER = 3


@dataclass(frozen=True)
class Drift:
    """A monotonic drift for the worse: from run ``start`` (0-based) on, the figure moves by
    ``slope`` per run (Theil-Sen's median slope of those runs; ``fit_slope`` the least-squares
    one of the test), ``level`` being where it stood before; ``p_value`` is the test's, with
    ``method`` naming it."""

    start: int
    slope: float
    fit_slope: float
    level: float
    p_value: float
    method: str

    @property
    def relative_per_run(self) -> float:
        return self.slope / self.level if self.level else math.inf


def drift(values: Sequence[float], *, alpha: float = DEFAULT_DRIFT_ALPHA, since: int = 10,
          higher_is_better: bool = True) -> Drift | None:
    """A drift for the worse that is still going on, or None. Two tests share ``alpha``:

    * **Mann-Kendall** (Kendall's tau of the values against run order, one-sided towards
      worse) over the whole series, at ``alpha / 2``: a slow drift through all runs.
    * **Onset of a drift**: for each start ``s`` within the last ``since`` runs, the
      broken-stick model "flat until ``s``, then a straight line" against "flat", a one-sided
      t test of the line's slope (least squares, the residual noise estimated from all runs,
      ``n - 2`` degrees of freedom), Bonferroni over the starts tried, at ``alpha / 2``: a
      drift that began after a flat stretch (a mean of every run would hide it, and three
      runs of it are too few for a rank test).

    With independent runs and normal noise each test holds its level exactly; a flat series
    reports a drift with probability at most ``alpha``.
    """

    n = len(values)
    if n < DRIFT_MIN_BEFORE + DRIFT_MIN_AFTER:
        return None
    sign = -1.0 if higher_is_better else 1.0  # the direction of worse
    found: list[Drift] = []
    whole = stats.trend(values)
    if whole is not None and whole.slope * sign > 0:
        p_one = whole.p_value / 2.0  # the two-sided p-value halved: one direction
        if p_one <= alpha / 2.0:
            found.append(Drift(0, whole.slope, whole.slope, values[0], p_one, "Mann-Kendall"))
    starts = [s for s in range(max(DRIFT_MIN_BEFORE, n - since), n - DRIFT_MIN_AFTER + 1)]
    best: tuple[float, int, float] | None = None  # (p, start, slope)
    for s in starts:
        fitted = _broken_stick(values, s)
        if fitted is None:
            continue
        slope, se, df = fitted
        if se == 0:
            p = 0.0 if slope * sign > 0 else 1.0
        else:
            p = stats.t_sf(slope * sign / se, df)
        if best is None or p < best[0]:
            best = (p, s, slope)
    if best is not None and starts:
        p = min(1.0, best[0] * len(starts))
        if p <= alpha / 2.0:
            s = best[1]
            after = stats.trend(values[s - 1:])
            median = after.slope if after is not None else best[2]
            level = sum(values[:s]) / s
            found.append(Drift(s, median, best[2], level, p, "drift onset (broken-stick t test)"))
    if not found:
        return None
    # the onset test names where the drift began: it is said whenever it fired (the
    # smaller p of the two would say "from run 1" for a drift that began at run 6)
    onset = [d for d in found if d.start > 0]
    if onset and len(found) > 1:
        return replace(onset[0], method=f"{onset[0].method}; Mann-Kendall over every run "
                                        "agrees")
    return onset[0] if onset else found[0]


def _broken_stick(values: Sequence[float], start: int) -> tuple[float, float, float] | None:
    """Least squares of y = mu + beta x, x = max(0, i - start + 1): (beta, its standard
    error, degrees of freedom)."""
    fitted = _stick_fit(values, start)
    if fitted is None:
        return None
    mu, beta, sxx = fitted
    n = len(values)
    rss = sum((y - mu - beta * max(0, i - start + 1)) ** 2 for i, y in enumerate(values))
    df = n - 2
    se = math.sqrt(rss / df / sxx)
    return beta, se, float(df)


def _stick_fit(values: Sequence[float], start: int) -> tuple[float, float, float] | None:
    """(mu, beta, sxx) of the broken stick's least squares; None when it has no slope."""
    n = len(values)
    xs = [max(0, i - start + 1) for i in range(n)]
    mx = sum(xs) / n
    my = sum(values) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0 or n < 3:
        return None
    beta = sum((x - mx) * (y - my) for x, y in zip(xs, values)) / sxx
    return my - beta * mx, beta, sxx


# -- what the level assumes ------------------------------------------------------------------
#: Fewest runs for which the runs' lag-1 correlation is said.
CORRELATION_MIN = 8


@dataclass(frozen=True)
class RunCorrelation:
    """The lag-1 correlation of a series' runs around what the gate fitted (the segments'
    means between its changes, the drift's line), with the half-width of its 95 % interval
    under independence (Bartlett: 1.96 / sqrt(n)). Every test of the gate takes runs as
    independent of each other; ``correlated`` says the runs themselves show they are not."""

    value: float
    half_width: float
    runs: int

    @property
    def correlated(self) -> bool:
        return self.value > self.half_width


def run_correlation(values: Sequence[float], changes: Sequence[Change],
                    moving: Drift | None = None) -> RunCorrelation | None:
    """The runs' lag-1 correlation once the changes' segment means (or a drift's line from
    its start, whichever fits closer) are taken out; None for fewer than ``CORRELATION_MIN`` runs or no spread.
    Within k segments of n runs a lag-1 estimate falls short by about k / n: that is added
    back, so that independent runs give about 0 whatever was fitted."""
    n = len(values)
    if n < CORRELATION_MIN:
        return None
    bounds = [0, *(c.index for c in changes), n]
    fitted_terms = len(bounds) - 1
    residuals = list(values)
    for a, b in zip(bounds, bounds[1:]):
        mean = sum(values[a:b]) / (b - a)
        residuals[a:b] = [v - mean for v in values[a:b]]
    stick = _stick_fit(values, moving.start) if moving is not None else None
    if moving is not None and stick is not None:  # the drift's line, where it fits better
        mu, beta, _ = stick
        line = [v - mu - beta * max(0, i - moving.start + 1) for i, v in enumerate(values)]
        if sum(r * r for r in line) < sum(r * r for r in residuals):
            residuals, bounds, fitted_terms = line, [0, n], 2
    spread = sum(r * r for r in residuals)
    if spread <= 0:
        return None
    lagged = sum(residuals[i] * residuals[i - 1] for a, b in zip(bounds, bounds[1:])
                 for i in range(a + 1, b))
    value = lagged / spread + fitted_terms / n
    return RunCorrelation(max(-1.0, min(1.0, value)), 1.96 / math.sqrt(n), n)
