"""SSD volume models: gp2, gp3, io1 and io2 Block Express, as pure functions of size and IOPS.

Today's specs (claims.md Part B) are the default. Where the seed documents (2013-2014) saw
other limits, ``era="2014"`` or ``era="2013"`` reproduces them so reports can print then and
now side by side (gp2 launched in June 2014, so its ``2013`` figures are those of 2014). Every
constant is listed in :data:`CITATIONS` with its claim ID and source.
"""

from __future__ import annotations

import math

from pytest_ebsperf.awsmodel import sources

#: Eras the models can reproduce. ``now`` is claims.md Part B; ``2016`` the limits of seed 003's
#: time (gp2 and io1 as raised in November 2014, st1/sc1 at their launch); ``2014`` the AWS
#: Summit 2014 slides (seed 002) and the gp2 launch docs; ``2013`` the io1 post of seed 004.
NOW = "now"
ERA_2016 = "2016"
ERA_2014 = "2014"
ERA_2013 = "2013"
ERAS: tuple[str, ...] = (NOW, ERA_2016, ERA_2014, ERA_2013)

KIB = 1024
MIB = 1024 * 1024

# --- B-IOACCT: how EBS counts an I/O -------------------------------------------------------
#: Most volumes one set may hold: AWS attaches at most 28 to most Nitro instances (the seed
#: documents striped 4, and seed 002 used 24 to find an instance's ceiling). One rule for the
#: plugin's options and for judge.
MAX_SET_VOLUMES = 28

SSD_IO_UNIT = 256 * KIB  # largest SSD I/O; bigger ones are split
HDD_IO_UNIT = 1024 * KIB  # largest HDD I/O; smaller ones still cost a full 1 MiB credit
SSD_IO_UNIT_2013 = 16 * KIB  # until 2014 one provisioned IOPS was an I/O of up to 16 KB

# --- B-GP2 ----------------------------------------------------------------------------------
GP2_IOPS_PER_GIB = 3
GP2_MIN_BASELINE = 100  # sizes <= 33 GiB
GP2_MAX_BASELINE = 16_000  # reached at 5,334 GiB
GP2_MAX_BASELINE_2014 = 3_000  # 1 TiB was the largest gp2 volume in 2014
GP2_BURST_IOPS = 3_000
GP2_CREDITS_MAX = 5_400_000  # initial and maximum balance; never changed since 2014
GP2_TPUT_SMALL_MIBPS = 128.0  # <= 170 GiB
GP2_TPUT_LARGE_MIBPS = 250.0  # >= 334 GiB, or 171-333 GiB while burst credits last
GP2_TPUT_SMALL_MAX_GIB = 170
GP2_TPUT_FULL_MIN_GIB = 334  # 250 MiB/s / (256 KiB x 3 IOPS/GiB) = 333.3
GP2_TPUT_2014_MIBPS = 128.0  # per-volume limit of the seed era (the "~130 MB/s" of seed 002)
GP2_MAX_GIB_2014 = 1_024  # gp2 topped out at 1 TiB until November 2014
GP2_MAX_BASELINE_2016 = 10_000  # November 2014 to December 2018 (reached at 3,334 GiB)
GP2_TPUT_2016_MIBPS = 160.0  # November 2014 to December 2018 (128 MiB/s up to 170 GiB)

# --- B-GP3 ----------------------------------------------------------------------------------
GP3_DEFAULT_IOPS = 3_000  # included in the price
GP3_DEFAULT_MIBPS = 125.0
GP3_MAX_IOPS = 80_000  # 2025 increase (was 16,000)
GP3_MAX_MIBPS = 2_000.0  # 2025 increase (was 1,000)
GP3_IOPS_PER_GIB = 500
GP3_MIBPS_PER_IOPS = 0.25
GP3_MAX_GIB = 65_536

