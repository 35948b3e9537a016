"""Never destroy data: find out what a device holds before any check writes to it.

:func:`inspect_device` only reads (sysfs, /proc, the first and last blocks of the device, and
``wipefs --no-act`` / ``blkid -p``, which open it read-only). :func:`check_writable` then
refuses, even with ``--ebsperf-destructive``, a device that is mounted, holds ``/`` or
``/boot``, is swap, has holders (md, dm, LVM) or is claimed exclusively by someone else; and
without the flag any device at all, naming what it carries.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pytest_ebsperf.errors import DeviceError, UnsafeDeviceError

SYS = Path("/sys")
PROC = Path("/proc")
FLAG = "--ebsperf-destructive"


_FILESYSTEMS = ("ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "ntfs", "exfat", "zfs_member")
_NOUNS = {
    "dos": "an MBR (dos) partition table",
    "gpt": "a GPT partition table",
    "PMBR": "a protective MBR",
    "LVM2_member": "an LVM2 physical volume",
    "crypto_LUKS": "a LUKS encrypted volume",
    "swap": "a swap area",
    "linux_raid_member": "a Linux RAID (md) member superblock",
    "ambivalent": "several conflicting signatures",
}


@dataclass(frozen=True)
class Signature:
    """Something on the device that writes would destroy (named as blkid names it)."""

    type: str
    uuid: str | None = None
    label: str | None = None

    def describe(self) -> str:
        """``"an ext4 filesystem (UUID 0b1e...)"``."""
        if self.type in _FILESYSTEMS:
            article = "an" if self.type[0] in "aeiox" else "a"
            noun = f"{article} {self.type} filesystem"
        else:
            noun = _NOUNS.get(self.type, f"a {self.type} signature")
        details = [f"UUID {self.uuid}"] if self.uuid else []
        details += [f"label {self.label!r}"] if self.label else []
        return f"{noun} ({', '.join(details)})" if details else noun


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _tool_signatures(path: str) -> list[Signature] | None:
    """wipefs lists every signature, blkid the first one; both open the device read-only."""
    done = _run(["wipefs", "--no-act", "--json", path]) if shutil.which("wipefs") else None
    if done is not None and done.returncode == 0:
        found = json.loads(done.stdout)["signatures"] if done.stdout.strip() else []
        return [Signature(item["type"], item.get("uuid"), item.get("label")) for item in found]
    if not shutil.which("blkid"):
        return None
    done = _run(["blkid", "-p", "-o", "export", path])
    if done.returncode == 8:  # "ambivalent result": more than one filesystem signature
        return [Signature("ambivalent")]
    if done.returncode not in (0, 2):  # 2: nothing found
        return None
    tags = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return [
        Signature(tags[kind], tags.get(uuid_tag), tags.get("LABEL") if kind == "TYPE" else None)
        for kind, uuid_tag in (("TYPE", "UUID"), ("PTTYPE", "PTUUID"))
        if kind in tags
    ]


def _uuid(raw: bytes) -> str | None:
    return str(uuid.UUID(bytes=raw)) if len(raw) == 16 and any(raw) else None


def _ext_type(at: _Reader) -> str:
    compat, incompat, ro_compat = (int.from_bytes(at(1116 + 4 * i, 4), "little") for i in range(3))
    # extents, 64bit, flex_bg / huge_file, dir_nlink, extra_isize, metadata_csum mean ext4
    if incompat & 0x2C0 or ro_compat & 0x468:
        return "ext4"
    return "ext3" if compat & 0x4 else "ext2"


def _magic(path: str, size: int) -> list[Signature]:
    """Read the well-known magic numbers ourselves (read-only, no tools needed)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:

        def at(offset: int, length: int) -> bytes:
            inside = 0 <= offset and offset + length <= size
            return os.pread(fd, length, offset) if inside else b""

        return _magic_in(at, size)
    finally:
        os.close(fd)


_Reader = Callable[[int, int], bytes]
_MD_MAGIC = (0xA92B4EFC).to_bytes(4, "little")


