"""st1 throughput credits over time: the knee, the baseline after it, the refill (B-HDD).

An st1 volume holds 1 TiB of throughput credit per TiB of size, earns it at its baseline of
40 MiB/s per TiB (cap 500), bursting at 250 MiB/s per TiB (cap 500); a full 2 TiB volume
bursts 2 TiB / (500 - 80) MiB/s = 4,993 s. Every I/O of 1 MiB or less costs a full MiB of
credit (B-IOACCT), so the
checks read sequentially in 1 MiB I/Os, as AWS's own benchmark recipe does. On a real volume
they take hours and run only with --ebsperf-long; on an emulated one (--emulate) the bucket
is shrunk by --emulate-timescale.
"""

import pytest

from pytest_ebsperf.suites.hdd import (  # noqa: F401 (collected as this module's tests)
    test_a_burst_lasts_balance_over_burst_minus_baseline,
    test_after_the_knee_the_volume_holds_its_baseline,
    test_idle_time_refills_the_bucket_at_the_baseline_rate,
)

# these run the bucket dry: after every other st1 check, which need the credits
pytestmark = pytest.mark.ebsperf(volume_type="st1", drains=True)


def test_volumes_of_12_5_tib_or_more_have_no_knee(ebsperf):
    """B-HDD: from 12.5 TiB the st1 baseline (40 MiB/s per TiB) reaches the 500 MiB/s cap,
    so the volume holds it with no knee for as long as a full bucket would last."""
    ebsperf.check_no_knee("B-HDD", "st1 >= 12.5 TiB: no knee, sequential read 1 MiB",
                          ebsperf.workload("read", "1m"))
