"""How EBS counts an fio I/O (B-IOACCT), and so when fio's numbers can be held to a cap.

EBS counts SSD I/O in units of up to 256 KiB and HDD I/O in units of up to 1 MiB. An I/O
larger than the unit is split and costs several operations; physically sequential smaller
I/Os are merged into one. fio counts the I/Os it submitted, so:

* random I/O: one fio I/O costs ``ceil(bs / unit)`` EBS operations (at least one);
* sequential I/O: EBS may merge, so one fio I/O costs as little as ``bs / unit``. How much
  merging happens is not documented, so a sequential small-block IOPS figure is neither held
  down by the provisioned IOPS nor bounded by them: it is not a cap check (S4-05).

On st1/sc1 every I/O of 1 MiB or less also costs a full 1 MiB of throughput credit, which is
why their small random I/O runs at the throughput ceiling in MiB/s as I/Os per second (S3-06).
"""

from __future__ import annotations

import math

from pytest_ebsperf.awsmodel.caps import io_unit_bytes, volume_caps
from pytest_ebsperf.awsmodel.ebs import NOW, SSD_IO_UNIT
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import MAGNETIC, STORE, is_hdd, volume_type
from pytest_ebsperf.fio.workload import Workload, format_size

METRICS: tuple[str, ...] = ("iops", "throughput")


def ebs_ops_per_io(volume_type: str, bs: int, *, sequential: bool, era: str = NOW) -> float:
    """EBS-counted operations for one fio I/O of ``bs`` bytes.

    Random: ``ceil(bs / unit)``, at least 1 (1 MiB on SSD = 4). Sequential: ``bs / unit``,
    the fully merged (or evenly split) cost -- a lower bound on what EBS counts.
    """
    unit = io_unit_bytes(volume_type, era)
    if sequential:
        return bs / unit
    return float(max(1, math.ceil(bs / unit)))


def instance_ops_per_io(bs: int, *, sequential: bool) -> float:
    """Operations one fio I/O counts against an instance's EBS IOPS limit.

    AWS publishes MaximumIops measured with 16 KiB I/O and MaximumThroughput with 128 KiB
    I/O (B-EBSOPT). The IOPS figure is read as a rate of operations that does not grow for
    smaller I/O (4 KiB I/Os do not earn four times the IOPS) and is not charged in 16 KiB
    units for larger ones; an operation is an EBS I/O of up to 256 KiB, as on the volume.
    Above ~32 KiB the throughput figure is the lower limit for every type in the table, so
    the choice only matters between 16 and ~32 KiB.
    """
    if sequential:
        return bs / SSD_IO_UNIT
    return float(max(1, math.ceil(bs / SSD_IO_UNIT)))


def accounted_bytes_per_io(volume_type: str, bs: int, *, sequential: bool, era: str = NOW) -> float:
    """Bytes of the volume's throughput allowance one fio I/O uses.

    Actual bytes, except random I/O on st1/sc1, where each I/O of up to 1 MiB costs 1 MiB.
    """
    if is_hdd(volume_type) and not sequential:
        return ebs_ops_per_io(volume_type, bs, sequential=False, era=era) * io_unit_bytes(
            volume_type, era
        )
    return float(bs)


def merges(volume: Volume, workload: Workload, era: str = NOW) -> bool:
    """True when EBS may merge the workload's I/Os (sequential, smaller than the unit)."""
    return not workload.is_random and workload.bs < io_unit_bytes(volume.type, era)


def _throughput_bounds(volume: Volume, workload: Workload, era: str) -> tuple[float, float]:
    """(no merging, full merging) volume throughput in bytes/s for a merging workload."""
    caps = volume_caps(volume, era=era)
    bs = workload.bs
    random_cost = accounted_bytes_per_io(volume.type, bs, sequential=False, era=era)
    unmerged = min(caps.iops * bs, caps.throughput_bps * bs / random_cost)
    merged = min(caps.iops * caps.io_unit_bytes, caps.throughput_bps)
    return unmerged, merged


def is_cap_checkable(
    volume: Volume, workload: Workload, *, metric: str = "iops", era: str = NOW
) -> tuple[bool, str]:
    """Can fio's ``metric`` on this workload be held to the volume's documented ceilings?

    Returns ``(checkable, reason)``; the reason is a sentence for reports either way.
    Throughput of a sequential small-block job is checkable only when the throughput cap
    binds even with no merging at all (e.g. gp3 3,000 IOPS x 64 KiB > 125 MiB/s).
    """
    if metric not in METRICS:
        raise ValueError(f"{metric!r} is not a metric. Valid metrics: {', '.join(METRICS)}.")
    kind = volume_type(volume.type)
    if kind.family == MAGNETIC:
        return False, (
            "Magnetic (standard) volumes are best effort with no documented ceiling, so the "
            "result is recorded, not judged (B-STD)."
        )
    if kind.family == STORE:
        return False, (
            "Instance store has no EBS ceiling; its published IOPS are a floor (B-IS)."
        )
    unit = format_size(io_unit_bytes(volume.type, era))
    if not merges(volume, workload, era):
        how = "random" if workload.is_random else "sequential"
        return True, (
            f"{how.capitalize()} {format_size(workload.bs)} I/O: EBS counts every fio I/O "
            f"(split into {unit} operations when larger), so the ceilings apply (B-IOACCT)."
        )
    if metric == "throughput":
        unmerged, merged = _throughput_bounds(volume, workload, era)
        if unmerged >= merged * (1 - 1e-9):
            return True, (
                f"Sequential {format_size(workload.bs)} I/O: the throughput cap binds whether "
                "or not EBS merges the I/Os, so it applies (B-IOACCT)."
            )
    return False, (
        f"EBS merges sequential I/Os smaller than {unit}, so fio counts more I/Os than EBS "
        f"does and the {volume.type} ceilings do not bound fio's {metric} for this workload "
        f"(B-IOACCT, S4-05). Use a random pattern, or bs >= {unit}."
    )
