"""Kernel I/O throttling of one block device for the processes of one cgroup.

cgroup v2 ``io.max`` is used where the io controller is enabled for child cgroups, cgroup v1
``blkio.throttle.*`` otherwise. Both are per direction, so a combined read+write limit (what
EBS promises) is split by the workload's read/write mix (:func:`split_limits`).

Kernel quirk that shapes this module: blk-throttle restarts its time slice whenever a limit
is written and hands out a fresh allowance, so rewriting even the same value every 100 ms lets
a device run up to twice as fast as configured. :meth:`ThrottleGroup.apply` therefore writes
a file only when its value really changes, and counts its writes so tests can prove it.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass, fields
from pathlib import Path

from pytest_ebsperf.emulate.loop import MOUNTINFO, mounts
from pytest_ebsperf.errors import EmulationUnavailableError

# The shell puts itself into the cgroup, then becomes the command (same pid), so nothing the
# command forks can escape the limit. "$0" is the cgroup directory; a failed write stops the
# command rather than running it unthrottled.
_ENTER_CGROUP = 'echo $$ > "$0"/cgroup.procs && exec "$@"'


@dataclass(frozen=True)
class DirectionLimits:
    """Per-direction limits as the kernel sees them; ``None`` means unlimited."""

    read_iops: int | None = None
    write_iops: int | None = None
    read_bps: int | None = None
    write_bps: int | None = None


@dataclass(frozen=True)
class CgroupRoots:
    """Where the throttling hierarchies are mounted (``None``: not available)."""

    v1_blkio: Path | None
    v2: Path | None


#: Headroom of each direction's share when both carry traffic. The two per-direction limits
#: are separate blk-throttle queues handing out their budgets in separate time slices; a
#: closed-loop mixed job (fio's randrw) then swings +-10 % per second around the combined
#: limit (70/30 4 KiB at 4,000 IOPS: lowest second 0.89, sd 6 % at QD 16-32), though its
#: mean holds it. With 2.5 % more per direction every second stays at or above the combined
#: limit (lowest second 1.000-1.006 at QD 8-64) and the mean runs 2-2.5 % above it, which is
#: what real volumes do (seed 004: 2,064 IOPS on a 2,000-IOPS io1, S4-03).
MIX_HEADROOM = 1.025
#: Large HDD I/Os are paced by bytes/s; when the IOPS limit for their split pieces binds at
#: the same moment, blk-throttle loses about a sixth of the rate (measured: 20.2 of 24 MiB/s
#: for 1 MiB reads at 48 IOPS + 24 MiB/s, 24.0 with 60 IOPS). This headroom on the IOPS limit
#: keeps bytes/s the only binding limit. Applied once, where the emulated rates are made.
HDD_SPLIT_HEADROOM = 1.5


def _share(limit: float | None, fraction: float | None) -> int | None:
    if limit is None:
        return None
    # An idle direction (or an unknown mix) keeps the whole limit: it carries no traffic, so
    # it adds nothing to the combined rate, and a workload that switches direction before the
    # next set_mix runs at the volume's rate instead of stalling.
    if fraction is None or fraction in (0.0, 1.0):
        share = limit
    else:
        share = min(limit, limit * fraction * MIX_HEADROOM)
    # The kernel reads 0 as "no limit", so a tiny share must stay at least 1.
    return max(1, round(share))


def split_limits(
    iops: float | None, bps: float | None, read_fraction: float | None
) -> DirectionLimits:
    """Split combined IOPS and bytes/s limits by the share of I/Os that are reads.

    ``read_fraction`` is fio's ``rwmixread`` divided by 100; ``None`` means the mix is unknown
    and gives both directions the full limit, as does a pure read (1.0) or pure write (0.0)
    workload for its idle direction. Bytes/s are split by the same share, which holds when
    both directions use one block size (as fio's ``rwmixread`` jobs do).
    """
    if read_fraction is not None and not 0.0 <= read_fraction <= 1.0:
        raise ValueError(f"read_fraction must be between 0 and 1, got {read_fraction!r}.")
    write_fraction = None if read_fraction is None else 1.0 - read_fraction
    return DirectionLimits(
        read_iops=_share(iops, read_fraction),
        write_iops=_share(iops, write_fraction),
        read_bps=_share(bps, read_fraction),
        write_bps=_share(bps, write_fraction),
    )


def find_cgroup_roots(mountinfo: Path = MOUNTINFO) -> CgroupRoots:
    """Find the cgroup v1 blkio and cgroup v2 mount points from mountinfo."""
    v1: Path | None = None
    v2: Path | None = None
    for mount in mounts(mountinfo):
        if mount.fstype == "cgroup" and "blkio" in mount.super_options and v1 is None:
            v1 = mount.mountpoint
        elif mount.fstype == "cgroup2" and v2 is None:
            v2 = mount.mountpoint
    return CgroupRoots(v1_blkio=v1, v2=v2)


def v2_io_usable(root: Path) -> bool:
    """True when the v2 io controller is enabled for the root's child cgroups."""
    try:
        return "io" in (root / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False


def v1_throttle_usable(root: Path) -> bool:
    """True when the v1 blkio hierarchy offers blk-throttle's files."""
    return (root / "blkio.throttle.read_iops_device").exists()


def cgroup_argv_prefix(cgroup_dir: Path) -> list[str]:
    """argv to put in front of a command so it runs inside ``cgroup_dir``."""
    return ["sh", "-c", _ENTER_CGROUP, str(cgroup_dir)]


def _read_ids(path: Path) -> list[int]:
    try:
        return [int(word) for word in path.read_text().split()]
    except FileNotFoundError:
        return []


class ThrottleGroup:
    """A cgroup of our own that limits one block device (``MAJ:MIN``)."""

    #: The file listing the member threads: v1 keeps threads in ``tasks``.
    threads_file = "cgroup.threads"
    #: cgroup version of the hierarchy.
    version = 2

    def __init__(self, path: Path, major_minor: str) -> None:
        self.path = path
        self.major_minor = major_minor
        self.limits = DirectionLimits()
        #: Number of limit writes so far (each restarts blk-throttle's slice).
        self.writes = 0

    def create(self) -> ThrottleGroup:
        """Make the cgroup directory; raises FileExistsError if the name is taken."""
        self.path.mkdir()
        return self

    def apply(self, limits: DirectionLimits) -> int:
        """Bring the kernel to ``limits``, writing only what changed; returns the write count."""
        raise NotImplementedError

    def _write(self, filename: str, text: str) -> None:
        fd = os.open(self.path / filename, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        self.writes += 1

    def add_pid(self, pid: int) -> None:
        """Move process ``pid`` (all its threads) into the cgroup."""
        (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def pids(self) -> list[int]:
        """Processes currently in the cgroup."""
        return _read_ids(self.path / "cgroup.procs")

    def remove(self, timeout: float = 5.0) -> None:
        """Kill what still runs in the cgroup (our own process is moved out) and rmdir it."""
        if not self.path.exists():
            return
        self._evacuate_self()
        deadline = time.monotonic() + timeout
        while True:
            for pid in self.pids():
                _kill(pid)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                # EBUSY while killed processes are still exiting.
                if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                    raise
            time.sleep(0.02)

    def _evacuate_self(self) -> None:
        # Killing the caller would be worse than any leftover: move our own process out.
        mine = {int(tid) for tid in os.listdir("/proc/self/task")} | {os.getpid()}
        inside = set(self.pids()) | set(_read_ids(self.path / self.threads_file))
        if mine & inside:
            (self.path.parent / "cgroup.procs").write_text(f"{os.getpid()}\n")


def _kill(pid: int) -> None:
    if pid == os.getpid():
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class CgroupV1Throttle(ThrottleGroup):
    """cgroup v1: one ``blkio.throttle.<dir>_<unit>_device`` file per direction and unit."""

    threads_file = "tasks"
    version = 1

    def apply(self, limits: DirectionLimits) -> int:
        """Write each changed value to its own file (``MAJ:MIN 0`` removes a limit)."""
        before = self.writes
        for item in fields(DirectionLimits):
            new, old = getattr(limits, item.name), getattr(self.limits, item.name)
            if new != old:
                direction, unit = item.name.split("_")
                text = f"{self.major_minor} {new or 0}\n"
                self._write(f"blkio.throttle.{direction}_{unit}_device", text)
        self.limits = limits
        return self.writes - before


class CgroupV2Throttle(ThrottleGroup):
    """cgroup v2: all four values in one ``io.max`` line, so a change costs one write."""

    def apply(self, limits: DirectionLimits) -> int:
        """Write ``MAJ:MIN riops=.. wiops=.. rbps=.. wbps=..`` once if anything changed."""
        if limits == self.limits:
            return 0
        self._write("io.max", format_io_max(self.major_minor, limits))
        self.limits = limits
        return 1


def format_io_max(major_minor: str, limits: DirectionLimits) -> str:
    """The cgroup v2 ``io.max`` line for ``limits`` (``max`` means unlimited)."""

    def value(number: int | None) -> str:
        return "max" if number is None else str(number)

    return (
        f"{major_minor} riops={value(limits.read_iops)} wiops={value(limits.write_iops)} "
        f"rbps={value(limits.read_bps)} wbps={value(limits.write_bps)}\n"
    )


def choose_throttle(name: str, major_minor: str, roots: CgroupRoots | None = None) -> ThrottleGroup:
    """A (not yet created) throttle cgroup called ``name``: v2 when usable, else v1."""
    roots = roots or find_cgroup_roots()
    if roots.v2 is not None and v2_io_usable(roots.v2):
        return CgroupV2Throttle(roots.v2 / name, major_minor)
    if roots.v1_blkio is not None and v1_throttle_usable(roots.v1_blkio):
        return CgroupV1Throttle(roots.v1_blkio / name, major_minor)
    raise EmulationUnavailableError(NO_THROTTLE)


NO_THROTTLE = (
    "Emulated volumes need kernel I/O throttling, but neither cgroup v1 blkio.throttle.* nor "
    "the cgroup v2 io controller is available; enable the io controller "
    "(echo +io > /sys/fs/cgroup/cgroup.subtree_control) or mount blkio "
    "(mount -t cgroup -o blkio blkio /sys/fs/cgroup/blkio), or test a real device with "
    "--device=PATH, which needs no emulation."
)
