"""Find the knee of a burst: where a per-second series falls from its burst level to a lower one.

The method is a changepoint search: of every way to cut the series into a *before* and an
*after* part, take the cut whose two constant levels explain the samples with the least
squared error. A cut always exists, so it is accepted as a knee only when

* the levels differ clearly: by at least ``noise_factor`` times the per-second noise and by
  at least ``min_drop`` of the burst level (noise alone never makes a knee);
* the level falls (a rise is a refill or a warm-up, not a knee);
* most samples sit on their side of the midpoint (a short dip leaves the level of its
  part unchanged: levels are medians, so a dip of a few seconds moves no level);
* at least ``min_after`` samples follow the cut (a dip in the last seconds is not a knee).

The knee time is interpolated inside the window where the level changed, from how far that
window's value lies between the two levels, so it is finer than the one-second windows.
The noise is estimated from first differences (median absolute difference), which a single
step does not disturb. Pure functions; nothing here knows about EBS.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: The levels must differ by this many noise standard deviations ...
NOISE_FACTOR = 6.0
#: ... and by this share of the burst level (the smallest documented knee that the 10 %
#: tolerance of a CAP check can tell apart is gp2 900 GiB: 3,000 -> 2,700 IOPS).
MIN_DROP = 0.05
#: Samples that must follow the cut.
MIN_AFTER = 3
#: Share of samples that must lie on their own side of the midpoint between the levels.
CONSISTENCY = 0.8
#: Median absolute deviation -> standard deviation for normal noise.
_MAD_TO_SIGMA = 1.4826

Describe = Callable[[float], str]


@dataclass(frozen=True)
class Knee:
    """What :func:`find_knee` found.

    ``found`` False means "no knee": ``before`` is then the series' only level and
    ``after``/``t_s``/``index`` are None. ``t_s`` is the time of the drop, in seconds since
    the series started; ``index`` the first window of the lower level. ``noise`` is the
    per-window noise (one standard deviation) and ``reason`` a sentence saying why the knee
    was accepted or not.
    """

    found: bool
    before: float
    after: float | None
    t_s: float | None
    index: int | None
    noise: float
    reason: str
    window_s: float = 1.0

    @property
    def drop(self) -> float:
        """``before - after`` (0 without a knee)."""
        return self.before - self.after if self.after is not None else 0.0


def noise_sigma(values: Sequence[float]) -> float:
    """Per-sample noise of a series, robust to steps: MAD of first differences / sqrt(2)."""
    diffs = [abs(b - a) for a, b in zip(values, values[1:])]
    if not diffs:
        return 0.0
    return _MAD_TO_SIGMA * statistics.median(diffs) / math.sqrt(2.0)


def best_split(values: Sequence[float]) -> int:
    """The cut ``k`` (1..n-1) whose two means leave the least squared error; O(n)."""
    n = len(values)
    if n < 2:
        raise ValueError("a split needs at least two samples")
    sums, squares = [0.0], [0.0]
    for value in values:
        sums.append(sums[-1] + value)
        squares.append(squares[-1] + value * value)

    def cost(k: int) -> float:
        left = squares[k] - sums[k] ** 2 / k
        right_sum = sums[n] - sums[k]
        return left + (squares[n] - squares[k]) - right_sum**2 / (n - k)

    return min(range(1, n), key=cost)


def find_knee(
    values: Sequence[float],
    times: Sequence[float] | None = None,
    *,
    window_s: float = 1.0,
    noise_factor: float = NOISE_FACTOR,
    min_drop: float = MIN_DROP,
    min_after: int = MIN_AFTER,
    describe: Describe | None = None,
) -> Knee:
    """The knee of ``values`` (one sample per ``window_s``), or "no knee".

    ``times`` are the window ends as fio's series give them (``1.0, 2.0, ...``); without them
    the windows are taken as contiguous from 0. ``describe`` formats a level for the reason
    (e.g. as MiB/s). Raises ``ValueError`` when ``times`` and ``values`` differ in length.
    """
    describe = describe or _plain
    if times is not None and len(times) != len(values):
        raise ValueError(f"{len(times)} times for {len(values)} values")
    ends = list(times) if times is not None else [window_s * (i + 1) for i in range(len(values))]
    noise = noise_sigma(values)
    if len(values) < min_after + 1:
        level = statistics.median(values) if values else 0.0
        return _none(level, noise, window_s, f"too few samples ({len(values)}) to find a knee")
    k = best_split(values)
    k = min(k, len(values) - min_after)
    before, after = statistics.median(values[:k]), statistics.median(values[k:])
    problem = _rejection(values, k, before, after, noise, noise_factor, min_drop, describe)
    if problem:
        return _none(statistics.median(values), noise, window_s, problem)
    t_s = _interpolate(values, ends, k, before, after, window_s)
    reason = (f"level fell from {describe(before)} to {describe(after)} at {t_s:,.1f} s "
              f"(noise {describe(noise)} per window)")
    return Knee(True, before, after, t_s, k, noise, reason, window_s)


def _plain(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _none(level: float, noise: float, window_s: float, reason: str) -> Knee:
    return Knee(False, level, None, None, None, noise, reason, window_s)


def _rejection(values: Sequence[float], k: int, before: float, after: float, noise: float,
               noise_factor: float, min_drop: float, q: Describe) -> str | None:
    """Why the cut at ``k`` is no knee, or None when it is one."""
    change = abs(before - after)
    higher = max(abs(before), abs(after))
    needed = max(noise_factor * noise, min_drop * higher)
    if change < needed:
        level = statistics.median(values)
        share = f"{100 * change / higher:.1f} %" if higher else "0 %"
        return (f"no knee: the level stays at {q(level)} (the best split differs by only "
                f"{q(change)}, {share}; a knee needs {q(needed)}: {100 * min_drop:g} % of the level "
                f"or {noise_factor:g} x the noise of {q(noise)} per window)")
    if after > before:
        return (f"no knee: the level rises from {q(before)} to {q(after)} (a refill or a "
                "warm-up, not a knee)")
    middle = (before + after) / 2.0
    high = sum(1 for v in values[:k] if v > middle) / k
    low = sum(1 for v in values[k:] if v < middle) / (len(values) - k)
    if min(high, low) < CONSISTENCY:
        return (f"no knee: the samples do not stay on their side of the split "
                f"({100 * high:.0f} % above before it, {100 * low:.0f} % below after it)")
    return None


def _interpolate(values: Sequence[float], ends: Sequence[float], k: int, before: float,
                 after: float, window_s: float) -> float:
    """Time of the drop inside the window(s) around the cut.

    A step at fraction ``f`` of a window leaves that window ``f`` of the way from the low to
    the high level; the two windows around the cut hold the whole transition whichever side
    the split put it on, so their fractions add up to the time since the earlier one began.
    """

    def fraction(value: float) -> float:
        return min(1.0, max(0.0, (value - after) / (before - after)))

    start = ends[k - 1] - window_s
    return start + window_s * (fraction(values[k - 1]) + fraction(values[k]))


def excess_integral(values: Sequence[float], level: float, window_s: float = 1.0) -> float:
    """``sum((v - level) * window_s)``: what a run delivered above ``level`` (e.g. the
    credits a burst consumed above the baseline the bucket refills at)."""
    return math.fsum((v - level) * window_s for v in values)
