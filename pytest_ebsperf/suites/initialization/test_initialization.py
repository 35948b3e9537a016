"""A volume restored from a snapshot with a Provisioned Rate for Volume Initialization
(100-300 MiB/s, 2025) is initialized at that rate (B-INIT).

Run on the restored volume before anything has read it: on EC2 the rate and the
initialization state come from AWS (add --ebsperf-initialize to make the read); elsewhere
give the rate with --volume-init-rate=MIBPS. The check is AWS's initialization read of every
block (read-only); it skips on a volume created empty, on one AWS says is already
initialized, and on emulated volumes (created empty).
"""


def test_restored_volume_initializes_at_its_provisioned_rate(ebsperf):
    """B-INIT: every block arrives by size / rate after creation, so a read of every block
    takes at most size / rate + size / cap: its mean is at least 1 / (1/rate + 1/cap)."""
    ebsperf.check_initialization_rate("B-INIT", "first read of every block at the "
                                      "provisioned initialization rate")
