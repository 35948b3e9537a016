"""The claims st1 and sc1 share (B-HDD, S3-03, S3-04, S3-06, B-IOACCT), written once.

``suites/st1/test_st1.py`` and ``suites/sc1/test_sc1.py`` import these tests; each module's
marker names its type, and the messages name the volume under test's. Burst figures differ
by type (st1: 250 MiB/s per TiB, cap 500; sc1: 80 MiB/s per TiB, cap 250) and come from the
model. Not collected on its own (its name does not start with ``test_``).
"""

import pytest


def test_sequential_read_reaches_burst_throughput(ebsperf):
    """B-HDD: sequential 1 MiB reads reach the burst throughput (volume or instance cap,
    whichever is lower) while the bucket has credits."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("B-HDD", f"{ebsperf.volume.type} sequential read 1 MiB",
                      ebsperf.workload("read", "1m"), metric="throughput")


def test_small_random_reads_cost_a_full_mib_of_credit_each(ebsperf):
    """S3-06, B-IOACCT: every random I/O of 1 MiB or less costs 1 MiB of throughput, so
    16 KiB random reads run at (burst MiB/s) IOPS, capped at the type's maximum IOPS."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("S3-06", f"{ebsperf.volume.type} random read 16 KiB",
                      ebsperf.workload("randread", "16k"))


def test_sequential_write_reaches_burst_throughput(ebsperf):
    """B-HDD: sequential 1 MiB writes reach the burst throughput. Writes: needs
    --ebsperf-destructive."""
    ebsperf.require_burst_credits()
    ebsperf.check_cap("B-HDD", f"{ebsperf.volume.type} sequential write 1 MiB",
                      ebsperf.workload("write", "1m"), metric="throughput")


# Emulated: seed 003's 6 TB volume (of the suite's type) on a d2.xlarge (750 Mbps = 93.75 MB/s
# of EBS bandwidth).
@pytest.mark.ebsperf(emulated={"size_gib": 6144, "instance_type": "d2.xlarge"})
def test_a_volume_faster_than_its_instance_runs_at_the_instance_limit(ebsperf):
    """S3-03, S3-04, B-EBSOPT: a 6 TiB st1 bursts to 500 MiB/s (sc1 to 250), but seed 003
    read 93.6-94.4 MB/s on a d2.xlarge (93.75 MB/s) and 125-126 MB/s on a c4.2xlarge
    (125 MB/s): where the instance's EBS bandwidth is below the volume's, sequential 1 MiB
    reads run at 0.90-1.05 x the instance's maximum. Skipped where the volume binds."""
    ebsperf.require_burst_credits()
    ebsperf.check_instance_bound("S3-03",
                                 f"{ebsperf.volume.type} sequential read 1 MiB, instance-bound",
                                 ebsperf.workload("read", "1m"))


def test_a_burst_lasts_balance_over_burst_minus_baseline(ebsperf):
    """B-HDD: at the burst throughput the bucket lasts balance / (burst - baseline) MiB/s
    (TIME: within the larger of 10 % and 120 s)."""
    ebsperf.check_burst_duration("B-HDD", f"{ebsperf.volume.type} burst duration, sequential "
                                 "read 1 MiB", ebsperf.workload("read", "1m"))


def test_after_the_knee_the_volume_holds_its_baseline(ebsperf):
    """B-HDD, B-SLA: with its credits spent the volume delivers its baseline throughput,
    >= 90 % of it in 99 % of seconds and not above it (CAP)."""
    ebsperf.check_baseline_after_knee("B-HDD", f"{ebsperf.volume.type} baseline after the "
                                      "knee, sequential read 1 MiB",
                                      ebsperf.workload("read", "1m"))


def test_idle_time_refills_the_bucket_at_the_baseline_rate(ebsperf):
    """B-HDD: credits come back at the baseline rate, so after N idle seconds an empty
    volume bursts N x baseline / (burst - baseline) seconds (TIME)."""
    ebsperf.check_refill("B-HDD", f"{ebsperf.volume.type} burst bought by idle time, "
                         "sequential read 1 MiB", ebsperf.workload("read", "1m"))
