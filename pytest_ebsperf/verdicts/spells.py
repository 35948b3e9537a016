"""Spells of missed windows: how often a compliant volume can begin one, and the mean spell a
run's own misses show (:class:`pytest_ebsperf.verdicts.evidence.DutyTest`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_ebsperf.verdicts import stats


def start_rate(p: float) -> float:
    """The most often a window can begin a spell of misses on a volume whose stationary miss
    rate is ``p``: after a met window, ``p (1 - stay) / (1 - p)``, at most ``p / (1 - p)``
    (independent windows); none while a spell lasts."""
    return min(1.0, p / (1.0 - p)) if p < 1.0 else 1.0


@dataclass(frozen=True)
class SpellsSeen:
    """A run's mean spell of misses (seconds) and its 95 % interval."""

    mean: float
    low: float
    high: float

    def describe(self) -> str:
        high = "unbounded" if not math.isfinite(self.high) else f"{self.high:.1f} s"
        return (f"a mean spell of {self.mean:.1f} s (95 % interval {self.low:.1f} s to "
                f"{high})")


def seen(misses: int, runs: int, last_missed: bool) -> SpellsSeen:
    """The mean spell of a two-state chain estimated from a run's misses: of the missed
    windows followed by another window, the share followed by a miss is the chain's stay
    probability ``s`` (Clopper-Pearson interval), and a spell lasts ``1 / (1 - s)`` on
    average. The estimate is ``misses / runs`` when the last window met the threshold."""
    trials = misses - (1 if last_missed else 0)
    stays = misses - runs
    if trials <= 0:
        return SpellsSeen(float(misses), 1.0, math.inf)
    low, high = stats.clopper_pearson_interval(stays, trials, 0.95)

    def spell(stay: float) -> float:
        return math.inf if stay >= 1.0 else 1.0 / (1.0 - stay)

    return SpellsSeen(spell(stays / trials), spell(low), spell(high))
