"""Magnetic (standard): best effort, so every claim is recorded, never failed (B-STD)."""

import pytest

#: records=True: these checks record and never fail, so they take no share of the run's
#: false-red budget.
pytestmark = pytest.mark.ebsperf(volume_type="standard", records=True)


def test_random_read_rate_is_recorded(ebsperf):
    """S0-02, S2-04, S4-07, B-STD: Magnetic random access is "about 200 IOPS" (documented
    40-200 IOPS), with peaks above io1's clean cap and no floor (seed 004); recorded as INFO
    (random 16 KiB reads, per-second series kept)."""
    ebsperf.record_info("S2-04", "standard random read 16 KiB",
                        ebsperf.workload("randread", "16k"))


def test_sequential_read_rate_is_recorded(ebsperf):
    """S0-02, S2-05: Magnetic sequential reads burst to thousands of small IOPS (documented
    40-90 MiB/s); recorded as INFO (sequential 1 MiB reads)."""
    ebsperf.record_info("S2-05", "standard sequential read 1 MiB",
                        ebsperf.workload("read", "1m"))
