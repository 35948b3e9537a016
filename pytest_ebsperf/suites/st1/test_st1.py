"""st1 (HDD): MiB/s per TiB with a burst bucket (B-HDD, S3-03, S3-04, S3-06). The claims
are the ones st1 and sc1 share, written once in ``pytest_ebsperf/suites/hdd.py``; this
module's marker makes them st1's."""

import pytest

from pytest_ebsperf.suites.hdd import (  # noqa: F401 (collected as this module's tests)
    test_a_volume_faster_than_its_instance_runs_at_the_instance_limit,
    test_sequential_read_reaches_burst_throughput,
    test_sequential_write_reaches_burst_throughput,
    test_small_random_reads_cost_a_full_mib_of_credit_each,
)

pytestmark = pytest.mark.ebsperf(volume_type="st1")
