"""Judge what fio measured against what a claim promises: CAP, FLOOR, REL, TIME and INFO.

Every judge returns a :class:`~pytest_ebsperf.verdict_types.Verdict` whose ``message`` reads
like a finding (claim, expected, measured, tolerance, binding limit, source), so the pytest
layer only has to pass it to ``pytest.fail``.

A shortfall is diagnosed (:mod:`pytest_ebsperf.diagnosis`: load generator, host, queue depth,
the confirmation run) before it is called a failure.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_ebsperf import evidence
from pytest_ebsperf.diagnosis import Diagnosis, cpu_diagnosis, diagnose_shortfall
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload, format_size
from pytest_ebsperf.models.credits import TIME_ABS_TOLERANCE_S, TIME_REL_TOLERANCE
from pytest_ebsperf.models.types import CAP, FLOOR, INFO, TIME, Expectation
from pytest_ebsperf.units import (
    format_iops,
    format_mibps,
    format_number,
    format_percent,
    format_quantity,
    format_seconds,
)
from pytest_ebsperf.verdict_types import Outcome, Verdict

#: REL defaults (claims.md S2-17): IOPS within 5 %, median latency <= 1.10 x + 0.05 ms.
REL_MAX_RATIO_DEV = 0.05
REL_LATENCY_FACTOR = 1.10
REL_LATENCY_SLACK_NS = 50_000.0
#: Without per-second figures a mean above the cap's tolerance FAILs only from this many
#: times the cap (twice: more than any throttle's noise or a burst allowance explains).
MEAN_ONLY_FAR_ABOVE = 2.0
#: TIME defaults (claims.md): |t - t_model| <= max(10 % of t_model, 120 s).
TIME_REL_TOL = TIME_REL_TOLERANCE
TIME_MIN_ABS_S = TIME_ABS_TOLERANCE_S

#: ``metric`` argument -> (series key, expectation unit).
METRICS: Mapping[str, tuple[str, str]] = {
    "iops": ("total_iops", "IOPS"),
    "throughput": ("total_bw", "B/s"),
}

# -- what was measured -------------------------------------------------------------------
def _metric_key(metric: str, expectation: Expectation) -> str:
    """Validate ``metric`` against the expectation's unit; a mismatch is a programming error."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, not {metric!r}")
    key, unit = METRICS[metric]
    if expectation.unit != unit:
        raise ValueError(f"{expectation.claim}: metric {metric!r} measures {unit}, "
                         f"but the expectation is in {expectation.unit}")
    return key


def series_values(result: FioResult, key: str) -> tuple[float, ...]:
    """The per-second series ``key`` ("total_iops", "total_bw"...) of a run."""
    return _series_values(result, key)


def _series_values(result: FioResult, key: str) -> tuple[float, ...]:
    """The per-second total, or the read and write series added window by window."""
    total = result.series.get(key)
    if total is not None and len(total):
        return total.values
    parts = [result.series.get(key.replace("total", side)) for side in ("read", "write")]
    present = [part.values for part in parts if part is not None and len(part)]
    if not present:
        return ()
    length = min(len(values) for values in present)
    return tuple(math.fsum(values[i] for values in present) for i in range(length))


def _window_s(result: FioResult, key: str) -> float:
    series = result.series.get(key) or result.series.get(key.replace("total", "read"))
    if series is None or len(series.t_s) < 2:
        return 1.0
    steps = [b - a for a, b in zip(series.t_s, series.t_s[1:]) if b > a]
    return statistics.median(steps) if steps else 1.0


def _summary_value(result: FioResult, key: str) -> float:
    return result.total_iops if key == "total_iops" else result.total_bw_bytes


