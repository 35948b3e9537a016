"""Every volume type as one record: what AWS sells and documents for it, and what the plugin
needs to know to plan, emulate, judge and price it.

A :class:`VolumeType` holds a type's limits with their claim (the caps function of its
model, the sizes and provisioned figures AWS accepts), how EBS counts its I/O, its credit
model, its latency, its prices, its name in AWS's APIs, the volume ``--emulate`` makes for
it and the latency the queue-depth planner assumes. Everything else asks the registry
(:func:`volume_type`, :func:`names`): the planner, the emulator, ``judge``, pricing,
validation, AWS discovery and provisioning. A new type is one :func:`register` call.

The formulas live in :mod:`~pytest_ebsperf.awsmodel.ebs` and :mod:`~pytest_ebsperf.awsmodel.hdd`
(with their citations); a record says which of them is the type's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pytest_ebsperf.awsmodel import ebs, hdd
from pytest_ebsperf.awsmodel.ebs import MIB, NOW
from pytest_ebsperf.awsmodel.types import DUTY_GP, DUTY_IO, VolumePrices
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.errors import VolumeSpecError

#: Families: how the type stores data, which sets how EBS counts its I/O (B-IOACCT).
SSD = "SSD"
HDD = "HDD"
MAGNETIC = "Magnetic"
STORE = "instance store"
#: Credit models (B-GP2, B-HDD): I/O credits spent per I/O, throughput credits per MiB.
IO_CREDITS = "I/O credits"
MIB_CREDITS = "throughput credits"

#: Caps of a volume of the type: (volume, burst credits available, era) -> (IOPS, MiB/s).
CapsFunction = Callable[[Volume, bool, str], "tuple[float, float]"]
#: A rule of an era the type's volume breaks: (volume, era) -> the rule in words, or None.
EraRule = Callable[[Volume, str], "str | None"]


@dataclass(frozen=True)
class Provisioned:
    """A figure the buyer provisions: ``low``-``high``, at most ``per`` for each GiB (IOPS) or
    each provisioned IOPS (throughput); ``default`` when none is given (None: required)."""

    low: float
    high: float
    per: float
    default: float | None = None

    def most(self, basis: float) -> float:
        """The most that may be provisioned for ``basis`` (GiB or IOPS); an included default
        is always allowed."""
        most = min(self.high, self.per * basis)
        return max(self.low, most) if self.default is not None else most


@dataclass(frozen=True)
class VolumeType:
    """One volume type: its limits, accounting, credits, latency, prices, AWS names, emulator
    defaults and planner hints, each with the claim that documents it."""

    name: str
    #: The type's name in AWS's documentation: "General Purpose SSD (gp2)".
    title: str
    family: str
    #: claims.md's ID of the type's limits ("B-GP2") and the year the type was introduced.
    claim: str
    launched: int
    #: (IOPS, MiB/s) ceilings of a volume; see :data:`CapsFunction`.
    caps: CapsFunction
    #: Sizes CreateVolume accepts (GiB); None for instance store (no EBS size).
    size_gib: tuple[int, int] | None = None
    iops: Provisioned | None = None
    throughput_mibps: Provisioned | None = None
    #: IOPS that follow from the size (gp2's baseline): a given figure must restate it; and
    #: the rule in words, its first clause the rate ("3 per GiB, at least 100, ...").
    iops_from_size: Callable[[int], int] | None = None
    iops_from_size_rule: str = ""
    credits: str | None = None
    #: Share of seconds that must reach 90 % of a cap (B-SLA).
    duty: float = DUTY_GP
    #: Assumed service time of one I/O (the queue-depth planner's, :mod:`.queue`).
    latency_s: float = 0.0025
    #: Mean service time of an emulated I/O with ``--emulate-latency=auto`` (µs; None: the
    #: kernel's throttle alone).
    emulated_latency_us: float | None = 600.0
    #: The volume ``--emulate`` makes for the type's suite when no volume options are given.
    emulated: Mapping[str, Any] = field(default_factory=dict)
    #: ... and under ``--ebsperf-era``, where today's default was not sold then.
    emulated_eras: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: Monthly USD prices by region (B-PRICE).
    prices: Mapping[str, VolumePrices] = field(default_factory=dict)
    #: An EBS type (CreateVolume's VolumeType); False: instance store.
    ebs: bool = True
    #: Rules of a seed era the type's volumes may break (``--ebsperf-era``).
    era_rule: EraRule | None = None
    #: Where the limits are documented; empty: the registered claim's source.
    source: str = ""
    #: Sizes whose baseline reaches the burst level, so the bucket never drains (words).
    never_drains: str = ""
    #: An HDD type's per-TiB rates and ceilings (:class:`~pytest_ebsperf.awsmodel.hdd.HddRates`).
    hdd_rates: hdd.HddRates | None = None
    #: On an instance not built on Nitro: (most IOPS AWS lets you provision, most delivered).
    off_nitro: tuple[int, int] | None = None

    @property
    def bursts(self) -> bool:
        """Spends burst credits (CloudWatch's BurstBalance applies)."""
        return self.credits is not None

    @property
    def io_unit_bytes(self) -> int:
        """The largest I/O EBS counts as one: 256 KiB SSD, 1 MiB HDD (B-IOACCT)."""
        if self.family == HDD:
            return ebs.HDD_IO_UNIT
        if self.family == STORE:
            return 4096  # the published figures' I/O size; no EBS accounting applies
        return ebs.SSD_IO_UNIT

    def emulated_volume(self, era: str = NOW) -> Volume:
        """The volume ``--emulate`` makes for this type's suite by default (``era``: the seed
        era's own where today's was not sold then)."""
        return Volume(self.name, **self.emulated_eras.get(era, self.emulated))


_REGISTRY: dict[str, VolumeType] = {}
#: The name of instance store's record: what discovery reports for an instance-store device.
INSTANCE_STORE = "instance-store"
#: The type ``--emulate`` makes for suites that take any volume type (encryption).
EMULATED_ANY = "io1"


def register(kind: VolumeType) -> VolumeType:
    """Add (or replace) a volume type; every part of the plugin knows it from then on."""
    _REGISTRY[kind.name] = kind
    return kind


@contextmanager
def registered(kind: VolumeType) -> Iterator[VolumeType]:
    """``kind`` known for the ``with`` block only (tests, and scripts that model a new type)."""
    before = _REGISTRY.get(kind.name)
    register(kind)
    try:
        yield kind
    finally:
        if before is None:
            _REGISTRY.pop(kind.name, None)
        else:
            register(before)


def names() -> tuple[str, ...]:
    """Every known volume type, in the order the docs list them."""
    return tuple(_REGISTRY)


def ebs_names() -> tuple[str, ...]:
    """The EBS types (what CreateVolume takes): every type but instance store."""
    return tuple(name for name, kind in _REGISTRY.items() if kind.ebs)


def bursting_names(bursts: bool = True) -> str:
    """The registered types that burst on credits (``bursts`` False: those that do not), in
    words for a message: ``gp2, st1 and sc1``. Read from the records, so it never goes stale
    when a type is registered."""
    found = [name for name, kind in _REGISTRY.items() if kind.bursts == bursts]
    return " and ".join([", ".join(found[:-1]), found[-1]] if len(found) > 1 else found)


def volume_type(name: str) -> VolumeType:
    """The record of ``name``, or a :class:`VolumeSpecError` naming the known ones."""
    kind = _REGISTRY.get(name)
    if kind is None:
        raise VolumeSpecError(f"{name!r} is not a valid --volume-type. Valid types: "
                              f"{', '.join(_REGISTRY)}.")
    return kind


def known(name: str | None) -> VolumeType | None:
    """The record of ``name``, or None when it names no type."""
    return _REGISTRY.get(name or "")


def is_hdd(name: str) -> bool:
    """A hard-disk type with 1 MiB I/O units (st1, sc1): every random I/O costs 1 MiB."""
    kind = _REGISTRY.get(name)
    return kind is not None and kind.family == HDD


def hdd_rates(name: str) -> hdd.HddRates:
    """The per-TiB rates of the HDD type ``name`` (its record's), or a ValueError naming the
    HDD types registered."""
    kind = _REGISTRY.get(name)
    if kind is None or kind.hdd_rates is None:
        known_hdd = sorted(k.name for k in _REGISTRY.values() if k.hdd_rates is not None)
        raise ValueError(f"{name!r} is not an HDD volume type "
                         f"({', '.join(known_hdd) or 'none registered'}).")
    return kind.hdd_rates


def is_instance_store(name: str | None) -> bool:
    """A device of the instance, not an EBS volume (its IOPS are published per instance)."""
    kind = _REGISTRY.get(name or "")
    return kind is not None and kind.family == STORE


def spends_mib(name: str) -> bool:
    """Its burst credits are MiB of throughput, so its burst checks measure MiB/s."""
    kind = _REGISTRY.get(name)
    return kind is not None and kind.credits == MIB_CREDITS


# -- the caps of each model ------------------------------------------------------------------
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


def _gp2_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    size = require_size(volume)
    return ebs.gp2_max_iops(size, burst, era), ebs.gp2_max_throughput_mibps(size, burst, era)


def _gp3_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    return (volume.iops if volume.iops is not None else ebs.GP3_DEFAULT_IOPS,
            volume.throughput_mibps or ebs.GP3_DEFAULT_MIBPS)


def _io1_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    iops = min(require_iops(volume), ebs.io1_max_iops(require_size(volume), volume.nitro, era))
    return iops, ebs.io1_max_throughput_mibps(iops, volume.nitro, era)


def _io2_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    iops = min(require_iops(volume), ebs.io2_max_iops(require_size(volume), volume.nitro))
    return iops, ebs.io2_max_throughput_mibps(iops)


def _hdd_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    size, rates = require_size(volume), hdd_rates(volume.type)
    return rates.small_io_iops_cap(size, burst), rates.max_mibps(size, burst)


def _standard_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    # best effort: the upper ends of the documented ranges, so an emulated volume is plausible
    return hdd.STANDARD_IOPS_RANGE[1], hdd.STANDARD_TPUT_MIBPS_RANGE[1]


def _store_caps(volume: Volume, burst: bool, era: str) -> tuple[float, float]:
    # the instance table loads when instance store's caps are first asked, not with the
    # records (a pytest start reads the records for --volume-type's help)
    from pytest_ebsperf.awsmodel import instances

    published = instances.instance_store_iops(volume.instance_type or "")
    if published is None:
        raise VolumeSpecError(
            f"No published instance-store IOPS for {volume.instance_type or 'an unknown'} "
            "instance type; pass an --instance-type of the i3, i3en or i4i families."
        )
    return float(published[0]), math.inf


# -- the rules of the seed eras --------------------------------------------------------------
def _one_tib_in_2014(volume: Volume, era: str) -> str | None:
    if era in (ebs.ERA_2013, ebs.ERA_2014) and (volume.size_gib or 0) > ebs.GP2_MAX_GIB_2014:
        return f"{volume.type} volumes topped out at 1 TiB ({ebs.GP2_MAX_GIB_2014:,} GiB) in {era}"
    return None


def _io1_era(volume: Volume, era: str) -> str | None:
    iops = volume.iops or 0
    most = {ebs.ERA_2013: (ebs.IO1_MAX_IOPS_2013, "in April 2013 (S4-01)"),
            ebs.ERA_2014: (ebs.IO1_MAX_IOPS_2014, "in 2014 (seed 002)"),
            ebs.ERA_2016: (ebs.IO1_MAX_IOPS_2016, "in 2016")}.get(era)
    if most is not None and iops > most[0]:
        return f"io1 allowed at most {most[0]:,} IOPS per volume {most[1]}"
    return _one_tib_in_2014(volume, era)


def _hdd_era(volume: Volume, era: str) -> str | None:
    if era == ebs.ERA_2016 and 0 < (volume.size_gib or 0) < hdd.HDD_MIN_GIB_2016:
        return f"st1 and sc1 started at {hdd.HDD_MIN_GIB_2016} GiB in 2016 (seed 003)"
    return None


# -- prices (B-PRICE) --------------------------------------------------------------------------
def _gp3_prices(gb: float, iops: float, mibps: float) -> VolumePrices:
    return VolumePrices(gb, iops, 3000, (), mibps, 125.0, 0.0, True)


def _io2_prices(gb: float, tiers: tuple[float, float, float]) -> VolumePrices:
    return VolumePrices(
        gb, iops_tiers=((32_000, tiers[0]), (64_000, tiers[1]), (math.inf, tiers[2]))
    )


US, TOKYO = "us-east-1", "ap-northeast-1"

# -- the records -------------------------------------------------------------------------------
# Latencies (the planner's): "single-digit millisecond" is all AWS promises for gp2/gp3 (B-GP3,
# B-SLA); 16 KiB I/O on Nitro typically completes in 0.5-1 ms, but a volume at 5 ms is within
# the promise too: 2.5 ms with 2x headroom covers 5 ms (planned at 1 ms, an emulated io1 at
# 5 ms per I/O reached 41 % of its cap and was left INCONCLUSIVE; bench_planner.py). io1 has no
# published figure; it runs on the same class of storage as gp3. io2 Block Express: "average
# latency under 500 microseconds" for 16 KiB (B-IO2). st1/sc1: 8 ms makes st1's 500 one-MiB
# I/Os per second come out at QD 8, AWS's own HDD recipe. Magnetic: a seek on a spinning disk
# (~100 IOPS per spindle). NVMe instance store at AWS's saturating depth: a few hundred µs.
# Emulated latencies (--emulate-latency=auto): io2 sub-millisecond, gp2/gp3/io1 typically
# 0.5-1 ms, HDD and Magnetic milliseconds, NVMe instance store about 0.1 ms.
for _record in (
    VolumeType(
        "gp2", "General Purpose SSD (gp2)", SSD, "B-GP2", 2014, _gp2_caps,
        size_gib=(1, 16_384), iops_from_size=ebs.gp2_baseline_iops, credits=IO_CREDITS,
        iops_from_size_rule="3 per GiB, at least 100, at most 16,000",
        never_drains="1,000 GiB or more (baseline 3 IOPS/GiB >= the 3,000 burst)",
        emulated={"size_gib": 100},  # S0-09..S0-12: 300 baseline, 3,000 burst
        prices={US: VolumePrices(0.10, per_second=True), TOKYO: VolumePrices(0.12, per_second=True)},
        era_rule=_one_tib_in_2014),
    VolumeType(
        "gp3", "General Purpose SSD (gp3)", SSD, "B-GP3", 2020, _gp3_caps,
        size_gib=(1, ebs.GP3_MAX_GIB),
        iops=Provisioned(ebs.GP3_DEFAULT_IOPS, ebs.GP3_MAX_IOPS, ebs.GP3_IOPS_PER_GIB,
                         ebs.GP3_DEFAULT_IOPS),
        throughput_mibps=Provisioned(ebs.GP3_DEFAULT_MIBPS, ebs.GP3_MAX_MIBPS,
                                     ebs.GP3_MIBPS_PER_IOPS, ebs.GP3_DEFAULT_MIBPS),
        emulated={"size_gib": 100, "iops": 3000, "throughput_mibps": 125},
        prices={US: _gp3_prices(0.08, 0.005, 0.040), TOKYO: _gp3_prices(0.096, 0.006, 0.048)}),
    VolumeType(
        "io1", "Provisioned IOPS SSD (io1)", SSD, "B-IO1", 2012, _io1_caps,
        size_gib=(4, 16_384),
        iops=Provisioned(ebs.IO1_MIN_IOPS, ebs.IO1_MAX_IOPS_NITRO, ebs.IO1_IOPS_PER_GIB),
        duty=DUTY_IO, emulated_latency_us=500.0,
        emulated={"size_gib": 100, "iops": 4000},  # seed 002's 4,000-PIOPS io1
        emulated_eras={ebs.ERA_2013: {"size_gib": 200, "iops": 2000}},  # seed 004's
        prices={US: VolumePrices(0.125, iops_month=0.065),
                TOKYO: VolumePrices(0.142, iops_month=0.074)},
        era_rule=_io1_era),
    VolumeType(
        "io2", "Provisioned IOPS SSD (io2 Block Express)", SSD, "B-IO2", 2020, _io2_caps,
        size_gib=(4, 65_536),
        iops=Provisioned(ebs.IO2_MIN_IOPS, ebs.IO2_MAX_IOPS_NITRO, ebs.IO2_IOPS_PER_GIB),
        duty=DUTY_IO, latency_s=0.0005, emulated_latency_us=300.0,
        off_nitro=(ebs.IO2_MAX_PROVISIONED_OTHER, ebs.IO2_MAX_IOPS_OTHER),
        # B-IO2 at 4,000 IOPS: 0.256 MiB/s per IOPS, 1,000 MiB/s of 256 KiB reads; at 16,000
        # IOPS its 4,000 MiB/s outran the latency daemon, leaving the run without a witness
        emulated={"size_gib": 100, "iops": 4000},
        # Tokyo: not in claims.md (its open question 2); io1's Tokyo rate, us-east-1's io2 tier ratios
        prices={US: _io2_prices(0.125, (0.065, 0.0455, 0.032)),
                TOKYO: _io2_prices(0.142, (0.074, 0.074 * 0.0455 / 0.065,
                                           0.074 * 0.032 / 0.065))}),
    VolumeType(
        "st1", "Throughput Optimized HDD (st1)", HDD, "B-HDD", 2016, _hdd_caps,
        size_gib=(hdd.HDD_MIN_GIB, hdd.HDD_MAX_GIB), credits=MIB_CREDITS, latency_s=0.008,
        emulated_latency_us=5000.0, hdd_rates=hdd.ST1,
        never_drains="12.5 TiB or more (baseline 40 MiB/s per TiB >= the 500 cap)",
        emulated={"size_gib": 2048},  # seed 003's 2 TB st1: 500 MiB/s burst
        prices={US: VolumePrices(0.045), TOKYO: VolumePrices(0.054)}, era_rule=_hdd_era),
    VolumeType(
        "sc1", "Cold HDD (sc1)", HDD, "B-HDD", 2016, _hdd_caps,
        size_gib=(hdd.HDD_MIN_GIB, hdd.HDD_MAX_GIB), credits=MIB_CREDITS, latency_s=0.008,
        emulated_latency_us=5000.0,
        emulated={"size_gib": 2048},  # seed 003's 2 TB sc1: 160 MiB/s burst
        hdd_rates=hdd.SC1,
        prices={US: VolumePrices(0.015), TOKYO: VolumePrices(0.03)}, era_rule=_hdd_era),
    VolumeType(
        "standard", "Magnetic (standard)", MAGNETIC, "B-STD", 2008, _standard_caps,
        size_gib=(hdd.STANDARD_MIN_GIB, hdd.STANDARD_MAX_GIB), latency_s=0.010,
        emulated_latency_us=5000.0,
        emulated={"size_gib": 100},  # seed 000's 100 GB Magnetic
        prices={US: VolumePrices(0.05, per_million_io=0.05),
                TOKYO: VolumePrices(0.08, per_million_io=0.08)}),
    VolumeType(
        INSTANCE_STORE, "NVMe instance store", STORE, "B-IS", 2006, _store_caps,
        latency_s=0.0005, emulated_latency_us=None, ebs=False,
        # i4i.large's 50,000 read / 27,500 write (B-IS), or the fastest published store the
        # host carries beside other work (emulate.witness.store_stand_in); emulated by the
        # kernel's throttle alone: no claim of the type is about its latency, and a
        # daemon-backed c6gd.medium at 13,438 fell behind in 5-9 of 30 s on a quiet 2-CPU
        # host and took 4 times as long to decide
        emulated={"instance_type": "i4i.large"}),
):
    register(_record)


def caps_mibps(volume: Volume, *, burst: bool = True, era: str = NOW) -> tuple[float, float]:
    """The type's own (IOPS, MiB/s) ceilings for ``volume``."""
    return volume_type(volume.type).caps(volume, burst, era)


__all__ = [
    "HDD",
    "INSTANCE_STORE",
    "IO_CREDITS",
    "MAGNETIC",
    "MIB",
    "MIB_CREDITS",
    "SSD",
    "STORE",
    "Provisioned",
    "VolumeType",
    "caps_mibps",
    "ebs_names",
    "hdd_rates",
    "is_hdd",
    "is_instance_store",
    "known",
    "names",
    "register",
    "registered",
    "require_iops",
    "require_size",
    "spends_mib",
    "volume_type",
]
