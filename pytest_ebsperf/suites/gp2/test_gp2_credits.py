"""gp2 burst credits over time: the knee, the baseline after it, the refill, no knee from 1 TiB.

A gp2 volume under 1,000 GiB holds 5.4 M I/O credits, earns them at its baseline (3 IOPS/GiB)
and spends one per I/O: at 3,000 IOPS a full 100 GiB volume bursts for
5.4 M / (3,000 - 300) = 2,000 s, then holds 300 IOPS (S0-09..S0-13, S2-11..S2-14, B-GP2).
On a real volume these checks take from minutes to hours and run only with --ebsperf-long;
on an emulated one (--emulate) the bucket is shrunk by --emulate-timescale and they take
seconds. Starting balance: --burst-balance, else discovered, else a full bucket (said so in
the report).
"""

import pytest

# these run the bucket dry: after every other gp2 check, which need the credits
pytestmark = pytest.mark.ebsperf(volume_type="gp2", drains=True)


def test_a_burst_lasts_balance_over_burst_minus_baseline(ebsperf):
    """S0-10, S0-11, S2-12, S2-14, S0-15: at 3,000 IOPS the bucket lasts
    balance / (3,000 - baseline): 100 GiB full -> 2,000 s, 500 GiB -> 3,600 s, and 600 s
    cannot drain a full 100 GiB volume (TIME: within the larger of 10 % and 120 s)."""
    ebsperf.check_burst_duration("S0-11", "gp2 burst duration, random read 16 KiB",
                                 ebsperf.workload("randread", "16k"))


def test_after_the_knee_the_volume_holds_its_baseline(ebsperf):
    """S0-12, S2-11, S2-14: once the credits are spent the volume runs at 3 IOPS/GiB
    (100 GiB -> 300, 500 GiB -> 1,500): >= 90 % of it in 99 % of seconds and not above it
    (CAP). Drains the bucket first when it still holds credits."""
    ebsperf.check_baseline_after_knee("S0-12", "gp2 baseline after the knee, random read "
                                      "16 KiB", ebsperf.workload("randread", "16k"))


def test_idle_time_refills_the_bucket_at_the_baseline_rate(ebsperf):
    """S0-13: below its baseline a volume earns credits back at the baseline rate, so after
    N idle seconds an empty 100 GiB volume bursts N x 300 / (3,000 - 300) seconds (TIME)."""
    ebsperf.check_refill("S0-13", "gp2 burst bought by idle time, random read 16 KiB",
                         ebsperf.workload("randread", "16k"))


def test_volumes_of_1000_gib_or_more_have_no_knee(ebsperf):
    """S2-11, B-GP2: from 1,000 GiB the baseline (3 IOPS/GiB) reaches the 3,000 burst, so
    the volume holds its baseline with no knee for as long as a full bucket would last."""
    ebsperf.check_no_knee("S2-11", "gp2 >= 1,000 GiB: no knee, random read 16 KiB",
                          ebsperf.workload("randread", "16k"))
