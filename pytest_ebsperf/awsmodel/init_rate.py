"""What a Provisioned Rate for Volume Initialization promises a volume's first read (B-INIT).

AWS (2025): a volume created from a snapshot with a volume initialization rate of R MiB/s
(``VolumeInitializationRate``, 100-300 MiB/s) "is initialized at a predictable and consistent
rate after creation": every block is downloaded by ``size / R`` after creation
(https://docs.aws.amazon.com/ebs/latest/userguide/initalize-volume.html). AWS promises the
background download, not how fast a read of a block not yet downloaded is answered. So what
a read of the whole volume can be held to is only this: by ``size / R`` after it starts at
the latest, every block is there, and what is left to read then goes at the volume's (or the
instance's) cap ``c``. The read of ``V`` bytes takes at most ``V / R + V / c``; its mean rate
is at least ``1 / (1/R + 1/c)``, whatever order AWS downloads blocks in. That is the floor
(FLOOR, at least 90 % of it, as every published "at least" figure here): a slower read is a
volume that was not initialized at its rate. A read faster than that floor proves no more
than the floor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ebsperf.awsmodel import claims, sources
from pytest_ebsperf.awsmodel.ebs import MIB
from pytest_ebsperf.awsmodel.types import FLOOR, INFO, VOLUME, Expectation, Limit

if TYPE_CHECKING:  # annotations only: the plugin's start (option checks) loads this module
    from pytest_ebsperf.awsmodel.volume import Volume
    from pytest_ebsperf.fio.workload import Workload

#: Provisioned Rate for Volume Initialization, valid range (CreateVolume
#: ``VolumeInitializationRate``, B-INIT).
INIT_RATE_MIN_MIBPS = 100
INIT_RATE_MAX_MIBPS = 300


def valid_rate(rate_mibps: float, where: str = "the volume initialization rate") -> float:
    """``rate_mibps`` if AWS accepts it, else a ValueError naming the valid range."""
    if not INIT_RATE_MIN_MIBPS <= rate_mibps <= INIT_RATE_MAX_MIBPS:
        raise ValueError(
            f"{where} is {rate_mibps:g} MiB/s: AWS accepts {INIT_RATE_MIN_MIBPS}-"
            f"{INIT_RATE_MAX_MIBPS} MiB/s (VolumeInitializationRate).")
    return float(rate_mibps)


def first_read_floor_bps(rate_mibps: float, cap_bps: float) -> float:
    """The least mean rate (B/s) of a read of the whole of a volume initialized at
    ``rate_mibps`` whose reads are capped at ``cap_bps``: ``1 / (1/R + 1/c)``."""
    rate_bps = rate_mibps * MIB
    if cap_bps <= 0:
        return 0.0
    return 1.0 / (1.0 / rate_bps + 1.0 / cap_bps)


def init_rate_expectation(claim: str, what: str, volume: Volume, workload: Workload,
                          rate_mibps: float, *, caps: tuple[Limit, ...]) -> Expectation:
    """FLOOR for the first read of every block of a volume restored with a provisioned
    initialization rate (module doc). ``caps`` are the ceilings of this read on this volume
    and instance (:func:`pytest_ebsperf.awsmodel.expect.limits`); a workload other than a read
    is recorded (INFO): the rate is about a restored volume's blocks arriving."""
    rate = valid_rate(rate_mibps)
    source = claims.source_url(claim, sources.VOLUME_INITIALIZATION)
    if workload.read_fraction < 1.0:
        return Expectation(claim=claim, what=what, policy=INFO, value=float("nan"),
                           unit="B/s", binding=None, low=0.90, high=None, source=source,
                           notes=(("a provisioned initialization rate says when a restored "
                                  "volume's blocks have all arrived, which a read of every "
                                  "block shows; this run writes: recorded (B-INIT)"),))
    cap = min(caps, key=lambda limit: limit.iops) if caps else None
    cap_bps = cap.iops * workload.bs if cap is not None else float("inf")
    value = first_read_floor_bps(rate, cap_bps)
    cap_text = f", then {cap.name}" if cap is not None else ""
    binding = Limit(f"provisioned initialization rate {rate:g} MiB/s{cap_text}: the least "
                    "mean of a first read of every block", VOLUME, value / workload.bs, claim,
                    sources.VOLUME_INITIALIZATION)
    notes = ((f"AWS promises every block by size / {rate:g} MiB/s after creation, not how fast "
             "a block not yet there is read: the read may wait for the download, then reads "
             f"the rest at the cap, so its mean is at least 1 / (1/{rate:g} + 1/"
             f"{cap_bps / MIB:,.0f}) MiB/s (B-INIT)"),)
    return Expectation(claim=claim, what=what, policy=FLOOR, value=value, unit="B/s",
                       binding=binding, limits=(binding, *caps), low=0.90, high=None,
                       source=source, notes=notes)
