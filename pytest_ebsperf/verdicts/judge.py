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

Exit status: 0 pass, 1 fail, 2 inconclusive, 4 bad input (a sentence, no traceback); several
files or units: 1 if any failed, else 4 if any was refused, else 2 if any inconclusive, else 0.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.types import CAP, FLOOR, INFO, REL, TIME
from pytest_ebsperf.errors import EXIT_CODES, EbsperfError, Parser
from pytest_ebsperf.fio.counted import apply_witness, witness_of
from pytest_ebsperf.fio.kept import KEPT_SUFFIX, kept_verdict
from pytest_ebsperf.fio.parse import result_from_data
from pytest_ebsperf.fio.reports import (
    FORMATS,
    Report,
    Unit,
    _errno_text,
    _fio_error,
    _series,
    files_in,
    log_texts,
    not_judged,
    read_reports,
    stopped_early,
    units_of,
    workload_of,
)
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import verdict
from pytest_ebsperf.verdicts.first_read import judge_first_read
from pytest_ebsperf.verdicts.judge_facts import (
    expectation_for,
    kept_again,
    kept_count,
    kept_expectation,
    kept_judged_on,
    kept_level,
    kept_members,
    kept_planned_s,
    kept_seconds,
    magnetic,
    volumes_of,
)
from pytest_ebsperf.verdicts.judge_pairs import covered_runs, judge_pairs
from pytest_ebsperf.verdicts.judge_sweep import (
    covered_points,
    judge_stability_again,
    judge_sweep_again,
)
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict
from pytest_ebsperf.verdicts.run_bounds import credits_ran_out, held_back

EXIT = {Outcome.PASS: 0, Outcome.FAIL: 1, Outcome.INCONCLUSIVE: 2, Outcome.INFO: 0}
USAGE_EXIT = 4


@functools.lru_cache(maxsize=1)  # built once: a judge of many files parses with it each time
def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="ebsperf judge", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Judge fio output (JSON, normal or terse; a file or a directory "
                "of them) against a volume's documented limits (the model the suites use).",
                epilog=EXIT_CODES + "\n  several files or units: 1 when any failed, else 4 "
                "when any file was refused, else 2 when any was inconclusive, else 0")
    p.add_argument("report", help="fio output: a file (json, json+, normal or terse), or a "
                   "directory searched for them")
    p.add_argument("--volume-type", help="the volume's type (required unless every output is "
                   "a run the suites kept, whose record beside it names its volume)")
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
    p.add_argument("--init-rate", type=float, metavar="MIBPS", help="the output is the first "
                   "read of every block of a volume restored from a snapshot with this "
                   "Provisioned Rate for Volume Initialization (100-300 MiB/s): judged against "
                   "the least mean that rate allows (B-INIT)")
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
    p.add_argument("--claim", default=None,
                   help="claim ID for the message (default: the claim a kept run's check "
                        "named, else B-SLA)")
    p.add_argument("--json", action="store_true", help="the verdicts as JSON on stdout")
    return p


@dataclass
class Judged:
    unit: Unit
    verdict: Verdict
    workload: Workload
    path: str = ""


# -- judging --------------------------------------------------------------------------------------
@dataclass
class Refused:
    """A file that could not be judged, and why."""

    path: str
    reason: str


@dataclass
class Skipped:
    """A kept part of a check (a probe, a block) that no volume facts were given for: not a
    check, so not judged, and no refusal either."""

    path: str
    reason: str


