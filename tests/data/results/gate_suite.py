"""The suite the recorded results in this directory come from (see capture.sh).

Not named test_*.py, so the project's own test run does not collect it; capture.sh and
tests/results/test_results_plugin.py pass it explicitly. INFO checks never fail
on their own, so only the regression gate can fail them.
"""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="io1")


def test_random_read_is_recorded(ebsperf):
    """S0-02-style record of random 4 KiB reads on the emulated io1 volume."""
    ebsperf.record_info("S0-02", "io1 random read 4 KiB", ebsperf.workload("randread", "4k"))