# --- B-IO1 ----------------------------------------------------------------------------------
IO1_MIN_IOPS = 100
IO1_MAX_IOPS_NITRO = 64_000
IO1_MAX_IOPS_OTHER = 32_000
IO1_IOPS_PER_GIB = 50
IO1_SMALL_IO_LIMIT = 32_000  # <= this: 256 KiB per IOPS up to 500 MiB/s
IO1_MAX_MIBPS_SMALL = 500.0
IO1_MAX_MIBPS_LARGE = 1_000.0  # > 32,000 IOPS on Nitro: 16 KiB per IOPS
IO1_MAX_IOPS_2014 = 4_000  # seed 002 (AWS Summit 2014)
IO1_MAX_IOPS_2013 = 2_000  # seed 004 (April 2013)
IO1_TPUT_2014_MIBPS = 128.0
IO1_MAX_IOPS_2016 = 20_000  # November 2014 to December 2017
IO1_TPUT_2016_MIBPS = 320.0
IO1_MAX_GIB_2014 = 1_024  # io1 topped out at 1 TiB until November 2014

# --- B-IO2 (io2 Block Express since 2025-04-30) -----------------------------------------------
IO2_MIN_IOPS = 100
IO2_MAX_IOPS_NITRO = 256_000
IO2_MAX_IOPS_OTHER = 32_000  # delivered on instances not built on Nitro
IO2_MAX_PROVISIONED_OTHER = 64_000  # most AWS lets you provision for such an instance
IO2_IOPS_PER_GIB = 1_000
IO2_MIBPS_PER_IOPS = 0.256
IO2_MAX_MIBPS = 4_000.0
IO2_AVG_LATENCY_S_16K = 0.0005  # "average latency under 500 microseconds" for 16 KiB on Nitro

_GP, _PIOPS, _IO = sources.GENERAL_PURPOSE, sources.PROVISIONED_IOPS, sources.IO_CHARACTERISTICS

#: Constant name -> (claim ID, source URL).
CITATIONS: dict[str, tuple[str, str]] = {
    "MAX_SET_VOLUMES": ("S2-22", sources.SEEDS[2]),
    "SSD_IO_UNIT": ("B-IOACCT", _IO),
    "HDD_IO_UNIT": ("B-IOACCT", _IO),
    "SSD_IO_UNIT_2013": ("B-IOACCT", sources.PIOPS_LAUNCH),
    "GP2_IOPS_PER_GIB": ("B-GP2", _GP),
    "GP2_MIN_BASELINE": ("B-GP2", _GP),
    "GP2_MAX_BASELINE": ("B-GP2", _GP),
    "GP2_MAX_BASELINE_2014": ("S2-11", sources.DOCS_2014),
    "GP2_BURST_IOPS": ("B-GP2", _GP),
    "GP2_CREDITS_MAX": ("B-GP2", _GP),
    "GP2_TPUT_SMALL_MIBPS": ("B-GP2", sources.AWSDOCS_VOLUME_TYPES),
    "GP2_TPUT_LARGE_MIBPS": ("B-GP2", sources.AWSDOCS_VOLUME_TYPES),
    "GP2_TPUT_SMALL_MAX_GIB": ("B-GP2", sources.AWSDOCS_VOLUME_TYPES),
    "GP2_TPUT_FULL_MIN_GIB": ("B-GP2", sources.AWSDOCS_VOLUME_TYPES),
    "GP2_TPUT_2014_MIBPS": ("S2-09", sources.LIMIT_128_2014),
    "GP3_DEFAULT_IOPS": ("B-GP3", _GP),
    "GP3_DEFAULT_MIBPS": ("B-GP3", _GP),
    "GP3_MAX_IOPS": ("B-GP3", sources.GP3_IOPS_API),
    "GP3_MAX_MIBPS": ("B-GP3", sources.GP3_THROUGHPUT_GUIDE),
    "GP3_IOPS_PER_GIB": ("B-GP3", _GP),
    "GP3_MIBPS_PER_IOPS": ("B-GP3", sources.GP3_THROUGHPUT_GUIDE),
    "GP3_MAX_GIB": ("B-GP3", sources.GP3_SIZE_API),
    "IO1_MIN_IOPS": ("B-IO1", _PIOPS),
    "IO1_MAX_IOPS_NITRO": ("B-IO1", _PIOPS),
    "IO1_MAX_IOPS_OTHER": ("B-IO1", _PIOPS),
    "IO1_IOPS_PER_GIB": ("B-IO1", _PIOPS),
    "IO1_SMALL_IO_LIMIT": ("B-IO1", _PIOPS),
    "IO1_MAX_MIBPS_SMALL": ("B-IO1", _PIOPS),
    "IO1_MAX_MIBPS_LARGE": ("B-IO1", _PIOPS),
    "IO1_MAX_IOPS_2014": ("S2-06", sources.DOCS_2014),
    "IO1_MAX_IOPS_2013": ("S4-01", sources.SEEDS[4]),
    "IO1_TPUT_2014_MIBPS": ("S2-07", sources.LIMIT_128_2014),
    "IO1_MAX_IOPS_2016": ("S2-07", sources.VOLUME_TYPES_2016),
    "IO1_TPUT_2016_MIBPS": ("S2-07", sources.VOLUME_TYPES_2016),
    "IO1_MAX_GIB_2014": ("S2-07", sources.DOCS_2014),
    "GP2_MAX_GIB_2014": ("S2-09", sources.DOCS_2014),
    "GP2_MAX_BASELINE_2016": ("S3-07", sources.VOLUME_TYPES_2016),
    "GP2_TPUT_2016_MIBPS": ("S3-07", sources.VOLUME_TYPES_2016),
    "IO2_MAX_PROVISIONED_OTHER": ("B-IO2", _PIOPS),
    "IO2_MIN_IOPS": ("B-IO2", _PIOPS),
    "IO2_MAX_IOPS_NITRO": ("B-IO2", _PIOPS),
    "IO2_MAX_IOPS_OTHER": ("B-IO2", _PIOPS),
    "IO2_IOPS_PER_GIB": ("B-IO2", _PIOPS),
    "IO2_MIBPS_PER_IOPS": ("B-IO2", _PIOPS),
    "IO2_MAX_MIBPS": ("B-IO2", _PIOPS),
    "IO2_AVG_LATENCY_S_16K": ("B-SLA", sources.EBS_OPTIMIZATION),
}


