"""Verdicts that need no statistics: a time against its expected duration (TIME), a setting read
from the kernel (discard), and a figure recorded without a bar (INFO).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_ebsperf.awsmodel.burst import TIME_ABS_TOLERANCE_S, TIME_REL_TOLERANCE
from pytest_ebsperf.awsmodel.types import FLOOR, INFO, TIME
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import (
    format_mibps,
    format_number,
    format_percent,
    format_quantity,
    format_seconds,
)
from pytest_ebsperf.verdicts.lower import sentence
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: TIME defaults (claims.md): |t - t_model| <= max(10 % of t_model, 120 s).
TIME_REL_TOL = TIME_REL_TOLERANCE
TIME_MIN_ABS_S = TIME_ABS_TOLERANCE_S


# -- INFO ---------------------------------------------------------------------------------
def judge_info(claim: str, what: str, measured: FioResult | float | None,
               workload: Workload | None = None, *, unit: str = "IOPS",
               expected: float | None = None, notes: Sequence[str] = (),
               source: str = "") -> Verdict:
    """INFO: record a best-effort number (Magnetic, retired instance types). Never fails.

    ``measured`` is a fio result (its total IOPS, or bytes/s when ``unit`` is "B/s") or a
    plain number in ``unit``.
    """
    details: dict[str, Any] = {"notes": list(notes)}
    if isinstance(measured, FioResult):
        details.update(fio_numbers(measured))
        value: float | None = (measured.total_bw_bytes if unit == "B/s"
                               else measured.total_iops)
    else:
        value = measured
    if workload is not None:
        details["workload"] = workload.label()
    shown = format_quantity(value, unit)
    if isinstance(measured, FioResult) and unit == "IOPS":
        shown += f" ({format_mibps(measured.total_bw_bytes)})"
    reference = f", documented {format_quantity(expected, unit)}" if expected else ""
    extra = "".join(f" {sentence(note)}" for note in notes if note)
    cite = f" Claim {claim}" + (f", {source}" if source else "")
    message = (f"{what}: {shown} measured{reference} (recorded, not judged: best effort)."
               f"{extra}{cite}")
    return Verdict(Outcome.INFO, claim, what, expected, value, unit, "best effort",
                   f"recorded {shown}", message, INFO, details)


# -- TIME ---------------------------------------------------------------------------------
def judge_time(claim: str, what: str, measured_s: float | None, expected_s: float, *,
               rel_tol: float = TIME_REL_TOL, min_abs_s: float = TIME_MIN_ABS_S,
               observed_for_s: float | None = None, binding: str = "burst credits",
               source: str = "") -> Verdict:
    """TIME: ``|t - t_model| <= max(rel_tol x t_model, min_abs_s)`` (burst duration).

    ``measured_s`` None means the event was not seen; with ``observed_for_s`` past the
    tolerance window that is a failure (the burst lasted too long), otherwise inconclusive.
    """
    slack = max(rel_tol * expected_s, min_abs_s)
    tolerance = (f"within ± {format_number(slack)} s required, the larger of "
                 f"{format_percent(rel_tol)} and {format_number(min_abs_s)} s")
    cite = f"Claim {claim}" + (f", {source}" if source else "")
    details = {"slack_s": slack, "rel_tol": rel_tol, "min_abs_s": min_abs_s,
               "observed_for_s": observed_for_s}
    if measured_s is None:
        return _time_not_seen(claim, what, expected_s, slack, observed_for_s, binding,
                              f"{format_seconds(expected_s)} ({tolerance}). {cite}", details)
    delta = measured_s - expected_s
    outcome = Outcome.PASS if abs(delta) <= slack else Outcome.FAIL
    reason = f"{format_seconds(measured_s)}, {delta:+,.0f} s from the model"
    message = (f"{what}: {format_seconds(measured_s)} measured, {format_seconds(expected_s)} "
               f"expected ({delta:+,.0f} s; {tolerance}). {cite}")
    return Verdict(outcome, claim, what, expected_s, measured_s, "s", binding, reason,
                   message, TIME, {**details, "delta_s": delta})


def _time_not_seen(claim: str, what: str, expected_s: float, slack: float,
                   observed_for_s: float | None, binding: str, tail: str,
                   details: dict[str, Any]) -> Verdict:
    if observed_for_s is not None and observed_for_s > expected_s + slack:
        reason = f"no event within {format_seconds(observed_for_s)}"
        message = f"{what}: {reason}; expected {tail}"
        return Verdict(Outcome.FAIL, claim, what, expected_s, None, "s", binding, reason,
                       message, TIME, details)
    watched = format_seconds(observed_for_s) if observed_for_s is not None else "the run"
    reason = (f"inconclusive: the run ended after {watched}, before the event could be "
              "judged - run longer (--ebsperf-long)")
    message = f"{what}: {reason}; expected {tail}"
    return Verdict(Outcome.INCONCLUSIVE, claim, what, expected_s, None, "s", "run length",
                   reason, message, TIME, details)


# -- device facts -------------------------------------------------------------------------
def judge_discard(claim: str, what: str, path: str, discard_max_bytes: int, *,
                  source: str = "") -> Verdict:
    """S1-02/S1-05: a TRIM-capable device reports ``discard_max_bytes`` > 0 in sysfs."""
    cite = f"Claim {claim}" + (f", {source}" if source else "")
    if discard_max_bytes > 0:
        reason = f"{path} accepts discards up to {discard_max_bytes:,} bytes"
        return Verdict(Outcome.PASS, claim, what, None, float(discard_max_bytes), "bytes",
                       "device", reason, f"{what}: {reason}. {cite}", FLOOR,
                       {"discard_max_bytes": discard_max_bytes})
    reason = f"{path} reports discard_max_bytes = 0: the kernel will not send it TRIM"
    message = (f"{what}: {reason}. Check that this is an SSD/NVMe instance-store device on "
               f"an instance type that supports TRIM. {cite}")
    return Verdict(Outcome.FAIL, claim, what, None, 0.0, "bytes", "device", reason, message,
                   FLOOR, {"discard_max_bytes": discard_max_bytes})


def fio_numbers(result: FioResult) -> dict[str, Any]:
    """The headline numbers of a run, as plain floats (for verdict details and reports)."""
    numbers: dict[str, Any] = {"iops": result.total_iops, "bw_bytes": result.total_bw_bytes,
                               "cpu_per_job_pct": result.usr_cpu + result.sys_cpu,
                               "jobs": result.jobs, "fio_version": result.fio_version}
    for name, stats in (("read", result.read), ("write", result.write)):
        if stats.active or stats.iops:
            numbers[f"{name}_iops"] = stats.iops
            numbers[f"{name}_p50_ns"] = stats.clat.p(50.0)
            numbers[f"{name}_p99_ns"] = stats.clat.p(99.0)
    return numbers