# -- lower-bound checks ------------------------------------------------------------------
@dataclass(frozen=True)
class LowerCheck:
    """How the lower bound went: per window against the duty cycle (a statistical test, see
    :mod:`pytest_ebsperf.evidence`), or on the mean with a confidence interval.

    ``state`` is ``"pass"``, ``"fail"`` or ``"open"`` (the sample cannot tell yet).
    """

    state: str
    threshold: float
    samples: int = 0
    misses: int = 0
    duty: float | None = None
    window_s: float = 1.0
    notes: tuple[str, ...] = ()
    test: evidence.DutyTest | None = None
    interval: evidence.MeanInterval | None = None

    @property
    def ok(self) -> bool:
        return self.state == evidence.PASS

    @property
    def fraction_met(self) -> float | None:
        return 1.0 - self.misses / self.samples if self.samples else None

    @property
    def span_s(self) -> float:
        return self.samples * self.window_s

    def tolerance(self, low: float, high: float | None = None) -> str:
        """``>= 90 % required in 99.9 % of seconds; 0 of 60 s missed``."""
        upper = f", <= {format_percent(high)} on average" if high is not None else ""
        if self.duty is None:
            return f">= {format_percent(low)} required on average{upper}"
        return (f">= {format_percent(low)} required in {format_percent(self.duty)} of "
                f"seconds{upper}; {self.misses:,} of {format_seconds(self.span_s)} missed")

    def explain(self, q: Callable[[float], str]) -> str:
        """The evidence in a sentence (what was seen and what it means); ``q`` formats a
        value in the check's unit."""
        if self.test is not None:
            return _sentence(self.test.explain(q(self.threshold), self.window_s))
        if self.interval is not None:
            iv = self.interval
            level = evidence.confidence_text(iv.alpha)
            if self.state == evidence.FAIL:
                said = f"is at most {q(iv.high)}"
            elif self.state == evidence.PASS:
                said = f"is at least {q(iv.low)}"
            else:
                said = f"lies between {q(iv.low)} and {q(iv.high)}"
            return _sentence(f"the mean of {iv.n:,} s ({iv.describe()}) {said} with "
                             f"confidence {level}")
        return ""

    def as_details(self) -> dict[str, Any]:
        details: dict[str, Any] = {
            "threshold": self.threshold, "samples": self.samples, "misses": self.misses,
            "duty": self.duty, "fraction_met": self.fraction_met, "window_s": self.window_s,
            "notes": list(self.notes), "evidence": self.state}
        if self.test is not None:
            details.update({"planned_samples": self.test.planned,
                            "critical_misses": self.test.critical,
                            "allowed_misses": self.test.critical - 1,
                            "p_value": self.test.p_value, "alpha": self.test.alpha,
                            "miss_spell_s": self.test.spell,
                            "miss_rate_upper_95": self.test.rate_upper})
        if self.interval is not None:
            details.update({"mean_low": self.interval.low, "mean_high": self.interval.high,
                            "alpha": self.interval.alpha, "blocks": self.interval.blocks,
                            "block_s": self.interval.block_s})
        return details


def duty_cycle_check(values: Sequence[float], threshold: float, duty: float,
                     window_s: float = 1.0, *, policy: evidence.Policy | None = None,
                     planned: int | None = None) -> LowerCheck:
    """B-SLA as a test: FAIL only when the windows below ``threshold`` are evidence, at the
    policy's false-red level, that more than ``1 - duty`` of windows miss it (misses that
    may come in spells are weighed by the spell model, see :mod:`pytest_ebsperf.evidence`)."""
    policy = policy or evidence.Policy()
    test = evidence.duty_test(values, threshold, duty, alpha=policy.alpha, planned=planned,
                              spell=policy.spell)
    notes: tuple[str, ...] = ()
    if test.critical > test.planned:
        note = (f"{test.planned:,} windows are too few to show a miss rate above "
                f"{format_percent(1.0 - duty)} at the false-red level "
                f"{test.alpha:.2g}: run longer (--ebsperf-runtime)")
        notes = (note,)
    return LowerCheck(test.state, threshold, test.seen, test.misses, duty, window_s, notes,
                      test=test)


