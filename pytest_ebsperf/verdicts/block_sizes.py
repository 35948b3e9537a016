"""Block-size sweeps judged as one claim: each point against its own expectation, and the knee where
the volume's bound moves from IOPS to throughput.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pytest_ebsperf.awsmodel.types import CAP, Expectation
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload, format_size
from pytest_ebsperf.units import (
    format_iops,
    format_percent,
)
from pytest_ebsperf.verdicts import evidence
from pytest_ebsperf.verdicts.diagnosis import Diagnosis, cpu_diagnosis, diagnose_shortfall
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict
from pytest_ebsperf.verdicts.verdict import (
    _logged_then_live,
    _window_s,
    above_cap,
    lower_check,
    series_values,
)


@dataclass(frozen=True)
class _SweepRow:
    bs: int
    expected_iops: float
    measured_iops: float
    low: float
    high: float | None
    #: Evidence from the point's per-second samples: "fail" when its seconds miss the
    #: duty cycle or its mean lies above the band beyond noise; None without samples.
    evidence_state: str | None = None

    @property
    def ok(self) -> bool:
        """Shown to lie within the point's tolerance band (judged on the per-second samples
        when there are any, else on the mean): seconds too few to decide are not."""
        if self.evidence_state is not None:
            return self.evidence_state == evidence.PASS
        upper = self.high is None or self.measured_iops <= self.high * self.expected_iops
        return self.measured_iops >= self.low * self.expected_iops and upper

    @property
    def undecided(self) -> bool:
        """Its seconds could not show it outside the band, nor inside (too few of them)."""
        return self.evidence_state not in (None, evidence.PASS, evidence.FAIL)

    def describe(self) -> str:
        """``32KiB: 3,990 IOPS vs 4,000 IOPS (100%)``."""
        ratio = self.measured_iops / self.expected_iops if self.expected_iops else math.nan
        return (f"{format_size(self.bs)}: {format_iops(self.measured_iops)} vs "
                f"{format_iops(self.expected_iops)} ({ratio:.0%})")


def judge_sweep(claim: str, what: str, points: Sequence[SweepPoint], *,
                cpu_count: int | None = None, source: str = "",
                policy: evidence.Policy | None = None, planned_points: int | None = None,
                decided: Mapping[int, str] | None = None) -> Verdict:
    """A block-size sweep against ``min(P, T / bs)`` (seed 002, S2-08/S2-10).

    Each point's expectation carries its own value (the model's min of IOPS and throughput
    limits) and must be met within its ``low``/``high`` band, on the mean. The verdict
    reports the crossover block size the model predicts (T / P) and where the measured curve
    turned (measured peak throughput / measured peak IOPS). A point that fell short because
    fio ran out of CPU (or of queue depth, when the point carries its workload) makes the
    sweep INCONCLUSIVE rather than failed.
    """
    if not points:
        raise ValueError(f"{claim}: a sweep needs at least one block size")
    point_policy = (policy or evidence.Policy()).split(max(len(points), planned_points or 0))
    ordered = sorted(points, key=_bs_of)
    rows = [_sweep_row(point[0], point[1], point[2], point_policy,
                       point[3] if len(point) == 4 else None)
            for point in ordered]
    # a point whose seconds only raised a suspicion was looked at again: that decides it
    rows = [replace(row, evidence_state=(decided or {}).get(row.bs, row.evidence_state))
            for row in rows]
    first = ordered[0][1]
    knees = (_knee(rows, expected=True), _knee(rows, expected=False))
    knee_text = (f"crossover expected at {_knee_text(knees[0], rows)}, measured curve "
                 f"turned at {_knee_text(knees[1], rows)}")
    band = f"each point within {format_percent(first.low)}-{_high_text(first.high)}"
    source = source or first.source
    message = (f"{what}: {'; '.join(row.describe() for row in rows)} ({band}); {knee_text}. "
               f"Claim {claim}" + (f", {source}" if source else ""))
    details = {"points": [{"bs": r.bs, "expected_iops": r.expected_iops,
                           "measured_iops": r.measured_iops, "ok": r.ok} for r in rows],
               "expected_crossover_bs": knees[0], "measured_crossover_bs": knees[1]}
    outcome, binding, reason = _sweep_outcome(ordered, rows, knee_text, cpu_count)
    if outcome is Outcome.INCONCLUSIVE:
        message = f"{message} - {reason}"
    return Verdict(outcome, claim, what, rows[-1].expected_iops, rows[-1].measured_iops,
                   "IOPS", binding, reason, message, first.policy or CAP, details)


def _sweep_outcome(points: Sequence[SweepPoint], rows: Sequence[_SweepRow], knee_text: str,
                   cpu_count: int | None) -> tuple[Outcome, str, str]:
    bad = [(point, row) for point, row in zip(points, rows) if not row.ok and
           not row.undecided]
    open_rows = [row for row in rows if row.undecided]
    if not bad and open_rows:  # a point that could not have failed is no PASS
        sizes = ", ".join(format_size(row.bs) for row in open_rows)
        host = [point[2].emulator_said or  # judge of a kept point knows the seconds only
                f"the emulated volume fell behind its setting in {len(point[2].emulator_behind)}"
                f" s of {format_size(row.bs)} (this host's)"
                for point, row in zip(points, rows)
                if row.undecided and point[2].emulator_behind]
        if host:  # its seconds went to the host: no run on this host would do better
            return Outcome.INCONCLUSIVE, "emulator", (
                f"the seconds of {sizes} were too few to decide at the sweep's level once "
                f"those the emulator fell behind in were left out: {'; '.join(host)}")
        return Outcome.INCONCLUSIVE, "run length", (
            f"the seconds of {sizes} were too few to decide at the sweep's level (one point "
            "can FAIL the curve only on evidence): run longer (--ebsperf-runtime)")
    if not bad:
        return Outcome.PASS, _sweep_binding(points), (f"all {len(rows)} block sizes on the "
                                                      f"model; {knee_text}")
    for point, row in bad:
        if row.measured_iops >= row.low * row.expected_iops:
            continue  # above the band: no test limit explains too much speed
        found = _sweep_point_diagnosis(point, row, cpu_count)
        if found.binding:
            return (Outcome.INCONCLUSIVE, found.binding,
                    f"{format_size(row.bs)}: {found.reason}")
    return Outcome.FAIL, _sweep_binding(points), (f"{len(bad)} of {len(rows)} block sizes "
                                                  f"off the model; {knee_text}")


def _sweep_point_diagnosis(point: SweepPoint, row: _SweepRow,
                           cpu_count: int | None) -> Diagnosis:
    result = point[2]
    if len(point) == 4:
        return diagnose_shortfall(result, point[3], need=row.low * row.expected_iops,
                                  expected=row.expected_iops, unit="IOPS", cpu_count=cpu_count)
    return cpu_diagnosis(result, cpu_count)


def _sweep_binding(points: Sequence[SweepPoint]) -> str:
    """``volume provisioned IOPS, then volume throughput cap`` along the sweep."""
    names: list[str] = []
    for point in sorted(points, key=_bs_of):
        binding = point[1].binding
        name = binding.name if binding else "model curve"
        if name not in names:
            names.append(name)
    return ", then ".join(names)


def _bs_of(point: SweepPoint) -> int:
    return point[0]


def _sweep_row(bs: int, expectation: Expectation, result: FioResult,
               policy: evidence.Policy | None = None,
               workload: Workload | None = None) -> _SweepRow:
    """Normalise a point to IOPS (a throughput expectation is divided by the block size)
    and judge its seconds like a CAP check: the duty cycle below, the mean's interval above."""
    if expectation.unit == "B/s":
        expected, measured = expectation.value / bs, result.total_bw_bytes / bs
    else:
        expected, measured = expectation.value, result.total_iops
    live = result.live
    stopped = bool(result.stop_reason and live is not None and live.iops)
    logged = series_values(result, "total_iops")
    # stopped early: fio's logs of the seconds it ran, then the live reports of the seconds
    # the logs do not cover, when both count in windows of one length (see _make_run)
    values = logged
    if stopped and live is not None:
        live_window = statistics.median(live.window_s) if live.window_s else 1.0
        same = bool(logged) and abs(_window_s(result, "total_iops") - live_window) <= \
            0.1 * live_window
        values = _logged_then_live(logged, live.iops) if same else tuple(live.iops)
    if stopped:
        measured = statistics.fmean(values) if values else measured
    # the seconds an emulated volume fell behind its setting (indices into the logged
    # series) are this host's, as in every check of one run: no point's miss
    gone = {i for i in result.emulator_behind if i < len(logged)}
    values = tuple(v for i, v in enumerate(values) if i not in gone)
    state = None
    if policy is not None and values and expected > 0:
        planned = None
        if stopped and workload is not None and live is not None:
            window = statistics.median(live.window_s) if live.window_s else 1.0
            planned = max(len(values), round(workload.runtime_s / window) - len(gone))
        point = replace(expectation, value=expected)
        state = lower_check(values, point, policy, planned=planned, cap=True).state
        if expectation.high is not None and above_cap(
                values, expectation.high * expected, expectation.duty, policy,
                planned=planned)[0] == evidence.FAIL:
            state = evidence.FAIL
    return _SweepRow(bs, expected, measured, expectation.low, expectation.high, state)


