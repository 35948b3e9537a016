"""Safety checks refuse every way of destroying data, and never write a byte themselves."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import subprocess
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.common import backing_seen, detach_own

from pytest_ebsperf.device import safety
from pytest_ebsperf.device.safety import (
    DeviceReport,
    Signature,
    check_readable,
    check_writable,
    inspect_device,
    read_holders,
    read_partitions,
)
from pytest_ebsperf.errors import DeviceError, UnsafeDeviceError

MIB = 2**20
CAN_LOOP = os.geteuid() == 0 and shutil.which("losetup") and Path("/dev/loop-control").exists()
needs_loop = pytest.mark.skipif(not CAN_LOOP, reason="needs root and loop devices (losetup)")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def poke(path: Path, offset: int, data: bytes) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def write_mbr(path: Path, kind: int = 0x83) -> None:
    """One primary partition from sector 2048, as fdisk would make it."""
    entry = bytes([0, 0, 0x21, 0, kind, 0, 0, 0]) + (2048).to_bytes(4, "little")
    poke(path, 440, (0x1234ABCD).to_bytes(4, "little"))
    poke(path, 446, entry + (16 * 2048).to_bytes(4, "little"))
    poke(path, 510, b"\x55\xaa")


def write_gpt(path: Path) -> None:
    """A protective MBR and a primary GPT header with valid CRCs."""
    last = path.stat().st_size // 512 - 1
    write_mbr(path, kind=0xEE)
    linux = uuid.UUID("0FC63DAF-8483-4772-8E79-3D69D8477DE4").bytes_le
    entry = linux + uuid.uuid4().bytes_le + (2048).to_bytes(8, "little")
    entries = (entry + (4095).to_bytes(8, "little")).ljust(128, b"\0").ljust(128 * 128, b"\0")
    header = bytearray(b"EFI PART" + bytes([0, 0, 1, 0]) + (92).to_bytes(4, "little"))
    header += bytes(8) + (1).to_bytes(8, "little") + last.to_bytes(8, "little")
    header += (34).to_bytes(8, "little") + (last - 33).to_bytes(8, "little")
    header += uuid.uuid4().bytes_le + (2).to_bytes(8, "little")
    header += (128).to_bytes(4, "little") + (128).to_bytes(4, "little")
    header += zlib.crc32(entries).to_bytes(4, "little")
    header[16:20] = zlib.crc32(bytes(header)).to_bytes(4, "little")
    poke(path, 512, bytes(header))
    poke(path, 1024, entries)


class Scratch:
    """Loop devices on files in a tmp dir, and mounts, all undone at the end of the test."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path, self.devices, self.mounts = tmp_path, [], []  # type: ignore[var-annotated]

    def disk(
        self, prepare: Callable[[Path], object] | None = None, *flags: str
    ) -> tuple[str, Path]:
        backing = self.tmp_path / f"disk{len(self.devices)}.img"
        backing.write_bytes(b"")
        os.truncate(backing, 64 * MIB)
        if prepare is not None:
            prepare(backing)
        argv = ["losetup", "--find", "--show", *flags, str(backing)]
        device = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
        self.devices.append((device, backing_seen(device)))
        return device, backing

    def mount(self, device: str) -> str:
        target = self.tmp_path / f"mnt{len(self.mounts)}"
        target.mkdir()
        # ro,noload: a mount that never writes, so the bytes can be compared afterwards.
        subprocess.run(["mount", "-o", "ro,noload", device, str(target)], check=True)
        self.mounts.append(str(target))
        return str(target)

    def close(self) -> None:
        for target in reversed(self.mounts):
            subprocess.run(["umount", target], check=False, capture_output=True)
        for device, seen in self.devices:
            detach_own(device, seen)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Scratch]:
    if not CAN_LOOP:
        pytest.skip("needs root and loop devices (losetup)")
    made = Scratch(tmp_path)
    try:
        yield made
    finally:
        made.close()


def mkfs_ext4(device: str) -> str:
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    done = subprocess.run(["blkid", "-p", "-s", "UUID", "-o", "value", device], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


# --- what is not a block device ------------------------------------------------------------


def test_a_missing_path_is_refused_with_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match=r"/nope does not exist; pass a block device"):
        inspect_device(f"{tmp_path}/nope")


def test_a_regular_file_is_refused_because_fio_would_benchmark_a_file(tmp_path: Path) -> None:
    (tmp_path / "disk.img").write_bytes(bytes(4096))
    with pytest.raises(DeviceError, match="is a regular file, not a block device; fio would "
                       "silently create or benchmark a file"):  # fmt: skip
        inspect_device(str(tmp_path / "disk.img"))


