"""Instance store (NVMe SSD): at least the published per-type random 4 KiB IOPS (B-IS)."""

import pytest

pytestmark = pytest.mark.ebsperf(volume_type="instance-store")


def test_random_read_reaches_published_iops(ebsperf):
    """B-IS, S3-08: random 4 KiB reads at queue-depth saturation reach at least 90 % of the
    IOPS AWS publishes for the instance type."""
    ebsperf.check_floor("B-IS", "instance store random read 4 KiB",
                        ebsperf.workload("randread", "4k"))


def test_random_write_reaches_published_iops(ebsperf):
    """B-IS, S1-03: random 4 KiB writes reach at least 90 % of the published write IOPS
    (no pre-warming needed on NVMe instance store). Writes: needs --ebsperf-destructive."""
    ebsperf.check_floor("B-IS", "instance store random write 4 KiB",
                        ebsperf.workload("randwrite", "4k"))


def test_device_supports_trim(ebsperf):
    """S1-02, S1-05: SSD instance store supports TRIM: the kernel reports a non-zero
    discard_max_bytes for the device."""
    ebsperf.check_discard("S1-05", "instance store supports TRIM")
