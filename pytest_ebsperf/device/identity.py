"""One identity per piece of storage: every name a device's data can be reached under.

A block device is often not the only way to its bytes: a disk and its partitions, a loop
device over a partition or over another loop device, two loop devices over one file (also
after the file was deleted, or in a mount namespace this process cannot see), an md array or a
device-mapper target over any of them. Writing one of them destroys what the others hold.

:func:`family` finds, from sysfs and the loop driver itself, the devices that share data with
a device:

* its **ancestors**, the storage under it: the disk of a partition, the block device a loop
  device is backed by, the members (``slaves/``) of an md or dm device, recursively;
* its **descendants**, what lives on it: partitions, loop devices backed by it, holders (md,
  dm, LVM) - recursively;
* its **aliases**: loop devices over the same file as it or as any of its ancestors (the file
  is named by its device and inode as the loop driver reports them with ``LOOP_GET_STATUS64``,
  not by a path, so a deleted or unreachable file still matches), and their descendants;
* and the descendants of its ancestors that overlap it: everything on an ancestor except the
  ancestor's *other* partitions (``sda2`` does not share a byte with ``sda1``).

:func:`roots` names the bottom of the stack (a whole disk, or a file by device and inode): the
lock that keeps two loads off one volume is keyed by it, so a disk and its partition, or two
loop devices over one file, are never measured (or written) by two runs at once.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

SYS_CLASS_BLOCK = Path("/sys/class/block")
DEV = Path("/dev")
#: ``ioctl(LOOP_GET_STATUS64)``: a struct loop_info64 whose first three fields are the backing
#: file's device and inode and, when it is a block device, that device's number.
LOOP_GET_STATUS64 = 0x4C05
_LOOP_INFO64 = struct.Struct("=QQQQQIIII64s64s32s2Q")


@dataclass(frozen=True)
class LoopBacking:
    """What a loop device reads and writes: a file (``dev``, ``inode``) and, when that file is
    a block device, its number (``rdev``, ``MAJ:MIN``)."""

    dev: str
    inode: int
    rdev: str | None
    path: str = ""

    @property
    def file_id(self) -> str:
        return f"file {self.dev} inode {self.inode}"


def _numbers(raw: int) -> str:
    return f"{os.major(raw)}:{os.minor(raw)}"


def loop_backing(name: str, *, dev: Path = DEV, sys: Path = SYS_CLASS_BLOCK
                 ) -> LoopBacking | None:
    """The backing of loop device ``name`` from the loop driver (``None``: unbound, or not a
    loop device). Falls back on sysfs' ``backing_file`` path when the ioctl cannot be made."""
    try:
        path = (sys / name / "loop" / "backing_file").read_text().rstrip("\n")
    except OSError:
        path = ""
    try:
        fd = os.open(dev / name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            raw = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size))
        except OSError:
            raw = b""  # ENXIO: no file bound
        finally:
            os.close(fd)
        if raw:
            device, inode, rdevice = _LOOP_INFO64.unpack(raw)[:3]
            return LoopBacking(_numbers(device), inode, _numbers(rdevice) if rdevice else None,
                               path)
        if not path:
            return None
    if not path:
        return None
    try:  # no ioctl here (a fake sysfs tree, or no /dev node): the path is all there is
        info = os.stat(path.removesuffix(" (deleted)"))
    except OSError:
        return LoopBacking("?", 0, None, path)

    rdev = _numbers(info.st_rdev) if stat.S_ISBLK(info.st_mode) else None
    return LoopBacking(_numbers(info.st_dev), info.st_ino, rdev, path)


@dataclass
class BlockDevice:
    """One entry of ``/sys/class/block``."""

    name: str
    number: str
    disk: str | None = None          #: the disk, for a partition
    slaves: tuple[str, ...] = ()     #: devices under an md/dm device
    holders: tuple[str, ...] = ()    #: md/dm/LVM devices on top of it
    loop: LoopBacking | None = None  #: for a bound loop device
    below: list[str] = field(default_factory=list)  #: filled by :func:`scan`
    above: list[str] = field(default_factory=list)

    @property
    def is_partition(self) -> bool:
        return self.disk is not None


Scanner = Callable[[str], "LoopBacking | None"]


def scan(sys: Path = SYS_CLASS_BLOCK, loop_info: Scanner | None = None
         ) -> dict[str, BlockDevice]:
    """Every block device of the host with its links up and down the stack."""
    read_loop = loop_info or (lambda name: loop_backing(name, sys=sys))
    devices: dict[str, BlockDevice] = {}
    for entry in sorted(sys.iterdir()) if sys.is_dir() else []:
        try:
            number = (entry / "dev").read_text().strip()
        except OSError:
            continue
        real = entry.resolve()
        disk = real.parent.name if (real / "partition").exists() else None
        device = BlockDevice(entry.name, number, disk=disk,
                             slaves=_listing(real / "slaves"), holders=_listing(real / "holders"))
        if disk is None and (real / "loop").is_dir():  # a partition has no loop of its own
            device.loop = read_loop(entry.name)
        devices[entry.name] = device
    by_number = {d.number: d.name for d in devices.values()}
    for device in devices.values():
        below = []
        if device.disk:
            below.append(device.disk)
        if device.loop is not None and device.loop.rdev in by_number:
            below.append(by_number[device.loop.rdev])
        below += list(device.slaves)
        for name in dict.fromkeys(below):
            if name in devices and name != device.name:
                device.below.append(name)
                devices[name].above.append(device.name)
        for holder in device.holders:
            if holder in devices and holder not in device.above:
                device.above.append(holder)
                if device.name not in devices[holder].below:
                    devices[holder].below.append(device.name)
    return devices


