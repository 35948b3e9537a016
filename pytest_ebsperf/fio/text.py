"""Read fio's normal (human-readable) and terse output into the shape of its JSON report.

People paste fio's normal output into READMEs, blog posts and issues; that is what exists of
most measurements on real volumes. fio 1.x, 2.x and 3.x each print it differently:

* fio 3.x: ``read: IOPS=37.1k, BW=580MiB/s (608MB/s)(102GiB/180001msec)``;
* fio 2.x: ``read : io=17555MB, bw=99839KB/s, iops=24959, runt=180053msec`` (``KB`` and
  ``MB`` are KiB and MiB: fio's ``kb_base`` is 1024 unless set);
* fio 1.x: the same with a space before each comma (``iops=13429 , runt=  2440msec``);
* latencies ``clat (usec): min=1, max=1711.6K, avg=20022.82, stdev=53882.53`` in nsec, usec
  or msec, a ``K``/``M`` suffix meaning thousands/millions of that unit; percentile blocks
  ``clat percentiles (usec): |  1.00th=[   79], ...``;
* ``issued rwts: total=83822,35922,0,0`` (3.x), ``issued    : total=r=4494079/w=0/d=0``
  (2.x), ``issued r/w/d: total=32768/0/0`` (1.x): the exact I/O counts;
* ``Run status group N`` lines, and ``Disk stats (read/write):`` with what each device
  served (``ios=553523/6, merge=37/0, ...``): the device's own count.

The job header lines (``name: (g=0): rw=randread, bs=(R) 16.0KiB-..., ioengine=psync,
iodepth=1``) and a fio command line before the output (``sudo fio --rw=... --bs=...``) give
the job options. Everything becomes the dictionary :func:`pytest_ebsperf.fio.parse.
result_from_data` reads from fio's JSON (``jobs`` with ``read``/``write`` entries,
``job options``, ``disk_util``), so every later step is the same for all three formats.
A figure printed with fewer digits keeps its printed precision (``IOPS=37.1k`` is 37,100;
the exact I/O count and runtime, when printed, give the rate to the I/O).

Terse output (``--output-format=terse``, versions 2 to 5) is read by position, as fio's
documentation lists its fields.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from pytest_ebsperf.errors import FioOutputError

#: Binary multiples in fio's normal output (fio 2.x's KB/MB are KiB/MiB: kb_base=1024).
_BYTES = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024 ** 2, "mb": 1024 ** 2,
          "mib": 1024 ** 2, "g": 1024 ** 3, "gb": 1024 ** 3, "gib": 1024 ** 3,
          "t": 1024 ** 4, "tb": 1024 ** 4, "tib": 1024 ** 4, "p": 1024 ** 5, "pb": 1024 ** 5,
          "pib": 1024 ** 5}
#: Decimal multiples of counts (``IOPS=37.1k``, ``max=1711.6K``).
_COUNT = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}
_TIME_NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6, "sec": 1e9}

_VERSION = re.compile(r"^\s*fio[- ](\d+\.\d+[\w.\-]*)\s*$")
_HEADER = re.compile(r"^(?P<name>\S.*?): \(g=(?P<g>\d+)\): rw=(?P<rw>[\w:]+), "
                     r"bs=(?P<bs>.*?), ioengine=(?P<engine>[\w-]+), iodepth=(?P<qd>\d+)")
_RESULT = re.compile(r"^(?P<name>\S.*?): \(groupid=(?P<g>\d+), jobs=(?P<jobs>\d+)\): "
                     r"err=\s*(?P<err>-?\d+)(?P<rest>.*)$")
# figures may carry thousands separators (``bw=586,774 KB/s``, as some pages print them)
_DIR3 = re.compile(r"^\s*(?P<dir>read|write|trim|mixed)\s*:\s*IOPS=(?P<iops>[\d.,]+[kKmMgG]?),"
                   r"\s*BW=(?P<bw>[\d.,]+)\s?(?P<bwu>[KMGTP]?i?bit|[KMGTP]i?B|B)/s.*?\((?P<io>[\d.,]+)"
                   r"\s?(?P<iou>[KMGTP]i?B|B)/(?P<run>[\d,]+)msec\)")
_DIR2 = re.compile(r"^\s*(?P<dir>read|write|trim|mixed)\s*:\s*io=\s*(?P<io>[\d.,]+)"
                   r"\s?(?P<iou>[KMGTP]i?B|B),\s*bw=\s*(?P<bw>[\d.,]+)\s?(?P<bwu>[KMGTP]?i?bit|[KMGTP]i?B|B)"
                   r"/s,\s*iops=\s*(?P<iops>[\d.,]+[kKmM]?)\s*,\s*runt=\s*(?P<run>[\d,]+)\s*"
                   r"msec")
_LAT = re.compile(r"^\s*(?P<kind>slat|clat|lat)\s*\((?P<unit>nsec|usec|msec|sec)\)\s*:\s*"
                  r"min=\s*(?P<min>[\d.]+[kKmM]?)\s*,\s*max=\s*(?P<max>[\d.]+[kKmM]?)\s*,\s*"
                  r"avg=\s*(?P<avg>[\d.]+[kKmM]?)\s*,\s*stdev=\s*(?P<sd>[\d.]+[kKmM]?)")
_PCT_HEAD = re.compile(r"^\s*(?P<kind>clat|lat|slat) percentiles \((?P<unit>nsec|usec|msec)\)")
_PCT = re.compile(r"([\d.]+)th=\[\s*([\d.]+)([kKmM]?)\s*\]")
_CPU = re.compile(r"^\s*cpu\s*:\s*usr=([\d.]+)%,\s*sys=([\d.]+)%")
_ISSUED3 = re.compile(r"issued rwts?:\s*total=([\d,]+)")
_ISSUED2 = re.compile(r"issued\s*:\s*total=r=(\d+)/w=(\d+)(?:/d=(\d+))?")
_ISSUED1 = re.compile(r"issued r/w(?:/d)?:\s*total=(\d+)/(\d+)(?:/(\d+))?")
_DISK = re.compile(r"^\s*(?P<name>[\w.\-/]+):\s*ios=(?P<r>\d+)/(?P<w>\d+),\s*"
                   r"(?:sectors=(?P<rs>\d+)/(?P<ws>\d+),\s*)?merge=(?P<rm>\d+)/(?P<wm>\d+),\s*"
                   r"ticks=(?P<rt>\d+)/(?P<wt>\d+),\s*in_queue=(?P<q>\d+),\s*"
                   r"util=(?P<util>[\d.]+)%(?P<aggr>,\s*aggrios=)?")
_ERROR = re.compile(r"fio: pid=\d+, err=(?P<code>\d+)/(?P<where>.*?), error=(?P<text>.*)$")
_SIGNAL = re.compile(r"fio: terminating on signal (\d+)")
_COMMAND = re.compile(r"(?:^|[\s$#>])(?:sudo\s+)?(?:\S*/)?fio\s+(?P<args>--?\S.*)$")
#: fio's status line (``Jobs: 1 (f=1): [R(1)][100.0%][r=400KiB/s,w=0KiB/s][r=100,w=0 IOPS]``;
#: fio 2.x: ``[400KB/0KB/0KB /s] [100/0/0 iops]``): the rate of its last seconds
_STATUS3 = re.compile(r"\[((?:[rwt]=[\d.]+[kKmM]?,?)+) IOPS\]")
_STATUS2 = re.compile(r"\[([\d.]+[kKmM]?)/([\d.]+[kKmM]?)(?:/[\d.]+[kKmM]?)? iops\]")


def looks_like_normal(text: str) -> bool:
    """True when ``text`` holds fio's normal output: a result block, or a job header and its
    group's aggregate line (a run cut down to those two lines)."""
    lines = [_clean(line) for line in text.splitlines()]
    return any(_RESULT.match(line) for line in lines) or (
        any(_HEADER.match(line) for line in lines) and
        any(_GROUP_LINE.match(line) for line in lines))


