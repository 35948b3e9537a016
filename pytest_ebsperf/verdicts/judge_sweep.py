"""``ebsperf judge`` of a kept block-size sweep (S2-08, S2-10): every point the check ran,
judged again as one curve, as the check judged it; and of a kept run-to-run stability check
(S1-09): every run's figure, the spread judged again as the check judged it.

The check's kept verdict (``STEM.ebsperf.json`` beside its last point) names every point's
kept run and the expectation each point was judged against; each point's own record says
why fio stopped, the seconds it was planned for and what else the check judged it on (the
status reports' windows, the seconds its emulated volume fell behind, the kernel's count).
Each point is read as judge reads any kept run (:func:`kept_point`), and
:func:`pytest_ebsperf.verdicts.block_sizes.judge_sweep` decides over the points, as it did
for the check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.counted import apply_witness
from pytest_ebsperf.fio.kept import kept_verdict
from pytest_ebsperf.fio.parse import result_from_data
from pytest_ebsperf.fio.reports import _series, log_texts, read_reports, units_of, workload_of
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.block_sizes import SweepPoint, judge_sweep
from pytest_ebsperf.verdicts.judge_facts import (
    kept_count,
    kept_expectation,
    kept_judged_on,
    kept_level,
    kept_planned_s,
)
from pytest_ebsperf.verdicts.outcome import Verdict
from pytest_ebsperf.verdicts.stability import (
    emulator_uneven,
    judge_stability,
    measured_again,
)


def covered_points(verdict_file: Path, kept: Mapping[str, Any]) -> set[Path]:
    """The reports of the points a kept sweep's verdict covers, or of the runs a kept
    stability check's verdict covers (resolved paths), its own included."""
    if not kept.get("outcome"):
        return set()
    here = verdict_file.parent
    return {(here / f"{run}.json").resolve() for key in ("sweep", "stability")
            if isinstance(kept.get(key), dict) for run in kept[key].get("runs") or ()}


def kept_point(report: Path, record: Mapping[str, Any]) -> tuple[FioResult, Workload]:
    """A kept run as the check that ran it judged it: fio's report with its logs, stopped
    where the check stopped it, with the windows, host's seconds and kernel's count the
    check's record holds, over the seconds it was planned for."""
    reports = read_reports(str(report), "json")
    units = units_of(reports[0].data)
    if len(reports) != 1 or len(units) != 1:
        raise EbsperfError(f"{report}: a kept sweep point holds {len(units)} runs, not one.")
    unit = units[0]
    result = result_from_data(unit.data, None, reports[0].text)
    workload, _ = workload_of(result, str(report))
    stop = str(record.get("stop_reason") or "")
    if stop:
        result = replace(result, stop_reason=stop)
    result, _, _, _ = kept_judged_on(dict(record), result)
    seen = kept_count(dict(record))
    witnessed = False
    if seen is not None:
        result, _, witnessed = apply_witness(result, workload, seen)
    logs, _ = ({}, None) if witnessed else log_texts(None, unit, result, str(report))
    if logs:
        result = replace(result, series=_series(logs, workload, result)[0])
    planned = kept_planned_s(dict(record)) if stop else None
    return result, workload if planned is None else workload.replace(runtime_s=planned)


def judge_sweep_again(report: str, kept: Mapping[str, Any], claim: str, name: str
                      ) -> Verdict:
    """The kept sweep whose verdict sits beside ``report`` (its last point, in file
    ``name``), judged again from every point's kept run against the expectation the check
    gave that point."""
    sweep = kept["sweep"]
    here = Path(report).resolve().parent
    try:
        runs = [str(run) for run in sweep["runs"]]
        recorded = list(sweep["expectations"])
        planned = int(sweep["planned_points"])
        cpu_count = None if sweep.get("cpu_count") is None else int(sweep["cpu_count"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EbsperfError(f"{report}: its kept sweep cannot be read ({exc}); pass the folder "
                           "--ebsperf-keep-fio wrote, unedited.") from None
    if not runs or len(runs) != len(recorded):
        raise EbsperfError(f"{report}: its kept sweep names {len(runs)} runs for "
                           f"{len(recorded)} expectations; pass the folder "
                           "--ebsperf-keep-fio wrote, unedited.")
    what = str((kept.get("expectation") or {}).get("what") or kept.get("check") or "a sweep")
    what = f"{what.split(' (from ')[0]} (from {name})"
    points: list[SweepPoint] = []
    for run, expected in zip(runs, recorded):
        path = here / f"{run}.json"
        if not path.exists():
            raise EbsperfError(f"{report}: the sweep's point {run}.json is not beside it; "
                               "pass the whole folder --ebsperf-keep-fio wrote.")
        record = kept if path.resolve() == Path(report).resolve() else \
            kept_verdict(path) or {}
        expectation = kept_expectation({"expectation": expected}, claim, what)
        if expectation is None:
            raise EbsperfError(f"{report}: the expectation of the sweep's point {run} cannot "
                               "be read; pass the folder --ebsperf-keep-fio wrote, unedited.")
        result, workload = kept_point(path, record)
        points.append((workload.bs, expectation, result, workload))
    found = judge_sweep(claim, what, points, cpu_count=cpu_count, policy=kept_level(dict(kept)),
                        planned_points=planned)
    if len(points) < planned:
        found = replace(found, message=f"{found.message} The sweep stopped there; "
                        f"{planned - len(points)} of its {planned} block sizes not measured.")
    return found


def judge_stability_again(report: str, kept: Mapping[str, Any], claim: str, name: str
                          ) -> Verdict:
    """The kept stability check whose verdict sits beside ``report`` (its last run, in file
    ``name``), judged again from every run's kept report: each run's figure as the check
    read it, their spread against the same allowance at the same level."""
    series = kept["stability"]
    here = Path(report).resolve().parent
    try:
        runs = [str(run) for run in series["runs"]]
        dropped, max_cv = int(series["dropped"]), float(series["max_cv"])
        alpha = float(series["alpha"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EbsperfError(f"{report}: its kept series of runs cannot be read ({exc}); pass "
                           "the folder --ebsperf-keep-fio wrote, unedited.") from None
    means: list[float] = []
    for run in runs:
        path = here / f"{run}.json"
        if not path.exists():
            raise EbsperfError(f"{report}: the series' run {run}.json is not beside it; "
                               "pass the whole folder --ebsperf-keep-fio wrote.")
        record = kept if path.resolve() == Path(report).resolve() else \
            kept_verdict(path) or {}
        means.append(kept_point(path, record)[0].total_iops)
    what = str((kept.get("expectation") or {}).get("what") or kept.get("check") or "runs")
    found = judge_stability(claim, f"{what.split(' (from ')[0]} (from {name})", means,
                            max_cv=max_cv, dropped=dropped, alpha=alpha)
    shares = series.get("emulator_shares")
    if isinstance(shares, list):  # an emulated volume's runs: judged as the check judged them
        found = emulator_uneven(found, [s if isinstance(s, (int, float)) else None
                                        for s in shares], str(series.get("volume_type") or
                                                             "the volume"))
    again = series.get("measured_again")  # runs the host held back, measured again live
    if isinstance(again, list):
        found = measured_again(found, [float(s) for s in again if isinstance(s, (int, float))])
    return found
