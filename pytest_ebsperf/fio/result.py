"""Typed fio results: the JSON summary plus per-second series from fio's logs.

Built by :func:`pytest_ebsperf.fio.parse.parse_result` (one way: this module imports no parser). All latencies are in nanoseconds, throughput in
bytes per second, whatever the fio version printed (2.x printed microseconds and KiB).
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: fio's version string: ``fio-3.33``, ``fio-2.1.4``, git builds ``fio-3.35-12-gabc``.
VERSION_RE = re.compile(r"fio-(\d+)\.(\d+)(?:\.(\d+))?(?:-.*)?")


@dataclass(frozen=True)
class Latency:
    """One latency distribution (completion latency unless said otherwise), in nanoseconds.

    ``percentiles`` maps the percentile (``99.0``, ``99.9``...) to nanoseconds; empty when fio
    reported none (``gtod_reduce``).
    """

    mean_ns: float = 0.0
    min_ns: float = 0.0
    max_ns: float = 0.0
    stddev_ns: float = 0.0
    samples: int = 0
    percentiles: Mapping[float, float] = field(default_factory=dict)

    def p(self, q: float) -> float | None:
        """The ``q``-th percentile in ns, or None when fio did not report it."""
        return self.percentiles.get(float(q))


@dataclass(frozen=True)
class DirectionStats:
    """Read, write or trim totals of a run, summed (IOPS, bytes) over all jobs."""

    iops: float = 0.0
    bw_bytes: float = 0.0
    io_bytes: int = 0
    total_ios: int = 0
    runtime_ms: float = 0.0
    clat: Latency = field(default_factory=Latency)
    lat: Latency = field(default_factory=Latency)

    @property
    def active(self) -> bool:
        return self.total_ios > 0 or self.io_bytes > 0


@dataclass(frozen=True)
class Series:
    """Samples per time window (one per second by default) from fio's interval logs.

    ``t_s[i]`` is the end of window ``i`` in seconds since the job started measuring;
    ``values[i]`` is the window's value summed over jobs (IOPS, bytes/s) or averaged (latency ns).
    """

    t_s: tuple[float, ...] = ()
    values: tuple[float, ...] = ()

    def __len__(self) -> int:
        return len(self.values)

    def mean(self) -> float:
        return statistics.fmean(self.values) if self.values else 0.0


#: Keys of :attr:`FioResult.series`.
SERIES_KEYS = (
    "read_iops",
    "write_iops",
    "total_iops",
    "read_bw",
    "write_bw",
    "total_bw",
    "read_clat",
    "write_clat",
)


@dataclass(frozen=True)
class FioResult:
    """What one fio invocation measured.

    ``read``/``write``/``trim`` are summed over every job entry (with or without
    ``group_reporting``). ``usr_cpu``/``sys_cpu`` are averages per job in percent of one CPU.
    ``jobs`` is the number of fio jobs that ran (numjobs included). ``errors`` lists the
    non-zero ``error`` fields of job entries. ``series`` is filled from interval logs by the
    runner (keys in :data:`SERIES_KEYS`); empty when parsed from JSON alone.
    """

    fio_version: str
    read: DirectionStats
    write: DirectionStats
    trim: DirectionStats = field(default_factory=DirectionStats)
    #: Reads and writes reported together (``unified_rw_reporting``): counted in the totals.
    mixed: DirectionStats = field(default_factory=DirectionStats)
    jobs: int = 1
    usr_cpu: float = 0.0
    sys_cpu: float = 0.0
    #: False when fio's output held no CPU figures (a run cut down to its aggregate line).
    cpu_reported: bool = True
    errors: tuple[int, ...] = ()
    job_options: Mapping[str, str] = field(default_factory=dict)
    series: Mapping[str, Series] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: Why the run was stopped before its runtime ("" when it ran to the end).
    stop_reason: str = ""
    #: Share of all the host's CPUs busy while fio ran (fio, the kernel, other programs),
    #: from ``/proc/stat``; None when not measured.
    host_cpu_busy_pct: float | None = None
    #: Share of all the host's CPU time its hypervisor took while fio ran (``steal`` in
    #: ``/proc/stat``, part of the busy share); None when not measured.
    host_cpu_steal_pct: float | None = None
    #: Share of fio's wall time its threads spent waiting for a CPU (all threads summed,
    #: ``/proc/PID/task/*/schedstat``); None when not measured (a remote host, or an emulated
    #: volume, whose device is this host's own work).
    fio_wait_share: float | None = None
    #: Per-window figures seen while fio ran (:class:`pytest_ebsperf.fio.live.LiveSeries`).
    live: Any = field(default=None, repr=False, compare=False)
    #: Seconds (indices of the per-second series) in which an emulated volume fell behind
    #: what it was set to deliver: the host's, left out of the verdict
    #: (:mod:`pytest_ebsperf.emulate.witness`); and the sentence that says so.
    emulator_behind: tuple[int, ...] = ()
    emulator_said: str = ""
    #: What fio saw over what the emulated volume was set to deliver, over the run's
    #: seconds (1.0: the emulator kept up; None: not an emulated volume with a service time).
    emulator_share: float | None = None
    #: Where --ebsperf-keep-fio kept this run: its report's path without ``.json`` ("" when
    #: not kept); the check keeps its verdict beside it (:mod:`pytest_ebsperf.fio.kept`).
    kept_as: str = ""
    #: The device's own count of the run a check read around it
    #: (:meth:`pytest_ebsperf.fio.counted.Witness.record`); None when none was read.
    counted: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        """``fio-3.33`` -> ``(3, 33, 0)``; (0, 0, 0) when the report names no version."""
        match = VERSION_RE.search(self.fio_version.strip())
        if match is None:
            return (0, 0, 0)
        major, minor, patch = match.groups()
        return int(major), int(minor), int(patch or 0)

    @property
    def total_iops(self) -> float:
        return self.read.iops + self.write.iops + self.trim.iops + self._mixed_only.iops

    @property
    def total_bw_bytes(self) -> float:
        return (self.read.bw_bytes + self.write.bw_bytes + self.trim.bw_bytes
                + self._mixed_only.bw_bytes)

    @property
    def _mixed_only(self) -> DirectionStats:
        """The "mixed" figures when fio reported them instead of read/write (with
        ``unified_rw_reporting=both`` they repeat read + write and are not added again)."""
        if self.read.iops or self.write.iops or self.trim.iops:
            return DirectionStats()
        return self.mixed

    def with_series(self, series: Mapping[str, Series]) -> FioResult:
        """A copy with per-second series attached."""
        return dataclasses.replace(self, series=dict(series))