def test_a_directory_is_refused_because_fio_would_create_a_file(tmp_path: Path) -> None:
    with pytest.raises(DeviceError, match="is a directory, not a block device; fio would"):
        inspect_device(str(tmp_path))


def test_a_character_device_is_refused_and_the_nvme_namespace_is_suggested() -> None:
    with pytest.raises(DeviceError, match=r"/dev/null is a character device.*/dev/nvme1n1"):
        inspect_device("/dev/null")


# --- sysfs and /proc readers on fake trees -------------------------------------------------


def test_holders_of_the_device_and_of_its_partitions_are_read_from_sysfs(tmp_path: Path) -> None:
    disk = tmp_path / "block" / "sdz"
    for sub in ("holders/dm-0", "sdz1/holders/md0", "sdz2/holders", "queue"):
        (disk / sub).mkdir(parents=True)
    (disk / "sdz1" / "partition").write_text("1\n")
    (disk / "sdz2" / "partition").write_text("2\n")
    assert read_partitions(disk) == ("sdz1", "sdz2")
    assert read_holders(disk) == ("dm-0", "md0")


def test_a_mount_of_any_partition_counts_as_a_mount_of_the_disk(tmp_path: Path) -> None:
    (tmp_path / "self").mkdir()
    (tmp_path / "self" / "mountinfo").write_text(
        "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
        "40 22 8:17 / /mnt/my\\040data rw,relatime shared:2 - xfs /dev/sdb1 rw\n"
    )
    numbers = {"8:16": "sdb", "8:17": "sdb1"}
    assert safety.read_mounts(numbers, proc=tmp_path) == ("/mnt/my data",)
    assert safety.read_mounts({"8:32": "sdc"}, proc=tmp_path) == ()


def report(**changes: object) -> DeviceReport:
    base = DeviceReport("/dev/loop9", "/dev/loop9", "loop9", "7:9", 64 * MIB, read_only=False)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


FLAG = "even with --ebsperf-destructive."
HARD_REFUSALS = [
    ({"holders": ("dm-0",)}, "is held by dm-0; writes are refused on a device in use "
     + FLAG + " Release it or pick another device."),
    ({"root": True}, "holds / or /boot; writes are refused on the system disk "
     + FLAG + " Pick another device."),
    ({"swap": ("/dev/loop9",)}, "is in use as swap (/dev/loop9); writes are refused on a "
     + "swap device " + FLAG + " Run swapoff or pick another device."),
    ({"read_only": True}, "is read-only; writes are refused on a read-only device "
     + FLAG + " Pick a writable device."),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "sentence"), HARD_REFUSALS)
def test_hard_refusals_hold_even_with_the_destructive_flag(
    changes: dict[str, object], sentence: str
) -> None:
    with pytest.raises(UnsafeDeviceError) as caught:
        check_writable(report(**changes), destructive=True)
    assert str(caught.value) == f"/dev/loop9 {sentence}"


def test_every_further_reason_is_named_too() -> None:
    with pytest.raises(UnsafeDeviceError) as caught:
        check_writable(report(mounted=("/data",), swap=("/dev/loop9",)), destructive=True)
    assert str(caught.value).endswith("It also is in use as swap (/dev/loop9).")


def test_a_device_of_size_zero_has_nothing_to_read() -> None:
    with pytest.raises(DeviceError, match="has size 0"):
        check_readable(report(size_bytes=0))


def test_the_disk_holding_root_is_recognised_from_st_dev() -> None:
    dev = os.stat("/").st_dev
    number = f"{os.major(dev)}:{os.minor(dev)}"
    if os.major(dev) == 0:
        pytest.skip("/ is not on a block device here (overlay or tmpfs)")
    assert safety._holds_root({number: "disk"}, safety.SYS)
    assert not safety._holds_root({"7:250": "loop250"}, safety.SYS)


# --- signatures ----------------------------------------------------------------------------

MAGIC_CASES = {
    "ext4": [(1080, b"\x53\xef"), (1120, (0x40).to_bytes(4, "little"))],
    "ext3": [(1080, b"\x53\xef"), (1116, (0x4).to_bytes(4, "little"))],
    "ext2": [(1080, b"\x53\xef")],
    "xfs": [(0, b"XFSB")],
    "btrfs": [(65600, b"_BHRfS_M")],
    "crypto_LUKS": [(0, b"LUKS\xba\xbe")],
    "LVM2_member": [(512, b"LABELONE")],
    "swap": [(4086, b"SWAPSPACE2")],
    "gpt": [(512, b"EFI PART")],
    "dos": [(446 + 4, b"\x83"), (510, b"\x55\xaa")],
}
MD = (0xA92B4EFC).to_bytes(4, "little")
SIZE = 8 * MIB
MD_CASES = {"1.2": 4096, "1.1": 0, "1.0": SIZE - 8192, "0.90": SIZE - 65536}