def mean_check(measured: float, threshold: float, *, note: str = "",
               values: Sequence[float] = (), policy: evidence.Policy | None = None
               ) -> LowerCheck:
    """The lower bound on the mean (FLOOR, or CAP without a per-second series).

    With per-second ``values`` the mean's batch-means interval decides, asymmetrically: PASS
    when its lower bound at the PASS level clears ``threshold``, FAIL when its upper bound at
    the check's false-red level stays below it, "open" in between. Without them the bare
    mean is compared (and ``note`` says so).
    """
    policy = policy or evidence.Policy()
    notes = (note,) if note else ()
    if len(values) < 2:
        state = evidence.PASS if measured >= threshold else evidence.FAIL
        return LowerCheck(state, threshold, notes=notes)
    passing = evidence.mean_interval(values, policy.pass_alpha)
    failing = evidence.mean_interval(values, policy.alpha)
    assert passing is not None and failing is not None
    if passing.low >= threshold:
        state, interval = evidence.PASS, passing
    elif failing.high < threshold:
        state, interval = evidence.FAIL, failing
    else:
        state, interval = evidence.OPEN, passing
    return LowerCheck(state, threshold, samples=interval.n, notes=notes, interval=interval)


# -- CAP and FLOOR -----------------------------------------------------------------------
@dataclass(frozen=True)
class _Run:
    """One measurement being judged, with everything the sentences need."""

    expectation: Expectation
    result: FioResult
    workload: Workload
    key: str
    measured: float
    values: tuple[float, ...]
    window_s: float = 1.0
    #: Windows the run was planned for when it was stopped early, else None (complete).
    planned: int | None = None

    @property
    def unit(self) -> str:
        return self.expectation.unit

    @property
    def span_s(self) -> float:
        return len(self.values) * self.window_s

    @property
    def binding_name(self) -> str:
        binding = self.expectation.binding
        return binding.name if binding else "claimed value"

    def q(self, value: float) -> str:
        return format_quantity(value, self.unit)

    def citation(self) -> str:
        """``Claim S0-04 (limit B-IO1), https://...``."""
        exp = self.expectation
        binding = exp.binding
        text = f"Claim {exp.claim}"
        if binding and binding.claim and binding.claim != exp.claim:
            text += f" (limit {binding.claim})"
        source = exp.source or (binding.source if binding else "")
        return f"{text}, {source}" if source else text


def _make_run(expectation: Expectation, result: FioResult, workload: Workload,
              key: str, prior: Sequence[float] = ()) -> _Run:
    """The seconds a check is judged on; ``prior``: the seconds of the same check's earlier
    run (before a pause for a second look), judged with these as one check."""
    run = _make_run_alone(expectation, result, workload, key)
    if not prior:
        return run
    values = (*prior, *run.values)
    planned = len(prior) + max(len(run.values), round(workload.runtime_s / run.window_s))
    measured = statistics.fmean(values) if values else run.measured
    return replace(run, values=values, measured=measured, planned=planned)


def _make_run_alone(expectation: Expectation, result: FioResult, workload: Workload,
                    key: str) -> _Run:
    live = result.live
    if result.stop_reason and live is not None and live.values(key):
        # Stopped early: judged against the seconds the check was planned for, on fio's
        # interval logs of the seconds it ran (written when fio stops). The status reports
        # the monitor decided on are only a witness: their windows follow the reports'
        # timing, and a report that comes late splits one steady second into a dip and a
        # spike (seen: 2 dips below 90 % in 9 live windows of an emulated io1 whose 8 logged
        # seconds were all 3,996-4,216 IOPS). Without logs the live seconds are used.
        live_window = statistics.median(live.window_s) if live.window_s else 1.0
        logged = _series_values(result, key)
        if logged and abs(_window_s(result, key) - live_window) <= 0.1 * live_window:
            window, values = live_window, _logged_then_live(logged, live.values(key))
        else:  # no logs, or logs in windows of another length: the reports' seconds
            window, values = live_window, tuple(live.values(key))
        planned = max(len(values), round(workload.runtime_s / window))
        measured = statistics.fmean(values)
        return _Run(expectation, result, workload, key, measured, values, window, planned)
    values = _series_values(result, key)
    measured = _summary_value(result, key)
    if measured <= 0 and values:
        measured = statistics.fmean(values)
    return _Run(expectation, result, workload, key, measured, values,
                _window_s(result, key))


