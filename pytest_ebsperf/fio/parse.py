"""Parse fio's JSON report (fio 2.x and 3.x, ``json`` and ``json+``) into a :class:`FioResult`.

Units are normalised here, so nothing downstream cares which fio printed the report:

* latencies: fio 3.x prints ``clat_ns``/``lat_ns`` in ns; fio 2.x printed ``clat``/``lat`` in us.
* ``io_bytes``: bytes since fio 2.21, KiB before. 2.21 also added ``io_kbytes``, so its presence
  (not the version string, which git builds mangle) tells which unit ``io_bytes`` is in.
* ``bw_bytes`` exists since 3.2; before that ``bw`` (KiB/s) is the only throughput field.

Aggregation over job entries (``group_reporting`` off, several groups, several clients):
IOPS, bytes and I/O counts are summed; runtime is the longest; latency means are weighted by
the number of I/Os; each latency percentile is the I/O-weighted mean of the entries'
percentiles. That is an approximation (exact merging needs the json+ histograms), but for the
identical jobs the plugin runs it stays within fio's own bucket resolution, whereas the
maximum over jobs would report the worst job's tail as the run's. With ``group_reporting`` on,
fio merges the histograms itself and there is one entry per group, so nothing is approximated.
In client/server mode the per-client entries are summed and fio's "All clients" aggregate is
skipped, the same rule as for jobs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.errors import FioOutputError
from pytest_ebsperf.fio.result import VERSION_RE, DirectionStats, FioResult, Latency

_DIRECTIONS = ("read", "write", "trim")
_AGGREGATE_CLIENT = "All clients"
_SNIPPET_CHARS = 200


def parse_version(text: str) -> tuple[int, int, int]:
    """``fio-3.33`` -> ``(3, 33, 0)``; ``fio-2.1.4`` -> ``(2, 1, 4)``; git builds keep the tag."""
    match = VERSION_RE.search(text.strip())
    if match is None:
        raise FioOutputError(
            f"{text.strip()[:_SNIPPET_CHARS]!r} is not a fio version string (expected something "
            "like 'fio-3.33'). Check that the fio command is really fio (fio --version)."
        )
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def parse_result(text: str, group: int | None = None) -> FioResult:
    """Parse fio's ``--output-format=json`` or ``json+`` output (text before the JSON is fine).

    A report of several groups that ran one after another (``stonewall``, or a job file with
    ``new_group``) has no single figure: summing them would blend their rates and percentiles.
    Such a report needs ``group`` (fio's ``groupid``); :func:`parse_groups` gives each.
    """
    return result_from_data(extract_json(text), group, text)


def result_from_data(data: Mapping[str, Any], group: int | None = None, text: str = ""
                     ) -> FioResult:
    """:func:`parse_result` of a report already decoded (``text``: the output around it, for
    error messages)."""
    entries = _entries(data, text)
    groups = sorted({group_of(e) for e in entries})
    if group is not None:
        entries = [e for e in entries if group_of(e) == group]
        if not entries:
            raise FioOutputError(f"fio's report has no group {group}; its groups are "
                                 f"{', '.join(map(str, groups))}.")
    elif len(groups) > 1:
        raise FioOutputError(
            f"fio's report holds {len(groups)} groups ({', '.join(map(str, groups))}) that ran "
            "one after another (stonewall / new_group): one figure for all of them would blend "
            "different workloads. Judge one group (group=N; --group=N on the command line), or "
            "parse_groups(text) for each.")
    global_options = _string_map(data.get("global options"))
    return FioResult(
        fio_version=str(data.get("fio version", "")),
        read=_direction(entries, "read"),
        write=_direction(entries, "write"),
        trim=_direction(entries, "trim"),
        # unified_rw_reporting reports reads and writes together as "mixed"
        mixed=_direction(entries, "mixed"),
        jobs=count_jobs(entries, global_options),
        usr_cpu=_mean([_num(e.get("usr_cpu")) for e in entries]),
        sys_cpu=_mean([_num(e.get("sys_cpu")) for e in entries]),
        cpu_reported=any("usr_cpu" in e for e in entries),
        errors=tuple(int(e["error"]) for e in entries if e.get("error")),
        job_options={**global_options, **_string_map(entries[0].get("job options"))},
        raw=dict(data),
    )


def extract_json(text: str) -> dict[str, Any]:
    """The last fio report object in ``text``, skipping notes and error lines before it.

    fio prints e.g. ``note: both iodepth >= 1 and synchronous I/O engine...``,
    ``fio: pid=N, err=22/...`` or ``fio: terminating on signal 15`` before the JSON, on stdout and
    even inside the ``--output`` file, so decoding starts at the first line that opens a JSON
    object and parses, and anything after the object (``json,normal`` output) is ignored.
    """
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    position = 0
    for start in _object_line_starts(text):
        if start < position:
            continue  # a line inside a report already read
        try:
            data, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict) and ("jobs" in data or "client_stats" in data):
            # --status-interval (and appended runs) put several reports in one file: the
            # last one is the run's final report.
            found, position = data, end
    if found is None:
        raise FioOutputError(_no_json_message(text))
    return found


def count_jobs(entries: Sequence[Mapping[str, Any]], global_options: Mapping[str, str]) -> int:
    """How many fio jobs ran: ``numjobs`` clones count even when group_reporting merged them.

    Entries are grouped by (client, group, job name); a group that shows fewer entries than
    its ``numjobs`` option was merged by group_reporting and counts ``numjobs`` jobs.
    """
    seen: dict[tuple[str, str, str, str], tuple[int, int]] = {}
    for entry in entries:
        key = (
            str(entry.get("hostname", "")),
            str(entry.get("port", "")),
            str(entry.get("groupid", 0)),
            str(entry.get("jobname", "")),
        )
        options = {**global_options, **_string_map(entry.get("job options"))}
        count, numjobs = seen.get(key, (0, 1))
        seen[key] = (count + 1, max(numjobs, _int_option(options.get("numjobs"), 1)))
    return sum(max(count, numjobs) for count, numjobs in seen.values()) or len(entries)


def _object_line_starts(text: str) -> list[int]:
    starts = [0] if text.startswith("{") else []
    starts += [m.start() + 1 for m in re.finditer(r"\n\{", text)]
    return starts


def _no_json_message(text: str) -> str:
    snippet = text.strip()[:_SNIPPET_CHARS]
    if not snippet:
        return (
            "fio printed nothing where its JSON report was expected. Run the fio command "
            "(shown in the test report) by hand on the host to see why it stopped early."
        )
    return (
        f"fio's output contains no JSON report; it begins with: {snippet!r}. Run the fio "
        "command (shown in the test report) by hand on the host; if the message above is an "
        "fio error, fix that first, and make sure the fio there supports --output-format=json "
        "(fio 2.0.10 or newer)."
    )


def _entries(data: Mapping[str, Any], text: str) -> list[dict[str, Any]]:
    raw = data.get("jobs", data.get("client_stats"))
    entries = [
        e
        for e in (raw if isinstance(raw, list) else [])
        if isinstance(e, dict) and e.get("jobname") != _AGGREGATE_CLIENT
    ]
    if not entries:
        raise FioOutputError(
            "fio's JSON report lists no jobs, so fio ran nothing. Messages fio printed before "
            f"the report: {text[: text.find('{')].strip()[:_SNIPPET_CHARS]!r}. A job file or "
            "option fio rejected ('Bad option', 'job dropped') is the usual cause."
        )
    return entries


@dataclass(frozen=True)
class _Entry:
    """One job entry's numbers for one direction, already in bytes and nanoseconds."""

    iops: float
    bw_bytes: float
    io_bytes: int
    total_ios: int
    runtime_ms: float
    clat: Latency
    lat: Latency


def _direction(entries: Sequence[Mapping[str, Any]], ddir: str) -> DirectionStats:
    parts = [_entry_direction(e.get(ddir)) for e in entries]
    return DirectionStats(
        iops=sum(p.iops for p in parts),
        bw_bytes=sum(p.bw_bytes for p in parts),
        io_bytes=sum(p.io_bytes for p in parts),
        total_ios=sum(p.total_ios for p in parts),
        runtime_ms=max((p.runtime_ms for p in parts), default=0.0),
        clat=merge_latencies([p.clat for p in parts]),
        lat=merge_latencies([p.lat for p in parts]),
    )


def _entry_direction(raw: Any) -> _Entry:
    d: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    iops = _figure(d, "iops")
    runtime_ms = _figure(d, "runtime")
    # Before 2.21 io_bytes was in KiB; io_kbytes arrived with the switch to bytes.
    io_bytes = int(_figure(d, "io_bytes") * (1 if "io_kbytes" in d else 1024))
    # total_ios arrived in 2.x; older reports only allow an estimate from rate x time.
    total_ios = int(_figure(d, "total_ios")) if "total_ios" in d else \
        round(iops * runtime_ms / 1000)
    bw_bytes = _figure(d, "bw_bytes") if "bw_bytes" in d else _figure(d, "bw") * 1024
    return _Entry(
        iops=iops,
        bw_bytes=bw_bytes,
        io_bytes=io_bytes,
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        clat=_latency(d, "clat", total_ios),
        lat=_latency(d, "lat", total_ios),
    )


def _latency(d: Mapping[str, Any], name: str, total_ios: int) -> Latency:
    if isinstance(d.get(f"{name}_ns"), dict):
        raw, scale = d[f"{name}_ns"], 1.0
    elif isinstance(d.get(name), dict):
        raw, scale = d[name], 1000.0  # fio 2.x: microseconds
    else:
        return Latency()
    samples = int(raw["N"]) if "N" in raw else total_ios
    if total_ios and not _num(raw.get("max")) and not _num(raw.get("mean")):
        # gtod_reduce: no clock was read per I/O; fio 2.x still printed a distribution of
        # zeros (percentiles included). No latency was measured, so none is reported.
        return Latency()
    return Latency(
        mean_ns=_num(raw.get("mean")) * scale,
        min_ns=_num(raw.get("min")) * scale,
        max_ns=_num(raw.get("max")) * scale,
        stddev_ns=_num(raw.get("stddev")) * scale,
        samples=samples,
        percentiles=_percentiles(raw.get("percentile"), scale),
    )


def _percentiles(raw: Any, scale: float) -> dict[float, float]:
    if not isinstance(raw, dict):
        return {}
    result: dict[float, float] = {}
    for key, value in raw.items():
        try:
            q = float(key)
        except ValueError:
            continue
        # fio before 3.4 padded the list with "0.00": 0 entries (json keeps the last of each).
        if q > 0:
            result[q] = _num(value) * scale
    return result


def merge_latencies(parts: Sequence[Latency]) -> Latency:
    """Combine per-job latency stats, weighting each job by its number of I/Os.

    Means and percentiles are I/O-weighted means, min/max are the extremes and the standard
    deviation is pooled (within-job variance plus the spread of the job means).
    """
    live = [p for p in parts if p.samples > 0]
    if len(live) <= 1:
        return live[0] if live else Latency()
    total = sum(p.samples for p in live)
    mean = sum(p.mean_ns * p.samples for p in live) / total
    variance = sum(p.samples * (p.stddev_ns**2 + (p.mean_ns - mean) ** 2) for p in live) / total
    return Latency(
        mean_ns=mean,
        min_ns=min(p.min_ns for p in live),
        max_ns=max(p.max_ns for p in live),
        stddev_ns=math.sqrt(variance),
        samples=total,
        percentiles=_merge_percentiles(live),
    )


def _merge_percentiles(parts: Sequence[Latency]) -> dict[float, float]:
    keys = sorted({q for p in parts for q in p.percentiles})
    merged: dict[float, float] = {}
    for q in keys:
        having = [p for p in parts if q in p.percentiles]
        weight = sum(p.samples for p in having)
        merged[q] = sum(p.percentiles[q] * p.samples for p in having) / weight
    return merged


def _string_map(raw: Any) -> dict[str, str]:
    """Options as a dict; client/server reports give the global options as a list of
    dicts (one per client), merged here."""
    if isinstance(raw, list):
        merged: dict[str, str] = {}
        for item in raw:
            merged.update(_string_map(item))
        return merged
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}