def judge_report(argv: Sequence[str]) -> list[Judged | Refused | Skipped]:
    """Every unit of every fio output ``argv`` names, judged (see the module's doc)."""
    args = _parser().parse_args(argv)
    target = Path(args.report)
    if not target.exists():
        raise EbsperfError(f"{target} cannot be read (No such file or directory).")
    members = volumes_of(args) if args.volume_type or args.member else None
    if target.is_dir():
        found: list[Judged | Refused | Skipped] = []
        files = files_in(target)
        # the blocks of a kept comparison are judged as the comparison, once
        covered: set[Path] = set()
        for path in files:  # and the points of a kept sweep as the sweep
            covered |= covered_runs(path, kept_verdict(path) or {}) | \
                covered_points(path, kept_verdict(path) or {})
        for path in files:
            own = kept_verdict(path) or {}
            if path.resolve() in covered and not (own.get("paired") or own.get("sweep")
                                                  or own.get("stability")):
                continue
            try:
                reports = _read(str(path), args.format)
            except EbsperfError as exc:
                if "holds no fio output" in str(exc):
                    continue  # a file of another kind beside the reports
                found.append(Refused(str(path), str(exc)))
                continue
            for report in reports:
                try:
                    found += _judged(args, members, report)
                except EbsperfError as exc:
                    found.append(Refused(str(path), str(exc)))
        if not found:
            raise EbsperfError(f"{target}: no file in it holds fio output (JSON, normal or "
                               "terse).")
        return found
    judged: list[Judged | Refused | Skipped] = []
    for report in _read(args.report, args.format):
        judged += _judged(args, members, report)
    return judged


#: What reading or judging a damaged output can raise below the sentences the readers give:
#: any of them is a refusal of that file, never a traceback.
_UNREADABLE = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError,
               ZeroDivisionError, RecursionError)


def _unreadable(path: str, exc: BaseException) -> EbsperfError:
    return EbsperfError(f"{path} cannot be read as fio output ({type(exc).__name__}: "
                        f"{str(exc)[:200] or 'no detail'}): it is cut short, edited or not "
                        "fio's; pass fio's own output file (--output) or what fio printed")


def _read(path: str, form: str) -> list[Report]:
    try:
        return read_reports(path, form)
    except _UNREADABLE as exc:
        raise _unreadable(path, exc) from None


def _judged(args: argparse.Namespace, members: Sequence[Any] | None, report: Report
            ) -> list[Judged | Refused | Skipped]:
    try:
        return judge_one(args, members, report)
    except _UNREADABLE as exc:
        raise _unreadable(report.path, exc) from None


