"""fio output someone already has, read as units to judge: each host's, device's or group's jobs,
the workload they ran, how they stopped and their interval logs (the device's own count beside
them: :mod:`pytest_ebsperf.fio.counted`). Used by :mod:`pytest_ebsperf.verdicts.judge`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import EbsperfError, FioOutputError
from pytest_ebsperf.fio import terse as fio_terse
from pytest_ebsperf.fio import text as fio_text
from pytest_ebsperf.fio.kept import KEPT_SUFFIX
from pytest_ebsperf.fio.logs import (
    LOG_KINDS,
    averaged_to_seconds,
    build_series,
    log_shape,
    per_io_to_seconds,
)
from pytest_ebsperf.fio.parse import count_jobs, extract_json, group_of
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import PATTERNS, Workload, parse_size

#: fio's output read as it is written: JSON, normal, terse.
FORMATS = ("json", "normal", "terse")


#: fio's names for the patterns the checks judge (``rw=`` values, fio's HOWTO).
PATTERN_ALIASES = {"readwrite": "rw", "sequential": "read"}


#: Patterns fio runs that no volume claim describes.
NOT_JUDGED = {"trim": "TRIM only", "randtrim": "random TRIM", "trimwrite": "TRIM then write",
              "randtrimwrite": "random TRIM then write"}


_AGGREGATE = "All clients"


_SIGNAL = re.compile(r"fio: terminating on signal (\d+)")


@dataclass
class Unit:
    """One thing the report measured: a host of a client/server run, a device, or all."""

    label: str
    data: dict[str, Any]
    #: Suffix fio's client gave the host's logs (``PREFIX_iops.1.log.HOSTNAME``).
    log_suffix: str = ""
    #: The log file numbers (``PREFIX_iops.N.log``) of this unit's jobs; empty: all of them.
    job_numbers: tuple[int, ...] = ()
    notes: list[str] = field(default_factory=list)


def _options(data: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for source in (data.get("global options"), entry.get("job options")):
        if isinstance(source, Mapping):
            merged.update({str(k): str(v) for k, v in source.items()})
    return merged


def units_of(data: Mapping[str, Any], *, host: str | None = None, device: str | None = None,
             group: int | None = None) -> list[Unit]:
    """The report split into what it measured: each stonewalled group (``group``: only
    that one), then each host of a client/server report, else each device its jobs ran on
    (one unit when there is one)."""
    key = "client_stats" if "client_stats" in data else "jobs"
    raw = data.get(key)
    entries = [e for e in (raw if isinstance(raw, list) else [])
               if isinstance(e, dict) and e.get("jobname") != _AGGREGATE]
    groups = sorted({group_of(e) for e in entries})
    if group is not None:
        if group not in groups:
            raise EbsperfError(f"--group={group}: the report's groups are "
                               f"{', '.join(map(str, groups))}; pass one of them.")
        entries = [e for e in entries if group_of(e) == group]
    elif len(groups) > 1:
        found = []
        for gid in groups:
            chosen = [e for e in entries if group_of(e) == gid]
            name = str(chosen[0].get("jobname") or "")
            for made in units_of({**data, key: chosen}, host=host, device=device):
                made.label = f"group {gid} {name}" + (f", {made.label}" if made.label else "")
                found.append(made)
        return found
    base = {k: v for k, v in data.items() if k not in ("jobs", "client_stats")}

    def unit(label: str, chosen: list[dict[str, Any]], **extra: Any) -> Unit:
        return Unit(label, {**base, key: chosen}, **extra)

    if key == "client_stats":
        hosts: dict[str, list[dict[str, Any]]] = {}
        for entry in entries:
            hosts.setdefault(f"{entry.get('hostname', '?')}:{entry.get('port', '?')}",
                             []).append(entry)
        names = [h.rsplit(":", 1)[0] for h in hosts]
        if host is not None:
            wanted = {h: e for h, e in hosts.items() if host in (h, h.rsplit(":", 1)[0])}
            if not wanted:
                raise EbsperfError(f"--host={host}: the report's hosts are "
                                   f"{', '.join(hosts)}; pass one of them.")
            hosts = wanted
        found = []
        for name, chosen in hosts.items():
            hostname = name.rsplit(":", 1)[0]
            made = unit(f"host {name}", chosen, log_suffix=f".{hostname}")
            if names.count(hostname) > 1:
                made.notes.append(f"{names.count(hostname)} servers of this report share the "
                                  f"host name {hostname}: fio's client wrote their logs to one "
                                  "file name, so their logs are not read")
                made.log_suffix = "\0"
            found.append(made)
        return found
    files: dict[str, list[int]] = {}
    for index, entry in enumerate(entries):
        name = _options(data, entry).get("filename") or _options(data, entry).get(
            "directory") or "?"
        files.setdefault(name, []).append(index)
    if device is not None:
        files = {n: i for n, i in files.items() if device in (n, os.path.basename(n))}
        if not files:
            raise EbsperfError(f"--device={device}: no job of the report ran on it; its jobs "
                               f"ran on {', '.join(sorted(_files_of(entries, data)))}.")
    if len(files) <= 1:
        chosen = [entries[i] for indexes in files.values() for i in indexes]
        label = f"device {next(iter(files))}" if device is not None and files else ""
        return [unit(label, chosen, job_numbers=tuple(
            i + 1 for indexes in files.values() for i in indexes)
            if device is not None and _one_entry_per_job(entries, data) else ())]
    one_per_job = _one_entry_per_job(entries, data)
    found = []
    for name, indexes in files.items():
        made = unit(f"device {name}", [entries[i] for i in indexes],
                    job_numbers=tuple(i + 1 for i in indexes) if one_per_job else ())
        if not one_per_job:
            made.notes.append("group_reporting merged jobs of several devices: the logs "
                              "cannot be told apart by device and are not read")
            made.log_suffix = "\0"
        found.append(made)
    return found


def _files_of(entries: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> set[str]:
    return {_options(data, e).get("filename") or "?" for e in entries}


def _one_entry_per_job(entries: Sequence[Mapping[str, Any]], data: Mapping[str, Any]) -> bool:

    return count_jobs(entries, {}) == len(entries) and all(
        _options(data, e).get("group_reporting") is None for e in entries)


def not_judged(result: FioResult) -> str:
    """What fio ran when no volume claim describes it (``rw=trim`` ...: "rw=trim (TRIM
    only)"), else ""."""
    given = str(result.job_options.get("rw") or result.job_options.get("readwrite") or "")
    pattern = given.strip().lower().partition(":")[0]
    pattern = PATTERN_ALIASES.get(pattern, pattern)
    return f"rw={given} ({NOT_JUDGED[pattern]})" if pattern in NOT_JUDGED else ""


