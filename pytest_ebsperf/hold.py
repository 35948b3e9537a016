"""Hold what you write: a device given for writing is claimed for the whole run.

An inspection is a snapshot; a filesystem mounted a second later would be destroyed by the
next write. So before the first writing workload the device is opened with ``O_EXCL`` - for a
block device that *claims* it: the open fails with EBUSY while it is mounted, held (md, dm,
LVM) or claimed by another program, and while we hold it nobody can mount it, add it to an
array or swap on it. The claim lasts until the run ends (it is dropped by the kernel whatever
ends the process).

A device can be reached under other names that share its data, and each is claimed too:

* the partitions of a disk, and the disk of a partition;
* other loop devices over the same backing file (the same inode), or over the file a mounted
  filesystem's device is backed by.

If any of them is in use, writes are refused with the alias named.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ebsperf import lifetime
from pytest_ebsperf.errors import UnsafeDeviceError

SYS_BLOCK = Path("/sys/block")
SYS_CLASS_BLOCK = Path("/sys/class/block")


def _sysfs(name: str) -> Path:
    return SYS_CLASS_BLOCK / name


def _backing_inode(name: str) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file behind loop device ``name``, or None."""
    try:
        backing = (SYS_BLOCK / name / "loop" / "backing_file").read_text().strip()
    except OSError:
        return None
    try:
        info = os.stat(backing.removesuffix(" (deleted)"))
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _disk_of(name: str) -> str:
    """The disk a partition belongs to (itself for a disk)."""
    path = _sysfs(name).resolve()
    return path.parent.name if (path / "partition").exists() else name


def _partitions(disk: str) -> list[str]:
    path = _sysfs(disk).resolve()
    try:
        return sorted(child.name for child in path.iterdir() if (child / "partition").exists())
    except OSError:
        return []


def aliases(name: str) -> list[tuple[str, str]]:
    """Other block devices that reach ``name``'s data: ``[(device name, why)]``."""
    found: dict[str, str] = {}
    disk = _disk_of(name)
    if disk != name:
        found[disk] = f"the disk {name} is a partition of"
    for part in _partitions(disk):
        if part != name:
            found.setdefault(part, f"a partition of {disk}")
    inode = _backing_inode(disk)
    if inode is not None:
        for other in sorted(p.name for p in SYS_BLOCK.glob("loop*")):
            if other != disk and _backing_inode(other) == inode:
                found.setdefault(other, f"another loop device over the same file as {disk}")
                for part in _partitions(other):
                    found.setdefault(part, f"a partition of {other}, over the same file")
    return sorted(found.items())


@dataclass
class DeviceHold:
    """Exclusive claims on a device and its aliases; :meth:`close` releases them."""

    path: str
    fds: dict[str, int] = field(default_factory=dict)

    def close(self) -> None:
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()
        lifetime.unregister(self)

    def __repr__(self) -> str:
        return f"hold on {self.path} ({', '.join(self.fds) or 'released'})"


def _claim(device: str) -> int:
    return os.open(device, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)


def hold(path: str) -> DeviceHold:
    """Claim ``path`` and every alias exclusively, or raise :class:`UnsafeDeviceError`
    naming the one in use (nothing stays claimed then)."""
    real = os.path.realpath(path)
    name = Path(real).name
    held = DeviceHold(path)
    lifetime.register(held)
    try:
        for device, why in [(name, ""), *aliases(name)]:
            try:
                held.fds[device] = _claim(f"/dev/{device}" if device != name else real)
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    raise UnsafeDeviceError(
                        f"{path} could not be claimed for writing: /dev/{device} "
                        f"{('(' + why + ') ') if why else ''}cannot be opened "
                        f"({exc.strerror}).") from None
                what = (f"/dev/{device} ({why}) is in use (mounted, held or opened "
                        "exclusively)" if why else "is in use (mounted, held or opened "
                        "exclusively by another program)")
                subject = f"{path}: " if why else f"{path} "
                raise UnsafeDeviceError(
                    f"{subject}{what}; writes are refused even with --ebsperf-destructive, "
                    "since they would reach the same data. Release it or pick another "
                    "device.") from None
    except BaseException:
        held.close()
        raise
    return held
