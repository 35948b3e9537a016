"""A set of volumes measured together (a RAID0 stripe): what it should deliver.

A stripe spreads random I/O evenly over its members, so N equal members deliver N times one
member's ceiling (S4-04), and N unequal ones N times the slowest member's: the sum of the
members' caps is only reached when they are alike. The instance's EBS-optimized limits bound
the set as a whole (S2-22, S4-06), however many volumes it holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_ebsperf.awsmodel import claims, ebs
from pytest_ebsperf.awsmodel.accounting import is_cap_checkable
from pytest_ebsperf.awsmodel.expect import (
    cap_expectation,
    limits,
    unbounded_floor,
    unbounded_reason,
)
from pytest_ebsperf.awsmodel.instances import EbsLimits
from pytest_ebsperf.awsmodel.types import CAP, INFO, INSTANCE, VOLUME, Expectation, Limit
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import format_quantity


def member_expectation(claim: str, what: str, member: Volume, workload: Workload, *,
                       credits: bool = True, metric: str = "iops", era: str = ebs.NOW
                       ) -> Expectation:
    """One member's own ceiling (no instance limit: the instance bounds the set)."""
    alone = member.replace(instance_type=None)
    return cap_expectation(claim, what, alone, workload, credits=credits, metric=metric,
                           era=era)


def set_expectation(claim: str, what: str, members: Sequence[Volume], workload: Workload, *,
                    credits: bool = True, metric: str = "iops", era: str = ebs.NOW,
                    instance_limits: EbsLimits | None = None) -> Expectation:
    """The CAP expectation of ``members`` measured together with ``workload``.

    Volume side: ``len(members)`` x the slowest member's ceiling (the sum when they are alike).
    Instance side: the first member's instance (or ``instance_limits``), once for the set.
    The policy (CAP or INFO) and duty cycle are the members'.
    """
    if not members:
        raise ValueError("a set needs at least one member.")
    own = [member_expectation(claim, what, m, workload, credits=credits, metric="iops",
                              era=era) for m in members]
    slowest = min(range(len(own)), key=lambda i: own[i].value)
    count, low = len(members), own[slowest].value
    total = sum(e.value for e in own)
    notes = list(own[slowest].notes)
    binding_member = own[slowest].binding
    name = f"{count} x {binding_member.name}" if binding_member else f"{count} volumes"
    if count > 1 and not math.isclose(low * count, total, rel_tol=1e-9):
        notes.append(
            f"The members differ: a stripe spreads I/O evenly, so the slowest member "
            f"({members[slowest].label()}) sets the pace: {count} x "
            f"{format_quantity(low, 'IOPS')}, not the sum of their caps "
            f"({format_quantity(total, 'IOPS')}).")
    url = binding_member.source if binding_member else ""
    found: list[Limit] = [Limit(name, VOLUME, low * count, claim, url)]
    first = members[0]
    if first.instance_type or instance_limits is not None:
        found += [lim for lim in limits(first, workload, credits=credits, era=era,
                                        instance_limits=instance_limits)
                  if lim.kind == INSTANCE]
    binding = min(found, key=lambda lim: lim.iops)
    if binding.kind == INSTANCE and count > 1:
        notes.append(f"The instance's limit binds the set ({binding.name}): more volumes "
                     "add no performance beyond it (S2-22, S4-06).")
    value, unit = binding.iops, "IOPS"
    if metric == "throughput":
        value, unit = binding.iops * workload.bs, "B/s"
    template = own[slowest]
    checkable, reason = is_cap_checkable(members[slowest], workload, metric=metric, era=era)
    if checkable and not math.isfinite(binding.iops):
        checkable, reason = False, (f"No documented ceiling bounds this workload on these "
                                    f"{era} volumes without a known instance: recorded, "
                                    "not judged.")
    floor = unbounded_floor(members[slowest], workload, era)
    if checkable and floor is not None and binding.iops > floor * count:
        checkable, reason = False, unbounded_reason(binding, floor * count, workload)
    notes = [n for n in notes if not n.startswith(("No documented ceiling", "In 2013 no"))]
    if not checkable:
        notes.insert(0, reason)
    return Expectation(
        claim=claim, what=what, policy=CAP if checkable else INFO, value=value, unit=unit,
        binding=binding, limits=tuple(found), low=template.low, high=template.high,
        duty=template.duty, source=claims.source_url(claim, binding.source),
        notes=tuple(notes))