def workload_of(result: FioResult, where: str, *, rw: str | None = None,
                bs: str | None = None, iodepth: int | None = None) -> tuple[Workload, list[str]]:
    """The workload fio ran, from its report's job options (``rw``, ``bs``, ``iodepth``
    fill in what an old fio left out, or override it); notes on what was read how."""
    options = result.job_options
    notes: list[str] = []
    given = rw or options.get("rw") or options.get("readwrite")
    if not given:
        raise EbsperfError(
            f"{where}: {result.fio_version or 'this fio'} wrote no job options into its report, "
            "so the pattern that ran is not known: pass --rw (randread, randwrite, randrw, read, "
            "write, rw) and --bs, --iodepth as the job ran.")
    text = given.strip().lower()
    pattern, _, holes = text.partition(":")
    pattern = PATTERN_ALIASES.get(pattern, pattern)
    if pattern in NOT_JUDGED:
        raise EbsperfError(f"{where}: fio ran rw={given} ({NOT_JUDGED[pattern]}); no volume "
                           "claim describes that pattern.")
    if pattern not in PATTERNS:
        raise EbsperfError(f"{where}: fio's report names the pattern {given!r}; judged "
                           f"patterns are {', '.join(PATTERNS)} (and fio's alias readwrite).")
    if pattern != text.partition(":")[0]:
        notes.append(f"rw={text.partition(':')[0]} is fio's name for rw={pattern}")
    if holes:
        notes.append(f"rw={given}: fio skipped {holes} blocks after each I/O (judged as "
                     f"{pattern})")
    _same_direction(result, where, pattern, given=rw)
    size_text = bs or options.get("bs") or options.get("blocksize")
    if not size_text:
        if not options:
            raise EbsperfError(f"{where}: the report does not say the block size: pass --bs.")
        size_text = "4k"
        notes.append("the report names no block size: fio's default, 4 KiB")
    size = parse_size(size_text, what=f"block size in {where}")
    mix = options.get("rwmixread")
    depth = iodepth or _int(options.get("iodepth"), 1)
    engine = (options.get("ioengine") or "").lower()
    if engine in SYNC_ENGINES and depth > 1 and not iodepth:
        notes.append(f"ioengine={engine} is synchronous: one I/O at a time per job, whatever "
                     f"iodepth={depth} says")
        depth = 1
    elif not engine and "iodepth" not in options and not iodepth:
        notes.append("the output names no ioengine or iodepth: fio's defaults, psync at one "
                     "I/O at a time per job")
    runtime = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
    return Workload(pattern, bs=size, iodepth=depth, numjobs=result.jobs,
                    rwmixread=int(mix) if mix else None, engine="libaio",
                    runtime_s=runtime), notes


