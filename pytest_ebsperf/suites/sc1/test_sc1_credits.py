"""sc1 throughput credits over time: the knee, the baseline after it, the refill (B-HDD).

An sc1 volume holds 1 TiB of throughput credit per TiB of size, earns it at its baseline of
12 MiB/s per TiB, bursting at 80 MiB/s per TiB (cap 250); a full 2 TiB volume bursts 2 TiB / (160 - 24) MiB/s = 15,420 s. Every I/O of 1 MiB or less costs a full MiB of credit (B-IOACCT), so the
checks read sequentially in 1 MiB I/Os, as AWS's own benchmark recipe does. On a real volume
they take hours and run only with --ebsperf-long; on an emulated one (--emulate) the bucket
is shrunk by --emulate-timescale.
"""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="sc1")


def test_a_burst_lasts_balance_over_burst_minus_baseline(ebsperf):
    """B-HDD: at the burst throughput the bucket lasts balance / (burst - baseline) MiB/s
    (TIME: within the larger of 10 % and 120 s)."""
    ebsperf.check_burst_duration("B-HDD", "sc1 burst duration, sequential read 1 MiB",
                                 ebsperf.workload("read", "1m"))


def test_after_the_knee_the_volume_holds_its_baseline(ebsperf):
    """B-HDD, B-SLA: with its credits spent the volume delivers its baseline throughput,
    >= 90 % of it in 99 % of seconds and not above it (CAP)."""
    ebsperf.check_baseline_after_knee("B-HDD", "sc1 baseline after the knee, sequential read "
                                      "1 MiB", ebsperf.workload("read", "1m"))


def test_idle_time_refills_the_bucket_at_the_baseline_rate(ebsperf):
    """B-HDD: credits come back at the baseline rate, so after N idle seconds an empty
    volume bursts N x baseline / (burst - baseline) seconds (TIME)."""
    ebsperf.check_refill("B-HDD", "sc1 burst bought by idle time, sequential read 1 MiB",
                         ebsperf.workload("read", "1m"))
