"""Per-second series from fio's interval logs (``--write_{iops,bw,lat}_log`` + ``--log_avg_msec``).

fio writes one file per job (``P_iops.1.log``, ``P_iops.2.log``...; ``P_iops.log`` with
``per_job_logs=0``) and one row per data direction per window: ``time_ms, value, ddir`` followed
by ``bs`` (all versions), ``prio`` (3.18+) and further columns in newer versions, so only the
first three columns are read. Values are IOPS, KiB/s (bw) or nanoseconds (clat). The plugin never
sets ``log_window_value=both`` (3.37+), the one option that puts another value before ``ddir``.

What fio 3.33 does, as observed on real runs (the golden logs in ``tests/data/fio``):

* Timestamps jitter around the window (``999, 2000, 3001``), so rows are aligned across jobs by
  rounding the time to a whole window.
* At exit fio flushes the unfinished window of the completion-latency logs as an extra row that
  repeats the last timestamp (its value is off: it holds the last few I/Os). The first row for a
  window is the complete one; repeats are dropped. A last row that comes less than half a window
  after the row before it closes a partial window and is dropped too.
* The IOPS and bandwidth logs often lack the last window of the run (19 rows for 20 s).
* Samples taken during ``ramp_time`` are discarded and the log clock restarts at 0 when the ramp
  ends (``ramp_time=3s, runtime=3s`` logs rows up to 3000 ms only), so the windows already cover
  only the measured period. Defensively, a log whose clock goes backwards (fio 2.13 logged the
  ramp into the slat log and then restarted, axboe/fio#239) keeps only the rows after the last
  restart, and windows ending later than the measured runtime plus half a window are cut.
"""

from __future__ import annotations

import io
import math
import re
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.errors import FioOutputError
from pytest_ebsperf.fio.result import SERIES_KEYS, Series

#: Log kinds the runner asks fio for and reads back.
LOG_KINDS = ("iops", "bw", "clat")
_DDIRS = {0: "read", 1: "write"}
_KIB = 1024



@dataclass(frozen=True)
class LogRow:
    """One row of an fio interval log."""

    time_ms: int
    value: float
    ddir: int