def _same_direction(result: FioResult, where: str, pattern: str, *, given: str | None) -> None:
    """Refuse a pattern whose direction the report shows no I/O in while the other direction
    has some: a read-only run judged as writes (an ``--rw`` that does not match the run)."""
    moved = {side: getattr(result, side).io_bytes > 0 or getattr(result, side).iops > 0
             for side in ("read", "write")}
    wanted = {"read": "read", "randread": "read", "write": "write", "randwrite": "write"}.get(
        pattern)
    other = {"read": "write", "write": "read"}.get(wanted or "")
    if wanted and other and moved[other] and not moved[wanted]:
        side = getattr(result, other)
        said = f"--rw {given}" if given else f"rw={pattern}"
        raise EbsperfError(
            f"{where}: {said} says the jobs {'read' if wanted == 'read' else 'wrote'}, but the "
            f"report has no {wanted}s and {side.iops:,.0f} IOPS of {other}s: pass the --rw "
            f"the job ran (rand{other} or {other}).")


def _int(text: str | None, default: int) -> int:
    try:
        return int(str(text).strip()) if text not in (None, "") else default
    except ValueError:
        return default


def stopped_early(data: Mapping[str, Any], preamble: str) -> str | None:
    """Why a run ended before its jobs' planned end, or None: fio's signal notice, an error
    in a job, or a job that ran well short of its ``runtime`` option without finishing its
    ``size`` (fio leaves ``time_based`` out of the job options it reports)."""
    signal = _SIGNAL.search(preamble)
    raw = data.get("client_stats", data.get("jobs"))
    entries = [e for e in (raw if isinstance(raw, list) else []) if isinstance(e, dict)
               and e.get("jobname") != _AGGREGATE]
    ran_ms = max((float(e.get("job_runtime") or 0) for e in entries), default=0.0)
    planned_s = 0.0
    finished_size = False
    for entry in entries:
        options = _options(data, entry)
        try:
            planned_s = max(planned_s, parse_seconds(options.get("runtime", "0")))
        except ValueError:
            continue
        size = options.get("size") or options.get("io_size")
        if size:
            moved = sum(float((entry.get(d) or {}).get("io_bytes") or 0)
                        for d in ("read", "write", "trim"))
            try:
                finished_size |= moved >= parse_size(size, what="size") * 0.99
            except EbsperfError:
                pass
    ran = f"{ran_ms / 1000:.1f} s" if ran_ms else "part of its time"
    of = f" of the {planned_s:g} s its runtime allowed" if planned_s else ""
    if signal:
        return (f"fio was interrupted (fio: terminating on signal {signal.group(1)}) after "
                f"{ran}{of}")
    errors = sorted({int(e["error"]) for e in entries if e.get("error")})
    if errors:
        return f"a job ended with error {', '.join(map(str, errors))} after {ran}{of}"
    if planned_s and ran_ms and ran_ms < planned_s * 1000 * 0.98 - 1000 and not finished_size:
        return f"the run stopped after {ran}{of}, with no notice of why"
    return None


