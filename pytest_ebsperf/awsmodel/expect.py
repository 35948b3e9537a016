"""What fio should measure: every ceiling in fio IOPS at the workload's block size, and the
expectation a claim makes of them (CAP for EBS, FLOOR for instance store)."""

from __future__ import annotations

import math

from pytest_ebsperf.awsmodel import claims, ebs, hdd, instances, sources
from pytest_ebsperf.awsmodel.accounting import (
    accounted_bytes_per_io,
    ebs_ops_per_io,
    instance_ops_per_io,
    is_cap_checkable,
)
from pytest_ebsperf.awsmodel.caps import (
    VolumeCaps,
    delivered_iops,
    has_credits,
    volume_caps,
)
from pytest_ebsperf.awsmodel.ebs import MIB, NOW
from pytest_ebsperf.awsmodel.floor import floor_expectation, instance_store_rate
from pytest_ebsperf.awsmodel.instances import EbsLimits
from pytest_ebsperf.awsmodel.types import (
    CAP,
    INFO,
    INSTANCE,
    VOLUME,
    Expectation,
    Limit,
)
from pytest_ebsperf.awsmodel.volume import DISCOVERED, Volume
from pytest_ebsperf.awsmodel.volume_types import MAGNETIC, is_hdd, is_instance_store, volume_type
from pytest_ebsperf.fio.workload import Workload, format_size

__all__ = ["VolumeCaps", "cap_expectation", "floor_expectation", "limits", "volume_caps"]

def _source(volume: Volume, era: str) -> str:
    if era == ebs.ERA_2013:
        return sources.PIOPS_LAUNCH
    if era == ebs.ERA_2014:
        return sources.DOCS_2014
    kind = volume_type(volume.type)
    return kind.source or claims.source_url(kind.claim)


def _iops_name(volume: Volume, caps: VolumeCaps, burst: bool, era: str) -> str:
    n, kind, vtype = f"{caps.iops:,.0f}", volume_type(volume.type), volume.type
    if kind.iops_from_size is not None:
        base = kind.iops_from_size(volume.size_gib or 0)
        if not kind.bursts or base >= kind.caps(volume, True, era)[0]:
            rate = kind.iops_from_size_rule.partition(",")[0] or "from the size"
            return f"{vtype} baseline {n} IOPS ({rate}, no burst above it)"
        return f"{vtype} burst {n} IOPS" if burst else \
            f"{vtype} baseline {n} IOPS (no burst credits)"
    if is_hdd(volume.type):
        level = "burst" if burst else "baseline"
        return f"{volume.type} {level} {caps.iops:,.4g} I/Os per second (1 MiB credit each)"
    if kind.iops is not None and kind.iops.default is None and caps.iops < (volume.iops or 0):
        if era != NOW:
            return f"{volume.type} {n} IOPS (the {era} per-volume maximum)"
        return f"{volume.type} {n} IOPS (the most a non-Nitro instance delivers)"
    if kind.family == MAGNETIC:
        return f"Magnetic documented maximum {n} IOPS"
    return f"{volume.type} provisioned {n} IOPS"


def _volume_limits(volume: Volume, workload: Workload, credits: bool, era: str) -> list[Limit]:
    caps = volume_caps(volume, credits=credits, era=era)
    seq = not workload.is_random
    ops = ebs_ops_per_io(volume.type, workload.bs, sequential=seq, era=era)
    spent = accounted_bytes_per_io(volume.type, workload.bs, sequential=seq, era=era)
    claim, url = volume_type(volume.type).claim, _source(volume, era)
    name = _iops_name(volume, caps, has_credits(volume, credits), era)
    if ops != 1:
        name += f", {ops:g} EBS I/Os per {format_size(workload.bs)} I/O"
    tput = f"{volume.type} throughput {caps.throughput_mibps:,.4g} MiB/s"
    if spent > workload.bs:
        tput += " (1 MiB credit per I/O)"
    if era == ebs.ERA_2013 and seq and volume_type(volume.type).iops is not None:
        # seed 004 moved 41.9 MB/s sequentially with one 2,000-IOPS volume: more than 2,000 x
        # 16 KiB, so the period's IOPS did not bound sequential I/O (how it was counted is
        # not documented); only the instance's limit is a ceiling then
        name = ("io1 2013: sequential I/O not bound by 2,000 x 16 KiB units (seed 004 moved "
                "41.9 MB/s on one volume)")
        ops = 0.0
    tput = tput if math.isfinite(caps.throughput_bps) else \
        f"{volume.type} throughput: no per-volume ceiling published in {era}"
    return [
        Limit(name, VOLUME, caps.iops / ops if ops else math.inf, claim, url),
        Limit(tput, VOLUME, caps.throughput_bps / spent, claim, url),
    ]


