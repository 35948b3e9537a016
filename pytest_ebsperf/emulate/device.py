"""An emulated volume: a loop device on a private tmpfs, throttled by a cgroup of its own.
The backing file is sparse (never-written blocks read as zero pages; the throttle sets the
pace), so a 1 GiB volume costs no memory until it is written."""

from __future__ import annotations

import itertools
import os
import shutil
import threading
import time
import warnings
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_ebsperf.device import lifetime
from pytest_ebsperf.emulate import cleanup, loop, service_time
from pytest_ebsperf.emulate.throttle import (
    DirectionLimits,
    ThrottleGroup,
    cgroup_argv_prefix,
    choose_throttle,
    split_limits,
)
from pytest_ebsperf.errors import EmulationUnavailableError

if TYPE_CHECKING:
    from typing import Self

    from pytest_ebsperf.fio.workload import Workload

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
LOOP_CONTROL = Path("/dev/loop-control")
_T = TypeVar("_T")
_numbers = itertools.count()
TIMELINE_KEPT = 4096  # throttle changes kept (EmulatedDevice.timeline)
_NO_EMULATION = "or test a real device with --device=PATH, which needs no emulation."


def check_emulation_available() -> None:
    """Raise :class:`EmulationUnavailableError` with a sentence when emulation cannot work."""
    if os.geteuid() != 0:
        raise EmulationUnavailableError(
            "Emulated volumes need root to attach loop devices, mount tmpfs and set cgroup "
            f"limits; run pytest as root (e.g. with sudo), {_NO_EMULATION}"
        )
    missing = [tool for tool in ("losetup", "mount", "umount") if shutil.which(tool) is None]
    if missing:
        raise EmulationUnavailableError(
            f"Emulated volumes need {', '.join(missing)} from util-linux, which is not "
            f"installed; install util-linux, {_NO_EMULATION}"
        )
    if not LOOP_CONTROL.exists() and not list(loop.SYS_BLOCK.glob("loop*")):
        raise EmulationUnavailableError(
            "Emulated volumes need loop devices, but the loop driver is not loaded "
            f"(no /dev/loop-control); run `modprobe loop`, {_NO_EMULATION}"
        )
    choose_throttle("probe", "0:0")  # raises with its own sentence when nothing throttles


