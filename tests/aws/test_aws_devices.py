"""Device -> volume id mapping on a fake sysfs tree (claims.md B-NVME)."""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

import pytest
from support.aws import FakeSystem

from pytest_ebsperf.aws import devices
from pytest_ebsperf.errors import DeviceError


def identify(system: FakeSystem, path: str) -> devices.DeviceInfo:
    return devices.identify_device(path, sysfs_root=system.sysfs_root, dev_root=system.dev_root)


def test_an_nvme_ebs_serial_becomes_the_volume_id_with_its_dash(fake_system: FakeSystem) -> None:
    fake_system.nvme("nvme1n1", "vol0123456789abcdef0")
    info = identify(fake_system, "/dev/nvme1n1")
    assert (info.kind, info.volume_id) == (devices.EBS_NVME, "vol-0123456789abcdef0")
    assert info.model == "Amazon Elastic Block Store"


def test_a_udev_sdf_symlink_resolves_to_the_nvme_device_and_keeps_its_attachment_name(
    fake_system: FakeSystem,
) -> None:
    fake_system.nvme("nvme2n1", "vol0aaaaaaaaaaaaaaaa")
    fake_system.link("sdf", "nvme2n1")
    info = identify(fake_system, "/dev/sdf")
    assert info.kernel_name == "nvme2n1"
    assert info.volume_id == "vol-0aaaaaaaaaaaaaaaa"
    assert info.attachment_names == ("/dev/sdf", "/dev/xvdf")
    assert info.describe() == "/dev/sdf (nvme2n1, Amazon Elastic Block Store)"


def test_a_by_id_link_names_the_volume_even_without_a_readable_serial(
    fake_system: FakeSystem,
) -> None:
    (fake_system.dev / "nvme3n1").touch()  # no sysfs entry at all
    link = "disk/by-id/nvme-Amazon_Elastic_Block_Store_vol0bbbbbbbbbbbbbbbb"
    fake_system.link(link, "nvme3n1")
    info = identify(fake_system, "/dev/" + link)
    assert (info.kind, info.volume_id, info.kernel_name) == (
        devices.EBS_NVME,
        "vol-0bbbbbbbbbbbbbbbb",
        "nvme3n1",
    )


def test_instance_storage_is_recognised_by_its_nvme_model(fake_system: FakeSystem) -> None:
    fake_system.nvme("nvme1n1", "AWS2AB1234567890", model="Amazon EC2 NVMe Instance Storage")
    info = identify(fake_system, "/dev/nvme1n1")
    assert info.is_instance_store and info.volume_id is None


def test_a_partition_is_identified_by_the_disk_it_belongs_to(fake_system: FakeSystem) -> None:
    fake_system.nvme("nvme1n1", "vol0123456789abcdef0")
    (fake_system.dev / "nvme1n1p1").touch()
    info = identify(fake_system, "/dev/nvme1n1p1")
    assert (info.kernel_name, info.volume_id) == ("nvme1n1", "vol-0123456789abcdef0")


def test_a_xen_name_offers_both_attachment_spellings(fake_system: FakeSystem) -> None:
    fake_system.disk("xvdf")
    info = identify(fake_system, "/dev/xvdf")
    assert (info.kind, info.volume_id) == (devices.XEN, None)
    assert info.attachment_names == ("/dev/sdf", "/dev/xvdf")


@pytest.mark.parametrize(
    ("name", "kind"), [("loop0", devices.LOOP), ("md0", devices.OTHER), ("vda", devices.OTHER)]
)
def test_loop_md_and_virtio_disks_are_not_aws_devices(
    fake_system: FakeSystem, name: str, kind: str
) -> None:
    fake_system.disk(name)
    assert identify(fake_system, f"/dev/{name}").kind == kind


def test_an_nvme_drive_of_another_vendor_is_not_taken_for_ebs(fake_system: FakeSystem) -> None:
    fake_system.nvme("nvme0n1", "S4EVNX0N123456", model="Samsung SSD 970 EVO Plus 1TB")
    info = identify(fake_system, "/dev/nvme0n1")
    assert (info.kind, info.volume_id) == (devices.OTHER_NVME, None)


def test_a_missing_device_is_a_sentence_that_says_what_to_pass(fake_system: FakeSystem) -> None:
    with pytest.raises(DeviceError, match=r"^/dev/xvdz does not exist\. Pass the block device"):
        identify(fake_system, "/dev/xvdz")


@pytest.mark.parametrize(
    ("serial", "volume_id"),
    [
        ("vol0123456789abcdef0   ", "vol-0123456789abcdef0"),
        ("vol-0123456789abcdef0", "vol-0123456789abcdef0"),
        ("vol12345678", "vol-12345678"),  # the old 8-digit ids
        ("AWS2AB1234567890", None),
        ("", None),
    ],
)
def test_only_volume_serials_become_volume_ids(serial: str, volume_id: str | None) -> None:
    assert devices.serial_to_volume_id(serial) == volume_id


def test_the_nvme_device_of_a_volume_is_found_by_serial_and_none_before_it_appears(
    fake_system: FakeSystem,
) -> None:
    fake_system.nvme("nvme1n1", "vol0aaaaaaaaaaaaaaaa")
    find = devices.find_nvme_device
    roots = {"sysfs_root": fake_system.sysfs_root, "dev_root": fake_system.dev_root}
    assert find("vol-0bbbbbbbbbbbbbbbb", **roots) is None
    fake_system.nvme("nvme2n1", "vol0bbbbbbbbbbbbbbbb")
    assert find("vol-0bbbbbbbbbbbbbbbb", **roots) == f"{fake_system.dev_root}/nvme2n1"


def test_an_attached_xen_volume_is_found_under_its_xvd_name(fake_system: FakeSystem) -> None:
    roots = {"sysfs_root": fake_system.sysfs_root, "dev_root": fake_system.dev_root}
    assert devices.find_attached_device("vol-0ccccccccccccccc0", "/dev/sdg", **roots) is None
    fake_system.disk("xvdg")
    found = devices.find_attached_device("vol-0ccccccccccccccc0", "/dev/sdg", **roots)
    assert found == f"{fake_system.dev_root}/xvdg"
