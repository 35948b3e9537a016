"""Judge a fio report someone already has against a volume's documented limits.

    python3 -m pytest_ebsperf judge run.json --volume-type=io1 --volume-size=100 \
        --volume-iops=4000 [--logs=PREFIX] [--group=N] [--host=H] [--device=PATH] \
        [--rw=PATTERN --bs=SIZE --iodepth=N] [--instance-type=m5.large]

The workload (pattern, block size, queue depth, jobs) is read from fio's own report (fio's
aliases too: ``rw=readwrite`` is ``rw``, ``randread:8`` a random read with holes); fio 2.1
wrote no job options, so ``--rw`` and ``--bs`` say what ran. The expectation is the
documented cap for that workload on that volume (the same model as the suites).

What the report holds is said, never blended:

* several hosts (fio's client/server mode) or several devices in one report: each is judged
  on its own against the same volume facts (``--host`` / ``--device`` judges one);
* a run that stopped early (fio's ``terminating on signal`` notice, or a time-based job that
  ran short of its ``runtime``): said, and judged on the seconds that ran;
* interval logs (``--logs``, else the ``write_iops_log`` prefixes the job options name): any
  window length. Windows shorter than a second are averaged to seconds; longer ones are
  judged at their own length (each window one trial); a log of every I/O
  (``log_avg_msec`` unset) is counted per second. Without logs only the mean is judged.

Exit status: 0 pass, 1 fail (any unit), 2 inconclusive, 4 bad input (a sentence).
"""

from __future__ import annotations

import argparse
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
#: fio's names for the patterns the checks judge (``rw=`` values, fio's HOWTO).
PATTERN_ALIASES = {"readwrite": "rw", "sequential": "read"}
#: Patterns fio runs that no volume claim describes.
NOT_JUDGED = {"trim": "TRIM only", "randtrim": "random TRIM", "trimwrite": "TRIM then write",
              "randtrimwrite": "random TRIM then write"}
_AGGREGATE = "All clients"
_SIGNAL = re.compile(r"fio: terminating on signal (\d+)")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m pytest_ebsperf judge",
                                description="Judge a fio JSON report against a volume's "
                                "documented limits (the model the suites use).")
    p.add_argument("report", help="fio --output-format=json (or json+) file")
    p.add_argument("--volume-type", required=True)
    p.add_argument("--volume-size", type=int)
    p.add_argument("--volume-iops", type=int)
    p.add_argument("--volume-throughput", type=float)
    p.add_argument("--instance-type")
    p.add_argument("--burst-balance", type=float, help="BurstBalance percent (gp2/st1/sc1)")
    p.add_argument("--logs", metavar="PREFIX", help="the prefix fio's interval logs were "
                   "written with (PREFIX_iops.N.log ...); default: the write_iops_log / "
                   "write_bw_log / write_lat_log prefixes in the report's job options, "
                   "looked up beside the report")
    p.add_argument("--group", type=int, help="the group to judge in a stonewalled report")
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
    p.add_argument("--claim", default="B-SLA", help="claim ID for the message")
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


def _options(data: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for source in (data.get("global options"), entry.get("job options")):
        if isinstance(source, Mapping):
            merged.update({str(k): str(v) for k, v in source.items()})
    return merged


def units_of(data: Mapping[str, Any], *, host: str | None = None, device: str | None = None
             ) -> list[Unit]:
    """The report split into what it measured: each host of a client/server report, else
    each device its jobs ran on (one unit when there is one)."""
    key = "client_stats" if "client_stats" in data else "jobs"
    raw = data.get(key)
    entries = [e for e in (raw if isinstance(raw, list) else [])
               if isinstance(e, dict) and e.get("jobname") != _AGGREGATE]
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
    depth = iodepth or int(options.get("iodepth", "1") or 1)
    runtime = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
    return Workload(pattern, bs=size, iodepth=depth, numjobs=result.jobs,
                    rwmixread=int(mix) if mix else None, engine="libaio",
                    runtime_s=runtime), notes


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


def judge_report(argv: Sequence[str]) -> list[Judged]:
    """Every unit of the report judged (see the module's doc)."""
    from pytest_ebsperf import models, verdict
    from pytest_ebsperf.fio.parse import extract_json, result_from_data
    from pytest_ebsperf.volume import Volume

    args = _parser().parse_args(argv)
    try:
        with open(args.report, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        raise EbsperfError(f"{args.report} cannot be read ({exc.strerror}).") from None
    data = extract_json(text)
    preamble = text[:text.find("{")] if "{" in text else text
    volume = models.validate(Volume(
        args.volume_type, size_gib=args.volume_size, iops=args.volume_iops,
        throughput_mibps=args.volume_throughput, instance_type=args.instance_type,
        burst_balance_pct=args.burst_balance))
    units = units_of(data, host=args.host, device=args.device)
    judged = []
    for unit in units:
        where = f"{args.report}{' (' + unit.label + ')' if unit.label else ''}"
        result = result_from_data(unit.data, args.group, text)
        workload, notes = workload_of(result, where, rw=args.rw, bs=args.bs,
                                      iodepth=args.iodepth)
        notes = [*unit.notes, *notes]
        if len(units) > 1:
            notes.insert(0, f"the report holds {len(units)} {unit.label.split()[0]}s, each "
                         "judged on its own against the same volume facts "
                         f"(--{unit.label.split()[0]} judges one)")
        early = stopped_early(unit.data, preamble)
        if early:
            notes.append(f"{early}: judged on what ran")
        logs, logs_from = _log_texts(args, unit, result)
        if logs:
            series, said = _series(logs, workload, result)
            result = replace(result, series=series)
            notes += [f"per-second figures from {logs_from}_*", *said]
        metric = args.metric or ("throughput" if workload.bs >= 256 * 1024 else "iops")
        what = (f"{volume.label()}, {workload.label()} (from "
                f"{os.path.basename(args.report)}{', ' + unit.label if unit.label else ''})")
        expectation = models.cap_expectation(args.claim, what, volume, workload,
                                             metric=metric,
                                             credits=volume.burst_balance_pct != 0)
        found = verdict.judge_cap(expectation, result, workload, metric=metric,
                                  cpu_count=None)
        if notes:
            found = replace(found, details={**found.details, "notes": notes})
        judged.append(Judged(unit, found, workload))
    return judged


def worst(outcomes: Sequence[Outcome]) -> Outcome:
    """FAIL over INCONCLUSIVE over PASS and INFO."""
    for outcome in (Outcome.FAIL, Outcome.INCONCLUSIVE, Outcome.PASS):
        if outcome in outcomes:
            return outcome
    return Outcome.INFO


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    try:
        judged = judge_report(list(sys.argv[1:] if argv is None else argv))
    except EbsperfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT
    for item in judged:
        found = item.verdict
        where = f" [{item.unit.label}]" if item.unit.label else ""
        print(f"{found.outcome.value.upper()} {found.claim}{where}: {found.message}", file=out)
        for note in found.details.get("notes", ()):
            print(f"  note: {note}", file=out)
    return EXIT[worst([item.verdict.outcome for item in judged])]
