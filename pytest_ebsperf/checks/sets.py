"""Sets of volumes measured together (RAID0, the raid0 suite): a set that falls short has each
member measured alone and the slow one named. (A runner over the first N volumes of a set is
:meth:`pytest_ebsperf.checks.claim_runner.ClaimRunner.over`.)
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace

from pytest_ebsperf.awsmodel.stripes import member_expectation
from pytest_ebsperf.checks.core import CheckCore
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts.outcome import Verdict


def name_slow_member(runner: CheckCore, found: Verdict, workload: Workload, metric: str,
                     credits: bool | None) -> Verdict:
    """The set fell short: measure each member alone (read-only) and name the slow one.

    Each member runs the set's pattern as reads at the same block size for a short
    while, against its own ceiling; the lowest share of its ceiling is named."""

    target = runner.target
    pattern = {"randwrite": "randread", "randrw": "randread", "write": "read",
               "rw": "read", "readwrite": "read"}.get(workload.pattern, workload.pattern)
    runtime = min(workload.runtime_s, max(3.0, workload.runtime_s / 4))
    solo = copy.copy(runner)
    solo.set_count = None  # the queue is sized for one member, not the set
    alone = solo.workload(pattern, workload.bs).replace(runtime_s=runtime)
    if credits is None:
        credits = runner.volume.credits_assumed
    figures: list[tuple[float, str, float, float]] = []
    members = runner.session.set_members(runner.volume, len(target.members))
    for path, volume in zip(target.members, members):
        mine = runner.session.member_target(target, path)
        expect = member_expectation(found.claim, found.what, volume, alone,
                                    credits=credits, metric="iops",
                                    era=runner.settings.era)
        if target.emulated_set is not None:
            target.emulated_set.prepare(alone)
        got = runner.run(alone, target=mine, phase="probe")
        share = got.total_iops / expect.value if expect.value else math.nan
        figures.append((share, path, got.total_iops, expect.value))
    figures.sort()
    worst = figures[0]
    said = "; ".join(f"{path} {format_quantity(iops, 'IOPS')} of "
                     f"{format_quantity(cap, 'IOPS')} ({share:.0%})"
                     for share, path, iops, cap in figures)
    if worst[0] < 0.9 and (len(figures) == 1 or figures[1][0] >= 0.9 or
                           worst[0] < figures[1][0] * 0.9):
        named = (f" Measured alone ({alone.label()}): {said}. The slow member is "
                 f"{worst[1]}: {format_quantity(worst[2], 'IOPS')}, {worst[0]:.0%} of its "
                 f"{format_quantity(worst[3], 'IOPS')}; a stripe runs at the pace of its "
                 "slowest member.")
    elif worst[0] < 0.9:
        named = (f" Measured alone ({alone.label()}): {said}. Several members fall short "
                 "of their own ceilings.")
    else:
        named = (f" Measured alone ({alone.label()}): {said}. Every member reaches its "
                 "ceiling alone: the set falls short only together (the instance, the "
                 "host or the stripe's layout).")
    details = {**found.details, "members_alone": [
        {"device": path, "iops": iops, "expected": cap, "share": share}
        for share, path, iops, cap in figures]}
    return replace(found, message=found.message + named, details=details)

