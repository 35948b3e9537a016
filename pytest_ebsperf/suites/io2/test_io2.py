"""io2 Block Express: provisioned IOPS 99.9 % of the time, sub-millisecond latency (B-IO2)."""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="io2")


def test_random_read_holds_provisioned_iops_999_percent_of_seconds(ebsperf):
    """B-IO2, B-SLA: io2 delivers at least 90 % of its provisioned IOPS 99.9 % of the time
    (random 16 KiB reads)."""
    ebsperf.check_cap("B-IO2", "io2 random read 16 KiB", ebsperf.workload("randread", "16k"))


def test_random_write_holds_provisioned_iops(ebsperf):
    """B-IO2, B-SLA: random 16 KiB writes hold the provisioned IOPS. Writes: needs
    --ebsperf-destructive."""
    ebsperf.check_cap("B-IO2", "io2 random write 16 KiB", ebsperf.workload("randwrite", "16k"))


def test_large_random_reads_reach_the_throughput_cap(ebsperf):
    """B-IO2: throughput is 0.256 MiB/s per provisioned IOPS up to 4,000 MiB/s (random
    256 KiB reads, the SSD I/O unit, so each I/O counts once)."""
    ebsperf.check_cap("B-IO2", "io2 throughput, random read 256 KiB",
                      ebsperf.workload("randread", "256k"), metric="throughput")


def test_sixteen_kib_io_averages_under_half_a_millisecond(ebsperf):
    """B-IO2: io2 Block Express on Nitro gives sub-millisecond latency, under 500 µs on
    average for 16 KiB I/O. One I/O at a time (QD 1), so the time is the volume's service
    time, not a queue at its IOPS limit."""
    ebsperf.check_mean_latency("B-IO2", "io2 random read 16 KiB, one at a time",
                               ebsperf.workload("randread", "16k", iodepth=1, numjobs=1),
                               below="500us")
