"""A volume's own ceilings, as EBS counts them: IOPS in EBS I/Os, throughput in bytes/s.

:func:`volume_caps` is what an emulated volume's kernel throttle is configured from, so it
follows the formulas of claims.md Part B exactly and adds no tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ebsperf.awsmodel import ebs, volume_types
from pytest_ebsperf.awsmodel.ebs import MIB, NOW
from pytest_ebsperf.awsmodel.volume import Volume


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
    unit = volume_types.volume_type(volume_type).io_unit_bytes
    return ebs.SSD_IO_UNIT_2013 if era == ebs.ERA_2013 and unit == ebs.SSD_IO_UNIT else unit


def era_applies(volume_type: str, era: str = NOW) -> bool:
    """True when ``volume_type`` existed in ``era`` (gp3 did not in 2014, for example)."""
    ebs.check_era(era)
    kind = volume_types.known(volume_type)
    return era == NOW or (kind is not None and kind.launched <= int(era))


def has_credits(volume: Volume, credits: bool = True) -> bool:
    """Whether burst credits are available: asked for, and BurstBalance not known to be 0."""
    return credits and volume.credits_assumed


def delivered_iops(volume: Volume, era: str = NOW) -> int:
    """Provisioned IOPS a provisioned-IOPS volume can deliver (io1/io2: above 32,000 only on
    Nitro): its caps' IOPS."""
    return int(volume_types.caps_mibps(volume, era=era)[0])


def volume_caps(volume: Volume, *, credits: bool = True, era: str = NOW) -> VolumeCaps:
    """The volume's own IOPS and throughput ceilings (no instance limits, no tolerance).

    ``credits=False`` gives gp2's and st1/sc1's baseline, as after the bucket ran dry; a
    known ``burst_balance_pct`` of 0 does the same. ``era`` reproduces seed-era limits.
    The type's record says which model sets them (:mod:`~pytest_ebsperf.awsmodel.volume_types`):
    Magnetic has no ceiling (the upper ends of the documented ranges, 200 IOPS and 90 MiB/s,
    so an emulated Magnetic volume is plausible); instance store has no EBS ceiling (its
    published 4 KiB read IOPS and an unlimited throughput).
    """
    if not era_applies(volume.type, era):
        raise ValueError(f"{volume.type} did not exist in {era}; compare with era='now'.")
    unit = io_unit_bytes(volume.type, era)
    iops, mibps = volume_types.caps_mibps(volume, burst=has_credits(volume, credits), era=era)
    return VolumeCaps(float(iops), mibps * MIB, unit)