def judge_cap(expectation: Expectation, result: FioResult, workload: Workload, *,
              metric: str = "iops", cpu_count: int | None,
              policy: evidence.Policy | None = None, prior: Sequence[float] = ()) -> Verdict:
    """CAP: ``low x value`` in the duty cycle's share of seconds, mean <= ``high x value``.

    Both are judged as evidence (:mod:`pytest_ebsperf.evidence`): the duty cycle as a test of
    the missed seconds at the policy's false-alarm level, the upper bound on the mean's
    confidence interval. A run stopped early (its verdict settled while fio ran) is judged on
    the seconds fio reported live, against the number of seconds it was planned for.
    Without a per-second series the mean is held to ``low x value`` instead (and the verdict
    says so). A shortfall is diagnosed (load generator, queue depth) before it is called a
    failure; a mean far above the cap fails as "not the volume you think it is".
    """
    policy = policy or evidence.Policy()
    run = _make_run(expectation, result, workload, _metric_key(metric, expectation), prior)
    if not _judgeable(expectation):
        return _no_value(run)
    high = expectation.high
    above_open = False
    if high is not None:
        above, above_open = _above_cap_evidence(run, high, policy)
        if above is not None:
            return above
    threshold = expectation.low * expectation.value
    if run.values:
        check = duty_cycle_check(run.values, threshold, expectation.duty, run.window_s,
                                 policy=policy, planned=run.planned)
    else:
        check = mean_check(run.measured, threshold, note="no per-second series: judged on "
                           "the mean, so the duty cycle could not be checked")
    if check.state == evidence.FAIL:
        return _shortfall(run, check, cpu_count)
    if check.state == evidence.OPEN:
        return _open(run, check)
    if above_open:
        return _open(run, check, above=True)
    return _within(run, check)


def _above_cap_evidence(run: _Run, high: float, policy: evidence.Policy
                        ) -> tuple[Verdict | None, bool]:
    """(FAIL, False) when the volume runs above ``high x value`` beyond noise; (None, True)
    when it is above on average but the seconds cannot tell; (None, False) otherwise.

    Evidence is either the mean's confidence interval lying above the limit, or the seconds
    above it judged like missed seconds (a volume at its cap exceeds 110 % of it as rarely as
    it falls below 90 %): three seconds at twice the cap are evidence, though three noisy
    seconds make a wide interval.
    """
    limit = high * run.expectation.value
    if run.measured <= limit:
        return None, False
    interval = evidence.mean_interval(run.values, policy.alpha) if run.values else None
    if run.values:
        test = evidence.duty_test([-v for v in run.values], -limit, run.expectation.duty,
                                  alpha=policy.alpha, planned=run.planned, spell=policy.spell)
        if test.state == evidence.FAIL:
            return _above_cap(run, high, interval, test), False
    if interval is not None and interval.low <= limit:
        return None, True  # above on average, but within the seconds' noise
    if interval is None and run.values:
        return None, True  # one second: no evidence either way
    if interval is None and run.measured <= MEAN_ONLY_FAR_ABOVE * run.expectation.value:
        # a mean alone (no seconds to show its noise) a little above the tolerance: not
        # evidence; twice the cap is more than any throttle's noise
        return None, True
    return _above_cap(run, high, interval), False


