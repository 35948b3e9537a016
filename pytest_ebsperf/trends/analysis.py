"""Trends per check: each identity's runs, its change points and whether one is recent and
for the worse (what a nightly gate fails on)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_ebsperf.trends.changes import (
    DEFAULT_ALPHA,
    DEFAULT_DRIFT_ALPHA,
    Change,
    Drift,
    RunCorrelation,
    change_points,
    drift,
    run_correlation,
    worsening_since,
)
from pytest_ebsperf.trends.store import Identity, Point
from pytest_ebsperf.units import format_quantity

#: A gate fails on a change for the worse that starts within this many latest runs.
DEFAULT_SINCE = 10
#: Facets whose change between two runs is marked on the charts.
FACETS = ("ami", "kernel", "instance type", "fio")


@dataclass(frozen=True)
class Trend:
    """One check's history: its runs, where it changed, the change a gate fails on, and a
    drift for the worse still going on (a gate fails on it too)."""

    identity: Identity
    points: Sequence[Point]
    changes: Sequence[Change]
    worsening: Change | None
    drift: Drift | None = None
    #: the runs' lag-1 correlation around what was fitted: the level assumes it is 0
    correlation: RunCorrelation | None = None

    @property
    def worse(self) -> bool:
        """The gate fails on this check: a recent step for the worse, or a drift."""
        return self.worsening is not None or self.drift is not None

    @property
    def last(self) -> Point:
        return self.points[-1]

    def facet_changes(self) -> list[tuple[int, str]]:
        """(index, "kernel 6.1 -> 6.18") where a facet differs from the run before."""
        found = []
        for index in range(1, len(self.points)):
            before, now = self.points[index - 1].facets, self.points[index].facets
            for name in FACETS:
                if before.get(name) != now.get(name) and now.get(name) is not None:
                    found.append((index, (f"{name} {before.get(name) or '-'} -> "
                                         f"{now.get(name)}")))
        return found


def gate(values: Sequence[float], *, higher_is_better: bool = True,
         alpha: float = DEFAULT_ALPHA, since: int = DEFAULT_SINCE,
         drift_alpha: float = DEFAULT_DRIFT_ALPHA
         ) -> tuple[list[Change], Change | None, Drift | None]:
    """The history gate on one series of runs: its change points, the latest change for the
    worse within the last ``since`` runs and a drift for the worse still going on (the gate
    fails on either). A flat series of independent runs fails it with probability at most
    ``alpha + drift_alpha``."""
    changes = change_points(values, alpha=alpha)
    worse = worsening_since(changes, len(values), since, higher_is_better=higher_is_better)
    moving = drift(values, alpha=drift_alpha, since=since, higher_is_better=higher_is_better)
    return changes, worse, moving


def analyse(series: Mapping[Identity, Sequence[Point]], *, alpha: float = DEFAULT_ALPHA,
            since: int = DEFAULT_SINCE, drift_alpha: float = DEFAULT_DRIFT_ALPHA
            ) -> list[Trend]:
    """Every identity's trend, worst news first (a recent change or a drift for the worse,
    then any change, then the rest), each by claim."""
    trends = []
    for identity, points in series.items():
        values = [p.measured for p in points]
        changes, worse, moving = gate(values, higher_is_better=identity.higher_is_better,
                                      alpha=alpha, since=since, drift_alpha=drift_alpha)
        trends.append(Trend(identity, points, changes, worse, moving,
                            run_correlation(values, changes, moving)))
    return sorted(trends, key=lambda t: (not t.worse, not t.changes,
                                         t.identity.claim, t.identity.key))


def describe_drift(trend: Trend) -> str:
    """``drift -119 IOPS/run (-3.0 %/run) from run 6 (p 2e-11)``."""

    moving = trend.drift
    if moving is None:
        return ""
    run = trend.points[moving.start].run_id
    slope = format_quantity(abs(moving.slope), trend.identity.unit)
    sign = "-" if moving.slope < 0 else "+"
    return (f"drift {sign}{slope}/run ({moving.relative_per_run * 100:+.1f} %/run) from run "
            f"{run} (p {moving.p_value:.1g})")


def describe_assumption(trend: Trend) -> str:
    """What a gate's level assumes of this series, and whether its runs bear it out."""
    found = trend.correlation
    if found is None:
        return (f"the level assumes runs independent of each other; {len(trend.points)} runs "
                "are too few to tell")
    said = (f"the level assumes runs independent of each other: their lag-1 correlation "
            f"around the fit is {found.value:+.2f} (+-{found.half_width:.2f} at 95 % if they "
            "are)")
    if not found.correlated:
        return said + ", consistent with that"
    return (said + ": these runs are correlated, and flat series of correlated runs alarm "
            "more often than the level (docs/benchmarks.md, 'The history gate over the "
            "cells')")


def describe(trend: Trend) -> str:
    """``-14.9 % from run 4 (p 2e-05)``, a drift, or ``steady`` / the latest change."""
    if trend.worsening is None and trend.drift is not None:
        return describe_drift(trend) + ", worse"
    change = trend.worsening or (trend.changes[-1] if trend.changes else None)
    if change is None:
        return "steady"
    run = trend.points[change.index].run_id
    return (f"{change.relative * 100:+.1f} % from run {run} (p {change.p_value:.1g})"
            + ("" if trend.worsening is None else ", worse"))