def blank_image(tmp_path: Path) -> Path:
    image = tmp_path / "image"
    image.write_bytes(b"")
    os.truncate(image, SIZE)
    return image


@pytest.mark.parametrize("kind", sorted(MAGIC_CASES))
def test_the_magic_reader_finds_each_signature(tmp_path: Path, kind: str) -> None:
    image = blank_image(tmp_path)
    for offset, data in MAGIC_CASES[kind]:
        poke(image, offset, data)
    assert [sig.type for sig in safety._magic(str(image), SIZE)] == [kind]


@pytest.mark.parametrize("version", sorted(MD_CASES))
def test_the_magic_reader_finds_md_superblocks_of_every_version(
    tmp_path: Path, version: str
) -> None:
    image = blank_image(tmp_path)
    poke(image, MD_CASES[version], MD)
    assert [sig.type for sig in safety._magic(str(image), SIZE)] == ["linux_raid_member"]


def test_a_boot_signature_without_partitions_is_not_a_partition_table(tmp_path: Path) -> None:
    image = blank_image(tmp_path)
    poke(image, 510, b"\x55\xaa")
    assert safety._magic(str(image), SIZE) == []


def test_signatures_are_described_in_words() -> None:
    assert Signature("ext4", "0b1e").describe() == "an ext4 filesystem (UUID 0b1e)"
    assert Signature("xfs", label="data").describe() == "an xfs filesystem (label 'data')"
    assert Signature("dos").describe() == "an MBR (dos) partition table"
    assert Signature("zonefs").describe() == "a zonefs signature"


def test_the_overwrite_note_names_what_will_be_lost() -> None:
    assert report().overwrite_note() is None
    sigs = (Signature("gpt"), Signature("ext4"))
    assert report(signatures=sigs).overwrite_note() == "overwriting gpt, ext4 on /dev/loop9"


# --- real loop devices ---------------------------------------------------------------------


def run_every_check(device: str) -> DeviceReport:
    """All the safety checks, with and without the flag; returns the report."""
    found = check_readable(inspect_device(device))
    for destructive in (False, True):
        try:
            check_writable(found, destructive=destructive)
        except UnsafeDeviceError:
            pass
    return found


def test_a_blank_device_is_described_and_needs_the_flag_for_writes(scratch: Scratch) -> None:
    device, _ = scratch.disk()
    found = inspect_device(device)
    name = Path(device).name
    expected_number = Path(f"/sys/block/{name}/dev").read_text().strip()
    assert (found.name, found.major_minor, found.size_bytes) == (name, expected_number, 64 * MIB)
    assert not (found.read_only or found.mounted or found.swap or found.root or found.holders)
    assert (found.partitions, found.exclusive_busy, found.signatures) == ((), False, ())
    with pytest.raises(UnsafeDeviceError) as caught:
        check_writable(found, destructive=False)
    assert str(caught.value) == (
        f"Write claims need --ebsperf-destructive: it lets the checks overwrite {device}."
    )
    assert check_writable(found, destructive=True) is found
    assert found.overwrite_note() is None


def test_an_ext4_filesystem_is_refused_by_name_and_uuid_without_the_flag(
    scratch: Scratch,
) -> None:
    device, _ = scratch.disk()
    fs_uuid = mkfs_ext4(device)
    found = inspect_device(device)
    with pytest.raises(UnsafeDeviceError) as caught:
        check_writable(found, destructive=False)
    assert str(caught.value).startswith(f"{device} carries an ext4 filesystem (UUID {fs_uuid})")
    assert "--ebsperf-destructive" in str(caught.value)
    assert (
        check_writable(found, destructive=True).overwrite_note() == f"overwriting ext4 on {device}"
    )


@pytest.mark.parametrize(
    ("prepare", "described"),
    [
        (write_mbr, "an MBR (dos) partition table"),
        (write_gpt, "a GPT partition table"),
        (lambda path: subprocess.run(["mkswap", "-q", str(path)], check=True), "a swap area"),
    ],
    ids=["mbr", "gpt", "swap"],
)
def test_partition_tables_and_swap_areas_are_refused_without_the_flag(
    scratch: Scratch, prepare: Callable[[Path], object], described: str
) -> None:
    device, _ = scratch.disk(prepare)
    found = inspect_device(device)
    with pytest.raises(
        UnsafeDeviceError,
        match=re.escape(f"{device} carries {described}") + r"( \(UUID [-0-9a-f]+\))?;",
    ):
        check_writable(found, destructive=False)
    assert "protective MBR" not in str([sig.describe() for sig in found.signatures])
    assert check_writable(found, destructive=True) is found


