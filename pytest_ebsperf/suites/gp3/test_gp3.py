"""gp3: baseline 3,000 IOPS / 125 MiB/s or what was provisioned, no burst (B-GP3, B-SLA)."""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="gp3")


def test_random_read_holds_provisioned_iops_99_percent_of_seconds(ebsperf):
    """B-GP3, B-SLA: gp3 delivers at least 90 % of its provisioned IOPS 99 % of the time
    and can sustain it indefinitely (random 16 KiB reads)."""
    ebsperf.check_cap("B-GP3", "gp3 random read 16 KiB", ebsperf.workload("randread", "16k"))


def test_random_write_holds_provisioned_iops(ebsperf):
    """B-GP3: random 16 KiB writes hold the provisioned IOPS. Writes: needs
    --ebsperf-destructive."""
    ebsperf.check_cap("B-GP3", "gp3 random write 16 KiB", ebsperf.workload("randwrite", "16k"))


def test_block_size_sweep_is_iops_bound_then_throughput_bound(ebsperf):
    """S2-10: IOPS stay at the provisioned rate until the provisioned throughput is reached
    (3,000 IOPS x 42.7 KiB = 125 MiB/s by default), then fall as throughput / block size."""
    ebsperf.check_sweep("S2-10", "gp3 block-size sweep, random read", "randread",
                        ["16k", "64k", "256k"])


def test_sixteen_kib_io_takes_single_digit_milliseconds(ebsperf):
    """B-SLA: gp3 delivers single-digit millisecond latency. One 16 KiB random read at a time
    (QD 1), so the figure is the volume's service time, not a queue at its IOPS limit; the
    average must stay under 10 ms."""
    ebsperf.check_mean_latency("B-SLA", "gp3 random read 16 KiB, one at a time",
                               ebsperf.workload("randread", "16k", iodepth=1, numjobs=1),
                               below="10ms")