def _table_limits(volume: Volume) -> EbsLimits | None:
    """The built-in table's limits; none for a discovered type the table lacks (the caller
    should have passed the discovered limits, and a run must not stop over it)."""
    itype = volume.instance_type
    if not itype:
        return None
    if volume.provenance.get("instance_type") == DISCOVERED and not instances.is_known(itype):
        return None
    return instances.ebs_limits(itype)


def _instance_limits(
    volume: Volume, workload: Workload, sustained: bool, given: EbsLimits | None
) -> list[Limit]:
    itype = volume.instance_type or "instance"
    lim = given if given is not None else _table_limits(volume)
    if lim is None:
        return []
    level = "baseline" if sustained else "maximum"
    ops = instance_ops_per_io(workload.bs, sequential=not workload.is_random)
    url = sources.EC2_EBS_OPTIMIZED
    return [
        Limit(f"{itype} EBS-optimized {level} {lim.iops(sustained):,} IOPS (16 KiB basis)",
              INSTANCE, lim.iops(sustained) / ops, "B-EBSOPT", url),
        Limit(f"{itype} EBS-optimized {level} {lim.bytes_per_s(sustained) / 1e6:,.6g} MB/s",
              INSTANCE, lim.bytes_per_s(sustained) / workload.bs, "B-EBSOPT", url),
    ]  # fmt: skip


def limits(
    volume: Volume,
    workload: Workload,
    *,
    credits: bool = True,
    sustained_instance: bool = False,
    era: str = NOW,
    instance_limits: EbsLimits | None = None,
) -> tuple[Limit, ...]:
    """Every ceiling on fio's IOPS for this volume and workload, at the workload's block size.

    Volume: its IOPS cap divided by the EBS operations each fio I/O costs (split I/Os cost
    several), and its throughput cap divided by the bytes each I/O uses. Instance, when the
    type is known (or ``instance_limits`` are given, e.g. discovered): EBS-optimized IOPS
    (see :func:`~pytest_ebsperf.awsmodel.accounting.instance_ops_per_io` for the 16 KiB basis)
    and MB/s x 10^6 / bs. ``sustained_instance`` uses the baseline instead of the 30-minute
    maximum. Instance store has no EBS ceilings: the result is empty.
    """
    if is_instance_store(volume.type):
        return ()
    found = _volume_limits(volume, workload, credits, era)
    found += _instance_limits(volume, workload, sustained_instance, instance_limits)
    return tuple(found)


def expected_iops(volume: Volume, workload: Workload, *, credits: bool = True,
                  era: str = NOW, instance_limits: EbsLimits | None = None) -> float:
    """The fio IOPS the models expect of ``workload``: the lowest of its ceilings
    (:func:`limits`), or instance store's published floor. What the queue-depth planner
    (:func:`~pytest_ebsperf.awsmodel.queue.plan_queue`) sizes the queue for."""
    if is_instance_store(volume.type):
        return instance_store_rate(volume, workload)
    found = limits(volume, workload, credits=credits, era=era, instance_limits=instance_limits)
    return min((limit.iops for limit in found), default=0.0)