_GROUP_LINE = re.compile(r"^\s*(READ|WRITE|TRIM|MIXED):\s*(.*\bio=.*)$")


def _aggregate_job(name: str, header: dict[str, str], groups: dict[int, dict[str, Any]]
                   ) -> dict[str, Any]:
    """A job entry from its header and its group's aggregate line alone: the bytes over
    the group's longest runtime, and I/Os of the header's block size (fio 2.x: ``WRITE:
    io=28584MB, aggrb=487812KB/s, ... maxt=60003msec``)."""
    group = groups.get(int(header.get("groupid", 0)), {})
    entry: dict[str, Any] = {"jobname": name, "groupid": int(header.get("groupid", 0)),
                             "error": 0, "aggregate_only": True,
                             "job options": {k: v for k, v in header.items() if k != "groupid"}}
    block = float(header.get("bs") or 0)
    for side, figures in group.items():
        ms, io = figures.get("max_runtime_ms"), figures.get("io_bytes")
        if not ms or io is None or block <= 0:
            continue
        bw = io / (ms / 1000.0)
        entry[side] = {"io_bytes": int(io), "io_kbytes": int(io // 1024), "bw_bytes": bw,
                       "bw": bw / 1024, "iops": bw / block, "runtime": ms,
                       "total_ios": round(io / block)}
    return entry


def _clean(line: str) -> str:
    """A line as fio printed it: markdown emphasis (``**write: IOPS=40.1k**``) and quoting
    (``> ``) some publishers added, and carriage returns, taken off."""
    line = line.replace("\r", "").replace("**", "").replace("`", "")
    return re.sub(r"^\s*>\s?", "", line)


# -- numbers -----------------------------------------------------------------------------------
def _count(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)([kKmMgG]?)", text.strip().replace(",", ""))
    if not match:
        raise ValueError(text)
    return float(match.group(1)) * _COUNT[match.group(2).lower()]


def _bytes(number: str, unit: str, *, decimal: bool = False) -> float:
    """``number`` ``unit`` in bytes. fio 2.x's KB and MB are KiB and MiB (kb_base=1024);
    fio 3.x writes binary units with an i (KiB, MiB) and decimal ones without (kB, MB: its
    parenthesised figure, or the first one under kb_base=1000): ``decimal``. Rates in bits
    (``unit_base=8``: ``BW=9144Mibit/s (9589Mbit/s)``) are eighths of those in bytes."""
    unit = unit.lower().rstrip("/s")
    if unit.endswith("bit"):
        return _bytes(number, unit[:-3] + "b", decimal=decimal) / 8.0
    if decimal and unit and "i" not in unit and unit != "b":
        return float(number.replace(",", "")) * 1000.0 ** ("kmgtp".index(unit[0]) + 1)
    return float(number.replace(",", "")) * _BYTES[unit]


def _latency(match: re.Match[str]) -> dict[str, float]:
    scale = _TIME_NS[match.group("unit")]
    return {"min": _count(match.group("min")) * scale, "max": _count(match.group("max")) * scale,
            "mean": _count(match.group("avg")) * scale,
            "stddev": _count(match.group("sd")) * scale}


# -- the command line ------------------------------------------------------------------------------
def command_options(text: str) -> dict[str, str]:
    """The options of a fio command line printed with the output (``sudo fio --rw=...
    --name job ...``): ``--key=value``, ``--key value`` for the options that take one,
    ``--flag`` as "1"; the first such line wins."""
    for line in text.splitlines():
        match = _COMMAND.search(_clean(line).strip())
        if not match:
            continue
        try:
            words = shlex.split(match.group("args"))
        except ValueError:
            words = match.group("args").split()
        options: dict[str, str] = {}
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if not word.startswith("-"):
                continue
            key, eq, value = word.lstrip("-").partition("=")
            if not eq and index < len(words) and not words[index].startswith("-") and \
                    key in ("name", "filename", "directory", "output", "output-format"):
                value, eq = words[index], "="
                index += 1
            options[key] = value if eq else "1"
        if options:
            return options
    return {}


# -- normal output ---------------------------------------------------------------------------------
def split_runs(text: str) -> list[str]:
    """The separate fio runs in one text (each prints its version line, or its own job
    header for group 0 after a report): one run usually."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    seen_result = seen_summary = False
    pids: set[str] = set()
    for index, line in enumerate(lines):
        clean = _clean(line)
        result = _RESULT.match(clean)
        # after a run's summary ("Run status group", "Disk stats"), its command line or a
        # group-0 result block starts the next run (two outputs pasted one after another);
        # a block of a process this run already reported is its next --status-interval
        # report (each is cumulative), not a run
        pid = _pid(result)
        again = seen_summary and (bool(_COMMAND.search(clean.strip())) or (
            bool(result and result.group("g") == "0") and (pid is None or pid not in pids)))
        if pid is not None:
            pids = {pid} if again else pids | {pid}
        if result and not again:
            seen_result = True
        if seen_result and clean.startswith(("Run status group", "Disk stats")):
            seen_summary = True
        header = _HEADER.match(clean)
        if again or (seen_result and ((header and header.group("g") == "0") or
                                      _VERSION.match(clean))):
            # a new run begins: go back to its command line, if one comes just before
            start = index
            while start > starts[-1] and start - 1 >= 0 and (
                    _COMMAND.search(_clean(lines[start - 1]).strip()) or
                    not lines[start - 1].strip() or _HEADER.match(_clean(lines[start - 1]))):
                start -= 1
            starts.append(start)
            seen_result, seen_summary = bool(result), False
    starts.append(len(lines))
    runs = ["".join(lines[a:b]) for a, b in zip(starts, starts[1:]) if a < b]
    return [run for run in runs if looks_like_normal(run)] or [text]


def _pid(result: re.Match[str] | None) -> str | None:
    """The process id a result block names (``err= 0: pid=4896: ...``), if it names one."""
    found = re.search(r"\bpid=(\d+)", result.group("rest")) if result else None
    return found.group(1) if found else None


def normal_to_data(text: str) -> dict[str, Any]:
    """fio's normal output as the dictionary its JSON report would be (one run; see
    :func:`split_runs` for a text with several)."""
    lines = [_clean(line) for line in text.splitlines()]
    version = ""
    headers: dict[str, dict[str, str]] = {}
    jobs: list[dict[str, Any]] = []
    disks: list[dict[str, Any]] = []
    groups: dict[int, dict[str, Any]] = {}
    errors: list[str] = []
    entry: dict[str, Any] | None = None
    side: dict[str, Any] | None = None
    pct_target: dict[str, Any] | None = None
    in_disk = False
    group_now: int | None = None
    reported: set[tuple[str, str | None]] = set()
    reports = 1
    for raw in lines:
        line = raw.rstrip()
        if not line.strip():
            pct_target = None
            continue
        found = _VERSION.match(line)
        if found and not version:
            version = f"fio-{found.group(1)}"
            continue
        header = _HEADER.match(line)
        if header:
            headers.setdefault(header.group("name"), {
                "rw": header.group("rw"), "bs": _header_bs(header.group("bs")),
                "ioengine": header.group("engine"), "iodepth": header.group("qd"),
                "groupid": header.group("g")})
            continue
        error = _ERROR.search(line)
        if error:
            errors.append(line.strip())
            continue
        result = _RESULT.match(line)
        if result:
            name = result.group("name")
            if _pid(result) is not None and (name, _pid(result)) in reported:
                # --status-interval: the same job's next report, cumulative: it replaces
                # the last report (its jobs, group and disk figures) with its own
                jobs, disks, groups, reported = [], [], {}, set()
                reports += 1
            reported.add((name, _pid(result)))
            entry = {"jobname": name, "groupid": int(result.group("g")),
                     "error": int(result.group("err")), "jobs_in_entry":
                     int(result.group("jobs")), "job options": dict(headers.get(name, {}))}
            entry["job options"].pop("groupid", None)
            jobs.append(entry)
            side, pct_target, in_disk, group_now = None, None, False, None
            continue
        if line.startswith("Run status group"):
            match = re.match(r"Run status group (\d+)", line)
            group_now = int(match.group(1)) if match else None
            entry = side = pct_target = None
            continue
        if line.startswith("Disk stats"):
            in_disk, entry, side, pct_target = True, None, None, None
            continue
        if in_disk:
            disk = _DISK.match(line)
            if disk:
                disks.append(_disk(disk))
            continue
        if group_now is None and entry is None and _GROUP_LINE.match(line):
            group_now = 0  # an aggregate line with no "Run status group" before it
        if group_now is not None:
            _group_line(line, groups.setdefault(group_now, {}))
            continue
        if entry is None:
            continue
        if pct_target is not None:
            values = _PCT.findall(line)
            if values and line.lstrip().startswith("|"):
                scale = pct_target["_scale"]
                for pct, value, suffix in values:
                    pct_target["percentile"][f"{float(pct):f}"] = \
                        float(value) * _COUNT[suffix.lower()] * scale
                continue
            pct_target = None
        direction = _DIR3.match(line) or _DIR2.match(line)
        if direction:
            side = _direction(direction)
            entry[direction.group("dir")] = side
            continue
        latency = _LAT.match(line)
        if latency and side is not None:
            side[f"{latency.group('kind')}_ns"] = _latency(latency)
            continue
        head = _PCT_HEAD.match(line)
        if head and side is not None:
            target = side.setdefault(f"{head.group('kind')}_ns", {})
            target["percentile"] = {}
            target["_scale"] = _TIME_NS[head.group("unit")]
            pct_target = target
            continue
        cpu = _CPU.match(line)
        if cpu:
            entry["usr_cpu"], entry["sys_cpu"] = float(cpu.group(1)), float(cpu.group(2))
            continue
        issued = _issued(line)
        if issued is not None:
            for name, count in zip(("read", "write", "trim"), issued):
                if name in entry:
                    entry[name]["total_ios"] = count
            continue
    if not jobs and groups and len(headers) == 1:
        jobs = [_aggregate_job(*next(iter(headers.items())), groups)]
    if not jobs:
        raise FioOutputError("the text holds no fio result block ('NAME: (groupid=0, jobs=1): "
                             "err= 0: ...'): it is not fio's normal output.")
    for job in jobs:
        _finish_entry(job)
    data: dict[str, Any] = {"fio version": version, "jobs": jobs, "format": "normal"}
    options = command_options(text)
    if options:
        data["global options"] = {k: v for k, v in options.items() if k != "name"}
    if disks:
        data["disk_util"] = disks
    if groups:
        data["group_status"] = {str(k): v for k, v in groups.items()}
    if errors:
        data["errors_said"] = errors
    if reports > 1:
        data["status_reports"] = reports
    if jobs[0].get("aggregate_only"):
        data["read_as"] = (", its group's aggregate line only (no job block): IOPS are that "
                           "line's bytes over its runtime, per block")
    status = _status_iops(text)
    if status:
        data["status_iops"] = status
    signal = _SIGNAL.search(text)
    if signal:
        data["signal"] = int(signal.group(1))
    return data


def _header_bs(text: str) -> str:
    """``(R) 16.0KiB-16.0KiB, (W) ...`` / ``4K-4K/4K-4K`` -> ``16k`` style: the read side's
    smallest block size as fio's option would name it."""
    match = re.search(r"([\d.]+)\s*([KkMmGg]i?B?|B)?", text)
    if not match:
        return text
    number, unit = float(match.group(1)), match.group(2) or "B"
    if unit.endswith("B") and len(unit) == 2:  # kB, MB, GB: fio 3.x's decimal units
        return str(round(number * 1000.0 ** ("KMG".index(unit[0].upper()) + 1)))
    factor = {"B": 1, "K": 1024, "KIB": 1024, "M": 1024 ** 2, "MIB": 1024 ** 2,
              "G": 1024 ** 3, "GIB": 1024 ** 3}[unit.upper()]
    return str(round(number * factor))