def _magic_in(at: _Reader, size: int) -> list[Signature]:
    found = []
    if at(1080, 2) == b"\x53\xef":
        found.append(Signature(_ext_type(at), _uuid(at(1128, 16))))
    if at(0, 4) == b"XFSB":
        found.append(Signature("xfs", _uuid(at(32, 16))))
    if at(65600, 8) == b"_BHRfS_M":
        found.append(Signature("btrfs", _uuid(at(65568, 16))))
    if at(0, 6) == b"LUKS\xba\xbe":
        found.append(Signature("crypto_LUKS", at(168, 40).rstrip(b"\0").decode() or None))
    if any(at(sector * 512, 8) == b"LABELONE" for sector in range(4)):
        found.append(Signature("LVM2_member"))
    if any(at(page - 10, 10) in (b"SWAPSPACE2", b"SWAP-SPACE") for page in (4096, 65536)):
        found.append(Signature("swap", _uuid(at(1036, 16))))
    md_offsets = (4096, 0, ((size // 512 - 16) & ~7) * 512, (size & ~0xFFFF) - 0x10000)
    if any(at(offset, 4) == _MD_MAGIC for offset in md_offsets):
        found.append(Signature("linux_raid_member"))
    if at(512, 8) == b"EFI PART" or at(4096, 8) == b"EFI PART":
        found.append(Signature("gpt"))
    elif at(510, 2) == b"\x55\xaa" and any(at(446 + 16 * i + 4, 1) != b"\0" for i in range(4)):
        found.append(Signature("dos"))  # a boot signature alone (no partition) is not a table
    return found


def probe_signatures(path: str, size: int) -> tuple[Signature, ...]:
    """Signatures on the device: wipefs, else blkid, else our own magic-number reader.

    When the tools find nothing, the magic reader still gets a say: refusing a device by
    mistake costs a flag, missing a filesystem costs its data.
    """
    found = _tool_signatures(path) or _magic(path, size)
    unique: dict[str, Signature] = {}
    for sig in found:
        unique.setdefault(sig.type, sig)  # wipefs lists GPT twice (primary and backup)
    if "gpt" in unique:
        unique.pop("PMBR", None)  # the protective MBR is part of the GPT, not a second table
    return tuple(unique.values())


@dataclass(frozen=True)
class DeviceReport:
    """What a block device is and what it is used for, as far as this host can tell."""

    path: str
    real_path: str
    name: str
    major_minor: str
    size_bytes: int
    read_only: bool
    mounted: tuple[str, ...] = ()
    swap: tuple[str, ...] = ()
    root: bool = False
    holders: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    exclusive_busy: bool = False
    signatures: tuple[Signature, ...] = ()

    @property
    def display(self) -> str:
        """The path the user gave, with the real device when a symlink led there."""
        same = self.path == self.real_path
        return self.path if same else f"{self.path} ({self.real_path})"

    def overwrite_note(self) -> str | None:
        """``"overwriting ext4 on /dev/loop3"`` when writes destroy a signature, else None."""
        if not self.signatures:
            return None
        kinds = ", ".join(dict.fromkeys(sig.type for sig in self.signatures))
        return f"overwriting {kinds} on {self.display}"


def _classify(path: str) -> os.stat_result:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise DeviceError(f"{path} does not exist; pass a block device such as /dev/nvme1n1.")
    except OSError as exc:
        raise DeviceError(f"{path} cannot be examined: {exc.strerror}.") from exc
    if stat.S_ISBLK(info.st_mode):
        return info
    if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
        what = "a regular file" if stat.S_ISREG(info.st_mode) else "a directory"
        raise DeviceError(
            f"{path} is {what}, not a block device; fio would silently create or benchmark a "
            "file. Pass a block device such as /dev/nvme1n1."
        )
    if stat.S_ISCHR(info.st_mode):
        raise DeviceError(
            f"{path} is a character device, not a block device (an NVMe controller like "
            "/dev/nvme1 has its block device at /dev/nvme1n1). Pass a block device."
        )
    raise DeviceError(f"{path} is not a block device. Pass a block device such as /dev/xvdf.")


def check_block_device(path: str) -> None:
    """A path that exists here must be a block device (a dry run's check: a path that is not
    on this machine is left to the host the checks will run on)."""
    if os.path.lexists(path):
        _classify(path)


def _sysfs_dir(major_minor: str, sys: Path) -> Path:
    # /sys/dev/block/MAJ:MIN leads to the device (or partition) directory in sysfs.
    return (sys / "dev" / "block" / major_minor).resolve()


def read_partitions(device_dir: Path) -> tuple[str, ...]:
    """Names of the partitions of the disk at ``device_dir`` (children with a ``partition``)."""
    return tuple(
        sorted(child.name for child in device_dir.iterdir() if (child / "partition").exists())
    )


def read_holders(device_dir: Path) -> tuple[str, ...]:
    """What holds the device or any of its partitions (dm-0, md0, ...), from sysfs."""
    found: list[str] = []
    for part in ("", *read_partitions(device_dir)):
        holders = device_dir / part / "holders"
        if holders.is_dir():
            found += sorted(entry.name for entry in holders.iterdir())
    return tuple(dict.fromkeys(found))


def _numbers(device_dir: Path) -> dict[str, str]:
    """``MAJ:MIN -> name`` of the device and its partitions."""
    names = (device_dir.name, *read_partitions(device_dir))
    dirs = [device_dir] + [device_dir / name for name in names[1:]]
    return {(d / "dev").read_text().strip(): name for d, name in zip(dirs, names)}


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal (\040 ...).
    return field.encode().decode("unicode_escape") if "\\" in field else field


def _rdev(path: str) -> str | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(info.st_mode):
        return None
    return f"{os.major(info.st_rdev)}:{os.minor(info.st_rdev)}"


def read_mounts(numbers: dict[str, str], proc: Path = PROC) -> tuple[str, ...]:
    """Mount points of any of ``numbers`` (by mountinfo MAJ:MIN or by the mounted source).

    The source check matters for btrfs, whose mounts show an anonymous MAJ:MIN.
    """
    found = []
    for line in (proc / "self" / "mountinfo").read_text().splitlines():
        head, _, tail = line.partition(" - ")
        fields, source = head.split(" "), (tail.split(" ") + ["", ""])[1]
        if fields[2] in numbers or _rdev(_unescape(source)) in numbers:
            found.append(_unescape(fields[4]))
    return tuple(dict.fromkeys(found))


def read_swaps(numbers: dict[str, str], proc: Path = PROC) -> tuple[str, ...]:
    """Entries of /proc/swaps that are the device or one of its partitions."""
    lines = (proc / "swaps").read_text().splitlines()[1:]
    names = [_unescape(line.split()[0]) for line in lines if line.split()]
    return tuple(name for name in names if _rdev(name) in numbers)


def _holds_root(numbers: dict[str, str], sys: Path) -> bool:
    # st_dev of / and /boot is the partition (or disk) they live on; the partition's sysfs
    # parent is its disk, which is what the user would name.
    for mountpoint in ("/", "/boot"):
        try:
            dev = os.stat(mountpoint).st_dev
        except OSError:
            continue
        number = f"{os.major(dev)}:{os.minor(dev)}"
        here = _sysfs_dir(number, sys)
        parent = (here.parent / "dev") if (here / "partition").exists() else None
        parent_number = parent.read_text().strip() if parent and parent.exists() else None
        if number in numbers or parent_number in numbers:
            return True
    return False


def _exclusive_busy(path: str) -> bool:
    # O_EXCL on a block device claims it: EBUSY means a mount, a holder or another exclusive
    # opener has it, including in mount namespaces we cannot see.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        return exc.errno == errno.EBUSY
    os.close(fd)
    return False


def inspect_device(path: str, *, sys: Path = SYS, proc: Path = PROC,
                   exclusive: bool = True) -> DeviceReport:
    """Describe block device ``path``; raises :class:`DeviceError` if it is not one.

    ``exclusive`` False skips the exclusive-open probe (for a device this run holds itself,
    which the probe would find busy)."""
    info = _classify(path)
    real = os.path.realpath(path)
    try:
        os.close(os.open(real, os.O_RDONLY | os.O_CLOEXEC))
    except OSError as exc:
        raise DeviceError(
            f"{path} cannot be opened for reading ({exc.strerror}); run as root, or pick a "
            "device this user may read."
        ) from exc
    number = f"{os.major(info.st_rdev)}:{os.minor(info.st_rdev)}"
    device_dir = _sysfs_dir(number, sys)
    numbers = _numbers(device_dir)
    size = int((device_dir / "size").read_text()) * 512
    return DeviceReport(
        path=path,
        real_path=real,
        name=device_dir.name,
        major_minor=number,
        size_bytes=size,
        read_only=(device_dir / "ro").read_text().strip() == "1",
        mounted=read_mounts(numbers, proc),
        swap=read_swaps(numbers, proc),
        root=_holds_root(numbers, sys),
        holders=read_holders(device_dir),
        partitions=read_partitions(device_dir),
        exclusive_busy=_exclusive_busy(real) if exclusive else False,
        signatures=probe_signatures(real, size),
    )


def check_readable(report: DeviceReport) -> DeviceReport:
    """Read-only checks run on any block device with a medium (fio runs ``--readonly``).

    Readability itself was proven by :func:`inspect_device`, which opened the device.
    """
    if report.size_bytes == 0:
        raise DeviceError(
            f"{report.display} has size 0 (no medium, or a loop device without a file); "
            "there is nothing to read. Pass a device that holds a volume."
        )
    return report


def _hard_refusals(r: DeviceReport) -> list[tuple[str, str, str]]:
    """(what it is, kind of device, what to do) for each reason writes are never allowed."""
    table = [
        (r.root, "holds / or /boot", "the system disk", "Pick another device."),
        (r.mounted, f"is mounted on {', '.join(r.mounted)}", "a mounted device", "Unmount it"),
        (r.swap, f"is in use as swap ({', '.join(r.swap)})", "a swap device", "Run swapoff"),
        (r.holders, f"is held by {', '.join(r.holders)}", "a device in use", "Release it"),
        # EBUSY from O_EXCL also covers mounts in mount namespaces we cannot see.
        (r.exclusive_busy, "is opened exclusively by another program", "a busy device", "Stop it"),
        (r.read_only, "is read-only", "a read-only device", "Pick a writable device."),
    ]
    return [
        (what, kind, todo if todo.endswith(".") else f"{todo} or pick another device.")
        for hit, what, kind, todo in table
        if hit and not (what.startswith("is opened") and (r.mounted or r.holders))
    ]


def check_writable(report: DeviceReport, *, destructive: bool) -> DeviceReport:
    """Allow write checks only where nothing can be lost that the user did not give up.

    Returns the report so the caller can warn with :meth:`DeviceReport.overwrite_note`;
    raises :class:`UnsafeDeviceError` with the reason otherwise.
    """
    check_readable(report)
    reasons = _hard_refusals(report)
    if reasons:
        what, kind, todo = reasons[0]
        also = "".join(f" It also {other}." for other, _, _ in reasons[1:])
        raise UnsafeDeviceError(
            f"{report.display} {what}; writes are refused on {kind} even with {FLAG}. {todo}{also}"
        )
    if report.signatures and not destructive:
        found = " and ".join(sig.describe() for sig in report.signatures)
        raise UnsafeDeviceError(
            f"{report.display} carries {found}; write claims would destroy it. Pass {FLAG} "
            "only if its data may be lost, or pick an empty device."
        )
    if not destructive:
        raise UnsafeDeviceError(
            f"Write claims need {FLAG}: it lets the checks overwrite {report.display}."
        )
    return report


# -- on the host fio runs on ---------------------------------------------------------------
#: What this module needs from the package, defined again for the copy that runs remotely.
_REMOTE_HEADER = """
class DeviceError(Exception):
    pass
class UnsafeDeviceError(DeviceError):
    pass
"""
_REMOTE_MAIN = """
import dataclasses as _dc, sys as _sys
try:
    _report = inspect_device(_sys.argv[1], exclusive=_sys.argv[2] == "1")
    print(json.dumps({"report": _dc.asdict(_report)}))
except DeviceError as _exc:
    print(json.dumps({"error": str(_exc)}))
"""


class RemoteInspectionError(DeviceError):
    """The remote host cannot run the inspection (no python3 there, or it failed)."""


def _remote_source() -> str:
    """This module's own code, to run on the remote host: the same refusals there as here."""
    source = Path(__file__).read_text()
    head = source.partition("\n# -- on the host fio runs on")[0]
    head = head.replace("from pytest_ebsperf.errors import DeviceError, UnsafeDeviceError\n",
                        _REMOTE_HEADER)
    return head + _REMOTE_MAIN


def _report_from(data: dict[str, Any]) -> DeviceReport:
    fields = dict(data)
    fields["signatures"] = tuple(Signature(**sig) for sig in fields["signatures"])
    for name in ("mounted", "swap", "holders", "partitions"):
        fields[name] = tuple(fields[name])
    return DeviceReport(**fields)


class _Ran(Protocol):
    @property
    def rc(self) -> int: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...


class CommandHost(Protocol):
    """The host fio runs on, as the inspection uses it
    (:class:`pytest_ebsperf.fio.host.FioHost`)."""

    @property
    def is_local(self) -> bool: ...
    def run(self, argv: list[str], timeout_s: float | None = None) -> _Ran: ...


def inspect_on(host: CommandHost | None, path: str, *, exclusive: bool = True) -> DeviceReport:
    """:func:`inspect_device` where fio runs: here, or on ``host`` through its testinfra
    backend (the same code, run there by the host's ``python3``), so that a remote device's
    mounts, swap, holders, root disk, exclusive openers and signatures are the remote
    host's, never this machine's."""
    if host is None or host.is_local:
        return inspect_device(path, exclusive=exclusive)
    done = host.run(["python3", "-c", _remote_source(), path, "1" if exclusive else "0"],
                    timeout_s=60)
    if done.rc == 127 or "python3: not found" in done.stderr:
        raise RemoteInspectionError(
            f"{path} on {host} cannot be inspected: python3 is not installed there (the "
            "plugin reads the device's mounts, holders and signatures with it). Install "
            f"python3 on {host}.")
    try:
        data = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = (done.stderr.strip() or done.stdout.strip())[-300:]
        raise RemoteInspectionError(
            f"{path} on {host} could not be inspected (exit status {done.rc}): {said}"
        ) from None
    if "error" in data:
        raise DeviceError(f"On {host}: {data['error']}")
    return _report_from(data["report"])