def judge_floor(expectation: Expectation, result: FioResult, workload: Workload, *,
                metric: str = "iops", cpu_count: int | None,
                policy: evidence.Policy | None = None) -> Verdict:
    """FLOOR: a published "up to / at least" figure; the mean must reach ``low x value``
    (FAIL only when the mean's confidence interval lies below it)."""
    policy = policy or evidence.Policy()
    run = _make_run(expectation, result, workload, _metric_key(metric, expectation))
    if not _judgeable(expectation):
        return _no_value(run)
    check = mean_check(run.measured, expectation.low * expectation.value, values=run.values,
                       policy=policy)
    if check.state == evidence.PASS:
        return _within(run, check)
    if check.state == evidence.OPEN:
        return _open(run, check)
    return _shortfall(run, check, cpu_count)


def _logged_then_live(logged: Sequence[float], live: Sequence[float]) -> tuple[float, ...]:
    """The seconds of a run stopped early: fio's logged windows, then the status reports'
    windows past them (the logs leave out the window the stop cut short, and a mixed job's
    read and write logs may end a window apart)."""
    if not logged:
        return tuple(live)
    return (*logged, *live[len(logged):])


def _judgeable(expectation: Expectation) -> bool:
    return math.isfinite(expectation.value) and expectation.value > 0


def _no_value(run: _Run) -> Verdict:
    """Best-effort volumes (Magnetic) have no documented value: record instead of judging."""
    return judge_info(run.expectation.claim, run.expectation.what, run.result, run.workload,
                      unit=run.unit, notes=run.expectation.notes,
                      source=run.expectation.source)


def _base_details(run: _Run, check: LowerCheck | None = None) -> dict[str, Any]:
    exp = run.expectation
    details: dict[str, Any] = {
        "low": exp.low, "high": exp.high, "workload": run.workload.label(),
        "limits": [{"name": lim.name, "kind": lim.kind, "iops": lim.iops, "claim": lim.claim}
                   for lim in exp.limits],
        "binding_kind": exp.binding.kind if exp.binding else "",
    }
    if check is not None:
        details.update(check.as_details())
    return details


def _within(run: _Run, check: LowerCheck) -> Verdict:
    exp = run.expectation
    if check.duty is not None:
        met = format_percent(check.fraction_met or 0.0)
        reason = (f"held {run.q(exp.value)} ({run.binding_name}) in {met} of "
                  f"{format_seconds(check.span_s)}")
    else:
        reason = f"reached {run.q(run.measured)} of {run.q(exp.value)} ({run.binding_name})"
    evidence_text = check.explain(run.q)
    message = (f"{exp.what}: {run.q(run.measured)} measured, {run.q(exp.value)} expected "
               f"({run.binding_name}; {check.tolerance(exp.low, exp.high)}). "
               f"{evidence_text + ' ' if evidence_text else ''}{_stopped(run)}{run.citation()}")
    return _verdict(run, Outcome.PASS, run.binding_name, reason, message,
                    _base_details(run, check))


def _open(run: _Run, check: LowerCheck, *, above: bool = False) -> Verdict:
    """The sample can tell neither way: INCONCLUSIVE, with what a longer run would need.
    ``above``: the mean is above the cap's upper tolerance, but within the seconds' noise."""
    exp = run.expectation
    notes = " ".join(_sentence(note) for note in check.notes)
    reason = "inconclusive: the sample is too small to tell - run longer (--ebsperf-runtime)"
    if above and exp.high is not None and not run.values:
        reason = (f"inconclusive: {run.measured / exp.value:.2f} x the cap on average, above "
                  f"its {format_percent(exp.high)}, but a mean alone (no per-second series) "
                  f"is evidence only from {MEAN_ONLY_FAR_ABOVE:g} x the cap - give the run's "
                  "per-second logs (fio --write_iops_log --log_avg_msec=1000; judge --logs)")
    elif above and exp.high is not None:
        reason = (f"inconclusive: above {format_percent(exp.high)} of the cap on average, but "
                  f"{len(run.values)} s are too few or too noisy to tell - run longer "
                  "(--ebsperf-runtime)")
    message = (f"{exp.what}: {run.q(run.measured)} measured, {run.q(exp.value)} expected "
               f"({run.binding_name}; {check.tolerance(exp.low, exp.high)}) - {reason}. "
               f"{check.explain(run.q)} {notes + ' ' if notes else ''}"
               f"{_stopped(run)}{run.citation()}")
    return _verdict(run, Outcome.INCONCLUSIVE, "run length", reason, message,
                    _base_details(run, check))


