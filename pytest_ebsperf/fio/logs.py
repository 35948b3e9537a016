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

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_ebsperf.errors import FioOutputError
from pytest_ebsperf.fio.result import SERIES_KEYS, Series

#: Log kinds the runner asks fio for and reads back.
LOG_KINDS = ("iops", "bw", "clat")
_DDIRS = {0: "read", 1: "write"}
_KIB = 1024

# window index -> value, per data direction, for one job
_Windows = dict[int, dict[int, float]]


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
        fields = [f.strip() for f in line.split(",")]
        try:
            rows.append(LogRow(int(fields[0]), float(fields[1]), int(fields[2])))
        except (IndexError, ValueError):
            raise FioOutputError(
                f"Line {number} of {name} is not an fio log line (time, value, direction, ...): "
                f"{line[:120]!r}. The log may be truncated; run the check again."
            ) from None
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


def build_series(
    logs: Mapping[str, Sequence[str]],
    *,
    interval_ms: int = 1000,
    runtime_ms: float | None = None,
) -> dict[str, Series]:
    """Series for every key in :data:`SERIES_KEYS` from log texts per kind (one text per job).

    IOPS and bandwidth are summed over jobs (bandwidth converted to bytes/s); completion latency
    is averaged over jobs, weighted by each job's IOPS in that window when the IOPS logs allow.
    ``total_*`` is read + write. A direction no job logged gives an empty series.
    """
    windows = {
        kind: [job_windows(parse_log(t), interval_ms, runtime_ms) for t in logs.get(kind, ())]
        for kind in LOG_KINDS
    }
    series: dict[str, Series] = {key: Series() for key in SERIES_KEYS}
    for ddir, direction in _DDIRS.items():
        series[f"{direction}_iops"] = _summed(windows["iops"], ddir, interval_ms, 1.0)
        series[f"{direction}_bw"] = _summed(windows["bw"], ddir, interval_ms, _KIB)
        series[f"{direction}_clat"] = _weighted(windows["clat"], windows["iops"], ddir, interval_ms)
    series["total_iops"] = _added(series["read_iops"], series["write_iops"])
    series["total_bw"] = _added(series["read_bw"], series["write_bw"])
    return series


def job_windows(rows: Sequence[LogRow], interval_ms: int, runtime_ms: float | None) -> _Windows:
    """One job's complete windows, by direction: ``{ddir: {window_index: value}}``."""
    rows = _after_last_restart(rows, interval_ms)
    result: _Windows = {}
    for ddir in sorted({r.ddir for r in rows}):
        result[ddir] = _direction_windows([r for r in rows if r.ddir == ddir], interval_ms)
    if runtime_ms is not None:
        limit = runtime_ms + interval_ms / 2
        result = {
            d: {i: v for i, v in w.items() if i * interval_ms <= limit} for d, w in result.items()
        }
    return result


def _after_last_restart(rows: Sequence[LogRow], interval_ms: int) -> Sequence[LogRow]:
    start = 0
    for i in range(1, len(rows)):
        if rows[i].time_ms < rows[i - 1].time_ms - interval_ms / 2:
            start = i
    return rows[start:]


def _direction_windows(rows: Sequence[LogRow], interval_ms: int) -> dict[int, float]:
    windows: dict[int, float] = {}
    previous_ms, index, partial = 0, 0, False
    for row in rows:
        index = window_index(row.time_ms, interval_ms)
        accepted = index >= 1 and index not in windows  # a repeat is fio's end-of-run flush
        if accepted:
            windows[index] = row.value
        partial = accepted and row.time_ms - previous_ms < interval_ms / 2
        previous_ms = row.time_ms
    if partial:  # the last row closed a window that began less than half a window earlier
        del windows[index]
    return windows


def window_index(time_ms: float, interval_ms: int) -> int:
    """The window a timestamp belongs to: fio stamps ``999``, ``2001``... for windows 1, 2..."""
    return int(time_ms / interval_ms + 0.5)


def _common_windows(jobs: Sequence[_Windows]) -> list[int]:
    # A window some job did not log would be undercounted by the sum; drop it for all.
    sets = [{i for windows in job.values() for i in windows} for job in jobs if job]
    return sorted(set.intersection(*sets)) if sets else []


def _summed(jobs: Sequence[_Windows], ddir: int, interval_ms: int, scale: float) -> Series:
    if not any(ddir in w for w in jobs):
        return Series()
    indexes = _common_windows(jobs)
    values = [sum(w.get(ddir, {}).get(i, 0.0) for w in jobs) * scale for i in indexes]
    return _series(indexes, values, interval_ms)


def _weighted(
    lat_jobs: Sequence[_Windows], iops_jobs: Sequence[_Windows], ddir: int, interval_ms: int
) -> Series:
    indexes, values = [], []
    use_iops = len(iops_jobs) == len(lat_jobs)
    for i in _common_windows(lat_jobs):
        pairs = []
        for job, lat in enumerate(lat_jobs):
            if i in lat.get(ddir, {}):
                weight = iops_jobs[job].get(ddir, {}).get(i, 0.0) if use_iops else 0.0
                pairs.append((lat[ddir][i], weight))
        if pairs:
            indexes.append(i)
            values.append(_weighted_mean(pairs))
    return _series(indexes, values, interval_ms)


def _weighted_mean(pairs: Sequence[tuple[float, float]]) -> float:
    total = sum(w for _, w in pairs)
    if total <= 0:  # no IOPS log for this window: plain mean over jobs
        return sum(v for v, _ in pairs) / len(pairs)
    return sum(v * w for v, w in pairs) / total


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
