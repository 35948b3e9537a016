"""Trends per check: each identity's runs, its change points and whether one is recent and
for the worse (what a nightly gate fails on)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_ebsperf.trends.changes import DEFAULT_ALPHA, Change, change_points, worsening_since
from pytest_ebsperf.trends.store import Identity, Point

#: A gate fails on a change for the worse that starts within this many latest runs.
DEFAULT_SINCE = 10
#: Facets whose change between two runs is marked on the charts.
FACETS = ("ami", "kernel", "instance type", "fio")


@dataclass(frozen=True)
class Trend:
    """One check's history: its runs, where it changed, and the change a gate fails on."""

    identity: Identity
    points: Sequence[Point]
    changes: Sequence[Change]
    worsening: Change | None

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


def analyse(series: Mapping[Identity, Sequence[Point]], *, alpha: float = DEFAULT_ALPHA,
            since: int = DEFAULT_SINCE) -> list[Trend]:
    """Every identity's trend, worst news first (a recent change for the worse, then any
    change, then the rest), each by claim."""
    trends = []
    for identity, points in series.items():
        values = [p.measured for p in points]
        changes = change_points(values, alpha=alpha)
        worse = worsening_since(changes, len(values), since,
                                higher_is_better=identity.higher_is_better)
        trends.append(Trend(identity, points, changes, worse))
    return sorted(trends, key=lambda t: (t.worsening is None, not t.changes,
                                         t.identity.claim, t.identity.key))


def describe(trend: Trend) -> str:
    """``-14.9 % from run 4 (p 2e-05)``, or ``steady`` / the latest change."""
    change = trend.worsening or (trend.changes[-1] if trend.changes else None)
    if change is None:
        return "steady"
    run = trend.points[change.index].run_id
    return (f"{change.relative * 100:+.1f} % from run {run} (p {change.p_value:.1g})"
            + ("" if trend.worsening is None else ", worse"))