def _stopped(run: _Run) -> str:
    reason = run.result.stop_reason
    if not reason:
        return ""
    return _sentence(f"fio was stopped after {format_seconds(round(run.span_s))} of the "
                     f"planned {format_seconds(run.workload.runtime_s)}: {reason}") + " "


def _above_cap(run: _Run, high: float, interval: evidence.MeanInterval | None = None,
               seconds: evidence.DutyTest | None = None) -> Verdict:
    exp = run.expectation
    ratio = run.measured / exp.value
    cache = ("page-cache hits (this job ran with direct=0)" if not run.workload.direct
             else "page-cache hits (direct=0 somewhere?)")
    reason = f"far above its cap ({ratio:.2f} x {run.q(exp.value)})"
    if seconds is not None:
        seen = (f"{seconds.misses:,} of {seconds.seen:,} s were above {run.q(high * exp.value)}; "
                f"a volume at its cap would exceed it in {seconds.misses:,} or more of "
                f"{seconds.planned:,} with probability {seconds.p_value:.1e}. ")
    elif interval is not None:
        conf = format_percent(1.0 - interval.alpha)
        seen = (f"the mean of {interval.n:,} s is at least {run.q(interval.low)} with {conf} "
                "confidence. ")
    else:
        seen = "no per-second series: judged on the mean alone. "
    message = (f"{exp.what}: {run.q(run.measured)} measured, far above its cap of "
               f"{run.q(exp.value)} ({run.binding_name}; <= {format_percent(high)} allowed): "
               f"{seen}{_stopped(run)}Is this the volume you think it is? Check --volume-type, --volume-size and "
               f"--volume-iops, {cache}, and whether the device is a RAID/stripe over several "
               f"volumes. {run.citation()}")
    details = {**_base_details(run), "ratio": ratio}
    if interval is not None:
        details.update({"mean_low": interval.low, "mean_high": interval.high,
                        "alpha": interval.alpha})
    return _verdict(run, Outcome.FAIL, run.binding_name, reason, message, details)


def _shortfall(run: _Run, check: LowerCheck, cpu_count: int | None) -> Verdict:
    exp = run.expectation
    need = check.threshold
    found = diagnose_shortfall(run.result, run.workload, need=need, expected=exp.value,
                               unit=run.unit, cpu_count=cpu_count)
    details = {**_base_details(run, check), **found.details}
    if found.binding:
        message = (f"{exp.what}: {run.q(run.measured)} measured, {run.q(exp.value)} "
                   f"expected ({run.binding_name}; {check.tolerance(exp.low)}) - "
                   f"{found.reason}. {run.citation()}")
        return _verdict(run, Outcome.INCONCLUSIVE, found.binding, found.reason, message,
                        details)
    if check.duty is not None:
        reason = (f"below {format_percent(exp.low)} of {run.q(exp.value)} in "
                  f"{check.misses:,} of {check.samples:,} seconds ({run.binding_name})")
    else:
        reason = (f"{run.q(run.measured)} is below {format_percent(exp.low)} of "
                  f"{run.q(exp.value)} ({run.binding_name})")
    sentences = " ".join((check.explain(run.q), *found.sentences,
                          *(_sentence(note) for note in check.notes)))
    message = (f"{exp.what}: {run.q(run.measured)} measured, {run.q(exp.value)} expected "
               f"({run.binding_name}; {check.tolerance(exp.low)}). {sentences.strip()} "
               f"{_stopped(run)}{run.citation()}")
    return _verdict(run, Outcome.FAIL, run.binding_name, reason, message, details)


