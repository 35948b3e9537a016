"""Judge fio output someone already has against a volume's documented limits.

    ebsperf judge run.json --volume-type=io1 --volume-size=100 --volume-iops=4000
    ebsperf judge fio.txt --volume-type=gp2 --volume-size=100 --instance-type=c4.xlarge
    ebsperf judge results/ --volume-type=gp3 --volume-size=500 --json
    ebsperf judge raid.txt --volume-type=gp3 --volume-size=202 --volume-iops=4000 \
        --volume-throughput=1000 --volume-count=2 --instance-type=r5b.large

What is read: fio's JSON (``json``, ``json+``), its normal output (fio 1.x, 2.x, 3.x: what
people paste into READMEs, blog posts and issues, a command line before it included) and its
terse output, alike (:mod:`pytest_ebsperf.fio.text`). A directory is searched for fio output
(bench-fio / fio-plot layouts included); each file gets its lines. The workload (pattern,
block size, queue depth, jobs) is read from the output's job options, header lines or command
line; fio 2.1 wrote no job options, so ``--rw`` and ``--bs`` say what ran. The expectation is
the documented cap for that workload on that volume (the same model as the suites), of
``--volume-count`` such volumes behind md RAID0 (``--member`` for members that differ), then
the instance's EBS limit.

What the output holds is said, never blended:

* several hosts (client/server), devices or stonewalled groups: each judged on its own;
* a run that stopped early (fio's signal notice, an error, a runtime short of the job's):
  said, and judged on what ran; fio's errors are said as fio said them;
* the device's own count (``Disk stats`` / ``disk_util``): when fio reports more I/O than
  the device served (by more than 5 %), reads were answered without device I/O (unwritten
  extents, the page cache, a sparse file): said, and judged on the device's figure;
* the job's own limits (``rate_iops``, ``rate``, ``thinktime``...): named as the binding
  limit when the run sat at them, never "raise the queue depth";
* interval logs (``--logs``, else the ``write_iops_log`` prefixes of the job options): any
  window length. Without logs the mean is judged.

Exit status: 0 pass, 1 fail, 2 inconclusive, 4 bad input (a sentence, no traceback). With
several files or units: 1 when any failed, else 4 when any file was refused, else 2 when any
was inconclusive, else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import PATTERNS, Workload, parse_size
from pytest_ebsperf.verdict_types import Outcome, Verdict

EXIT = {Outcome.PASS: 0, Outcome.FAIL: 1, Outcome.INCONCLUSIVE: 2, Outcome.INFO: 0}
USAGE_EXIT = 4
#: fio's output read as it is written: JSON, normal, terse.
FORMATS = ("json", "normal", "terse")
#: When fio reports this much more I/O than the device served, the figure is not the volume's.
WITNESS_TOLERANCE = 0.05
#: Job options that cap a job's own rate.
JOB_LIMITS = ("rate_iops", "rate", "rate_min", "rate_iops_min", "thinktime", "iodepth_low",
              "rate_process", "flow")
#: fio's names for the patterns the checks judge (``rw=`` values, fio's HOWTO).
PATTERN_ALIASES = {"readwrite": "rw", "sequential": "read"}
#: Patterns fio runs that no volume claim describes.
NOT_JUDGED = {"trim": "TRIM only", "randtrim": "random TRIM", "trimwrite": "TRIM then write",
              "randtrimwrite": "random TRIM then write"}
_AGGREGATE = "All clients"
_SIGNAL = re.compile(r"fio: terminating on signal (\d+)")


def _parser() -> argparse.ArgumentParser:
    from pytest_ebsperf.errors import EXIT_CODES, Parser

    p = Parser(prog="ebsperf judge", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Judge fio output (JSON, normal or terse; a file or a directory "
                "of them) against a volume's documented limits (the model the suites use).",
                epilog=EXIT_CODES + "\n  several files or units: 1 when any failed, else 4 "
                "when any file was refused, else 2 when any was inconclusive, else 0")
    p.add_argument("report", help="fio output: a file (json, json+, normal or terse), or a "
                   "directory searched for them")
    p.add_argument("--volume-type", required=True)
    p.add_argument("--volume-size", type=int)
    p.add_argument("--volume-iops", type=int)
    p.add_argument("--volume-throughput", type=float)
    p.add_argument("--volume-count", type=int, metavar="N", help="the output was measured on "
                   "md RAID0 of N such volumes: the expectation is their sum, then the "
                   "instance's limit")
    p.add_argument("--member", action="append", metavar="TYPE:GIB[:IOPS[:MIBPS]]",
                   help="one member of the set, when they differ (repeat for each)")
    p.add_argument("--instance-type")
    p.add_argument("--burst-balance", type=float, help="BurstBalance percent (gp2/st1/sc1)")
    p.add_argument("--logs", metavar="PREFIX", help="the prefix fio's interval logs were "
                   "written with (PREFIX_iops.N.log ...); default: the write_iops_log / "
                   "write_bw_log / write_lat_log prefixes in the report's job options, "
                   "looked up beside the report")
    p.add_argument("--group", type=int, help="judge only this group of a stonewalled report")
    p.add_argument("--host", help="judge only this host of a client/server report "
                   "(HOSTNAME or HOSTNAME:PORT)")
    p.add_argument("--device", help="judge only the jobs on this file or device")
    p.add_argument("--rw", help="the pattern that ran, when the report does not say "
                   "(fio 2.1) or says it otherwise")
    p.add_argument("--bs", help="the block size that ran (when the report does not say)")
    p.add_argument("--iodepth", type=int, help="the queue depth that ran (when the report "
                   "does not say)")
    p.add_argument("--metric", choices=("iops", "throughput"), help="default: throughput for "
                   "blocks of 256 KiB or more, else IOPS")
    p.add_argument("--format", choices=("auto", *FORMATS), default="auto",
                   help="what the file holds (default: found out)")
    p.add_argument("--trust-fio", action="store_true", help="judge fio's own figures even "
                   "where the device's count (Disk stats) shows fewer I/Os reached it")
    p.add_argument("--claim", default="B-SLA", help="claim ID for the message")
    p.add_argument("--json", action="store_true", help="the verdicts as JSON on stdout")
    return p


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


@dataclass
class Judged:
    unit: Unit
    verdict: Verdict
    workload: Workload
    path: str = ""


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
    groups = sorted({int(e.get("groupid") or 0) for e in entries})
    if group is not None:
        if group not in groups:
            raise EbsperfError(f"--group={group}: the report's groups are "
                               f"{', '.join(map(str, groups))}; pass one of them.")
        entries = [e for e in entries if int(e.get("groupid") or 0) == group]
    elif len(groups) > 1:
        found = []
        for gid in groups:
            chosen = [e for e in entries if int(e.get("groupid") or 0) == gid]
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
    from pytest_ebsperf.fio.parse import count_jobs

    return count_jobs(entries, {}) == len(entries) and all(
        _options(data, e).get("group_reporting") is None for e in entries)


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


#: fio engines that complete each I/O before the next is issued (a queue depth of one).
SYNC_ENGINES = frozenset({"sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "ftruncate"})


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


def _log_texts(args: argparse.Namespace, unit: Unit, result: FioResult
               ) -> tuple[dict[str, list[str]], str | None]:
    """The unit's logs per kind and where they came from (empty: none found)."""
    from pytest_ebsperf.fio.logs import LOG_KINDS

    if unit.log_suffix == "\0":
        return {}, None
    base = Path(args.report).resolve().parent
    prefixes: dict[str, str] = {}
    if args.logs:
        prefixes = dict.fromkeys(LOG_KINDS, args.logs)
    else:
        options = result.job_options
        for kind, option in (("iops", "write_iops_log"), ("bw", "write_bw_log"),
                             ("clat", "write_lat_log")):
            if options.get(option):
                prefixes[kind] = options[option]
    found: dict[str, list[str]] = {}
    where = None
    for kind, prefix in prefixes.items():
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
    if args.logs and not found:
        raise EbsperfError(f"--logs={args.logs}: no {os.path.basename(args.logs)}_iops/_bw/"
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


def _series(logs: dict[str, list[str]], workload: Workload, result: FioResult
            ) -> tuple[dict[str, Any], list[str]]:
    """Per-second (or per-window) series from logs of any window, and what was done."""
    from pytest_ebsperf.fio.logs import (
        averaged_to_seconds,
        build_series,
        log_shape,
        per_io_to_seconds,
    )

    notes: list[str] = []
    first = next((texts[0] for texts in logs.values() if texts), "")
    shape = log_shape(first)
    window = shape.window_ms or 1000
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
    from pytest_ebsperf.errors import FioOutputError
    from pytest_ebsperf.fio import text as fio_text
    from pytest_ebsperf.fio.parse import extract_json

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
    if form in ("auto", "terse") and fio_text.looks_like_terse(text):
        return [Report(path, fio_text.terse_to_data(text), text, "terse")]
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


def _fio_error(text: str) -> str:
    """fio's own error lines (``fio: pid=1, err=13/file:..., error=Permission denied``)."""
    lines = [line.strip() for line in text.splitlines()
             if re.search(r"\berr(?:or)?=|^fio: ", line.strip())]
    return "; ".join(lines[:3])


def _errno_text(errors: Sequence[int]) -> str:
    """fio's error numbers are the system's errno values: ``13`` -> ``Permission denied``."""
    return "; ".join(f"error={code} is {os.strerror(code)}" for code in dict.fromkeys(errors))


def files_in(directory: Path) -> list[Path]:
    """The files of a directory tree that may hold fio output (bench-fio / fio-plot write
    ``.json`` reports beside ``.log`` interval logs, pictures and CSV)."""
    skip = {".log", ".png", ".svg", ".csv", ".gz", ".html", ".pdf", ".jpg", ".py", ".sh"}
    found = []
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.suffix.lower() in skip or ".log." in path.name:
            continue
        if re.search(r"_(?:iops|bw|clat|lat|slat)\.\d+\.log", path.name):
            continue
        found.append(path)
    return found


# -- the facts ----------------------------------------------------------------------------------
def volumes_of(args: argparse.Namespace) -> list[Any]:
    """The volume, or the set's members (``--volume-count``, ``--member``), validated."""
    from pytest_ebsperf import models
    from pytest_ebsperf.volume import Volume

    def volume(vtype: str, size: int | None, iops: int | None, mibps: float | None) -> Any:
        return models.validate(Volume(vtype, size_gib=size, iops=iops, throughput_mibps=mibps,
                                      instance_type=args.instance_type,
                                      burst_balance_pct=args.burst_balance))

    if args.member:
        members = []
        for text in args.member:
            parts = text.split(":")
            try:
                members.append(volume(parts[0], int(parts[1]) if len(parts) > 1 else None,
                                      int(parts[2]) if len(parts) > 2 and parts[2] else None,
                                      float(parts[3]) if len(parts) > 3 and parts[3] else None))
            except (ValueError, IndexError):
                raise EbsperfError(f"--member={text} is not TYPE:GIB[:IOPS[:MIBPS]] (e.g. "
                                 "gp3:202:4000:1000).") from None
        if args.volume_count not in (None, len(members)):
            raise EbsperfError(f"--volume-count={args.volume_count} but {len(members)} "
                             "--member given: give one or the other, or as many members.")
        return members
    count = args.volume_count or 1
    if count < 1 or count > 64:
        raise EbsperfError(f"--volume-count={count}: a set holds 1 to 64 volumes.")
    one = volume(args.volume_type, args.volume_size, args.volume_iops, args.volume_throughput)
    return [one] * count


def _expectation(args: argparse.Namespace, members: Sequence[Any], workload: Workload,
                 what: str, metric: str) -> Any:
    from pytest_ebsperf import models

    first = members[0]
    credits = first.burst_balance_pct != 0
    if first.type == "instance-store":
        # AWS publishes one figure for all of an instance's instance-store devices (B-IS)
        return models.floor_expectation(args.claim, what, first, workload,
                                        devices=len(members))
    if len(members) == 1:
        return models.cap_expectation(args.claim, what, first, workload, metric=metric,
                                      credits=credits)
    from pytest_ebsperf.models.sets import set_expectation

    return set_expectation(args.claim, what, list(members), workload, credits=credits,
                           metric=metric)


# -- the device's own count --------------------------------------------------------------------
@dataclass(frozen=True)
class Witness:
    """What the device served while fio ran (``Disk stats`` / ``disk_util``)."""

    device: str
    read_ios: int
    write_ios: int
    seconds: float
    read_bytes: float | None = None
    write_bytes: float | None = None

    def iops(self, side: str) -> float:
        return (self.read_ios if side == "read" else self.write_ios) / self.seconds


def witness_of(data: Mapping[str, Any], result: FioResult) -> Witness | None:
    """The device whose count stands beside fio's: the top of a stack (md, dm) or the one
    device listed; None when the output has no device count or its run time is unknown."""
    disks = [d for d in data.get("disk_util") or [] if isinstance(d, Mapping)]
    seconds = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
    if not disks or seconds <= 0:
        return None
    top = disks[0] if disks[0].get("aggregate") or "aggr_read_ios" in disks[0] else max(
        disks, key=lambda d: int(d.get("read_ios") or 0) + int(d.get("write_ios") or 0))
    reads = int(top.get("read_ios") or 0) + int(top.get("read_merges") or 0)
    writes = int(top.get("write_ios") or 0) + int(top.get("write_merges") or 0)
    rs, ws = top.get("read_sectors"), top.get("write_sectors")
    return Witness(str(top.get("name") or "?"), reads, writes, seconds,
                   None if rs is None else int(rs) * 512.0,
                   None if ws is None else int(ws) * 512.0)


def apply_witness(result: FioResult, workload: Workload, seen: Witness
                  ) -> tuple[FioResult, str]:
    """``result`` judged on the device's figure when fio reports more I/O than the device
    served (beyond :data:`WITNESS_TOLERANCE`), with the sentence that says so; else as is."""
    changed = result
    said = []
    for side in ("read", "write"):
        stats = getattr(result, side)
        if stats.total_ios <= 0:
            continue
        served = seen.read_ios if side == "read" else seen.write_ios
        if stats.total_ios <= served * (1 + WITNESS_TOLERANCE):
            continue
        iops = seen.iops(side)
        bytes_served = seen.read_bytes if side == "read" else seen.write_bytes
        bw = (bytes_served / seen.seconds) if bytes_served else iops * workload.bs
        changed = replace(changed, **{side: replace(stats, iops=iops, bw_bytes=bw,
                                                    total_ios=served)})
        said.append(f"fio counted {stats.total_ios:,} {side}s ({stats.iops:,.0f} IOPS) but "
                    f"{seen.device} served {served:,} in the same {seen.seconds:,.0f} s "
                    f"({iops:,.0f} IOPS): the rest were answered without device I/O "
                    "(extents never written, the page cache, a sparse file), so the "
                    "device's figure is judged")
    if not said:
        return result, ""
    return replace(changed, series={}), "; ".join(said)


# -- the job's own limits -------------------------------------------------------------------------
def job_limit(options: Mapping[str, str], workload: Workload, measured: float, unit: str
              ) -> str:
    """A sentence naming the job's own option that bound the run (its rate, its think
    time), or "" when none is set or the run was not at it."""
    jobs = max(1, workload.numjobs)
    side = 0 if workload.read_fraction >= 0.5 else 1
    rate_iops = _per_side(options.get("rate_iops"), side)
    if rate_iops:
        total = rate_iops * jobs
        ceiling = total if unit == "IOPS" else total * workload.bs
        if measured >= 0.9 * ceiling:
            return (f"the job's own rate_iops={options['rate_iops']} ({jobs} job(s): "
                    f"{total:,.0f} IOPS) held it there")
    rate = _per_side(options.get("rate"), side, size=True)
    if rate:
        total_bps = rate * jobs
        ceiling = total_bps if unit == "B/s" else total_bps / workload.bs
        if measured >= 0.9 * ceiling:
            return (f"the job's own rate={options['rate']} ({jobs} job(s): "
                    f"{total_bps / 2**20:,.1f} MiB/s) held it there")
    think = options.get("thinktime")
    if think:
        try:
            seconds = parse_seconds(think if re.search(r"[a-z]", think) else f"{think}us")
        except ValueError:
            seconds = 0.0
        if seconds > 0:
            per_job = _int(options.get("thinktime_blocks"), 1) / seconds
            ceiling = per_job * jobs * (1 if unit == "IOPS" else workload.bs)
            if measured <= 1.1 * ceiling:
                return (f"the job's own thinktime={think} (an idle pause every "
                        f"{_int(options.get('thinktime_blocks'), 1)} I/O(s), at most "
                        f"{per_job * jobs:,.0f} IOPS over {jobs} job(s)) held it there")
    for option in ("iodepth_low", "rate_min", "rate_iops_min", "flow"):
        if options.get(option):
            return (f"the job set {option}={options[option]}, which paces or holds back "
                    "its queue: the run measured the job as written, not the volume's "
                    "limit")
    return ""


def _per_side(text: str | None, side: int, *, size: bool = False) -> float:
    """``rate_iops=600`` / ``600,300`` (reads, writes): the value for ``side``."""
    if not text:
        return 0.0
    parts = [p.strip() for p in str(text).split(",")]
    chosen = parts[side] if side < len(parts) and parts[side] else parts[0]
    try:
        return float(parse_size(chosen, what="rate")) if size else float(chosen)
    except (EbsperfError, ValueError):
        return 0.0


def _magnetic(expectation: Any, result: FioResult, workload: Workload) -> Verdict:
    """Magnetic (standard) is best effort (B-STD): recorded, as the suites record it; a
    figure far above what a Magnetic volume can deliver is named as not the volume's."""
    from pytest_ebsperf import verdict

    found = verdict.judge_info(expectation.claim, expectation.what, result, workload,
                               notes=(MAGNETIC_NOTE,))
    measured = found.measured or 0.0
    if workload.is_random and measured > MAGNETIC_MOST_IOPS:
        extra = (f" {measured:,.0f} IOPS of random I/O is more than a Magnetic volume "
                 f"delivers (about {MAGNETIC_MOST_IOPS // 2:,} at most): the figure is not the "
                 "volume's (the page cache, or another volume).")
        found = replace(found, message=found.message + extra)
    return found


#: Twice Magnetic's documented best (about 200 random IOPS, B-STD).
MAGNETIC_MOST_IOPS = 400
MAGNETIC_NOTE = "Magnetic is best effort: AWS documents about 40-200 IOPS for random I/O (B-STD)"


# -- judging --------------------------------------------------------------------------------------
@dataclass
class Refused:
    """A file that could not be judged, and why."""

    path: str
    reason: str


def judge_report(argv: Sequence[str]) -> list[Judged | Refused]:
    """Every unit of every fio output ``argv`` names, judged (see the module's doc)."""
    args = _parser().parse_args(argv)
    target = Path(args.report)
    if not target.exists():
        raise EbsperfError(f"{target} cannot be read (No such file or directory).")
    members = volumes_of(args)
    if target.is_dir():
        found: list[Judged | Refused] = []
        for path in files_in(target):
            try:
                reports = read_reports(str(path), args.format)
            except EbsperfError as exc:
                if "holds no fio output" in str(exc):
                    continue  # a file of another kind beside the reports
                found.append(Refused(str(path), str(exc)))
                continue
            for report in reports:
                try:
                    found += judge_one(args, members, report)
                except EbsperfError as exc:
                    found.append(Refused(str(path), str(exc)))
        if not found:
            raise EbsperfError(f"{target}: no file in it holds fio output (JSON, normal or "
                               "terse).")
        return found
    judged: list[Judged | Refused] = []
    for report in read_reports(args.report, args.format):
        judged += judge_one(args, members, report)
    return judged


def judge_one(args: argparse.Namespace, members: Sequence[Any], report: Report
              ) -> list[Judged | Refused]:
    """The units of one fio run, judged."""
    from pytest_ebsperf import verdict
    from pytest_ebsperf.fio.parse import result_from_data

    data, text = report.data, report.text
    preamble = text[:text.find("{")] if report.form == "json" and "{" in text else text
    units = units_of(data, host=args.host, device=args.device, group=args.group)
    name = os.path.basename(report.path) + (f", {report.label}" if report.label else "")
    judged: list[Judged | Refused] = []
    for unit in units:
        where = f"{report.path}{' (' + unit.label + ')' if unit.label else ''}"
        result = result_from_data(unit.data, None, text)
        if result.errors and result.total_iops <= 0:
            said = _fio_error(preamble) or _errno_text(result.errors)
            judged.append(Refused(where, f"fio reported error {', '.join(map(str, result.errors))} "
                                  f"and measured nothing: {said}"))
            continue
        workload, notes = workload_of(result, where, rw=args.rw, bs=args.bs,
                                      iodepth=args.iodepth)
        notes = [*unit.notes, *notes]
        if report.form != "json":
            notes.insert(0, f"read from fio's {report.form} output"
                         + (f" ({result.fio_version})" if result.fio_version else ""))
        if len(units) > 1:
            kind = unit.label.split()[0]
            notes.insert(0, f"the report holds {len(units)} {kind}s, each judged on its own "
                         f"against the same volume facts (--{kind} judges one)")
        early = stopped_early(unit.data, preamble)
        if early:
            notes.append(f"{early}: judged on what ran")
        if result.errors:
            said = _fio_error(preamble) or _errno_text(result.errors)
            notes.append(f"fio reported error {', '.join(map(str, result.errors))}"
                         + (f" ({said})" if said else ""))
        # the device's count stands for the run as a whole: one unit of a local run
        alone = len(units) == 1 and "client_stats" not in data and not args.device
        seen = witness_of(data, result) if alone and not args.trust_fio else None
        witnessed = ""
        if seen is not None:
            result, witnessed = apply_witness(result, workload, seen)
            if witnessed:
                notes.append(witnessed)
            else:
                notes.append(f"{seen.device}'s own count agrees with fio's (Disk stats)")
        logs, logs_from = ({}, None) if witnessed else _log_texts(args, unit, result)
        if logs:
            series, said_logs = _series(logs, workload, result)
            result = replace(result, series=series)
            notes += [f"per-second figures from {logs_from}_*", *said_logs]
        metric = args.metric or ("throughput" if workload.bs >= 256 * 1024 else "iops")
        count = f"{len(members)} x " if len(members) > 1 else ""
        what = (f"{count}{members[0].label()}, {workload.label()} (from "
                f"{name}{', ' + unit.label if unit.label else ''})")
        expectation = _expectation(args, members, workload, what, metric)
        if expectation.unit == "IOPS":
            metric = "iops"  # a floor is published in IOPS only
        if members[0].type == "standard":
            found = _magnetic(expectation, result, workload)
        else:
            judge = verdict.judge_floor if expectation.policy == "FLOOR" else verdict.judge_cap
            found = judge(expectation, result, workload, metric=metric, cpu_count=None)
            # offline, the queue depth to raise is fio's own option, not the plugin's
            found = replace(found, message=found.message.replace("--ebsperf-iodepth",
                                                                 "fio's iodepth"),
                            reason=found.reason.replace("--ebsperf-iodepth", "fio's iodepth"))
        if (result.job_options.get("direct") or "0") in ("0", "false") and \
                workload.read_fraction > 0:
            notes.append("the job ran buffered (direct=0, fio's default): reads may have "
                         "come from the page cache, not the volume")
        if found.outcome is not Outcome.PASS and found.measured is not None:
            limit = job_limit(result.job_options, workload, found.measured, found.unit)
            if limit:
                reason = f"inconclusive: {limit}, below what the volume was to show"
                found = replace(found, outcome=Outcome.INCONCLUSIVE, binding="job's own limit",
                                reason=reason, message=(
                                    f"{expectation.what}: {found.measured:,.0f} {found.unit} "
                                    f"measured, {expectation.value:,.0f} {expectation.unit} "
                                    f"expected - {reason}. Claim {expectation.claim}"))
        if notes:
            found = replace(found, details={**found.details, "notes": notes})
        judged.append(Judged(unit, found, workload, report.path))
    return judged


def worst(outcomes: Sequence[Outcome]) -> Outcome:
    """FAIL over INCONCLUSIVE over PASS and INFO."""
    for outcome in (Outcome.FAIL, Outcome.INCONCLUSIVE, Outcome.PASS):
        if outcome in outcomes:
            return outcome
    return Outcome.INFO


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    try:
        found = judge_report(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help: argparse prints it and exits 0
        return int(exc.code or 0)
    except EbsperfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    as_json = "--json" in (sys.argv[1:] if argv is None else argv)
    judged = [item for item in found if isinstance(item, Judged)]
    refused = [item for item in found if isinstance(item, Refused)]
    if as_json:
        print(json.dumps({"verdicts": [_as_json(item) for item in judged],
                          "refused": [{"path": r.path, "reason": r.reason} for r in refused]},
                         indent=2), file=out)
    else:
        many = len({item.path for item in judged}) + len(refused) > 1
        for item in judged:
            found_v = item.verdict
            where = f" [{item.unit.label}]" if item.unit.label else ""
            if many:
                label = f": {item.unit.label}" if item.unit.label else ""
                where = f" [{os.path.basename(item.path)}{label}]"
            print(f"{found_v.outcome.value.upper()} {found_v.claim}{where}: {found_v.message}",
                  file=out)
            for note in found_v.details.get("notes", ()):
                print(f"  note: {note}", file=out)
        for gone in refused:
            print(f"REFUSED {gone.path}: {gone.reason}", file=out)
    outcomes = [item.verdict.outcome for item in judged]
    if Outcome.FAIL in outcomes:
        return EXIT[Outcome.FAIL]
    if refused:
        return USAGE_EXIT
    return EXIT[worst(outcomes)] if outcomes else USAGE_EXIT


def _as_json(item: Judged) -> dict[str, Any]:
    found = item.verdict
    return {"path": item.path, "unit": item.unit.label, "outcome": found.outcome.value,
            "claim": found.claim, "what": found.what, "expected": found.expected,
            "measured": found.measured, "unit_of_measure": found.unit,
            "binding": found.binding, "reason": found.reason, "message": found.message,
            "workload": item.workload.label(), "notes": list(found.details.get("notes", ()))}
