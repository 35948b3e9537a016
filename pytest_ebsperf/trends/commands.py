"""``ebsperf history`` and ``ebsperf compare``.

    ebsperf history --db perf.sqlite [--since 10] [--html trends.html]
    ebsperf history --db perf.sqlite --import run1.json run2.json ...
    ebsperf compare baseline.json candidate.json [--threshold 10]
    ebsperf compare --db perf.sqlite 12 13
    ebsperf compare --db perf.sqlite --matrix S0-04 [--by instance_type]

``history`` prints every check's trend (its runs, the latest figure, where it changed) and
exits 1 when a change for the worse starts within the last ``--since`` runs of any check,
so a nightly job can gate on drift. ``compare`` gives two runs the verdicts
``--ebsperf-compare`` gives (exit 1 on a regression); ``--matrix`` lays one claim out by
instance type, AMI, kernel or host (rows) and runs (columns). Exit 4: bad input, a sentence.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from pytest_ebsperf.errors import EXIT_CODES, EbsperfError, Parser
from pytest_ebsperf.results import compare as cmp
from pytest_ebsperf.results.tables import fit_table
from pytest_ebsperf.trends.analysis import (
    DEFAULT_SINCE,
    analyse,
    describe,
    describe_assumption,
    describe_drift,
)
from pytest_ebsperf.trends.changes import DEFAULT_ALPHA, DEFAULT_DRIFT_ALPHA
from pytest_ebsperf.trends.page import render
from pytest_ebsperf.trends.store import HistoryStore, documents_from
from pytest_ebsperf.units import counted, format_quantity

USAGE_EXIT = 4


def _db(value: str | None, *, create: bool = False) -> str:
    """The history database named (``--db``, else EBSPERF_HISTORY); it must exist unless
    ``create`` (runs are being imported into it)."""
    found = value or os.environ.get("EBSPERF_HISTORY")
    if not found:
        raise EbsperfError("no history database: pass --db PATH (the file --ebsperf-history "
                           "writes) or set EBSPERF_HISTORY.")
    if not create and not Path(found).exists():
        where = "--db" if value else "EBSPERF_HISTORY"
        raise EbsperfError(f"{found} (from {where}) does not exist: give the database "
                           "--ebsperf-history wrote, or --import results files to start one.")
    return found


def history_main(argv: Sequence[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout  # the stream of now, not of when this module was imported
    parser = Parser(prog="ebsperf history", description="Trends, change points and drift of "
                    "every check in a history database (--ebsperf-history).",
                    epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="the history database (default: $EBSPERF_HISTORY)")
    parser.add_argument("--import", dest="imports", nargs="+", metavar="FILE",
                        help="add results files (--ebsperf-report) or pytest-benchmark JSON "
                        "files to the database, then report")
    parser.add_argument("--since", type=int, default=None, help="fail (exit 1) on a change "
                        "for the worse starting within this many latest runs (default 10)")
    parser.add_argument("--alpha", type=float, default=None,
                        help="false-alarm level of a change per check (default 0.01)")
    parser.add_argument("--claim", help="only this claim (e.g. S0-04)")
    parser.add_argument("--host", help="only this host (or instance type)")
    parser.add_argument("--html", metavar="FILE", help="write the charts to FILE")
    try:
        args = parser.parse_args(argv)
        return _history(args, out)
    except EbsperfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT


def _history(args: argparse.Namespace, out: TextIO) -> int:

    since = DEFAULT_SINCE if args.since is None else args.since
    alpha = DEFAULT_ALPHA if args.alpha is None else args.alpha
    if since < 1 or not 0 < alpha < 1:
        raise EbsperfError("--since is a number of runs (1 or more) and --alpha a probability "
                           "between 0 and 1.")
    with HistoryStore(_db(args.db, create=bool(args.imports)),
                      read_only=not args.imports) as store:
        for source, document in documents_from(args.imports or ()):
            run_id = store.append(document, source=source)
            print(f"imported {source.split(':', 1)[1]} as run {run_id}", file=out)
        series = store.series(claim=args.claim, host=args.host)
        runs = store.runs()
    if not series:
        print(f"no checks in {args.db or os.environ.get('EBSPERF_HISTORY')} yet"
              f"{' for ' + args.claim if args.claim else ''}.", file=out)
        return 0
    trends = analyse(series, alpha=alpha, since=since)
    table = [[t.identity.claim, t.identity.what, t.identity.host, t.identity.volume,
              str(len(t.points)), format_quantity(t.last.measured, t.identity.unit),
              describe(t)] for t in trends]
    width = _width()
    print(fit_table(table, ["Claim", "What", "Host", "Volume", "Runs", "Last", "Change"],
                    tablefmt="simple", width=width, wrap=("What", "Volume", "Host", "Change"),
                    drop=("Volume", "Host")), file=out)
    worse = [t for t in trends if t.worse]
    print(f"{counted(len(runs), 'run')}, {counted(len(trends), 'check')}: {len(worse)} changed "
          f"or drifting for the worse within the last {counted(since, 'run')} (change points "
          f"at false-alarm level {alpha:g} per check, drifts at {DEFAULT_DRIFT_ALPHA:g}).",
          file=out)
    for trend in worse:
        change = trend.worsening
        where = f"{trend.identity.claim} {trend.identity.what} on {trend.identity.host}"
        if change is not None:
            print(f"WORSE {where}: {format_quantity(change.before, trend.identity.unit)} -> "
                  f"{format_quantity(change.after, trend.identity.unit)} "
                  f"({change.relative * 100:+.1f} %) from run "
                  f"{trend.points[change.index].run_id}", file=out)
        if trend.drift is not None:
            print(f"DRIFT {where}: {describe_drift(trend)}, by "
                  f"{trend.drift.method}", file=out)
        print(f"  {describe_assumption(trend)}", file=out)
    if args.html:

        Path(args.html).write_text(render(trends, title="pytest-ebsperf: storage over time",
                                          since=since, alpha=alpha), encoding="utf-8")
        print(f"charts: {args.html}", file=out)
    return 1 if worse else 0


def _width() -> int | None:

    return shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else None


# -- compare -------------------------------------------------------------------------------
def compare_main(argv: Sequence[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout  # the stream of now, not of when this module was imported
    parser = Parser(prog="ebsperf compare", description="Two runs' verdicts, as "
                    "--ebsperf-compare gives them, without pytest; or one claim across "
                    "instance types, AMIs, kernels or hosts.", epilog=EXIT_CODES,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", metavar="RUN",
                        help="BASELINE CANDIDATE: two results files, or two run ids of --db")
    parser.add_argument("--db", help="history database (for run ids and --matrix)")
    parser.add_argument("--threshold", type=float, default=10.0,
                        help="smallest change in percent that is a regression (default 10)")
    parser.add_argument("--matrix", metavar="CLAIM", help="lay CLAIM out by --by (rows) and "
                        "run (columns)")
    parser.add_argument("--by", default="instance_type",
                        choices=("instance_type", "ami", "kernel", "host", "fio_version"))
    parser.add_argument("--last", type=int, default=8, help="runs per row in --matrix")
    try:
        args = parser.parse_args(argv)
        if args.matrix:
            return _matrix(args, out)
        if len(args.runs) != 2:
            raise EbsperfError("compare takes two runs: BASELINE CANDIDATE (results files, or "
                               "run ids with --db), or --matrix CLAIM --db PATH.")
        return _compare(args, out)
    except EbsperfError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return USAGE_EXIT


def _document(spec: str, db: str | None) -> tuple[str, dict[str, Any]]:
    if spec.isdigit() and (db or os.environ.get("EBSPERF_HISTORY")):

        with HistoryStore(_db(db), read_only=True) as store:
            return f"run {spec} of {_db(db)}", store.document(int(spec))

    (source, document), = documents_from([spec])
    return source.split(":", 1)[1], document


def _compare(args: argparse.Namespace, out: TextIO) -> int:

    base_name, base = _document(args.runs[0], args.db)
    name, current = _document(args.runs[1], args.db)
    baseline = cmp.Baseline(base_name, [m for m in base.get("measurements") or []])
    regressed = 0
    measured = {m.get("id"): m for m in current.get("measurements") or []}
    for check in current.get("checks") or []:
        mine = [measured[i] for i in check.get("measurement_ids") or () if i in measured
                and measured[i].get("role", "device") == "device"]
        if not mine:
            continue
        results = []
        for measurement in mine:
            measurement = {**measurement, "claim": check.get("claim"),
                           "what": check.get("what")}
            found, note = baseline.match(measurement)
            results.append(cmp.compare_measurement(
                measurement, found, threshold_pct=args.threshold,
                check=cmp.describe_check(measurement), note=note, source=base_name))
        status = cmp.worst(c.status for c in results)
        shown = next(c for c in results if c.status == status)
        regressed += status == cmp.REGRESSION
        print(f"{status.upper()} {check.get('claim')} {check.get('what')}: {shown.summary()}",
              file=out)
        if status == cmp.REGRESSION:
            print(f"  {shown.message()}", file=out)
    print(f"{name} against {base_name}: {regressed} regressed beyond {args.threshold:g} % "
          "(statistically clear).", file=out)
    return 1 if regressed else 0


def _matrix(args: argparse.Namespace, out: TextIO) -> int:

    column = {"instance_type": "instance type", "fio_version": "fio"}.get(args.by, args.by)
    with HistoryStore(_db(args.db), read_only=True) as store:
        series = store.series(claim=args.matrix)
    if not series:
        raise EbsperfError(f"{args.db} has no runs of claim {args.matrix}.")
    # columns are runs (the latest --last of them, oldest first); a row's value stands
    # under the run that measured it, blank where that run did not measure the row
    rows: dict[str, dict[int, str]] = {}
    for identity, points in series.items():
        for point in points:
            facet = (identity.host if args.by == "host"
                     else str(point.facets.get(column) or "-"))
            rows.setdefault(f"{facet} | {identity.what}", {})[point.run_id] = (
                f"{format_quantity(point.measured, identity.unit)} ({point.outcome.upper()})")
    last = max(1, args.last)
    runs = sorted({run for cells in rows.values() for run in cells})[-last:]
    table = [[label, *(cells.get(run, "") for run in runs)]
             for label, cells in sorted(rows.items()) if any(run in cells for run in runs)]
    headers = [f"{args.by} | what", *(f"run {run}" for run in runs)]
    print(f"{args.matrix}: the latest {len(runs)} runs by {args.by}", file=out)
    print(fit_table(table, headers, tablefmt="simple", width=_width(),
                    wrap=(headers[0],)), file=out)
    return 0
