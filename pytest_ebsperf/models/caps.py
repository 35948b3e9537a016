"""A volume's own ceilings, as EBS counts them: IOPS in EBS I/Os, throughput in bytes/s.

:func:`volume_caps` is what an emulated volume's kernel throttle is configured from, so it
follows the formulas of claims.md Part B exactly and adds no tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_ebsperf.errors import VolumeSpecError
from pytest_ebsperf.models import ebs, hdd, instances
from pytest_ebsperf.models.ebs import MIB, NOW
from pytest_ebsperf.volume import HDD_TYPES, Volume

#: First year each type existed; asking for an earlier era is a mistake, not a model.
INTRODUCED: dict[str, int] = {
    "instance-store": 2006,
    "standard": 2008,
    "io1": 2012,
    "gp2": 2014,
    "st1": 2016,
    "sc1": 2016,
    "gp3": 2020,
    "io2": 2020,
}


@dataclass(frozen=True)
class VolumeCaps:
    """Ceilings of one volume: ``iops`` in EBS-counted I/Os per second, ``throughput_bps`` in
    bytes per second, and ``io_unit_bytes``, the largest I/O EBS counts as one (B-IOACCT)."""

    iops: float
    throughput_bps: float
    io_unit_bytes: int

    @property
    def throughput_mibps(self) -> float:
        """The throughput ceiling in MiB/s, the unit EBS volume limits are documented in."""
        return self.throughput_bps / MIB


def io_unit_bytes(volume_type: str, era: str = NOW) -> int:
    """Largest I/O EBS counts as one operation: 256 KiB SSD, 1 MiB HDD, 16 KiB in 2013."""
    if volume_type in HDD_TYPES:
        return ebs.HDD_IO_UNIT
    if volume_type == "instance-store":
        return 4096  # the published figures' I/O size; no EBS accounting applies
    return ebs.SSD_IO_UNIT_2013 if era == ebs.ERA_2013 else ebs.SSD_IO_UNIT


def era_applies(volume_type: str, era: str = NOW) -> bool:
    """True when ``volume_type`` existed in ``era`` (gp3 did not in 2014, for example)."""
    ebs.check_era(era)
    return era == NOW or INTRODUCED.get(volume_type, 9999) <= int(era)


def has_credits(volume: Volume, credits: bool = True) -> bool:
    """Whether burst credits are available: asked for, and BurstBalance not known to be 0."""
    return credits and (volume.burst_balance_pct is None or volume.burst_balance_pct > 0)


def require_size(volume: Volume) -> int:
    """The volume's size, or a :class:`VolumeSpecError` saying which option to pass."""
    if volume.size_gib is None:
        raise VolumeSpecError(
            f"A {volume.type} volume's limits depend on its size, which is unknown. "
            "Pass --volume-size=GIB."
        )
    return volume.size_gib


def require_iops(volume: Volume) -> int:
    """The provisioned IOPS, or a :class:`VolumeSpecError` saying which option to pass."""
    if volume.iops is None:
        raise VolumeSpecError(
            f"A {volume.type} volume's limits follow from its provisioned IOPS, which are "
            "unknown. Pass --volume-iops=N."
        )
    return volume.iops


def delivered_iops(volume: Volume, era: str = NOW) -> int:
    """Provisioned IOPS an io1/io2 volume can deliver: above 32,000 only on Nitro."""
    prov, size = require_iops(volume), require_size(volume)
    if volume.type == "io1":
        return min(prov, ebs.io1_max_iops(size, volume.nitro, era))
    return min(prov, ebs.io2_max_iops(size, volume.nitro))


def volume_caps(volume: Volume, *, credits: bool = True, era: str = NOW) -> VolumeCaps:
    """The volume's own IOPS and throughput ceilings (no instance limits, no tolerance).

    ``credits=False`` gives gp2's and st1/sc1's baseline, as after the bucket ran dry; a
    known ``burst_balance_pct`` of 0 does the same. ``era`` reproduces seed-era limits.
    Magnetic (``standard``) has no ceiling: the upper ends of the documented ranges (200
    IOPS, 90 MiB/s) are returned so an emulated Magnetic volume is plausible. Instance store
    has no EBS ceiling: its published 4 KiB read IOPS and an unlimited throughput are returned.
    """
    if not era_applies(volume.type, era):
        raise ValueError(f"{volume.type} did not exist in {era}; compare with era='now'.")
    unit = io_unit_bytes(volume.type, era)
    burst = has_credits(volume, credits)
    vtype = volume.type
    if vtype == "gp2":
        size = require_size(volume)
        iops: float = ebs.gp2_max_iops(size, burst, era)
        mibps = ebs.gp2_max_throughput_mibps(size, burst, era)
    elif vtype == "gp3":
        iops = volume.iops if volume.iops is not None else ebs.GP3_DEFAULT_IOPS
        mibps = volume.throughput_mibps or ebs.GP3_DEFAULT_MIBPS
    elif vtype == "io1":
        iops = delivered_iops(volume, era)
        mibps = ebs.io1_max_throughput_mibps(int(iops), volume.nitro, era)
    elif vtype == "io2":
        iops = delivered_iops(volume, era)
        mibps = ebs.io2_max_throughput_mibps(int(iops))
    elif vtype in HDD_TYPES:
        size = require_size(volume)
        iops = hdd.hdd_small_io_iops_cap(vtype, size, burst)
        mibps = hdd.hdd_max_mibps(vtype, size, burst)
    elif vtype == "standard":
        iops, mibps = hdd.STANDARD_IOPS_RANGE[1], hdd.STANDARD_TPUT_MIBPS_RANGE[1]
    elif vtype == "instance-store":
        published = instances.instance_store_iops(volume.instance_type or "")
        if published is None:
            raise VolumeSpecError(
                f"No published instance-store IOPS for {volume.instance_type or 'an unknown'} "
                "instance type; pass an --instance-type of the i3, i3en or i4i families."
            )
        return VolumeCaps(float(published[0]), math.inf, unit)
    else:
        raise VolumeSpecError(f"{vtype!r} is not a volume type the models know.")
    return VolumeCaps(float(iops), mibps * MIB, unit)
