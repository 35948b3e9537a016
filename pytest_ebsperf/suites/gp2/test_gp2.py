"""gp2: 3 IOPS/GiB baseline, bursting to 3,000 IOPS on credits (S0-06..S0-12, S2-11..S2-14).

The burst-to-baseline knee over time (33 minutes for 100 GiB) is in test_gp2_credits.py.
"""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="gp2")


def test_random_read_bursts_to_3000_iops(ebsperf):
    """S0-06, S0-07, S2-12: a gp2 volume under 1,000 GiB with credits bursts to 3,000 IOPS
    (random 16 KiB reads; seed 000 measured 3,064 on 100 GB)."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("S0-06", "gp2 burst, random read 16 KiB",
                      ebsperf.workload("randread", "16k"))


def test_mixed_random_io_bursts_to_3000_iops(ebsperf):
    """S0-07: every random pattern holds about 3,000 IOPS while credits last (random 16 KiB,
    70 % reads, as in seed 000). Writes: needs --ebsperf-destructive."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("S0-07", "gp2 burst, random r/w 70/30 16 KiB",
                      ebsperf.workload("randrw", "16k", rwmixread=70))


def test_empty_bucket_holds_the_3_iops_per_gib_baseline(ebsperf):
    """S0-12, S2-11, S2-14: with its credits gone a gp2 volume runs at 3 IOPS/GiB
    (100 GiB -> 300 IOPS, 500 GiB -> 1,500). Needs --burst-balance=0 (an empty bucket)."""
    ebsperf.require_empty_bucket()
    ebsperf.check_cap("S0-12", "gp2 baseline, random read 16 KiB",
                      ebsperf.workload("randread", "16k"), credits=False)


def test_large_random_reads_reach_the_throughput_cap(ebsperf):
    """B-GP2: throughput is capped at 128 MiB/s up to 170 GiB and 250 MiB/s from 334 GiB
    (random 256 KiB reads, the SSD I/O unit)."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("B-GP2", "gp2 throughput, random read 256 KiB",
                      ebsperf.workload("randread", "256k"), metric="throughput")