def parse_groups(text: str) -> dict[int, FioResult]:
    """Each group of a report (``groupid`` -> its result), for stonewalled job files."""
    data = extract_json(text)
    groups = sorted({group_of(e) for e in _entries(data, text)})
    return {gid: parse_result(text, group=gid) for gid in groups}


def _int_option(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


#: The most a field of one job can say on any device (a billion I/Os a second, 10 TB/s,
#: a year of runtime in ms, an exabyte): beyond them a figure was edited or corrupted.
_FIELD_LIMITS = {"iops": 1e9, "bw_bytes": 1e13, "bw": 1e13 / 1024, "runtime": 3.2e10,
                 "io_bytes": 1e18, "total_ios": 1e18}


def _figure(d: Mapping[str, Any], name: str) -> float:
    """A job's figure ``name`` (0 when fio wrote none), or a sentence naming the field when
    what stands there is no figure fio writes: negative, not finite, not a number, or
    beyond any device."""
    if name not in d:
        return 0.0
    value, limit = d[name], _FIELD_LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or not 0 <= value <= limit:
        raise FioOutputError(f"the report's {name!r} is {value!r}, which fio never writes (a "
                             f"finite figure from 0 to {limit:.3g}): the output was edited "
                             "or is damaged; pass fio's own output")
    return float(value)


def group_of(entry: Mapping[str, Any]) -> int:
    """A job's group id (0 when fio wrote none), or a sentence naming it."""
    value = entry.get("groupid", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FioOutputError(f"the report's 'groupid' is {value!r}, which fio never writes "
                             "(a whole number from 0): pass fio's own output")
    return value


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