def parse_log(text: str, *, name: str = "fio log") -> list[LogRow]:
    """Rows of one log file; a line that is not ``time, value, ddir[, ...]`` is an error."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        rows.append(LogRow(*_fields(line, number, name)))
    return rows


def group_log_files(names: Iterable[str], prefix: str) -> dict[str, list[str]]:
    """Log file names per kind for ``prefix``, in job order (``P_iops.2.log`` before ``.10``)."""
    pattern = re.compile(rf"^{re.escape(prefix)}_({'|'.join(LOG_KINDS)})(?:\.(\d+))?\.log$")
    found: dict[str, list[tuple[int, str]]] = {kind: [] for kind in LOG_KINDS}
    for name in names:
        match = pattern.match(name)
        if match:
            found[match.group(1)].append((int(match.group(2) or 0), name))
    return {kind: [name for _, name in sorted(files)] for kind, files in found.items()}

LogSource = str | Iterable[str]


def build_series(
    logs: Mapping[str, Sequence[LogSource]],
    *,
    interval_ms: int = 1000,
    runtime_ms: float | None = None,
    fio_version: str | None = None,
) -> dict[str, Series]:
    """Series for every key in :data:`SERIES_KEYS` from logs per kind (one per job), each a
    whole text or an iterable of lines (an open file: read as it streams).

    IOPS and bandwidth are summed over jobs (bandwidth converted to bytes/s); completion latency
    is averaged over jobs, weighted by each job's IOPS in that window when the IOPS logs allow.
    ``total_*`` is read + write. A direction no job logged gives an empty series. Memory grows
    with the number of windows, not of log lines: a day of 1 s windows over 16 jobs is a few
    arrays of 86,400 numbers, whatever the logs' size.
    """
    iops_logs, bw_logs, lat_logs = (list(logs.get(kind, ())) for kind in LOG_KINDS)
    iops, bw, lat = _Sum(len(iops_logs)), _Sum(len(bw_logs)), _Weighted(len(lat_logs))
    use_iops = len(iops_logs) == len(lat_logs)
    for job, source in enumerate(iops_logs):
        job_iops = _job(source, interval_ms, runtime_ms, f"iops log {job + 1}")
        iops.add(job_iops)
        if use_iops:
            lat.add(_job(lat_logs[job], interval_ms, runtime_ms, f"clat log {job + 1}"),
                    job_iops)
    for job, source in enumerate(bw_logs):
        bw.add(_job(source, interval_ms, runtime_ms, f"bw log {job + 1}"))
    if not use_iops:
        for job, source in enumerate(lat_logs):
            lat.add(_job(source, interval_ms, runtime_ms, f"clat log {job + 1}"))
    series: dict[str, Series] = {key: Series() for key in SERIES_KEYS}
    for ddir, direction in _DDIRS.items():
        series[f"{direction}_iops"] = iops.series(ddir, interval_ms, 1.0)
        series[f"{direction}_bw"] = bw.series(ddir, interval_ms, _KIB)
        series[f"{direction}_clat"] = lat.series(ddir, interval_ms, _latency_scale(fio_version))
    series["total_iops"] = _added(series["read_iops"], series["write_iops"])
    series["total_bw"] = _added(series["read_bw"], series["write_bw"])
    return series


def _latency_scale(fio_version: str | None) -> float:
    """fio 3.x logs completion latency in nanoseconds, fio 2.x in microseconds."""
    match = re.search(r"fio-(\d+)\.", fio_version or "")
    return 1000.0 if match and int(match.group(1)) < 3 else 1.0


#: One job's windows: per data direction, an array indexed by window (NaN: not logged).
_JobWindows = dict[int, "array[float]"]


def _lines(source: LogSource) -> Iterable[str]:
    return io.StringIO(source) if isinstance(source, str) else source


def _job(source: LogSource, interval_ms: int, runtime_ms: float | None,
         name: str) -> _JobWindows:
    """One job's complete windows from its log, read line by line.

    The first row of a window wins (a repeat is fio's end-of-run flush); a last row that
    closes a window begun less than half a window earlier is dropped; a clock that goes back
    (a restart after the ramp) discards what came before; windows past the runtime are cut.
    """
    windows: _JobWindows = {}
    previous: dict[int, tuple[int, int, bool]] = {}  # ddir -> (time_ms, index, partial)
    last_ms = -math.inf
    for number, line in enumerate(_lines(source), start=1):
        if not line.strip():
            continue
        time_ms, value, ddir = _fields(line, number, name)
        if time_ms < last_ms - interval_ms / 2:
            windows, previous = {}, {}  # the log restarted: keep only what follows
        last_ms = time_ms
        index = window_index(time_ms, interval_ms)
        values = windows.setdefault(ddir, array("d"))
        accepted = index >= 1 and (index >= len(values) or math.isnan(values[index]))
        if accepted:
            if index >= len(values):
                values.extend([math.nan] * (index + 1 - len(values)))
            values[index] = value
        before_ms = previous.get(ddir, (0, 0, False))[0]
        previous[ddir] = (time_ms, index, accepted and time_ms - before_ms < interval_ms / 2)
    for ddir, (_, index, partial) in previous.items():
        if partial:
            windows[ddir][index] = math.nan
    if runtime_ms is not None:
        last = int((runtime_ms + interval_ms / 2) // interval_ms)
        for values in windows.values():
            del values[last + 1:]
    return windows


#: A line with more fields than this is a histogram log (``--write_hist_log``: time, ddir,
#: bs and ~1,800 bins), whose second column is a direction, not a value.
_MAX_FIELDS = 16


def _fields(line: str, number: int, name: str) -> tuple[int, float, int]:
    parts = line.split(",", _MAX_FIELDS)
    if len(parts) > _MAX_FIELDS:
        raise FioOutputError(
            f"{name} is a latency histogram log (--write_hist_log: time, direction, block "
            "size and a bin per latency), not an IOPS, bandwidth or latency log; read it with "
            "fio's fiologparser_hist.py.")
    try:
        row = int(parts[0]), float(parts[1]), int(parts[2])
    except (IndexError, ValueError):
        raise FioOutputError(
            f"Line {number} of {name} is not an fio log line (time, value, direction, ...): "
            f"{line[:120]!r}. The log may be truncated; run the check again.") from None
    if row[2] not in (0, 1, 2):
        raise FioOutputError(
            f"Line {number} of {name} names direction {row[2]} (fio logs 0 read, 1 write, "
            f"2 trim): {line[:120]!r}; this is not an fio interval log.")
    return row


class _Sum:
    """Per window and direction: the sum over jobs, and how many jobs logged the window."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.sums: dict[int, array[float]] = {}
        self.counts: dict[int, array[int]] = {}
        self.seen: array[int] = array("l")  # per window: jobs that logged it, any direction

    def add(self, job: _JobWindows, weights: _JobWindows | None = None) -> None:
        logged: set[int] = set()
        for ddir, values in job.items():
            sums = self.sums.setdefault(ddir, array("d"))
            counts = self.counts.setdefault(ddir, array("l"))
            _grow(sums, len(values), 0.0)
            _grow(counts, len(values), 0)
            for i, value in enumerate(values):
                if not math.isnan(value):
                    sums[i] += value
                    counts[i] += 1
                    logged.add(i)
        _grow(self.seen, max(logged, default=-1) + 1, 0)
        for i in logged:
            self.seen[i] += 1

    def complete(self) -> list[int]:
        """Windows every job logged: one some job missed would be undercounted by the sum."""
        return [i for i in range(1, len(self.seen)) if self.seen[i] >= self.jobs]

    def series(self, ddir: int, interval_ms: int, scale: float = 1.0) -> Series:
        if ddir not in self.sums:
            return Series()
        sums, counts = self.sums[ddir], self.counts[ddir]
        indexes = [i for i in self.complete() if i < len(sums) and counts[i]]
        return _series(indexes, [sums[i] * scale for i in indexes], interval_ms)


class _Weighted(_Sum):
    """Latency per window: weighted by each job's IOPS in that window when known."""

    def __init__(self, jobs: int) -> None:
        super().__init__(jobs)
        self.weighted: dict[int, array[float]] = {}
        self.weights: dict[int, array[float]] = {}

    def add(self, job: _JobWindows, weights: _JobWindows | None = None) -> None:
        super().add(job)
        for ddir, values in job.items():
            wsum = self.weighted.setdefault(ddir, array("d"))
            wtot = self.weights.setdefault(ddir, array("d"))
            _grow(wsum, len(values), 0.0)
            _grow(wtot, len(values), 0.0)
            job_weights = (weights or {}).get(ddir, array("d"))
            for i, value in enumerate(values):
                weight = job_weights[i] if i < len(job_weights) else math.nan
                if not math.isnan(value) and weight > 0:
                    wsum[i] += value * weight
                    wtot[i] += weight

    def series(self, ddir: int, interval_ms: int, scale: float = 1.0) -> Series:
        if ddir not in self.sums:
            return Series()
        sums, counts = self.sums[ddir], self.counts[ddir]
        wsum, wtot = self.weighted[ddir], self.weights[ddir]
        indexes = [i for i in self.complete() if i < len(sums) and counts[i]]
        # no IOPS log for a window: plain mean over jobs
        values = [scale * (wsum[i] / wtot[i] if wtot[i] > 0 else sums[i] / counts[i])
                  for i in indexes]
        return _series(indexes, values, interval_ms)


def _grow(values: array[Any], length: int, fill: float) -> None:
    if len(values) < length:
        values.extend([fill] * (length - len(values)))


def job_windows(rows: Sequence[LogRow], interval_ms: int, runtime_ms: float | None
                ) -> dict[int, dict[int, float]]:
    """One job's complete windows, by direction: ``{ddir: {window_index: value}}``."""
    text = "\n".join(f"{r.time_ms}, {r.value}, {r.ddir}" for r in rows)
    found = _job(text, interval_ms, runtime_ms, "fio log")
    return {ddir: {i: v for i, v in enumerate(values) if not math.isnan(v)}
            for ddir, values in found.items()}


def window_index(time_ms: float, interval_ms: int) -> int:
    """The window a timestamp belongs to: fio stamps ``999``, ``2001``... for windows 1, 2..."""
    return int(time_ms / interval_ms + 0.5)



def _added(a: Series, b: Series) -> Series:
    if not b.values:
        return a
    if not a.values:
        return b
    sums = dict(zip(a.t_s, a.values))
    other = dict(zip(b.t_s, b.values))
    times = sorted(set(sums) & set(other))
    return Series(tuple(times), tuple(sums[t] + other[t] for t in times))


def _series(indexes: Sequence[int], values: Sequence[float], interval_ms: int) -> Series:
    return Series(tuple(i * interval_ms / 1000 for i in indexes), tuple(values))


# -- logs written by others (the offline judge) ---------------------------------------------
@dataclass(frozen=True)
class LogShape:
    """How a log was written: ``window_ms`` is fio's ``log_avg_msec`` as its timestamps show
    (None: fewer than two rows of a direction); ``per_io`` is True when fio logged every I/O
    (``log_avg_msec`` unset: a block size in the fourth column, the I/O's offset in the
    fifth)."""

    window_ms: int | None
    per_io: bool


def log_shape(text: str, *, name: str = "fio log") -> LogShape:
    """The window length of an interval log (the median step between a direction's rows,
    rounded to whole milliseconds) and whether it holds one row per I/O."""
    times: dict[int, list[int]] = {}
    with_bs = rows = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        time_ms, _, ddir = _fields(line, number, name)
        times.setdefault(ddir, []).append(time_ms)
        parts = line.split(",")
        rows += 1
        if len(parts) >= 5 and parts[3].strip().isdigit() and int(parts[3]) > 0:
            with_bs += 1
    steps = sorted(b - a for values in times.values() for a, b in zip(values, values[1:])
                   if b > a)
    per_io = rows > 0 and with_bs > rows / 2
    if not steps:
        return LogShape(None, per_io)
    step = steps[len(steps) // 2]
    # fio stamps averaged windows a millisecond or two off (999, 2001): whole 10 ms
    return LogShape(round(step / 10.0) * 10 if step >= 100 else int(step), per_io)


def averaged_to_seconds(text: str, window_ms: int, *, name: str = "fio log") -> str:
    """Rows of windows shorter than a second (``window_ms`` divides 1,000) as rows of whole
    seconds: each second the mean of its windows, kept only when all of them were logged
    (IOPS, bandwidth and latency logs alike: a rate or a mean per window)."""
    per = 1000 // window_ms
    sums: dict[tuple[int, int], list[float]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        time_ms, value, ddir = _fields(line, number, name)
        index = window_index(time_ms, window_ms)
        if index < 1:
            continue
        second = -(-index // per)
        values = sums.setdefault((ddir, second), [])
        if len(values) < per:
            values.append(value)
    rows = [(second, ddir, sum(v) / len(v)) for (ddir, second), v in sums.items()
            if len(v) == per]
    return "\n".join(f"{second * 1000}, {value:.6g}, {ddir}"
                     for second, ddir, value in sorted(rows)) + "\n"


def per_io_to_seconds(text: str, kind: str, *, name: str = "fio log") -> str:
    """A log of every I/O (``log_avg_msec`` unset) as rows of whole seconds: IOPS counts the
    I/Os completed in each second, bandwidth sums their sizes (KiB/s, as fio logs it),
    latency averages them. The last, partial second is left out."""
    buckets: dict[tuple[int, int], list[float]] = {}
    last = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        time_ms, value, ddir = _fields(line, number, name)
        parts = line.split(",")
        size = float(parts[3]) if len(parts) > 3 and parts[3].strip() else 0.0
        second = int(time_ms // 1000) + 1
        last = max(last, second)
        item = {"iops": 1.0, "bw": size / _KIB, "clat": value}.get(kind, value)
        buckets.setdefault((ddir, second), []).append(item)
    rows = []
    for (ddir, second), items in buckets.items():
        if second >= last:
            continue  # the run ended inside it
        value = sum(items) if kind in ("iops", "bw") else sum(items) / len(items)
        rows.append((second, ddir, value))
    return "\n".join(f"{second * 1000}, {value:.6g}, {ddir}"
                     for second, ddir, value in sorted(rows)) + "\n"
