"""Hold what you write: a device is claimed, with every other name of its data, while written.

An inspection is a snapshot; a filesystem mounted a second later would be destroyed by the
next write. So right before each writing workload the device is opened with ``O_EXCL`` - for
a block device that *claims* it: the open fails with EBUSY while it is mounted, held (md, dm,
LVM) or claimed by another program, and while we hold it nobody can mount it, add it to an
array or swap on it. The claim's file descriptors are handed to fio too, so the claim lasts
until the last fio process of the workload is gone, whatever ends this process.

A device can be reached under other names that share its data (:mod:`pytest_ebsperf.device.identity`:
partitions and their disk, loop devices stacked on it or under it, loop devices over the same
file - deleted or in another mount namespace too -, md/dm holders). Each is checked and
claimed as well; if any is mounted, swap or in use, writes are refused with that name.
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ebsperf.device import identity, lifetime
from pytest_ebsperf.device.safety import read_mounts, read_swaps
from pytest_ebsperf.errors import UnsafeDeviceError

PROC = Path("/proc")
FLAG = "--ebsperf-destructive"


def aliases(name: str) -> list[tuple[str, str]]:
    """Other block devices that reach ``name``'s data: ``[(device name, why)]``."""
    return identity.family(name).others()


@dataclass
class DeviceHold:
    """Exclusive claims on a device and its aliases; :meth:`close` releases them."""

    path: str
    fds: dict[str, int] = field(default_factory=dict)

    def close(self) -> None:
        # I/O fio submitted before it died may still be in the device's queue (io_uring
        # completes it after the process is gone): keep the claim until the queue is empty
        wait_idle(list(self.fds))
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()
        lifetime.unregister(self)

    def __repr__(self) -> str:
        return f"hold on {self.path} ({', '.join(self.fds) or 'released'})"


def inflight(name: str) -> int:
    """Requests of block device ``name`` in flight now (``/sys/class/block/X/inflight``)."""
    try:
        return sum(int(n) for n in (identity.SYS_CLASS_BLOCK / name / "inflight")
                   .read_text().split())
    except (OSError, ValueError):
        return 0


def wait_idle(names: list[str], seconds: float = 5.0) -> bool:
    """Wait (``seconds`` at most) until none of ``names`` has a request in flight."""

    deadline = time.monotonic() + seconds
    while any(inflight(name) for name in names):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _node(name: str, number: str) -> str:
    """A path that opens block device ``name`` (its /dev node, else /dev/block/MAJ:MIN)."""
    for candidate in (f"/dev/{name}", f"/dev/block/{number}"):
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        if f"{os.major(info.st_rdev)}:{os.minor(info.st_rdev)}" == number:
            return candidate
    return f"/dev/{name}"


def _in_use(numbers: dict[str, str], proc: Path) -> dict[str, str]:
    """``name -> "is mounted on /x"`` / ``"is in use as swap"`` for members in use."""

    found: dict[str, str] = {}
    for number, name in numbers.items():
        mounted = read_mounts({number: name}, proc)
        if mounted:
            found[name] = f"is mounted on {', '.join(mounted)}"
            continue
        swap = read_swaps({number: name}, proc)
        if swap:
            found[name] = "is in use as swap"
    return found


def hold(path: str, *, proc: Path = PROC) -> DeviceHold:
    """Claim ``path`` and every other name of its data exclusively, or raise
    :class:`UnsafeDeviceError` naming the one in use (nothing stays claimed then)."""
    devices = identity.scan()
    number = _number(path)
    name = next((d.name for d in devices.values() if d.number == number),
                Path(os.path.realpath(path)).name)
    fam = identity.family(name, devices)
    why = fam.members
    busy = _in_use({devices[m].number: m for m in fam.members if m in devices}, proc)
    for member, what in sorted(busy.items(), key=lambda item: item[0] != name):
        raise UnsafeDeviceError(_refusal(path, name, member, why.get(member, ""), what))
    for member in sorted(fam.members):
        # an array's members are held by the array itself: only holders above the device
        # given (something built on its data) are someone else's
        holders = [h for h in (devices[member].holders if member in devices else ())
                   if h not in fam.up]
        if holders:
            raise UnsafeDeviceError(_refusal(path, name, member, why.get(member, ""),
                                             f"is held by {', '.join(holders)}"))
    held = DeviceHold(path)
    lifetime.register(held)
    try:
        for member in identity.claim_order(fam, devices):
            node = _node(member, devices[member].number)
            try:
                held.fds[member] = os.open(node, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    raise UnsafeDeviceError(
                        f"{path} could not be claimed for writing: {node} "
                        f"({why.get(member, '')}) cannot be opened ({exc.strerror}).") from None
                raise UnsafeDeviceError(_refusal(
                    path, name, member, why.get(member, ""),
                    "is in use (mounted - perhaps in another mount namespace -, held or "
                    "opened exclusively by another program)")) from None
    except BaseException:
        held.close()
        raise
    return held


def _number(path: str) -> str:
    rdev = os.stat(path).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def _refusal(path: str, name: str, member: str, why: str, what: str) -> str:
    if member == name:
        subject = f"{path} {what}"
    else:
        subject = f"{path}: /dev/{member} ({why}) {what}"
    return (f"{subject}; writes are refused even with {FLAG}, since they would reach the "
            "same data. Release it or pick another device.")


__all__ = ["DeviceHold", "aliases", "hold"]