def _verdict(run: _Run, outcome: Outcome, binding: str, reason: str, message: str,
             details: dict[str, Any]) -> Verdict:
    exp = run.expectation
    return Verdict(outcome=outcome, claim=exp.claim, what=exp.what, expected=exp.value,
                   measured=run.measured, unit=exp.unit, binding=binding, reason=reason,
                   message=message, policy=exp.policy, details=details)


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
    extra = "".join(f" {_sentence(note)}" for note in notes if note)
    cite = f" Claim {claim}" + (f", {source}" if source else "")
    message = (f"{what}: {shown} measured{reference} (recorded, not judged: best effort)."
               f"{extra}{cite}")
    return Verdict(Outcome.INFO, claim, what, expected, value, unit, "best effort",
                   f"recorded {shown}", message, INFO, details)


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


def _sentence(text: str) -> str:
    """A note as a sentence: capital first letter, one full stop."""
    text = text.strip()
    # a tool's name keeps its spelling ("fio was stopped ...")
    first = text[:1] if text.split(" ", 1)[0] in ("fio", "ebsperf") else text[:1].upper()
    return f"{first}{text[1:]}" + ("" if text.endswith((".", "!", "?")) else ".")


# -- REL ----------------------------------------------------------------------------------
def latency_values(result: FioResult) -> tuple[float, ...]:
    """Per-second mean completion latency of the busier direction."""
    side = "read" if result.read.iops >= result.write.iops else "write"
    series = result.series.get(f"{side}_clat")
    return series.values if series is not None else ()


def median_latency_ns(result: FioResult) -> float | None:
    """p50 completion latency weighted over reads and writes by their IOPS."""
    pairs = [(s.iops, s.clat.p(50.0)) for s in (result.read, result.write) if s.iops > 0]
    known = [(iops, p50) for iops, p50 in pairs if p50]
    total = sum(iops for iops, _ in known)
    if not known or not total:
        return None
    return math.fsum(iops * p50 for iops, p50 in known) / total


# -- block-size sweep ---------------------------------------------------------------------
#: ``(bs, expectation, result)``, optionally with the point's workload as a fourth item so a
#: shortfall can be checked for queue-depth bounds too (the CPU check needs no workload).
SweepPoint = tuple[int, Expectation, FioResult] | tuple[int, Expectation, FioResult, Workload]


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
        """Not shown to lie outside the point's tolerance band (judged on the per-second
        samples when there are any, else on the mean)."""
        if self.evidence_state is not None:
            return self.evidence_state != evidence.FAIL
        upper = self.high is None or self.measured_iops <= self.high * self.expected_iops
        return self.measured_iops >= self.low * self.expected_iops and upper

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
    bad = [(point, row) for point, row in zip(points, rows) if not row.ok]
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
    logged = _series_values(result, "total_iops")
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
    state = None
    if policy is not None and values and expected > 0:
        planned = None
        if stopped and workload is not None and live is not None:
            window = statistics.median(live.window_s) if live.window_s else 1.0
            planned = max(len(values), round(workload.runtime_s / window))
        state = evidence.duty_test(values, expectation.low * expected, expectation.duty,
                                   alpha=policy.alpha, planned=planned,
                                   spell=policy.spell).state
        if expectation.high is not None and statistics.fmean(values) > \
                expectation.high * expected:
            limit = expectation.high * expected
            interval = evidence.mean_interval(values, policy.alpha)
            above = evidence.duty_test([-v for v in values], -limit, expectation.duty,
                                       alpha=policy.alpha, planned=planned,
                                       spell=policy.spell)
            if above.state == evidence.FAIL or (interval is not None and interval.low > limit):
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