def _listing(path: Path) -> tuple[str, ...]:
    try:
        return tuple(sorted(child.name for child in path.iterdir()))
    except OSError:
        return ()


def _closure(start: Iterable[str], step: Callable[[str], Iterable[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [n for n in step(name) if n not in seen]
    return seen


@dataclass(frozen=True)
class Family:
    """The devices that share data with ``name`` and why (``member -> relation``), and the
    storage at the bottom of the stack (``roots``)."""

    name: str
    members: dict[str, str]
    roots: tuple[str, ...]
    #: the device itself and the storage under it
    up: frozenset[str] = frozenset()

    def others(self) -> list[tuple[str, str]]:
        return [(m, why) for m, why in sorted(self.members.items()) if m != self.name]


def family(name: str, devices: dict[str, BlockDevice] | None = None) -> Family:
    """Everything that reaches ``name``'s data (see the module); ``name`` as in sysfs."""
    devices = devices if devices is not None else scan()
    if name not in devices:
        return Family(name, {name: "itself"}, (f"device {name}",), frozenset({name}))
    up = _closure([name], lambda n: devices[n].below)
    # a partition's siblings do not overlap it: nothing on them is reached through it
    split = {devices[n].disk for n in up if devices[n].disk is not None}  # disks we are part of
    siblings = {other.name for other in devices.values()
                if other.disk in split and other.name not in up}
    loops = [devices[n].loop for n in up]
    files = {lo.file_id for lo in loops if lo is not None and lo.rdev is None}
    same_file = {d.name for d in devices.values() if d.loop is not None and
                 d.loop.rdev is None and d.loop.file_id in files}
    base = up | same_file | _closure(same_file, lambda n: devices[n].below)

    def above(n: str) -> list[str]:
        return [a for a in devices[n].above if a not in siblings]

    members: dict[str, str] = {}
    for member in sorted(_closure(base, above)):
        members[member] = _relation(name, member, devices, up, same_file)
    return Family(name, members, _roots(up | same_file, devices), frozenset(up))


def _relation(name: str, member: str, devices: dict[str, BlockDevice], up: set[str],
              same_file: set[str]) -> str:
    device = devices[member]
    if member == name:
        return "itself"
    if member in up:
        if devices[name].disk == member:
            return f"the disk {name} is a partition of"
        return f"storage under {name}"
    if member in same_file:
        where = device.loop.path if device.loop and device.loop.path else "the same file"
        return f"another loop device over the same file ({where.strip()})"
    if device.is_partition:
        return f"a partition of {device.disk}"
    if device.loop is not None:
        return f"a loop device over {', '.join(device.below) or 'it'}"
    if device.slaves:
        return f"built on {', '.join(device.slaves)}"
    return f"on top of {name}"


def _roots(members: set[str], devices: dict[str, BlockDevice]) -> tuple[str, ...]:
    found = set()
    for member in members:
        device = devices[member]
        if device.below:
            continue
        if device.loop is not None and device.loop.rdev is None and device.loop.dev != "?":
            found.add(device.loop.file_id)
        else:
            found.add(f"device {device.number}")
    return tuple(sorted(found))


def family_of_path(path: str, sys: Path = SYS_CLASS_BLOCK) -> Family:
    """:func:`family` of the block device at ``path`` (symlinks and /dev aliases followed)."""
    rdev = os.stat(path).st_rdev
    number = _numbers(rdev)
    devices = scan(sys)
    for device in devices.values():
        if device.number == number:
            return family(device.name, devices)
    return Family(Path(os.path.realpath(path)).name, {}, (f"device {number}",))


def claim_order(fam: Family, devices: dict[str, BlockDevice]) -> list[str]:
    """The members to open with ``O_EXCL`` so that none can be mounted, swapped on or taken
    into an array while held. The kernel refuses to claim a whole disk and its partition for
    two holders, and either claim bars the other: of a disk with partitions in the family the
    partition on the target's own stack is claimed (it bars the disk), else the disk (it bars
    its partitions)."""
    chosen = []
    for member in sorted(fam.members):
        device = devices.get(member)
        if device is None:
            continue
        parts = [p for p in fam.members if p in devices and devices[p].disk == member]
        if parts and any(p in fam.up for p in parts):
            continue  # a partition on the target's stack is claimed instead
        if device.is_partition and device.disk in fam.members and member not in fam.up:
            continue  # its disk is claimed, which bars it
        if member != fam.name and any(h in fam.up for h in device.holders):
            continue  # a member of the array given: the array holds it already
        chosen.append(member)
    return chosen


__all__ = ["BlockDevice", "Family", "LoopBacking", "claim_order", "family", "family_of_path",
           "loop_backing", "scan"]