def check_era(era: str) -> None:
    """Raise ``ValueError`` for an era the models do not know."""
    if era not in ERAS:
        raise ValueError(f"{era!r} is not a model era. Valid eras: {', '.join(ERAS)}.")


def gp2_baseline_iops(size_gib: int, era: str = NOW) -> int:
    """gp2 baseline: 3 IOPS per GiB, at least 100, at most 16,000 (3,000 in 2014). B-GP2."""
    check_era(era)
    ceiling = {NOW: GP2_MAX_BASELINE, ERA_2016: GP2_MAX_BASELINE_2016}.get(
        era, GP2_MAX_BASELINE_2014)
    return min(max(GP2_MIN_BASELINE, GP2_IOPS_PER_GIB * size_gib), ceiling)


def gp2_max_iops(size_gib: int, credits: bool = True, era: str = NOW) -> int:
    """gp2 IOPS ceiling: the 3,000 burst while credits last, else the baseline. B-GP2."""
    base = gp2_baseline_iops(size_gib, era)
    return max(base, GP2_BURST_IOPS) if credits else base


def gp2_max_throughput_mibps(size_gib: int, credits: bool = True, era: str = NOW) -> float:
    """gp2 throughput ceiling in MiB/s. B-GP2.

    128 MiB/s up to 170 GiB; 250 MiB/s from 334 GiB; in between 250 MiB/s only while burst
    credits last. With an empty bucket below 334 GiB the ceiling is baseline IOPS x 256 KiB
    (100 GiB -> 75 MiB/s). ``era="2014"`` gives the seed era's flat 128 MiB/s.
    """
    if era == ERA_2016:
        ceiling = GP2_TPUT_SMALL_MIBPS if size_gib <= GP2_TPUT_SMALL_MAX_GIB else GP2_TPUT_2016_MIBPS
        return min(ceiling, gp2_max_iops(size_gib, credits, era) * SSD_IO_UNIT / MIB)
    if era != NOW:
        check_era(era)
        return min(GP2_TPUT_2014_MIBPS, gp2_max_iops(size_gib, credits, era) * SSD_IO_UNIT / MIB)
    cap = GP2_TPUT_SMALL_MIBPS if size_gib <= GP2_TPUT_SMALL_MAX_GIB else GP2_TPUT_LARGE_MIBPS
    if size_gib < GP2_TPUT_FULL_MIN_GIB and not credits:
        return min(cap, gp2_baseline_iops(size_gib) * SSD_IO_UNIT / MIB)
    return cap


