"""Service time for emulated volumes: every I/O takes the volume type's latency.

A loop device answers in microseconds; a real EBS volume takes 0.2-1 ms per I/O (HDD types:
milliseconds), which is what makes queue depth matter. So an emulated volume with latency is a
loop device with direct I/O over a file served by ``ebsperf-latfs`` (``latfs.c`` beside this
module: a FUSE daemon, compiled here on first use with the system's C compiler and libfuse3),
which answers each request after a log-normal service time with the given mean. The kernel's
throttle cgroup on the loop device still sets the rate; the daemon sets the time per I/O.

Each volume type's record holds the figure it gets with ``--emulate-latency=auto``
(:attr:`~pytest_ebsperf.awsmodel.volume_types.VolumeType.emulated_latency_us`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import math
import os
import shutil
import signal
import statistics
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.config.emulation import SHARED_CALIBRATION_ENV
from pytest_ebsperf.device.lock import measuring
from pytest_ebsperf.emulate import loop
from pytest_ebsperf.errors import EmulationUnavailableError
from pytest_ebsperf.fio.process import _setpriv
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

SOURCE = Path(__file__).with_name("latfs.c")
#: Shape of the log-normal (sigma of the log): p99 is about 1.7 x the mean.
SIGMA = 0.25
CACHE = Path(os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))) / "pytest-ebsperf"


#: What the daemon carries on a 2-CPU machine with the I/O path and fio beside it, with a
#: second emulated volume busy at the same time (docs/benchmarks.md): a volume whose limits
#: allow more gets no emulated latency, said in its notes (io2's 4,000 MiB/s through the
#: daemon beside another worker: 3,066 MiB/s with latency, 3,526 MiB/s with none, each a
#: false FAIL).
REACH_IOPS = 25_000
REACH_BPS = 2_000 * 1024 * 1024


def beyond_reach(iops: float | None, bps: float | None) -> str | None:
    """Why a volume this fast is emulated without latency, or None."""
    if iops is not None and iops > REACH_IOPS:
        return (f"{iops:,.0f} IOPS is beyond what emulated latency reaches on this machine "
                f"(about {REACH_IOPS:,} IOPS, docs/benchmarks.md)")
    if bps is not None and bps > REACH_BPS:
        return (f"{bps / 2**20:,.0f} MiB/s is beyond what emulated latency reaches on this "
                f"machine (about {REACH_BPS // 2**20:,} MiB/s, docs/benchmarks.md)")
    return None


def for_volume(setting: float | str | None, volume_type: str) -> float | None:
    """The mean service time (µs) for a volume of ``volume_type``, or None (no latency)."""
    if setting is None:
        return None
    if setting == "auto":
        kind = volume_types.known(volume_type)
        return kind.emulated_latency_us if kind is not None else 500.0
    return float(setting)


@functools.lru_cache(maxsize=1)
def binary() -> str:
    """The compiled daemon (built once per source version into the user's cache)."""
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    target = CACHE / f"ebsperf-latfs-{digest}"
    if target.exists():
        return str(target)
    cc = shutil.which("cc") or shutil.which("gcc")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True,
                           text=True, check=False) if shutil.which("pkg-config") else None
    if cc is None or flags is None or flags.returncode != 0:
        raise EmulationUnavailableError(
            "Emulated latency (--emulate-latency) needs a C compiler and libfuse3 to build its "
            "FUSE daemon (Debian/Ubuntu: apt-get install gcc pkg-config libfuse3-dev); or pass "
            "--emulate-latency=none.")
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}")
    done = subprocess.run([cc, "-O2", "-o", str(partial), str(SOURCE), *flags.stdout.split(),
                           "-lm", "-lpthread"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise EmulationUnavailableError(
            f"The emulated-latency daemon did not build: {done.stderr.strip()[-300:]}")
    partial.replace(target)
    return str(target)


def check_available() -> None:
    """A sentence (EmulationUnavailableError) when latency cannot be emulated here."""
    if not Path("/dev/fuse").exists():
        raise EmulationUnavailableError(
            "Emulated latency needs /dev/fuse (the FUSE module); pass --emulate-latency=none.")
    binary()


class LatencyServer:
    """One ``ebsperf-latfs`` daemon serving ``backing`` as ``<mountpoint>/<name>``."""

    def __init__(self, backing: Path, mountpoint: Path, mean_us: float, *,
                 overhead_us: float = 0.0, sigma: float = SIGMA) -> None:
        self.backing, self.mountpoint = backing, mountpoint
        self.mean_us, self.overhead_us, self.sigma = mean_us, overhead_us, sigma
        #: None: ``overhead_us`` is taken off; a figure: the path is followed while it runs,
        #: less this anchor (latfs.c says how)
        self.anchor_us: float | None = None
        #: the path's statistic followed: "mean" (fio's mean latency held at the set mean) or
        #: "median" (its median held, for a check that judges medians)
        self.statistic = "mean"
        self.control = mountpoint.with_name(mountpoint.name + ".control")
        self.stats = mountpoint.with_name(mountpoint.name + ".stats")
        self.proc: subprocess.Popen[str] | None = None

    @property
    def path(self) -> Path:
        """The file a loop device is attached to."""
        return self.mountpoint / "volume.img"

    def start(self) -> LatencyServer:
        self.mountpoint.mkdir(mode=0o700, exist_ok=True)
        self._write_control()
        argv = [binary(), str(self.mountpoint), "--backing", str(self.backing),
                "--mean-us", f"{self.mean_us:g}", "--sigma", f"{self.sigma:g}",
                "--overhead-us", f"{self.overhead_us:g}", "--control", str(self.control),
                "--stats", str(self.stats)]

        setpriv = _setpriv()
        if setpriv is not None:  # dies with this process: a hung daemon would hang the loop
            argv = [setpriv, "--pdeathsig", "KILL", "--", *argv]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, close_fds=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if line != "ready":
            said = (self.proc.stderr.read() if self.proc.stderr else "").strip()[-300:]
            self.stop()
            raise EmulationUnavailableError(
                f"The emulated-latency daemon did not start: {said or 'no output'}.")
        _ahead_of_neighbours(self.proc.pid)
        deadline = time.monotonic() + 5
        while not self.path.exists():
            if time.monotonic() > deadline:
                self.stop()
                raise EmulationUnavailableError("The emulated-latency file never appeared.")
            time.sleep(0.01)
        return self

    def _write_control(self) -> None:
        anchor = "nan" if self.anchor_us is None else f"{self.anchor_us:g}"
        self.control.write_text(f"{self.mean_us:g} {self.sigma:g} {self.overhead_us:g} "
                                f"{anchor} {self.statistic}\n")

    def set(self, mean_us: float | None = None, overhead_us: float | None = None) -> None:
        """Change the service time while it runs."""
        if mean_us is not None:
            self.mean_us = mean_us
        if overhead_us is not None:
            self.overhead_us = overhead_us
        self._reload()

    def follow(self, anchor_us: float | None) -> None:
        """Follow the path while it runs, less ``anchor_us`` (None: take ``overhead_us``
        off, as set)."""
        self.anchor_us = anchor_us
        self._reload()

    @contextlib.contextmanager
    def following(self, statistic: str) -> Iterator[None]:
        """Follow the path's ``statistic`` ("mean" or "median") within the block, then what
        was followed before."""
        before, self.statistic = self.statistic, statistic
        if statistic != before:
            self._reload()
        try:
            yield
        finally:
            if self.statistic != before:
                self.statistic = before
                self._reload()

    def _reload(self) -> None:
        self._write_control()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGUSR1)
            time.sleep(0.05)  # the daemon reloads within 20 ms

    def seen(self) -> tuple[float | None, int, float]:
        """What the daemon follows now: (the path it saw, µs, None: not yet; how many I/Os
        that went through alone it is the mean of; what it takes off each I/O, µs)."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return None, 0, self.overhead_us
        self.stats.unlink(missing_ok=True)
        proc.send_signal(signal.SIGUSR2)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                path, samples, taken = self.stats.read_text().split()
            except (OSError, ValueError):
                time.sleep(0.01)
                continue
            seen = float(path)
            return (None if math.isnan(seen) else seen), int(samples), float(taken)
        return None, 0, self.overhead_us

    def stop(self) -> None:
        """End the daemon (it unmounts); unmount lazily if it could not."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc is not None:
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()

        if loop.is_mountpoint(self.mountpoint):
            subprocess.run(["umount", "-l", str(self.mountpoint)], capture_output=True,
                           check=False)
        for path in (self.control, self.stats, self.stats.with_name(self.stats.name + ".partial")):
            path.unlink(missing_ok=True)
        try:
            self.mountpoint.rmdir()
        except OSError:
            pass


#: Per mean (µs, rounded): what is taken off until the daemon has seen the path, and the
#: anchor it follows the path with.
_calibrated: dict[int, tuple[float, float]] = {}

#: Half-second looks at the path: one with nothing taken off, the rest with its estimate taken
#: off; the median of their estimates is kept (one slow spell of the host's wake-ups, seen at
#: 160 µs above the usual path, cannot set the correction). 3.4 s of the host alone for the
#: three, against 4.9 s with 1-s looks, which scattered as much (docs/benchmarks.md).
LOOKS = 3
#: Seconds of one look (after a 0.2 s ramp): 250-2,000 I/Os at QD 1 for 0.25-2 ms means.
LOOK_S = 0.5
#: The variable naming a folder the processes of one run share their corrections in
#: (pytest-xdist workers: the plugin's controller makes it; unset, each measures its own).
SHARED_ENV = SHARED_CALIBRATION_ENV


def calibrate(device: str, server: LatencyServer, *, fresh: bool = False) -> float:
    """Make fio's mean completion latency at queue depth 1 match the set mean: what the path
    adds beyond the service time (the loop device, FUSE, wake-ups) is measured with fio and
    taken off each service time, and from then on followed by the daemon while it runs
    (latfs.c: what it sees of the path, less the anchor measured here beside fio's figure).
    Once per mean per run (the processes of one run share it through :data:`SHARED_ENV`'s
    folder: the first measures, the others wait and read it, or read it at once once it is
    there; ``fresh`` measures it again); returns what is taken off to begin with."""
    key = round(server.mean_us)
    if not fresh and key not in _calibrated:
        known = _known(key)  # another process of the run measured it: no wait for the host
        if known is not None:
            _calibrated[key] = known
    if fresh or key not in _calibrated:
        # measured holding the host alone: beside other workers' fio the path measured slow
        # and that much was then taken off every later I/O (io1 set to 500 us measured 210 us
        # at QD 1, S2-17's QD-1 blocks 149 % of their setting; alone, 519-556 us for 500-600
        # us settings: docs/benchmarks.md); taken before the run's lock for the mean, so that
        # no process holds that lock while it waits for the host (one holding the host alone
        # may need the mean too)
        with measuring(alone=True, whole_check=False), _shared(key, fresh) as known:
            if known is None:
                known = _measure_path(device, server)
                _share(key, known)
            _calibrated[key] = known
    taken, anchor = _calibrated[key]
    server.set(overhead_us=taken)
    server.follow(anchor)
    return taken


def _measure_path(device: str, server: LatencyServer) -> tuple[float, float]:
    """(what to take off, the anchor): the median of the looks' estimates, and the least of
    fio's own time per I/O outside its completion latency (its cycle, 1/IOPS at queue depth
    1, less that latency): the daemon sees that time in its gap, fio's figure has none of it.
    Tens of µs on a quiet host, more in a spell in which fio waits for a CPU, which is not
    the volume's to keep (an anchor kept from such a spell leaves every later I/O slower
    than set by the difference): the least of the looks."""
    server.follow(None)
    estimates: list[float] = []
    own: list[float] = []
    taken = 0.0
    for _ in range(LOOKS):
        server.set(overhead_us=taken)
        clat_us, own_us = measure_qd1(device)
        estimates.append(taken + clat_us - server.mean_us)
        own.append(own_us)
        taken = _bounded(estimates[-1], server.mean_us)
    return _bounded(statistics.median(estimates), server.mean_us), max(0.0, min(own))


def _shared_file(key: int) -> Path | None:
    folder = os.environ.get(SHARED_ENV)
    return Path(folder) / f"path-{key}us" if folder and Path(folder).is_dir() else None


def _parse(text: str) -> tuple[float, float] | None:
    """``taken anchor`` as _share writes it, or None."""
    if not text.endswith("\n"):  # absent, or caught while _share writes it
        return None
    try:
        taken, anchor = (float(part) for part in text.split())
    except ValueError:
        return None
    return taken, anchor


def _known(key: int) -> tuple[float, float] | None:
    """The correction another process of the run measured for the mean ``key``, read without
    waiting (None: not yet, or being written)."""
    path = _shared_file(key)
    try:
        return _parse(path.read_text()) if path is not None else None
    except OSError:
        return None


@contextlib.contextmanager
def _shared(key: int, fresh: bool) -> Iterator[tuple[float, float] | None]:
    """Hold the run's lock for the mean ``key`` (one process measures it at a time) and yield
    the correction another process of the run measured, or None (``fresh``: always None)."""
    path = _shared_file(key)
    if path is None:
        yield None
        return
    fd = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            known = None if fresh else _parse(path.read_text())
        except OSError:
            known = None
        yield known
    finally:
        os.close(fd)


def _share(key: int, known: tuple[float, float]) -> None:
    path = _shared_file(key)
    taken, anchor = known
    if path is not None:
        with contextlib.suppress(OSError):
            path.write_text(f"{taken!r} {anchor!r}\n")


def _bounded(taken: float, mean_us: float) -> float:
    """What may be taken off: none below zero, at most 80 % of the mean."""
    return max(0.0, min(taken, 0.8 * mean_us))


def measure_qd1(device: str) -> tuple[float, float]:
    """fio's mean completion latency (µs) of 4 KiB random reads at queue depth 1, and its own
    time per I/O beyond it (µs: 1/IOPS less that latency)."""

    look = Workload("randread", bs=4096, iodepth=1, runtime_s=LOOK_S, ramp_s=0.2,
                    engine="libaio")
    result = FioRunner().run(look, device, readonly=True)
    clat_us = result.read.clat.mean_ns / 1000.0
    return clat_us, (1e6 / result.read.iops - clat_us if result.read.iops > 0 else 0.0)


#: The real-time priority of the emulated-latency daemon's threads (the lowest: above every
#: ordinary process, below the kernel's own real-time threads).
DAEMON_RT_PRIORITY = 1


def _ahead_of_neighbours(pid: int) -> None:
    """Run the daemon's threads (and those it starts later, which inherit it) ahead of
    every ordinary process: each emulated I/O wakes it twice, and under a fair scheduler a
    wake-up waits for a busy neighbour's slice, even at nice 19 (two neighbours streaming
    through memory made an emulated io1 deliver 985 of its 4,000 IOPS). It sleeps between
    I/Os, so it takes from nobody what it does not use; the kernel's real-time throttling
    keeps 5 % of every CPU for others whatever happens. Without the right to do so (not
    root, a container without CAP_SYS_NICE) it runs as it was started."""
    try:
        tasks = [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        tasks = [pid]
    for task in tasks:
        try:
            os.sched_setscheduler(task, os.SCHED_FIFO, os.sched_param(DAEMON_RT_PRIORITY))
        except (OSError, AttributeError):
            return

