"""One identity per piece of storage, read from sysfs: fake trees for what this machine lacks
(device-mapper, md RAID, partitions of real disks), the real loop driver for the rest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.common import needs_root

from pytest_ebsperf.device import identity, lock
from pytest_ebsperf.device.identity import LoopBacking


def fake_sysfs(root: Path, tree: dict[str, dict[str, object]]) -> Path:
    """A /sys/devices + /sys/class/block pair: ``{path: {"dev": "8:0", "holders": [...],
    "slaves": [...], "partition": True}}`` where ``path`` is ``sda`` or ``sda/sda1``."""
    devices, classes = root / "devices", root / "class" / "block"
    classes.mkdir(parents=True)
    for path, facts in tree.items():
        where = devices / path
        where.mkdir(parents=True)
        (where / "dev").write_text(f"{facts['dev']}\n")
        if facts.get("partition"):
            (where / "partition").write_text("1\n")
        for kind in ("holders", "slaves"):
            (where / kind).mkdir()
            for name in facts.get(kind, []):  # type: ignore[attr-defined]
                (where / kind / name).mkdir()  # sysfs has symlinks; a name is what is read
        if facts.get("loop"):
            (where / "loop").mkdir()
        os.symlink(where, classes / Path(path).name)
    return classes


TREE: dict[str, dict[str, object]] = {
    "sda": {"dev": "8:0"},
    "sda/sda1": {"dev": "8:1", "partition": True, "holders": ["dm-0"]},
    "sda/sda2": {"dev": "8:2", "partition": True},
    "dm-0": {"dev": "253:0", "slaves": ["sda1"]},
    "sdb": {"dev": "8:16", "holders": ["md0"]},
    "sdc": {"dev": "8:32", "holders": ["md0"]},
    "md0": {"dev": "9:0", "slaves": ["sdb", "sdc"]},
    "loop5": {"dev": "7:5", "loop": True},   # over sda2
    "loop6": {"dev": "7:6", "loop": True},   # over a file
    "loop7": {"dev": "7:7", "loop": True},   # over the same file
}
LOOPS = {"loop5": LoopBacking("0:5", 9, "8:2"), "loop6": LoopBacking("254:0", 77, None, "/x"),
         "loop7": LoopBacking("254:0", 77, None, "/x (deleted)")}


@pytest.fixture
def devices(tmp_path: Path) -> dict[str, identity.BlockDevice]:
    return identity.scan(fake_sysfs(tmp_path, TREE), loop_info=LOOPS.get)


def test_a_partition_reaches_its_disk_and_its_dm_holder_not_its_sibling(
        devices: dict[str, identity.BlockDevice]) -> None:
    family = identity.family("sda1", devices)
    assert family.members == {"sda1": "itself", "sda": "the disk sda1 is a partition of",
                              "dm-0": "built on sda1"}
    assert family.roots == ("device 8:0",)
    assert identity.claim_order(family, devices) == ["dm-0", "sda1"]


def test_a_disk_reaches_every_partition_and_everything_on_them(
        devices: dict[str, identity.BlockDevice]) -> None:
    family = identity.family("sda", devices)
    assert set(family.members) == {"sda", "sda1", "sda2", "dm-0", "loop5"}
    assert family.members["loop5"] == "a loop device over sda2"
    # the disk's claim bars its partitions: only it and what sits on top is claimed
    assert identity.claim_order(family, devices) == ["dm-0", "loop5", "sda"]


def test_an_md_member_reaches_its_array_and_the_array_its_members(
        devices: dict[str, identity.BlockDevice]) -> None:
    assert set(identity.family("sdb", devices).members) == {"sdb", "md0"}
    array = identity.family("md0", devices)
    assert set(array.members) == {"md0", "sdb", "sdc"}
    assert array.roots == ("device 8:16", "device 8:32")
    # the array holds its members itself: writing the array claims the array alone
    assert identity.claim_order(array, devices) == ["md0"]
    assert devices["sdb"].holders == ("md0",)


def test_a_loop_over_a_partition_is_that_partitions_data(
        devices: dict[str, identity.BlockDevice]) -> None:
    family = identity.family("loop5", devices)
    assert set(family.members) == {"loop5", "sda2", "sda"}
    assert family.roots == ("device 8:0",)


def test_loops_over_one_file_are_one_piece_of_storage_even_once_deleted(
        devices: dict[str, identity.BlockDevice]) -> None:
    family = identity.family("loop6", devices)
    assert family.members["loop7"].startswith("another loop device over the same file")
    assert family.roots == identity.family("loop7", devices).roots == ("file 254:0 inode 77",)
    assert lock.lock_name(family.roots[0]) == "ebsperf-file-254-0-77.lock"


@needs_root
def test_the_loop_driver_names_the_file_by_device_and_inode(loop_device: object,
                                                            tmp_path: Path) -> None:
    device = loop_device(8)  # type: ignore[operator]
    backing = identity.loop_backing(Path(device).name)
    assert backing is not None
    image = next(tmp_path.glob("disk-*.img"))
    info = image.stat()
    assert (backing.dev, backing.inode, backing.rdev) == (
        f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}", info.st_ino, None)
    image.unlink()  # deleted: the driver still names it by device and inode
    gone = identity.loop_backing(Path(device).name)
    assert gone is not None and (gone.dev, gone.inode) == (backing.dev, backing.inode)
    assert gone.path.endswith("(deleted)")
