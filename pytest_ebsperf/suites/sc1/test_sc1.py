"""sc1 (throughput-optimized HDD family): MiB/s per TiB with a burst bucket (B-HDD, S3-03, S3-06)."""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="sc1")


def test_sequential_read_reaches_burst_throughput(ebsperf):
    """B-HDD, S3-03: sequential 1 MiB reads reach the burst throughput (volume or instance
    cap, whichever is lower) while the bucket has credits."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("S3-03", "sc1 sequential read 1 MiB", ebsperf.workload("read", "1m"),
                      metric="throughput")


def test_small_random_reads_cost_a_full_mib_of_credit_each(ebsperf):
    """S3-06, B-IOACCT: every random I/O of 1 MiB or less costs 1 MiB of throughput, so
    16 KiB random reads run at (burst MiB/s) IOPS, capped at the type's maximum IOPS."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("S3-06", "sc1 random read 16 KiB", ebsperf.workload("randread", "16k"))


def test_sequential_write_reaches_burst_throughput(ebsperf):
    """B-HDD: sequential 1 MiB writes reach the burst throughput. Writes: needs
    --ebsperf-destructive."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("B-HDD", "sc1 sequential write 1 MiB", ebsperf.workload("write", "1m"),
                      metric="throughput")