def parse_seconds(text: str) -> float:
    """fio's time values: ``60``, ``60s``, ``500ms``, ``2m``, ``1h`` (bare numbers are s)."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*(us|ms|s|m|h|d)?\s*", text.lower())
    if not match:
        raise ValueError(text)
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
    return float(match.group(1)) * scale[match.group(2) or "s"]


def log_texts(given: str | None, unit: Unit, result: FioResult, report: str
              ) -> tuple[dict[str, list[str]], str | None]:
    """The unit's logs per kind and where they came from (empty: none found); ``given``: the
    logs' prefix the user named (``--logs``), else where fio's options or a kept run's
    names put them."""

    if unit.log_suffix == "\0":
        return {}, None
    base = Path(report).resolve().parent
    prefixes: dict[str, list[str]] = {}
    if given:
        prefixes = {kind: [given] for kind in LOG_KINDS}
    else:
        options = result.job_options
        # fio-plot's names, as --ebsperf-keep-fio and bench-fio keep a run's logs
        kept = (f"{options.get('rw', '')}-iodepth-{options.get('iodepth', '1')}-numjobs-"
                f"{options.get('numjobs', '1')}")
        for kind, option in (("iops", "write_iops_log"), ("bw", "write_bw_log"),
                             ("clat", "write_lat_log")):
            if options.get(option):
                prefixes[kind] = [options[option], kept]
    found: dict[str, list[str]] = {}
    where = None
    for kind, candidates in prefixes.items():
        for prefix in candidates:
            directory, stem = os.path.split(prefix)
            # the prefix as fio had it, else beside the report (logs moved with it)
            for root in ([Path(directory), base] if os.path.isabs(prefix) else
                         [base / directory, Path.cwd() / directory, base]):
                names = _log_names(root, stem, kind, unit)
                if names:
                    found[kind] = [(root / n).read_text(encoding="utf-8", errors="replace")
                                   for n in names]
                    where = str(root / stem)
                    break
            if kind in found:
                break
    if given and not found:
        raise EbsperfError(f"--logs={given}: no {os.path.basename(given)}_iops/_bw/"
                           f"_clat logs{' for ' + unit.label if unit.label else ''} there.")
    return found, where


def _log_names(root: Path, stem: str, kind: str, unit: Unit) -> list[str]:
    if not root.is_dir():
        return []
    pattern = re.compile(rf"^{re.escape(stem)}_{kind}(?:\.(\d+))?\.log"
                         rf"{re.escape(unit.log_suffix)}$")
    numbered = []
    for name in os.listdir(root):
        match = pattern.match(name)
        if match:
            number = int(match.group(1) or 0)
            if not unit.job_numbers or number in unit.job_numbers:
                numbered.append((number, name))
    return [name for _, name in sorted(numbered)]


def _stated_window_ms(result: FioResult) -> int | None:
    """``log_avg_msec`` as fio's report states the job's options, or None."""
    stated = str(result.job_options.get("log_avg_msec", "")).strip()
    return int(stated) if stated.isdigit() and int(stated) > 0 else None


def _series(logs: dict[str, list[str]], workload: Workload, result: FioResult
            ) -> tuple[dict[str, Any], list[str]]:
    """Per-second (or per-window) series from logs of any window, and what was done."""

    notes: list[str] = []
    first = next((texts[0] for texts in logs.values() if texts), "")
    shape = log_shape(first)
    # the job's own log_avg_msec when fio's report states it: the steps between rows only
    # estimate it, and a stopped run's 2 rows stamped 1,001 and 2,100 ms made it 1.1 s
    window = _stated_window_ms(result) or shape.window_ms or 1000
    if shape.per_io:
        logs = {kind: [per_io_to_seconds(t, kind) for t in texts]
                for kind, texts in logs.items()}
        notes.append("the logs hold every I/O (log_avg_msec unset): counted per second")
        window = 1000
    elif window < 1000 and 1000 % window == 0:
        logs = {kind: [averaged_to_seconds(t, window) for t in texts]
                for kind, texts in logs.items()}
        notes.append(f"the logs' windows are {window} ms (log_avg_msec={window}): averaged to "
                     "seconds, each second one trial")
        window = 1000
    elif window != 1000:
        notes.append(f"the logs' windows are {window / 1000:g} s (log_avg_msec={window}): each "
                     f"window is one trial, judged at its own length (the figures per window "
                     f"read as per second)")
    series = build_series(logs, interval_ms=window, runtime_ms=workload.runtime_s * 1000,
                          fio_version=result.fio_version)
    return series, notes


# -- reading the output ------------------------------------------------------------------------
@dataclass
class Report:
    """One fio run read from a file: its data in the shape of fio's JSON, the text around
    it, the format it was written in, and a label when the file holds several runs."""

    path: str
    data: dict[str, Any]
    text: str
    form: str
    label: str = ""


def read_reports(path: str, form: str = "auto") -> list[Report]:
    """Every fio run in ``path`` (JSON, normal or terse output), or a sentence."""

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        raise EbsperfError(f"{path} cannot be read ({exc.strerror}).") from None
    if form in ("auto", "json"):
        try:
            return [Report(path, extract_json(text), text, "json")]
        except FioOutputError as exc:
            if form == "json":
                raise EbsperfError(f"{path}: {exc}") from None
    if form in ("auto", "terse") and fio_terse.looks_like_terse(text):
        return [Report(path, fio_terse.terse_to_data(text), text, "terse")]
    if form in ("auto", "normal") and fio_text.looks_like_normal(text):
        runs = fio_text.split_runs(text)
        return [Report(path, fio_text.normal_to_data(run), run, "normal",
                       f"run {n} of {len(runs)}" if len(runs) > 1 else "")
                for n, run in enumerate(runs, 1)]
    said = _fio_error(text)
    if said:
        raise EbsperfError(f"{path}: fio measured nothing: {said}")
    raise EbsperfError(f"{path} holds no fio output fio's JSON, normal or terse form: no "
                       "report object, no 'NAME: (groupid=N, jobs=N): err=' result block and "
                       "no '3;fio-...' terse line. Pass fio's output file (--output), or what "
                       "fio printed.")


def files_in(directory: Path) -> list[Path]:
    """The files of a directory tree that may hold fio output (bench-fio / fio-plot write
    ``.json`` reports beside ``.log`` interval logs, pictures and CSV)."""
    skip = {".log", ".png", ".svg", ".csv", ".gz", ".html", ".pdf", ".jpg", ".py", ".sh",
            ".fio"}
    found = []
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.suffix.lower() in skip or ".log." in path.name \
                or path.name.endswith(KEPT_SUFFIX):
            continue
        if re.search(r"_(?:iops|bw|clat|lat|slat)\.\d+\.log", path.name):
            continue
        found.append(path)
    return found


#: fio engines that complete each I/O before the next is issued (a queue depth of one).
SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "ftruncate"})


def _fio_error(text: str) -> str:
    """fio's own error lines (``fio: pid=1, err=13/file:..., error=Permission denied``)."""
    lines = [line.strip() for line in text.splitlines()
             if re.search(r"\berr(?:or)?=|^fio: ", line.strip())]
    return "; ".join(lines[:3])


def _errno_text(errors: Sequence[int]) -> str:
    """fio's error numbers are the system's errno values: ``13`` -> ``Permission denied``."""
    return "; ".join(f"error={code} is {os.strerror(code)}" for code in dict.fromkeys(errors))