def _notes(volume: Volume, binding: Limit, given: EbsLimits | None, era: str) -> list[str]:
    notes: list[str] = []
    itype = volume.instance_type
    if itype and given is None and not instances.is_known(itype):
        notes.append(f"{itype} is not in the built-in instance table: no instance limits.")
    if itype and given is None and (note := instances.ebs_note(itype)):
        notes.append(note)
    lim = given or (_table_limits(volume) if itype and instances.is_known(itype) else None)
    if binding.kind == INSTANCE and lim is not None and lim.bursts:
        notes.append(
            f"The instance maximum lasts 30 minutes in 24 hours, then the baseline "
            f"({lim.baseline_iops:,} IOPS, {lim.baseline_mbps:g} MB/s) applies (B-EBSOPT)."
        )
    provisioned = volume_type(volume.type).iops
    nitro_bound = provisioned is not None and provisioned.default is None and \
        volume.iops and not volume.nitro
    nitro_bound = nitro_bound and era == NOW
    if nitro_bound and delivered_iops(volume, era) < (volume.iops or 0):
        notes.append(f"Above 32,000 IOPS {volume.type} delivers only on Nitro instances.")
    if era != NOW:
        notes.append(f"Seed-era ({era}) limits, not today's.")
    return notes


def cap_expectation(
    claim: str,
    what: str,
    volume: Volume,
    workload: Workload,
    *,
    credits: bool = True,
    metric: str = "iops",
    sustained_instance: bool = False,
    era: str = NOW,
    instance_limits: EbsLimits | None = None,
) -> Expectation:
    """The CAP expectation: the lowest of :func:`limits`, with the B-SLA duty cycle.

    ``metric="throughput"`` gives the value in B/s. A workload whose fio count is not bound
    by the ceilings (sequential small blocks, Magnetic) gets policy INFO with the reason.
    """
    if is_instance_store(volume.type):
        raise ValueError("Instance store has no ceiling: use floor_expectation().")
    found = limits(volume, workload, credits=credits, sustained_instance=sustained_instance,
                   era=era, instance_limits=instance_limits)  # fmt: skip
    binding = min(found, key=lambda lim: lim.iops)
    checkable, reason = is_cap_checkable(volume, workload, metric=metric, era=era)
    if checkable and not math.isfinite(binding.iops):
        checkable, reason = False, (
            f"No documented ceiling bounds this workload on a {era} {volume.type} volume "
            f"without a known instance ({binding.name}): recorded, not judged.")
    floor = unbounded_floor(volume, workload, era)
    if checkable and floor is not None and binding.iops > floor:
        checkable, reason = False, unbounded_reason(binding, floor, workload)
    notes = _notes(volume, binding, instance_limits, era)
    kind = volume_type(volume.type)
    if kind.family == MAGNETIC:
        notes[:0] = hdd.standard_notes()
    elif not checkable:
        notes.insert(0, reason)
    value, unit = binding.iops, "IOPS"
    if metric == "throughput":
        value, unit = binding.iops * workload.bs, "B/s"
    return Expectation(
        claim=claim,
        what=what,
        policy=CAP if checkable else INFO,
        value=value,
        unit=unit,
        binding=binding,
        limits=found,
        low=0.90,
        high=1.10,
        duty=kind.duty,
        source=claims.source_url(claim, binding.source),
        notes=tuple(notes),
    )


def unbounded_floor(volume: Volume, workload: Workload, era: str) -> float | None:
    """fio IOPS a 2013 io1 volume surely sustains for sequential I/O (its provisioned IOPS
    in 16 KiB units), where no ceiling was published; None elsewhere. A set (or volume)
    reaches an instance limit for sure only when its members' floors add up to it."""
    if era != ebs.ERA_2013 or volume_type(volume.type).iops is None or workload.is_random:
        return None
    caps = volume_caps(volume, era=era)
    return caps.iops * caps.io_unit_bytes / workload.bs


def unbounded_reason(binding: Limit, floor: float, workload: Workload) -> str:
    mbps = floor * workload.bs / 1e6
    return (f"In 2013 no per-volume io1 throughput ceiling was published: the volume surely "
            f"moves its IOPS in 16 KiB units ({mbps:,.4g} MB/s), and may go up to "
            f"{binding.name}; a figure in between is recorded, not judged (seed 004 saw "
            "41.9 MB/s on one 2,000-IOPS volume).")


def crossover_bs(volume: Volume, *, credits: bool = True, era: str = NOW) -> float:
    """Block size in bytes above which the volume's throughput cap binds before its IOPS
    cap (S2-08): io1 4,000 IOPS -> 32 KiB in 2014, 128 KiB today."""
    caps = volume_caps(volume, credits=credits, era=era)
    return ebs.crossover_block_size(caps.iops, caps.throughput_bps / MIB)