@pytest.mark.parametrize("kind", ["ext4", "mbr", "gpt", "swap"])
def test_the_magic_reader_agrees_with_the_tools_when_they_are_missing(
    scratch: Scratch, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    prepare = {"mbr": write_mbr, "gpt": write_gpt, "ext4": None,
               "swap": lambda p: subprocess.run(["mkswap", "-q", str(p)], check=True)}[kind]  # fmt: skip
    device, _ = scratch.disk(prepare)
    if kind == "ext4":
        mkfs_ext4(device)
    with_tools = {sig.type for sig in inspect_device(device).signatures} - {"PMBR"}
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    assert {sig.type for sig in inspect_device(device).signatures} == with_tools
    assert with_tools


def test_a_mounted_device_is_refused_even_with_the_flag_but_may_be_read(scratch: Scratch) -> None:
    device, _ = scratch.disk()
    mkfs_ext4(device)
    target = scratch.mount(device)
    found = inspect_device(device)
    assert found.mounted == (target,) and found.exclusive_busy
    assert check_readable(found) is found
    with pytest.raises(UnsafeDeviceError) as caught:
        check_writable(found, destructive=True)
    assert str(caught.value) == (
        f"{device} is mounted on {target}; writes are refused on a mounted device even with "
        "--ebsperf-destructive. Unmount it or pick another device."
    )


def test_a_mounted_partition_makes_its_whole_disk_refused(scratch: Scratch) -> None:
    device, _ = scratch.disk(write_mbr, "--partscan")
    partition = f"{device}p1"
    if not Path(partition).exists():
        pytest.skip("this kernel makes no partitions (no MSDOS/EFI partition table support)")
    mkfs_ext4(partition)
    target = scratch.mount(partition)
    found = inspect_device(device)
    assert found.partitions == (f"{Path(device).name}p1",)
    assert found.mounted == (target,)
    with pytest.raises(UnsafeDeviceError, match=f"is mounted on {target}; writes are refused"):
        check_writable(found, destructive=True)


def test_a_device_listed_in_proc_swaps_is_refused_even_with_the_flag(
    scratch: Scratch, tmp_path: Path
) -> None:
    device, _ = scratch.disk()
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(Path("/proc/self/mountinfo").read_text())
    (proc / "swaps").write_text(
        "Filename\tType\tSize\tUsed\tPriority\n"
        f"{device}                               partition\t65532\t0\t-2\n"
    )
    found = inspect_device(device, proc=proc)
    assert found.swap == (device,)
    with pytest.raises(UnsafeDeviceError, match="in use as swap.*even with --ebsperf-destructive"):
        check_writable(found, destructive=True)


def test_a_device_another_program_holds_exclusively_is_refused(scratch: Scratch) -> None:
    device, _ = scratch.disk()
    holder = os.open(device, os.O_RDONLY | os.O_EXCL)
    try:
        found = inspect_device(device)
    finally:
        os.close(holder)
    assert found.exclusive_busy
    with pytest.raises(UnsafeDeviceError, match="is opened exclusively by another program"):
        check_writable(found, destructive=True)


def test_a_read_only_device_is_refused_for_writes_but_may_be_read(scratch: Scratch) -> None:
    device, _ = scratch.disk(None, "--read-only")
    found = inspect_device(device)
    assert found.read_only and check_readable(found) is found
    with pytest.raises(UnsafeDeviceError, match="is read-only"):
        check_writable(found, destructive=True)


def test_a_symlink_is_resolved_and_both_names_are_shown(scratch: Scratch, tmp_path: Path) -> None:
    device, _ = scratch.disk()
    link = tmp_path / "by-id-volume"
    link.symlink_to(device)
    found = inspect_device(str(link))
    assert found.real_path == device
    with pytest.raises(UnsafeDeviceError, match=f"overwrite {link} \\({device}\\)"):
        check_writable(found, destructive=False)


@pytest.mark.parametrize("kind", ["blank", "ext4", "mbr", "gpt", "swap", "mounted"])
def test_the_checks_leave_every_byte_of_the_device_unchanged(scratch: Scratch, kind: str) -> None:
    prepare = {"mbr": write_mbr, "gpt": write_gpt,
               "swap": lambda p: subprocess.run(["mkswap", "-q", str(p)], check=True)}  # fmt: skip
    device, backing = scratch.disk(prepare.get(kind))
    if kind in ("ext4", "mounted"):
        mkfs_ext4(device)
    if kind == "mounted":
        scratch.mount(device)
    subprocess.run(["sync"], check=True)
    before = sha256(backing)
    run_every_check(device)
    subprocess.run(["sync"], check=True)
    assert sha256(backing) == before