def io1_max_iops(size_gib: int, nitro: bool = True, era: str = NOW) -> int:
    """io1 IOPS ceiling for a size: 50 per GiB up to 64,000 (Nitro) or 32,000. B-IO1.

    Seed eras only had a per-volume maximum (4,000 in 2014, 2,000 in 2013); their size ratio
    is not modelled because no source in claims.md states it.
    """
    check_era(era)
    if era == ERA_2016:
        return min(IO1_IOPS_PER_GIB * size_gib, IO1_MAX_IOPS_2016)
    if era == ERA_2014:
        return IO1_MAX_IOPS_2014
    if era == ERA_2013:
        return IO1_MAX_IOPS_2013
    return min(IO1_IOPS_PER_GIB * size_gib, IO1_MAX_IOPS_NITRO if nitro else IO1_MAX_IOPS_OTHER)


def io1_max_throughput_mibps(prov_iops: int, nitro: bool = True, era: str = NOW) -> float:
    """io1 throughput ceiling in MiB/s for its provisioned IOPS. B-IO1.

    Up to 32,000 IOPS (or off Nitro): 256 KiB per IOPS, at most 500 MiB/s; above that on
    Nitro: 16 KiB per IOPS, at most 1,000 MiB/s. 2016: 256 KiB per IOPS, at most 320 MiB/s.
    2014: 256 KiB per IOPS, at most 128 MiB/s. 2013: no per-volume throughput ceiling was
    published (infinity): random I/O was counted in 16 KiB units, which bounds it through the
    IOPS, but seed 004 moved 41.9 MB/s with one 2,000-IOPS volume and 83.7 MB/s with two,
    more than 2,000 x 16 KiB, so nothing bounds sequential I/O but the instance.
    """
    check_era(era)
    if era == ERA_2013:
        return math.inf
    if era == ERA_2016:
        return min(prov_iops * SSD_IO_UNIT / MIB, IO1_TPUT_2016_MIBPS)
    if era == ERA_2014:
        return min(prov_iops * SSD_IO_UNIT / MIB, IO1_TPUT_2014_MIBPS)
    if prov_iops <= IO1_SMALL_IO_LIMIT or not nitro:
        return min(prov_iops * SSD_IO_UNIT / MIB, IO1_MAX_MIBPS_SMALL)
    return min(prov_iops * 16 * KIB / MIB, IO1_MAX_MIBPS_LARGE)


def io2_max_iops(size_gib: int, nitro: bool = True) -> int:
    """io2 Block Express IOPS ceiling: 1,000 per GiB up to 256,000 (Nitro) or 32,000. B-IO2."""
    return min(IO2_IOPS_PER_GIB * size_gib, IO2_MAX_IOPS_NITRO if nitro else IO2_MAX_IOPS_OTHER)


def io2_max_throughput_mibps(prov_iops: int) -> float:
    """io2 Block Express throughput: 0.256 MiB/s per IOPS, at most 4,000 MiB/s. B-IO2."""
    return min(IO2_MIBPS_PER_IOPS * prov_iops, IO2_MAX_MIBPS)


def crossover_block_size(iops: float, throughput_mibps: float) -> float:
    """Block size (bytes) above which the throughput ceiling, not the IOPS ceiling, binds.

    S2-08: io1 with 4,000 IOPS crossed over at 32 KiB in 2014 (128 MiB/s / 4,000); today at
    128 KiB (500 MiB/s / 4,000).
    """
    return throughput_mibps * MIB / iops
