"""The EBS volume's own statistics (NVMe log page 0xD0), parsed from byte layouts built from
the published structure (the CloudWatch agent's ``diskio_ebs_*`` source): no NVMe here."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from pytest_ebsperf.device import ebsnvme
from pytest_ebsperf.device.ebsnvme import EbsNvmeStats


def stats(**changes: object) -> EbsNvmeStats:
    base = {"read_ops": 1_000, "write_ops": 10, "read_bytes": 16_384_000, "write_bytes": 40_960,
                "read_time_us": 500_000, "write_time_us": 2_000, "volume_exceeded_iops_us": 0,
                "volume_exceeded_tp_us": 0, "instance_exceeded_iops_us": 0,
                "instance_exceeded_tp_us": 0, "queue_length": 4,
                "read_latency": ((0, 100, 900), (100, 200, 100)), "write_latency": ((0, 100, 10),)}
    base.update(changes)
    return EbsNvmeStats(**base)  # type: ignore[arg-type]


def test_the_published_layout_is_read_field_by_field() -> None:
    page = bytearray(4096)
    struct.pack_into("<12Q", page, 0, 0x3C23B510, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)
    struct.pack_into("<Q3Q3Q", page, 512, 2, 0, 64, 5, 64, 128, 6)   # read histogram
    struct.pack_into("<Q3Q", page, 2056, 1, 0, 32, 9)                # write histogram
    found = ebsnvme.parse_log_page(bytes(page))
    assert (found.read_ops, found.write_ops, found.read_bytes, found.write_bytes) == (7, 8, 9, 10)
    assert (found.read_time_us, found.write_time_us) == (11, 12)
    assert (found.volume_exceeded_iops_us, found.volume_exceeded_tp_us) == (13, 14)
    assert (found.instance_exceeded_iops_us, found.instance_exceeded_tp_us) == (15, 16)
    assert found.queue_length == 17
    assert found.read_latency == ((0, 64, 5), (64, 128, 6))
    assert found.write_latency == ((0, 32, 9),)
    assert ebsnvme.parse_log_page(ebsnvme.build_log_page(found)) == found


def test_a_page_that_is_not_ebs_says_so() -> None:
    with pytest.raises(ValueError, match="not the EBS magic"):
        ebsnvme.parse_log_page(bytes(4096))
    with pytest.raises(ValueError, match="fewer than the 4096"):
        ebsnvme.parse_log_page(b"\x10\xb5\x23\x3c" + bytes(100))


def test_the_difference_of_two_readings_names_the_limit_that_bound() -> None:
    before = stats()
    after = stats(read_ops=61_000, volume_exceeded_iops_us=59_700_000,
                  instance_exceeded_tp_us=2_000_000,
                  read_latency=((0, 100, 50_900), (100, 200, 10_100)))
    delta = after - before
    assert delta.read_ops == 60_000
    assert delta.read_latency == ((0, 100, 50_000), (100, 200, 10_000))
    assert ebsnvme.bound_sentence(delta, 60.0) == (
        "the volume reports 59.7 s of 60.0 s above its provisioned IOPS: the volume's IOPS "
        "cap bound (NVMe log page 0xD0)")
    instance = stats(instance_exceeded_tp_us=30_000_000) - stats()
    assert "the instance's EBS limit bound" in (ebsnvme.bound_sentence(instance, 60.0) or "")
    assert ebsnvme.bound_sentence(stats() - stats(), 60.0) is None


def test_only_an_ebs_nvme_namespace_is_asked(tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    (sysfs / "block" / "nvme1n1" / "device").mkdir(parents=True)
    (sysfs / "block" / "nvme1n1" / "device" / "model").write_text(
        "Amazon Elastic Block Store              \n")
    (sysfs / "block" / "nvme0n1" / "device").mkdir(parents=True)
    (sysfs / "block" / "nvme0n1" / "device" / "model").write_text("Amazon EC2 NVMe Instance Storage\n")
    assert ebsnvme.is_ebs_nvme("/dev/nvme1n1", sysfs)
    assert not ebsnvme.is_ebs_nvme("/dev/nvme0n1", sysfs)
    assert not ebsnvme.is_ebs_nvme("/dev/loop0", sysfs)
