"""Instance-store expectations: AWS publishes "up to" random 4 KiB IOPS per instance type,
measured over all instance-store volumes at queue-depth saturation (B-IS). A healthy device
reaches at least 90 % of its share of that figure: a FLOOR, not a cap."""

from __future__ import annotations

import math

from pytest_ebsperf.awsmodel import claims, instances, sources
from pytest_ebsperf.awsmodel.types import FLOOR, INFO, INSTANCE, Expectation, Limit
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.fio.workload import Workload

PUBLISHED_BS = 4096
#: Stand-in for types without a published figure: i4i.large, the smallest current one (B-IS).
UNPUBLISHED_STAND_IN: tuple[int, int] = (50_000, 27_500)


def mixed_iops(read_iops: float, write_iops: float, read_fraction: float) -> float:
    """IOPS of a read/write mix when reads and writes take their published time each.

    Each I/O takes ``1/read`` or ``1/write`` seconds of device time, so the mix runs at
    ``1 / (f/read + (1-f)/write)`` -- a weighted harmonic mean, never above either figure.
    """
    if read_fraction >= 1.0:
        return read_iops
    if read_fraction <= 0.0:
        return write_iops
    return 1.0 / (read_fraction / read_iops + (1.0 - read_fraction) / write_iops)


def instance_store_rate(
    volume: Volume, workload: Workload | None = None, *, devices: int = 1
) -> float:
    """IOPS to expect from ``devices`` of the instance's instance-store devices for this
    workload's read/write mix (reads only when no workload is given).

    Used to size queue depths and emulated devices. Types without a published figure get the
    smallest current published one (i4i.large, 50,000 read / 27,500 write) as a stand-in.
    """
    itype = volume.instance_type or ""
    read, write = instances.instance_store_iops(itype) or UNPUBLISHED_STAND_IN
    total = instances.instance_store_devices(itype) or 1
    fraction = 1.0 if workload is None else workload.read_fraction
    return mixed_iops(read, write, fraction) * min(devices, total) / total


def _info(claim: str, what: str, why: str) -> Expectation:
    return Expectation(
        claim=claim, what=what, policy=INFO, value=math.nan, unit="IOPS", binding=None,
        low=0.90, high=None, source=claims.source_url(claim, sources.AWSDOCS_STORAGE_OPTIMIZED),
        notes=(why,),
    )  # fmt: skip


def floor_expectation(
    claim: str, what: str, volume: Volume, workload: Workload, *, devices: int = 1
) -> Expectation:
    """FLOOR expectation for instance store: measured >= 90 % of the published IOPS.

    ``devices`` is how many of the instance's instance-store devices the workload drives
    together; the published figure covers all of them, so each device's share is
    ``published x devices / total``. Workloads other than random 4 KiB I/O, and types without
    a published figure, get policy INFO (recorded, never failed) with the reason.
    """
    itype = volume.instance_type or ""
    published = instances.instance_store_iops(itype)
    total = instances.instance_store_devices(itype) or 1
    if published is None:
        return _info(claim, what, f"AWS publishes no instance-store IOPS for "
                     f"{itype or 'this instance type'}; the result is recorded (B-IS).")  # fmt: skip
    if not workload.is_random or workload.bs != PUBLISHED_BS:
        return _info(claim, what, "AWS publishes instance-store IOPS for random 4 KiB I/O "
                     "only; other workloads are recorded (B-IS).")  # fmt: skip
    read, write = published
    share = min(devices, total) / total
    value = instance_store_rate(volume, workload, devices=devices)
    name = (
        f"{itype} published 4 KiB random IOPS ({read:,} read / {write:,} write over "
        f"{total} device{'s' if total > 1 else ''})"
    )
    notes = []
    if share < 1:
        notes.append(f"The published figure covers {total} devices; {devices} tested.")
    if workload.writes:
        notes.append("Write IOPS drop as an SSD fills; leave ~10 % unpartitioned (B-IS).")
    binding = Limit(name, INSTANCE, value, "B-IS", sources.AWSDOCS_STORAGE_OPTIMIZED)
    return Expectation(
        claim=claim,
        what=what,
        policy=FLOOR,
        value=value,
        unit="IOPS",
        binding=binding,
        limits=(binding,),
        low=0.90,
        high=None,
        source=claims.source_url(claim, sources.AWSDOCS_STORAGE_OPTIMIZED),
        notes=tuple(notes),
    )