class ColdRanges:
    """Byte ranges of a device not written since it was made or last TRIMmed."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def touch(self, workload: Workload, size: int) -> bool:
        """Account for ``workload``: a TRIM makes its range cold, a write warms it. True when
        a write lands on cold blocks."""
        start = workload.offset
        end = min(size, start + (workload.size or size))
        if workload.pattern == "trim":
            self.ranges.append((start, end))
            return False
        if not workload.writes:
            return False
        cold = any(a < end and start < b for a, b in self.ranges)
        self.ranges = [piece for a, b in self.ranges for piece in
                       ((a, min(b, start)), (max(a, end), b)) if piece[0] < piece[1]]
        return cold


def _validate(size_bytes: int, io_unit_bytes: int, name: str) -> None:
    """A ValueError for a size, I/O unit or name an emulated device cannot have."""
    if size_bytes <= 0 or size_bytes % 4096:
        raise ValueError(f"size_bytes must be a positive multiple of 4096, got {size_bytes}.")
    if io_unit_bytes < 4096 or io_unit_bytes % 4096:
        raise ValueError(f"io_unit_bytes must be a multiple of 4096, got {io_unit_bytes}.")
    if not cleanup.valid_name(name):
        raise ValueError(
            f"name must be 'ebsperf' or 'ebsperf-<label>' (letters, digits, '-', '_') so "
            f"sweep_stale() can find its leftovers, got {name!r}."
        )


class EmulatedDevice:
    """A throttled block device that behaves like a volume with ``iops`` and ``bps`` limits.

    ``iops`` and ``bps`` are combined read+write limits (``None``: unlimited). I/Os larger
    than ``io_unit_bytes`` are split by the kernel and each piece counts as one operation,
    as EBS counts them (256 KiB for SSD types, 1 MiB for st1/sc1). Use as a context manager,
    or call :meth:`start` and :meth:`close`. Work runs throttled only inside the device's
    cgroup: put :meth:`argv_prefix` in front of the fio command line.

    Kernel limit: a loop device takes at most 128 segments per request, so an I/O whose
    buffer is not physically contiguous is split at 512 KiB as well. With the 1 MiB unit of
    st1/sc1, a 1 MiB I/O may therefore cost one or two operations (two at QD1 with fio's
    buffers); bytes/s are always counted once. ``exact_io_bytes`` tells the size up to which
    the cost is always exact: HDD volumes are throughput-bound for large I/O, so let the
    ``bps`` limit bind there.
    """

    def __init__(
        self,
        *,
        size_bytes: int = GIB,
        iops: float | None = None,
        bps: float | None = None,
        io_unit_bytes: int = 256 * KIB,
        name: str = "ebsperf",
        share_cgroup_of: EmulatedDevice | None = None,
        latency_us: float | None = None,
    ) -> None:
        _validate(size_bytes, io_unit_bytes, name)
        self.size_bytes, self.io_unit_bytes, self.name = size_bytes, io_unit_bytes, name
        self.iops, self.bps = iops, bps
        #: Another emulated device whose throttle cgroup this one's limits join: one fio
        #: process then drives both, each at its own limits (a set of volumes, see
        #: :class:`~pytest_ebsperf.emulate.stripe.EmulatedSet`). That device owns the cgroup.
        self.share_cgroup_of = share_cgroup_of
        #: Mean service time of every I/O (µs), served by a FUSE daemon under the loop device
        #: (:mod:`.service_time`); None: the loop device's own, and ``beyond_reach`` says why
        #: the daemon could not carry its rates, ``heavy`` why it needs the host alone.
        self.latency_us, self.beyond_reach, self.heavy = latency_us, "", ""
        self._latency: Any = None
        #: The path's own time per I/O at queue depth 1, taken off each service time.
        self.overhead_us = 0.0
        #: Share of I/Os that are reads (``None``: unknown, both directions get the limit).
        self.read_fraction: float | None = None
        self.run_dir: Path | None = None
        self.direct_io = False
        #: The backing tmpfs was mounted with ``noswap``; False on kernels before 6.4, where
        #: swap (or proactive reclaim) can page the volume out (see :meth:`swap_risk`).
        self.noswap = False
        self.max_sectors_kb = 0
        #: Largest I/O whose cost is always exact (see the class docstring).
        self.exact_io_bytes = 0
        self._mounted = False
        self._backing: Path | None = None
        self._loop: str | None = None
        self._throttle: ThrottleGroup | None = None
        self._started = False
        # set_rates (a credit controller's thread) and set_mix may race: one at a time
        self._lock = threading.Lock()
        self._allocated = False
        self._owner: lifetime.Owner | None = None
        #: sysfs values changed on the loop device, restored on close: (attribute, value).
        self._restore: list[tuple[str, str]] = []
        self.closed = False
        #: The share of its rates the volume runs at this second (emulated misses set it).
        self.scale = 1.0
        #: The driver of emulated misses (``--emulate-misses``), started by :meth:`prepare`.
        self.misses: Any = None
        #: Testing aid (``--emulate-first-write-factor``): writes into blocks not written
        #: since the device was made or last TRIMmed run at this share of the rates (the
        #: first-write cost of 2014's instance store, S1-03); None: no such cost.
        self.first_write_factor: float | None = None
        #: Testing aid (``--emulate-device-factor``): the device runs at this share of every
        #: rate set on it, its bucket's and its pacing's included (a twin made slower).
        self.rate_factor = 1.0
        #: Byte ranges not written since made or TRIMmed (only tracked with the factor).
        self._cold = ColdRanges()
        self._penalty = 1.0
        #: (time.monotonic(), IOPS, bytes/s) each time the throttle was set (``witness``)
        self.timeline: list[tuple[float, float | None, float | None]] = []

    def __repr__(self) -> str:
        where = f"/dev/{self._loop}" if self._loop else "not attached"
        return f"EmulatedDevice({where}, iops={self.iops}, bps={self.bps})"

    @property
    def path(self) -> str:
        """The block device, e.g. ``/dev/loop3``."""
        return f"/dev/{self._need(self._loop)}"

    @property
    def major_minor(self) -> str:
        """``MAJ:MIN`` of the block device."""
        return self._need(self._throttle).major_minor

    @property
    def cgroup_path(self) -> Path:
        """The throttle cgroup's directory."""
        return self._need(self._throttle).path

    @property
    def cgroup_version(self) -> int:
        """1 (``blkio.throttle.*``) or 2 (``io.max``)."""
        return self._need(self._throttle).version

    @property
    def backing_file(self) -> Path:
        """The sparse file on the private tmpfs behind the loop device."""
        return self._need(self._backing)

    def prepare(self, workload: Workload) -> Workload:
        """Get the device ready for ``workload`` and return the job to run on it: the whole
        backing file allocated before a write, the limits split by its read share, and
        libaio for "auto": io_uring submits a direct I/O above 256 KiB as more bios than
        libaio does (5 instead of 4 for 1 MiB on Linux 6.18), and blk-throttle charges each
        bio, so the emulated volume would count I/O unlike EBS. libaio splits exactly."""
        if workload.engine == "auto":
            workload = workload.replace(engine="libaio")
        if self.misses is not None:
            self.misses.begin(self.path)  # its clock starts with the first I/O
        self._first_write_cost(workload)
        if workload.pattern == "trim":
            # TRIM punches holes in the backing file; the next write allocates it again, so
            # the emulated device keeps no first-write cost of its own (NVMe has none).
            with self._lock:
                self._allocated = False
        elif workload.writes:
            self.allocate()
        self.set_mix(workload.read_fraction)
        return workload

    def _first_write_cost(self, workload: Workload) -> None:
        """With ``first_write_factor``: a run that writes into cold blocks runs at the factor
        (and warms them); a TRIM makes its range cold again."""
        if self.first_write_factor is None:
            return
        cold = self._cold.touch(workload, self.size_bytes)
        penalty = self.first_write_factor if cold else 1.0
        if penalty != self._penalty:
            self._penalty = penalty
            self._apply()

    def make_cold(self) -> None:
        """Every block counts as never written (the state of a new device)."""
        self._cold.ranges = [(0, self.size_bytes)]

    def allocate(self) -> None:
        """Allocate the whole backing file, once, before the first write workload.

        Writes into the sparse tmpfs file make the kernel allocate and zero pages in the loop
        worker as they arrive: 1 MiB writes at QD 8 ran at 377 MiB/s under a 500 MiB/s limit on
        this machine, and at 499-505 MiB/s once the file was allocated. Read-only volumes stay
        sparse and cost no memory.
        """
        with self._lock:
            if self._allocated:
                return
            fd = os.open(self.backing_file, os.O_RDWR)
            try:
                os.posix_fallocate(fd, 0, self.size_bytes)
            finally:
                os.close(fd)
            self._allocated = True

    def swap_risk(self) -> str | None:
        """A sentence when the volume's pages may be swapped out."""
        return None if self.noswap else loop.swap_risk()

    @property
    def limits(self) -> DirectionLimits:
        """The per-direction limits the kernel currently enforces."""
        return self._need(self._throttle).limits

    @property
    def sysfs_writes(self) -> int:
        """How many limit writes reached the kernel (each restarts blk-throttle's slice)."""
        return self._need(self._throttle).writes

    def _need(self, value: _T | None) -> _T:
        if value is None or self.closed:
            raise RuntimeError(f"{self!r} is not started or already closed.")
        return value

    def start(self) -> Self:
        """Create the tmpfs, file, loop device and cgroup; undo all of it on any failure."""
        if self._started:
            raise RuntimeError(f"{self!r} was started already.")
        self._started = True
        cleanup.register(self)
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def _allocate(self) -> tuple[Path, ThrottleGroup]:
        """A fresh ``<pid>-<n>`` whose owner file, run directory and cgroup name are all
        free; its owner file is held (locked) from before anything else is made until
        :meth:`close`, so no sweep takes it while this process lives."""
        pid = os.getpid()
        while True:
            n = next(_numbers)
            group = choose_throttle(f"{self.name}-{pid}-{n}", "")
            if group.path.exists():
                continue  # left by an earlier process that had our pid (maybe elsewhere)
            cleanup.RUN_ROOT.mkdir(mode=0o755, parents=True, exist_ok=True)
            run_dir = cleanup.RUN_ROOT / f"{pid}-{n}"
            if cleanup.owner_file(run_dir).exists():
                continue  # a run with our pid number in another PID namespace, or a leftover
            try:
                self._owner = cleanup.claim(run_dir)
            except (FileExistsError, FileNotFoundError):
                continue
            try:
                run_dir.mkdir(mode=0o700)
            except (FileExistsError, FileNotFoundError):
                self._owner.release()
                self._owner = None
                continue  # taken, or another process removed the empty parent just now
            return run_dir, group

    def _create(self) -> None:
        self.run_dir, group = self._allocate()
        # Headroom for tmpfs's own bookkeeping, so the whole file can really be written.
        self.noswap = loop.mount_tmpfs(self.run_dir, self.size_bytes + 4 * MIB,
                                       source=self.name)
        self._mounted = True
        # named after the run, so a sweep knows it even where its path cannot be reached
        # (its tmpfs lazily unmounted, or mounted in another mount namespace)
        self._backing = self.run_dir / cleanup.image_name(self.run_dir)
        loop.create_sparse_file(self._backing, self.size_bytes)
        if self.latency_us is not None:
            self._loop, self.direct_io = self._attach_with_latency(self._backing)
        else:
            self._loop, self.direct_io = loop.attach(self._backing)
        # Loop devices are reused by the next losetup: leave the queue as it was found.
        self._restore.append(("queue/max_sectors_kb",
                              loop.read_sysfs(self._loop, "queue/max_sectors_kb")))
        self.max_sectors_kb = loop.set_max_sectors_kb(self._loop, self.io_unit_bytes // KIB)
        self.exact_io_bytes = loop.exact_io_bytes(self._loop)
        group.major_minor = loop.major_minor(self._loop)
        owner = self.share_cgroup_of
        if owner is not None:  # this device's limits join the owner's cgroup (not made here)
            group = type(owner._need(owner._throttle))(owner.cgroup_path, group.major_minor)
            self._throttle = group
        else:
            self._throttle = group.create()
        self._apply()

    def _attach_with_latency(self, image: Path) -> tuple[str, bool]:
        """The loop device over the latency daemon's file (direct I/O: every request reaches
        the daemon), with the path's own time per I/O measured and taken off."""

        assert self.run_dir is not None and self.latency_us is not None
        self._latency = service_time.LatencyServer(image, self.run_dir / "latency",
                                              self.latency_us).start()
        name, direct = loop.attach(self._latency.path)
        if not direct:
            loop.detach(name, self._latency.path)
            raise EmulationUnavailableError(
                "The loop device over the emulated-latency file has no direct I/O, so the "
                "daemon would not see each request; pass --emulate-latency=none.")
        self.overhead_us = service_time.calibrate(f"/dev/{name}", self._latency)
        return name, direct

    def calibrate_path(self) -> float:
        """Measure the path's own time per I/O again, now (the daemon then follows it)."""
        self.overhead_us = service_time.calibrate(self.path, self.latency_server, fresh=True)
        return self.overhead_us

    @property
    def latency_server(self) -> service_time.LatencyServer:
        """The latency daemon serving this volume (a volume with latency only)."""
        server: service_time.LatencyServer = self._need(self._latency)
        return server

    def set_scale(self, scale: float) -> None:
        """Run at ``scale`` x the rates set (an emulated missed second), 1.0 to recover."""
        if scale != self.scale:
            self.scale = scale
            self._apply()

    def _apply(self) -> None:
        with self._lock:
            scale = self.scale * self._penalty * self.rate_factor
            iops = None if self.iops is None else self.iops * scale
            bps = None if self.bps is None else self.bps * scale
            limits = split_limits(iops, bps, self.read_fraction)
            self._need(self._throttle).apply(limits)
            self.timeline.append((time.monotonic(), iops, bps))
            del self.timeline[:-TIMELINE_KEPT]

    def argv_prefix(self) -> list[str]:
        """argv to put in front of a command so that it runs inside the throttle cgroup."""
        return cgroup_argv_prefix(self.cgroup_path)

    def add_pid(self, pid: int) -> None:
        """Move a running process (and all it forks later) into the throttle cgroup."""
        self._need(self._throttle).add_pid(pid)

    def set_mix(self, read_fraction: float | None) -> None:
        """Split the combined limits by the share of I/Os that are reads (0.0 to 1.0).

        A direction that carries no traffic (1.0 or 0.0) keeps the full limit, as does
        ``None`` (mix unknown). Only values that change are written to the kernel.
        """
        self.read_fraction = read_fraction
        self._apply()

    def set_rates(self, iops: float | None, bps: float | None) -> None:
        """Change the combined limits (a credit bucket does this over time). Writes only
        the values that change: each write restarts blk-throttle's time slice."""
        self.iops, self.bps = iops, bps
        self._apply()

    def __enter__(self) -> Self:
        return self if self._started else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Kill what runs in the cgroup, remove it, detach, unmount, remove dirs. Idempotent.
        Each step runs even when an earlier one failed; failures end as one RuntimeWarning
        naming what is left (``sweep_stale()`` removes it once this process is gone)."""
        problems = []
        if self.misses is not None:
            self.misses.stop()
        for step in (self._close_cgroup, self._close_sysfs, self._close_loop,
                     self._close_latency, self._close_mount, self._close_dirs):
            try:
                step()
            except Exception as exc:  # noqa: BLE001 - the other steps must still run
                problems.append(str(exc))
        # What is left stays marked as a dead run's (owner file kept, lock dropped), so the
        # next run's sweep removes it.
        self._close_owner(unlink=not problems)
        self.closed = True
        cleanup.unregister(self)
        if problems:
            warnings.warn(
                f"{self!r} left something behind: {'; '.join(problems)}",
                RuntimeWarning,
                stacklevel=2,
            )

    def _close_cgroup(self) -> None:
        if self._throttle is None:
            return
        if self.share_cgroup_of is not None:
            # the owner removes the cgroup; this device only takes its limits out of it
            if self._throttle.path.exists():
                self._throttle.apply(DirectionLimits())
            return
        self._throttle.remove()

    def _close_sysfs(self) -> None:
        while self._loop is not None and self._restore:
            attribute, value = self._restore.pop()
            loop.write_sysfs(self._loop, attribute, value)

    def _close_owner(self, *, unlink: bool = True) -> None:
        if self._owner is not None:
            self._owner.release(unlink=unlink)
            self._owner = None
        if unlink and self.run_dir is not None:
            try:
                self.run_dir.parent.rmdir()
            except OSError:
                pass  # other runs still use it

    def _close_loop(self) -> None:
        if self._loop is not None and self._latency is not None:
            loop.detach(self._loop, self._latency.path)
        elif self._loop is not None and self._backing is not None:
            loop.detach(self._loop, self._backing)
        if self.run_dir is not None:
            # a Ctrl-C while losetup ran leaves a device this object never learnt the name of
            for name, backing in loop.loops_backed_under(self.run_dir).items():
                loop.detach(name, backing)

    def _close_latency(self) -> None:
        if self._latency is not None:
            self._latency.stop()
            self._latency = None

    def _close_mount(self) -> None:
        if self._mounted and self.run_dir is not None:
            loop.unmount(self.run_dir)
            self._mounted = False

    def _close_dirs(self) -> None:
        if self.run_dir is not None and self.run_dir.exists():
            self.run_dir.rmdir()