def _knee(rows: Sequence[_SweepRow], *, expected: bool) -> float | None:
    """Where ``min(P, T / bs)`` turns: peak throughput / peak IOPS of the curve."""
    iops = [row.expected_iops if expected else row.measured_iops for row in rows]
    peak_iops = max(iops)
    if peak_iops <= 0:
        return None
    peak_bytes = max(value * row.bs for value, row in zip(iops, rows))
    return peak_bytes / peak_iops


def _knee_text(knee: float | None, rows: Sequence[_SweepRow]) -> str:
    if knee is None:
        return "- (nothing measured)"
    # A knee at the smallest or largest size only says the turn lies at or beyond the edge.
    if knee <= rows[0].bs * 1.01 and len(rows) > 1:
        return f"<= {format_size(rows[0].bs)}"
    if knee >= rows[-1].bs * 0.99:
        return f">= {format_size(rows[-1].bs)}"
    return _size_text(knee)


def _size_text(nbytes: float) -> str:
    kib = nbytes / 1024.0
    return f"{kib:,.0f} KiB" if kib < 1024 else f"{kib / 1024:,.1f} MiB"


def _high_text(high: float | None) -> str:
    return format_percent(high) if high is not None else "any"


# -- block-size sweep ---------------------------------------------------------------------
#: ``(bs, expectation, result)``, optionally with the point's workload as a fourth item so a
#: shortfall can be checked for queue-depth bounds too (the CPU check needs no workload).
SweepPoint = tuple[int, Expectation, FioResult] | tuple[int, Expectation, FioResult, Workload]