def judge_one(args: argparse.Namespace, given: Sequence[Any] | None, report: Report
              ) -> list[Judged | Refused | Skipped]:
    """The units of one fio run, judged against the volume facts ``given`` (None: those a
    kept run's record holds, and the expectation its check used)."""

    data, text = report.data, report.text
    preamble = text[:text.find("{")] if report.form == "json" and "{" in text else text
    units = units_of(data, host=args.host, device=args.device, group=args.group)
    name = os.path.basename(report.path) + (f", {report.label}" if report.label else "")
    judged: list[Judged | Refused | Skipped] = []
    for unit in units:
        where = f"{report.path}{' (' + unit.label + ')' if unit.label else ''}"
        result = result_from_data(unit.data, None, text)
        if result.errors and result.total_iops <= 0:
            said = _fio_error(preamble) or _errno_text(result.errors)
            judged.append(Refused(where, f"fio reported error {', '.join(map(str, result.errors))} "
                                  f"and measured nothing: {said}"))
            continue
        kept = kept_verdict(report.path) or {}
        if kept and not kept.get("outcome") and not_judged(result):
            # a TRIM between a check's passes (S1-08): kept as what it was, judged by nothing
            judged.append(Skipped(where, f"a {kept.get('phase') or 'part'} run of "
                                  f"{kept.get('check') or 'a check'} (fio's "
                                  f"{not_judged(result)}, which no volume claim describes)"))
            continue
        workload, notes = workload_of(result, where, rw=args.rw, bs=args.bs,
                                      iodepth=args.iodepth)
        notes = [*unit.notes, *notes]
        if report.form != "json":
            notes.insert(0, f"read from fio's {report.form} output{unit.data.get('read_as', '')}"
                         + (f" ({result.fio_version})" if result.fio_version else ""))
        if len(units) > 1:
            kind = unit.label.split()[0]
            notes.insert(0, f"the report holds {len(units)} {kind}s, each judged on its own "
                         f"against the same volume facts (--{kind} judges one)")
        if kept.get("outcome") and kept.get("paired"):
            workload, _ = workload_of(result, where)
            found = judge_pairs(report.path, kept, args.claim or str(kept.get("claim")))
            found = replace(found, details={**found.details, "notes": [
                (f"the {len(kept['paired'].get('runs') or ())} pairs of blocks of "
                f"{kept.get('check') or 'a comparison'} judged again from their kept "
                f"reports (its verdict then: {kept.get('outcome')})")]})
            judged.append(Judged(unit, found, workload, report.path))
            continue
        members = given if given is not None else kept_members(kept)
        if members is None:
            if kept and not kept.get("outcome"):
                judged.append(Skipped(where, f"a {kept.get('phase') or 'part'} run of "
                                      f"{kept.get('check') or 'a check'}, not a check: give "
                                      "--volume-type (and the volume's size, IOPS ...) to "
                                      "judge it as a run of its own"))
                continue
            raise EbsperfError("no volume facts: pass --volume-type (and --volume-size, "
                               "--volume-iops ... as the type needs); only a run the suites "
                               "kept (--ebsperf-keep-fio) names its own volume")
        own = kept.get("expectation") if given is None else None
        if kept and not kept.get("outcome"):
            notes.append(f"kept as a {kept.get('phase') or 'part'} run of "
                         f"{kept.get('check') or 'a check'}, not the run its verdict came "
                         "from: judged as a run of its own")
            kept = {}
        if kept.get("outcome") and kept.get("sweep"):
            workload, _ = workload_of(result, where)
            found = judge_sweep_again(report.path, kept, args.claim or str(kept.get("claim")),
                                      name)
            found = replace(found, details={**found.details, "notes": [(
                f"the {len(kept['sweep'].get('runs') or ())} points of "
                f"{kept.get('check') or 'a block-size sweep'} judged again from their kept "
                f"runs, as one curve (its verdict then: {kept.get('outcome')})")]})
            judged.append(Judged(unit, found, workload, report.path))
            continue
        if kept.get("outcome") and kept.get("stability"):
            workload, _ = workload_of(result, where)
            found = judge_stability_again(report.path, kept,
                                          args.claim or str(kept.get("claim")), name)
            found = replace(found, details={**found.details, "notes": [(
                f"the {len(kept['stability'].get('runs') or ())} runs of "
                f"{kept.get('check') or 'a stability check'} judged again from their kept "
                f"reports, as one series (its verdict then: {kept.get('outcome')})")]})
            judged.append(Judged(unit, found, workload, report.path))
            continue
        if kept.get("sweep_points"):
            notes.append(f"kept as the last of the {kept['sweep_points']} points of "
                         f"{kept.get('check') or 'a block-size sweep'} ({kept.get('claim')}: "
                         f"{kept.get('outcome')}), whose verdict judges its points together, "
                         "which judge does not do again: judged as a run of its own")
            kept = {}
        own_test = kept if (kept.get("latency") or kept.get("knee")) and kept.get("outcome") \
            else {}
        if kept.get("policy") not in (None, CAP, FLOOR, INFO) and not own_test:
            # a burst's knee or a refill is timed against the bucket's balance before the
            # run, which fio's output does not hold; a comparison needs all its blocks
            why = {TIME: "whose verdict rests on the burst bucket's balance before it, which "
                         "the output does not hold",
                   REL: "a comparison of runs not all kept, which judge does not make "
                        "again"}.get(
                str(kept.get("policy")), "a claim on latencies, which judge does not judge "
                "again (its rate is judged)")
            notes.append(f"kept as the run of {kept.get('check') or 'a check'} "
                         f"({kept.get('claim')}, {kept.get('policy')}: {kept.get('outcome')}), "
                         f"{why}: judged as a run of its own")
            kept = {}
        stop = str(kept.get("stop_reason") or "")
        early = stopped_early(unit.data, preamble)
        if stop:
            # the live check stopped fio once its verdict was settled: judged as it was,
            # on the seconds it was planned for
            result = replace(result, stop_reason=stop)
            notes.append(f"kept with the verdict of the check that ran it "
                         f"({os.path.basename(report.path)[:-5]}{KEPT_SUFFIX}): "
                         f"{kept.get('claim')} {kept.get('outcome')}")
        elif early:
            notes.append(f"{early}: judged on what ran")
        result, prior, rest_s, added = kept_judged_on(kept, result)
        notes += added
        if result.errors:
            said = _fio_error(preamble) or _errno_text(result.errors)
            notes.append(f"fio reported error {', '.join(map(str, result.errors))}"
                         + (f" ({said})" if said else ""))
        # the device's count stands for the run as a whole: one unit of a local run
        alone = len(units) == 1 and "client_stats" not in data and not args.device
        seen = None if args.trust_fio else kept_count(kept) or \
            (witness_of(data, result) if alone else None)
        witnessed = False
        if seen is not None:
            result, said_seen, witnessed = apply_witness(result, workload, seen)
            notes.append(said_seen)
        logs, logs_from = ({}, None) if witnessed else log_texts(args.logs, unit, result,
                                                                  report.path)
        if logs:
            series, said_logs = _series(logs, workload, result)
            result = replace(result, series=series)
            notes += [f"per-second figures from {logs_from}_*", *said_logs]
        again = kept_again(own_test, result, workload, name) if own_test and \
            not args.claim else None
        if again is not None:  # a latency or burst check, judged again by its own test
            notes = [*notes, *again.details["notes"]]
            judged.append(Judged(unit, replace(again, details={**again.details, "notes": notes}),
                                 workload, report.path))
            continue
        result = kept_seconds(kept, result)
        metric = args.metric or ("throughput" if workload.bs >= 256 * 1024 else "iops")
        count = f"{len(members)} x " if len(members) > 1 else ""
        what = (f"{count}{members[0].label()}, {workload.label()} (from "
                f"{name}{', ' + unit.label if unit.label else ''})")
        claim = args.claim or str(kept.get("claim") or
                                  ("B-INIT" if args.init_rate is not None else "B-SLA"))
        expectation = (kept_expectation(kept, claim, what) if own and kept else None) or \
            expectation_for(argparse.Namespace(**{**vars(args), "claim": claim}), members,
                            workload, what, metric)
        if expectation.unit in ("IOPS", "B/s"):  # a floor is published in IOPS only; a
            metric = "iops" if expectation.unit == "IOPS" else "throughput"  # kept one's own
        if args.init_rate is not None:
            found = judge_first_read(expectation, result, workload, cpu_count=None)
        elif awsmodel.volume_type(members[0].type).family == awsmodel.MAGNETIC:
            found = magnetic(expectation, result, workload)
        else:
            planned = rest_s or (kept_planned_s(kept) if stop else None)
            found = verdict.judge(expectation, result, workload if planned is None else
                                  workload.replace(runtime_s=planned), metric=metric,
                                  cpu_count=None, policy=kept_level(kept) if kept else None,
                                  prior=prior)
            # offline, the queue depth to raise is fio's own option, not the plugin's
            found = replace(found, message=found.message.replace("--ebsperf-iodepth",
                                                                 "fio's iodepth"),
                            reason=found.reason.replace("--ebsperf-iodepth", "fio's iodepth"))
        if (result.job_options.get("direct") or "0") in ("0", "false") and \
                workload.read_fraction > 0:
            notes.append("the job ran buffered (direct=0, fio's default): reads may have "
                         "come from the page cache, not the volume")
        ran_dry = credits_ran_out(unit.data, members, result.total_iops)
        short = found.outcome in (Outcome.FAIL, Outcome.INCONCLUSIVE)
        if ran_dry and not short:
            notes.append(ran_dry)  # recorded or passed: said, not judged
        found = held_back(found, result.job_options, workload, ran_dry=ran_dry)
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


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # the stream of now, not of when this module was imported
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
    skipped = [item for item in found if isinstance(item, Skipped)]
    if as_json:
        print(json.dumps({"verdicts": [_as_json(item) for item in judged],
                          "refused": [{"path": r.path, "reason": r.reason} for r in refused],
                          "skipped": [{"path": k.path, "reason": k.reason} for k in skipped]},
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
        for left in skipped:
            print(f"SKIPPED {left.path}: {left.reason}", file=out)
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
