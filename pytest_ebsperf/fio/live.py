"""Per-second figures from a running fio: its ``--status-interval`` JSON reports.

fio writes its interval logs only when a job ends, so a check that wants to stop as soon as
its verdict is settled reads fio's status reports instead: with ``--status-interval=N`` and
``--output=FILE`` fio appends a full JSON report to the file every N seconds (cumulative
counters since the job started measuring), then its final report. :class:`StatusStream`
splits the growing text into reports; :class:`LiveSeries` turns consecutive reports into
per-window rates.

``ramp_time`` resets fio's counters when the ramp ends: reports made during the ramp are
dropped, and the first report after it counts from zero.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: A window shorter than this share of the status interval is merged into the next one.
MIN_WINDOW_SHARE = 0.5


class StatusStream:
    """Feed it text as fio writes it; it yields each complete JSON report once."""

    def __init__(self) -> None:
        self._buffer = ""
        self._decoder = json.JSONDecoder()

    def feed(self, text: str) -> Iterator[dict[str, Any]]:
        self._buffer += text
        while True:
            start = self._report_start()
            if start < 0:
                # keep a possible partial line (fio's messages come line by line)
                self._buffer = self._buffer[self._buffer.rfind("\n") + 1:]
                return
            try:
                report, end = self._decoder.raw_decode(self._buffer, start)
            except json.JSONDecodeError:
                self._buffer = self._buffer[start:]  # incomplete: wait for more text
                return
            self._buffer = self._buffer[end:]
            if isinstance(report, dict) and "jobs" in report:
                yield report

    def _report_start(self) -> int:
        if self._buffer.startswith("{"):
            return 0
        found = self._buffer.find("\n{")
        return found + 1 if found >= 0 else -1


@dataclass(frozen=True)
class Counters:
    """What one status report says, summed over its jobs."""

    timestamp_ms: float
    runtime_ms: float
    ios: float
    read_ios: float
    write_ios: float
    io_bytes: float

    @classmethod
    def from_report(cls, report: dict[str, Any]) -> Counters:
        jobs = [job for job in report.get("jobs", ()) if isinstance(job, dict)]
        runtime = max((_measuring_ms(job) for job in jobs), default=0.0)
        read = sum(_direction(job, "read", "total_ios") for job in jobs)
        write = sum(_direction(job, "write", "total_ios") for job in jobs)
        io_bytes = sum(_direction(job, d, "io_bytes") for job in jobs for d in ("read", "write"))
        return cls(float(report.get("timestamp_ms", 0) or 0), runtime, read + write, read,
                   write, io_bytes)


def _measuring_ms(job: dict[str, Any]) -> float:
    """How long ``job`` has measured, in wall-clock ms.

    With ``--group_reporting`` one entry stands for all the group's jobs and its
    ``job_runtime`` is their *sum* (3,996 ms for one second of four jobs); each direction's
    ``runtime`` is the longest job's, which is wall-clock time for any number of jobs. A job
    that reports no direction's runtime falls back on ``job_runtime`` divided by its jobs."""
    by_direction = max((_direction(job, d, "runtime") for d in ("read", "write", "trim")),
                       default=0.0)
    if by_direction > 0:
        return by_direction
    total = float(job.get("job_runtime", 0) or 0)
    options = job.get("job options")
    try:
        jobs = int(options.get("numjobs", 1)) if isinstance(options, dict) else 1
    except (TypeError, ValueError):
        jobs = 1
    return total / max(jobs, 1)


def _direction(job: dict[str, Any], direction: str, key: str) -> float:
    stats = job.get(direction)
    if not isinstance(stats, dict):
        return 0.0
    value = stats.get(key, 0)
    return float(value) if isinstance(value, (int, float)) else 0.0


@dataclass
class LiveSeries:
    """Per-window rates (IOPS, bytes/s) from consecutive status reports of one fio run."""

    ramp_ms: float = 0.0
    interval_ms: float = 1000.0
    iops: list[float] = field(default_factory=list)
    bw: list[float] = field(default_factory=list)
    read_iops: list[float] = field(default_factory=list)
    write_iops: list[float] = field(default_factory=list)
    window_s: list[float] = field(default_factory=list)
    _start_ms: float | None = None
    _last: Counters | None = None

    def add(self, report: dict[str, Any]) -> bool:
        """Take one report; True when it closed a new window."""
        now = Counters.from_report(report)
        if self._start_ms is None:
            # fio started measuring (or ramping) job_runtime ms before this report
            self._start_ms = now.timestamp_ms - now.runtime_ms
        if now.timestamp_ms - self._start_ms < self.ramp_ms:
            return False  # still ramping: these counters are reset when the ramp ends
        last = self._last or Counters(now.timestamp_ms - now.runtime_ms, 0.0, 0.0, 0.0, 0.0,
                                      0.0)
        if now.runtime_ms < last.runtime_ms:  # a reset we did not expect: count from zero
            last = Counters(now.timestamp_ms - now.runtime_ms, 0.0, 0.0, 0.0, 0.0, 0.0)
        span_ms = now.runtime_ms - last.runtime_ms
        if span_ms < MIN_WINDOW_SHARE * self.interval_ms:
            if self._last is None:
                self._last = last  # keep the zero base; the next report closes the window
            return False
        seconds = span_ms / 1000.0
        self.iops.append((now.ios - last.ios) / seconds)
        self.read_iops.append((now.read_ios - last.read_ios) / seconds)
        self.write_iops.append((now.write_ios - last.write_ios) / seconds)
        self.bw.append((now.io_bytes - last.io_bytes) / seconds)
        self.window_s.append(seconds)
        self._last = now
        return True

    def values(self, key: str) -> list[float]:
        """``total_iops`` / ``total_bw`` (and the read/write IOPS) as lists."""
        return {"total_iops": self.iops, "total_bw": self.bw, "read_iops": self.read_iops,
                "write_iops": self.write_iops}.get(key, self.iops)

    @property
    def measured_s(self) -> float:
        return sum(self.window_s)

    def record(self) -> dict[str, list[float]]:
        """The windows as a kept verdict holds them (:meth:`from_record` reads them back)."""
        return {"window_s": list(self.window_s), **{key: list(self.values(key)) for key in
                                                     _KEYS}}

    @classmethod
    def from_record(cls, record: Any) -> LiveSeries | None:
        """The windows :meth:`record` wrote; None when ``record`` is not such windows (the
        same number of finite, non-negative figures for each key, windows longer than 0)."""
        if not isinstance(record, dict):
            return None
        columns = [record.get(key) for key in ("window_s", *_KEYS)]
        if not all(isinstance(c, list) for c in columns) or \
                len({len(c) for c in columns if isinstance(c, list)}) != 1:
            return None
        try:
            window, iops, bw, reads, writes = ([float(v) for v in c] for c in columns
                                               if isinstance(c, list))
        except (TypeError, ValueError):
            return None
        if not all(math.isfinite(v) and v >= 0 for c in (window, iops, bw, reads, writes)
                   for v in c) or not all(w > 0 for w in window):
            return None
        return cls(iops=iops, bw=bw, read_iops=reads, write_iops=writes, window_s=window)


#: The figures of a window, by the names :meth:`LiveSeries.values` takes.
_KEYS = ("total_iops", "total_bw", "read_iops", "write_iops")