def _direction(match: re.Match[str]) -> dict[str, Any]:
    decimal = match.re is _DIR3
    io_bytes = _bytes(match.group("io"), match.group("iou"), decimal=decimal)
    runtime = int(match.group("run").replace(",", ""))
    bw = _bytes(match.group("bw"), match.group("bwu"), decimal=decimal)
    return {"io_bytes": int(io_bytes), "io_kbytes": int(io_bytes // 1024), "bw_bytes": bw,
            "bw": bw / 1024, "iops": _count(match.group("iops")), "runtime": runtime,
            "_printed_iops": match.group("iops").replace(",", "")}


def _status_iops(text: str) -> list[dict[str, float]]:
    """The IOPS of each status line fio printed while it ran (``Jobs: ...``), in order."""
    found: list[dict[str, float]] = []
    for line in text.replace("\r", "\n").splitlines():
        if "Jobs:" not in line:
            continue
        for match in _STATUS3.finditer(line):
            sides = dict(part.split("=") for part in match.group(1).strip(",").split(","))
            found.append({"read": _count(sides.get("r", "0")),
                          "write": _count(sides.get("w", "0"))})
        for match in _STATUS2.finditer(line):
            found.append({"read": _count(match.group(1)), "write": _count(match.group(2))})
    return found


def _issued(line: str) -> tuple[int, ...] | None:
    match = _ISSUED3.search(line)
    if match:
        return tuple(int(x) for x in match.group(1).split(",") if x)
    match = _ISSUED2.search(line) or _ISSUED1.search(line)
    if match:
        return tuple(int(x or 0) for x in match.groups())
    return None


def _disk(match: re.Match[str]) -> dict[str, Any]:
    disk: dict[str, Any] = {
        "name": match.group("name"), "read_ios": int(match.group("r")),
        "write_ios": int(match.group("w")), "read_merges": int(match.group("rm")),
        "write_merges": int(match.group("wm")), "read_ticks": int(match.group("rt")),
        "write_ticks": int(match.group("wt")), "in_queue": int(match.group("q")),
        "util": float(match.group("util")), "aggregate": bool(match.group("aggr"))}
    if match.group("rs") is not None:
        disk["read_sectors"] = int(match.group("rs"))
        disk["write_sectors"] = int(match.group("ws"))
    return disk


def _group_line(line: str, group: dict[str, Any]) -> None:
    """``READ: bw=436MiB/s ..., io=1310MiB (1373MB), run=3001-3001msec`` (3.x) or
    ``READ: io=17555MB, aggrb=99839KB/s, ..., mint=180053msec, maxt=180053msec``."""
    match = re.match(r"^\s*(READ|WRITE|TRIM|MIXED):\s*(.*)$", line)
    if not match:
        return
    side = match.group(1).lower()
    rest = match.group(2)
    io = re.search(r"io=([\d.]+)([KMGTP]i?B|B)", rest)
    run = re.search(r"run=(\d+)-(\d+)msec", rest) or re.search(
        r"mint=(\d+)msec,\s*maxt=(\d+)msec", rest)
    group[side] = {"io_bytes": _bytes(io.group(1), io.group(2)) if io else None,
                   "max_runtime_ms": int(run.group(2)) if run else None}


def _finish_entry(entry: dict[str, Any]) -> None:
    """Fill what the JSON report has and the text gave in other words: I/O counts from the
    printed rate when no ``issued`` line said them, IOPS to the I/O when it did, the job's
    runtime, and numjobs from ``jobs=N`` of a merged (group_reporting) entry."""
    runtime = 0
    for name in ("read", "write", "trim", "mixed"):
        side = entry.get(name)
        if not isinstance(side, dict):
            continue
        for key in ("slat_ns", "clat_ns", "lat_ns"):
            side.get(key, {}).pop("_scale", None)
        ms = float(side.get("runtime") or 0)
        runtime = max(runtime, int(ms))
        printed = side.pop("_printed_iops", "")
        if "total_ios" not in side:
            side["total_ios"] = round(side["iops"] * ms / 1000)
        elif ms and side["total_ios"]:
            # a rate printed to a few digits (IOPS=37.1k, IOPS=39): the count over the
            # runtime says it to the I/O, when it agrees with the printed figure to the
            # printed figure's last digit
            exact = side["total_ios"] / (ms / 1000)
            if abs(exact - side["iops"]) <= _last_digit(printed):
                side["iops"] = exact
        for key in ("clat_ns", "lat_ns", "slat_ns"):
            if key in side:
                side[key].setdefault("N", side["total_ios"])
    entry["job_runtime"] = runtime
    jobs = entry.pop("jobs_in_entry", 1)
    if jobs > 1:
        entry["job options"].setdefault("numjobs", str(jobs))
        entry["job options"].setdefault("group_reporting", "1")


def _last_digit(printed: str) -> float:
    """What one unit of the last printed digit is worth: ``37.1k`` -> 100, ``39`` -> 1,
    ``24959`` -> 1 (0 when nothing was printed)."""
    match = re.fullmatch(r"(\d+)(?:\.(\d+))?([kKmMgG]?)", printed.strip())
    if not match:
        return 0.0
    decimals = len(match.group(2) or "")
    return 10.0 ** -decimals * _COUNT[match.group(3).lower()]


def _pct(text: str) -> float:
    try:
        return float(text.rstrip("%"))
    except ValueError:
        return 0.0


def _is_number(text: str) -> bool:
    try:
        float(text.rstrip("%"))
    except ValueError:
        return False
    return True
