"""HDD and Magnetic volume models: st1, sc1 (B-HDD) and standard (B-STD).

st1 and sc1 are throughput volumes: a throughput credit bucket, a baseline and a burst rate
that both grow with size, and an I/O unit of 1 MiB -- every I/O of 1 MiB or less costs a full
1 MiB of credit, which is why small random I/O on them is so slow (S3-06). Magnetic volumes
are best effort: only documented ranges, never a ceiling to assert.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ebsperf.awsmodel import sources

TIB_GIB = 1024


@dataclass(frozen=True)
class HddRates:
    """Per-TiB rates and ceilings of one HDD volume type (MiB/s and 1 MiB I/Os per second),
    and what they make of a volume's size: the record every caller reads (the type's
    ``hdd_rates``, :mod:`~pytest_ebsperf.awsmodel.volume_types`)."""

    baseline_per_tib: float
    burst_per_tib: float
    baseline_cap_mibps: float
    burst_cap_mibps: float
    max_iops: int

    def baseline_mibps(self, size_gib: int) -> float:
        """Baseline throughput in MiB/s (what the bucket refills at). B-HDD."""
        return min(self.baseline_per_tib * size_gib / TIB_GIB, self.baseline_cap_mibps)

    def burst_mibps(self, size_gib: int) -> float:
        """Burst throughput in MiB/s (while throughput credits last). B-HDD."""
        return min(self.burst_per_tib * size_gib / TIB_GIB, self.burst_cap_mibps)

    def max_mibps(self, size_gib: int, credits: bool = True) -> float:
        """Throughput ceiling: burst with credits, baseline without. B-HDD."""
        return self.burst_mibps(size_gib) if credits else self.baseline_mibps(size_gib)

    def small_io_iops_cap(self, size_gib: int, credits: bool = True) -> float:
        """I/Os per second of 1 MiB or less: each costs 1 MiB of credit (B-HDD, S3-06).

        So the rate is the throughput ceiling in MiB/s, but never above the type's 500 (st1)
        or 250 (sc1) I/Os per second: st1 2 TiB -> 500, sc1 2 TiB -> 160, sc1 6 TiB -> 250.
        """
        return min(self.max_mibps(size_gib, credits), float(self.max_iops))


#: B-HDD: st1 baseline 40 MiB/s per TiB (cap 500 at 12.5 TiB), burst 250 per TiB (cap 500
#: at 2 TiB), 500 I/Os per second of 1 MiB.
ST1 = HddRates(40.0, 250.0, 500.0, 500.0, 500)
#: B-HDD: sc1 baseline 12 MiB/s per TiB (192 at 16 TiB), burst 80 per TiB (cap 250 at
#: 3.125 TiB), 250 I/Os per second of 1 MiB.
SC1 = HddRates(12.0, 80.0, 250.0, 250.0, 250)
HDD_MIN_GIB = 125  # today; 500 GiB when st1/sc1 launched in 2016 (seed 003 used 2 TB and 6 TB)
HDD_MIN_GIB_2016 = 500
HDD_MAX_GIB = 16_384

#: B-STD: Magnetic "max IOPS per volume" 40-200, throughput 40-90 MiB/s, 1 GiB-1 TiB.
STANDARD_IOPS_RANGE: tuple[int, int] = (40, 200)
STANDARD_TPUT_MIBPS_RANGE: tuple[int, int] = (40, 90)
STANDARD_AVG_IOPS = 100  # "about 100 IOPS on average, with bursts to hundreds"
STANDARD_MIN_GIB = 1
STANDARD_MAX_GIB = 1_024

#: Constant name -> (claim ID, source URL).
CITATIONS: dict[str, tuple[str, str]] = {
    "ST1": ("B-HDD", sources.HDD_VOLUMES),
    "SC1": ("B-HDD", sources.HDD_VOLUMES),
    "HDD_MIN_GIB": ("B-HDD", sources.HDD_VOLUMES),
    "HDD_MIN_GIB_2016": ("S3-06", sources.SEEDS[3]),
    "HDD_MAX_GIB": ("B-HDD", sources.HDD_VOLUMES),
    "STANDARD_IOPS_RANGE": ("B-STD", sources.PREVIOUS_GENERATION),
    "STANDARD_TPUT_MIBPS_RANGE": ("B-STD", sources.PREVIOUS_GENERATION),
    "STANDARD_AVG_IOPS": ("B-STD", sources.AWSDOCS_VOLUME_TYPES),
    "STANDARD_MIN_GIB": ("B-STD", sources.AWSDOCS_VOLUME_TYPES),
    "STANDARD_MAX_GIB": ("B-STD", sources.AWSDOCS_VOLUME_TYPES),
}


def hdd_bucket_mib(size_gib: int) -> float:
    """Full throughput-credit bucket: 1 TiB of credit per TiB of size (a full scan). B-HDD."""
    return float(size_gib * TIB_GIB)


def hdd_scan_time_h(size_gib: int, throughput_mibps: float) -> float:
    """Hours to read the whole volume at ``throughput_mibps`` (AWS: 5 TiB st1 -> 2.91 h)."""
    return size_gib * TIB_GIB / throughput_mibps / 3600


def standard_notes() -> tuple[str, ...]:
    """The documented Magnetic ranges, as sentences for an INFO expectation. B-STD."""
    lo, hi = STANDARD_IOPS_RANGE
    tlo, thi = STANDARD_TPUT_MIBPS_RANGE
    documented = (
        f"Magnetic (standard) volumes are best effort: about {STANDARD_AVG_IOPS} IOPS on "
        f"average with bursts to hundreds; documented maximum {lo}-{hi} IOPS and "
        f"{tlo}-{thi} MiB/s per volume (B-STD, {sources.PREVIOUS_GENERATION})."
    )
    seen = (
        "The seeds saw ~200-230 IOPS random and thousands of IOPS sequential at small block "
        "sizes (S0-02, S2-04, S2-05); recorded, never failed."
    )
    return documented, seen
