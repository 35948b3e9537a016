"""Judge what fio measured against what a claim promises: CAP, FLOOR, REL, TIME and INFO.

Every judge returns a :class:`~pytest_ebsperf.verdicts.outcome.Verdict` whose ``message`` reads
like a finding (claim, expected, measured, tolerance, binding limit, source), so the pytest
layer only has to pass it to ``pytest.fail``.

A shortfall is diagnosed (:mod:`pytest_ebsperf.verdicts.diagnosis`: load generator, host, queue depth,
the confirmation run) before it is called a failure.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pytest_ebsperf.awsmodel.types import CAP, FLOOR, INFO, Expectation
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import (
    format_percent,
    format_quantity,
    format_seconds,
)
from pytest_ebsperf.verdicts import evidence, intervals
from pytest_ebsperf.verdicts.diagnosis import diagnose_shortfall
from pytest_ebsperf.verdicts.lower import LowerCheck, duty_cycle_check, mean_check, sentence
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict
from pytest_ebsperf.verdicts.plain import judge_info

#: REL defaults (claims.md S2-17): IOPS within 5 %, median latency <= 1.10 x + 0.05 ms.
REL_MAX_RATIO_DEV = 0.05
REL_LATENCY_FACTOR = 1.10
REL_LATENCY_SLACK_NS = 50_000.0
#: Without per-second figures a mean above the cap's tolerance FAILs only from this many
#: times the cap (twice: more than any throttle's noise or a burst allowance explains).
MEAN_ONLY_FAR_ABOVE = 2.0

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
    """The per-second series ``key`` ("total_iops", "total_bw"...) of a run: the total, or
    the read and write series added window by window."""
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
    run (before a pause for a second look), judged with these as one check. Seconds in
    which an emulated volume fell behind what it was set to deliver are the host's and are
    left out (:attr:`FioResult.emulator_behind`): they can be no volume's miss."""
    run = _without_host_seconds(_make_run_alone(expectation, result, workload, key))
    if not prior:
        return run
    values = (*prior, *run.values)
    planned = len(prior) + max(len(run.values), round(workload.runtime_s / run.window_s))
    measured = statistics.fmean(values) if values else run.measured
    return replace(run, values=values, measured=measured, planned=planned)


def _host_took_it(run: _Run) -> bool:
    """The emulator fell behind in all but a second of the run: nothing is left to judge
    (the run's own mean is the host's too)."""
    return bool(run.result.emulator_behind) and len(run.values) < 2


def _without_host_seconds(run: _Run) -> _Run:
    gone = set(run.result.emulator_behind)
    if not gone:
        return run
    values = tuple(v for i, v in enumerate(run.values) if i not in gone)
    planned = run.planned if run.planned is not None else len(run.values)
    return replace(run, values=values, planned=max(len(values), planned - len(gone)))


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
        logged = series_values(result, key)
        if logged and abs(_window_s(result, key) - live_window) <= 0.1 * live_window:
            window, values = live_window, _logged_then_live(logged, live.values(key))
        else:  # no logs, or logs in windows of another length: the reports' seconds
            window, values = live_window, tuple(live.values(key))
        planned = max(len(values), round(workload.runtime_s / window))
        measured = statistics.fmean(values)
        return _Run(expectation, result, workload, key, measured, values, window, planned)
    values = series_values(result, key)
    if result.stop_reason and values:
        # stopped by a check that kept its reason (judge of a kept run): its logged seconds
        # against the seconds it was planned for, as the live check judged them
        window = _window_s(result, key)
        planned = max(len(values), round(workload.runtime_s / window))
        return _Run(expectation, result, workload, key, statistics.fmean(values), values,
                    window, planned)
    measured = _summary_value(result, key)
    if measured <= 0 and values:
        measured = statistics.fmean(values)
    return _Run(expectation, result, workload, key, measured, values,
                _window_s(result, key))


def _opening(expectation: Expectation, result: FioResult, workload: Workload, metric: str,
             prior: Sequence[float]) -> tuple[_Run, Verdict | None]:
    """The run a CAP or FLOOR judges, and its verdict when one is given before any test:
    nothing to judge it against, or the host took its seconds."""
    run = _make_run(expectation, result, workload, _metric_key(metric, expectation), prior)
    if not _judgeable(expectation):
        return run, _no_value(run)
    if _host_took_it(run):
        return run, _open(run, LowerCheck(evidence.OPEN, expectation.threshold))
    return run, None


def judge_cap(expectation: Expectation, result: FioResult, workload: Workload, *,
              metric: str = "iops", cpu_count: int | None,
              policy: evidence.Policy | None = None, prior: Sequence[float] = ()) -> Verdict:
    """CAP: ``low x value`` in the duty cycle's share of seconds, mean <= ``high x value``.

    Both are judged as evidence (:mod:`pytest_ebsperf.verdicts.evidence`): the duty cycle as a test of
    the missed seconds at the policy's false-alarm level, the upper bound on the mean's
    confidence interval. A run stopped early (its verdict settled while fio ran) is judged on
    the seconds fio reported live, against the number of seconds it was planned for.
    Without a per-second series the mean is held to ``low x value`` instead (and the verdict
    says so). A shortfall is diagnosed (load generator, queue depth) before it is called a
    failure; a mean far above the cap fails as "not the volume you think it is".
    """
    policy = policy or evidence.Policy()
    run, given = _opening(expectation, result, workload, metric, prior)
    if given is not None:
        return given
    high = expectation.high
    above_open = False
    if high is not None:
        above, above_open = _above_cap_evidence(run, high, policy)
        if above is not None:
            return above
    check = lower_check(run.values, expectation, policy, planned=run.planned,
                        window_s=run.window_s, measured=run.measured, cap=True)
    if check.state == evidence.FAIL:
        return _shortfall(run, check, cpu_count)
    if check.state == evidence.OPEN:
        return _open(run, check)
    if above_open:
        return _open(run, check, above=True)
    return _within(run, check)


def above_cap(values: Sequence[float], limit: float, duty: float | None,
              policy: evidence.Policy, *, planned: int | None = None,
              mean: float | None = None) -> tuple[str, evidence.DutyTest | None,
                                                   intervals.MeanInterval | None]:
    """Whether per-second ``values`` show a volume above ``limit`` ("at most 110 % on
    average") beyond noise: (FAIL, None, the interval) when the mean's lower bound lies above
    it; OPEN when above on average only; PASS when not above on average (``mean``: the run's
    own, else the seconds').

    The claim is about the mean, so the mean is tested: its one-sided bound at the CAP's
    share of the level (:data:`evidence.MEAN_ABOVE_SHARE`), one of :data:`evidence.MEAN_LOOKS`
    looks, from the seconds' long-run variance (a count of seconds above the limit, used
    before, failed a volume whose mean was 108 % of the cap 4 % of the time when its
    seconds were correlated). ``duty`` and ``planned`` are not used: one rule for the final
    verdict and the live stop."""
    del duty, planned
    mean = statistics.fmean(values) if mean is None and values else (mean or 0.0)
    if mean <= limit:
        return evidence.PASS, None, None
    level = evidence.look_level(policy.alpha * evidence.MEAN_ABOVE_SHARE)
    interval = intervals.mean_interval(values, level, bar=limit) if values else None
    if interval is not None and interval.low > limit:
        return evidence.FAIL, None, interval
    return evidence.OPEN, None, interval


def lower_check(values: Sequence[float], expectation: Expectation, policy: evidence.Policy,
                *, planned: int | None = None, window_s: float = 1.0,
                measured: float | None = None, cap: bool | None = None) -> LowerCheck:
    """The lower bound of ``expectation`` on per-second ``values``: the duty-cycle test for a
    CAP, the mean's interval for a FLOOR (or for a CAP with only a mean, ``measured``).
    ``cap``: judge as a CAP (default: the expectation's policy says)."""
    threshold = expectation.threshold
    cap = expectation.policy == CAP if cap is None else cap
    if cap and values:
        return duty_cycle_check(values, threshold, expectation.duty, window_s, policy=policy,
                                planned=planned)
    if cap:
        return mean_check(measured or 0.0, threshold, note="no per-second series: judged on "
                          "the mean, so the duty cycle could not be checked")
    return mean_check(statistics.fmean(values) if measured is None and values else
                      (measured or 0.0), threshold, values=values, policy=policy,
                      planned=planned)


def _above_cap_evidence(run: _Run, high: float, policy: evidence.Policy
                        ) -> tuple[Verdict | None, bool]:
    """(FAIL, False) when the volume runs above ``high x value`` beyond noise (:func:`above_cap`);
    (None, True) when it is above on average but the seconds cannot tell; (None, False)
    otherwise. A mean alone (no seconds) is evidence only at twice the cap."""
    limit = high * run.expectation.value
    state, _, interval = above_cap(run.values, limit, run.expectation.duty, policy,
                                   planned=run.planned, mean=run.measured)
    if state == evidence.PASS:
        return None, False
    if state == evidence.FAIL:
        return _above_cap(run, high, interval), False
    if run.values:
        return None, True  # above on average, but within the seconds' noise
    if run.measured <= MEAN_ONLY_FAR_ABOVE * run.expectation.value:
        # a mean alone (no seconds to show its noise) a little above the tolerance: not
        # evidence; twice the cap is more than any throttle's noise
        return None, True
    return _above_cap(run, high, interval), False


def judge_floor(expectation: Expectation, result: FioResult, workload: Workload, *,
                metric: str = "iops", cpu_count: int | None,
                policy: evidence.Policy | None = None, prior: Sequence[float] = ()) -> Verdict:
    """FLOOR: a published "up to / at least" figure; the mean must reach ``low x value``
    (FAIL only when the mean's confidence interval lies below it)."""
    policy = policy or evidence.Policy()
    run, given = _opening(expectation, result, workload, metric, prior)
    if given is not None:
        return given
    check = lower_check(run.values, expectation, policy, planned=run.planned,
                        measured=run.measured, cap=False)
    if check.state == evidence.PASS:
        return _within(run, check)
    if check.state == evidence.OPEN:
        return _open(run, check)
    return _shortfall(run, check, cpu_count)


def judge(expectation: Expectation, result: FioResult, workload: Workload, *,
          metric: str = "iops", cpu_count: int | None, policy: evidence.Policy | None = None,
          prior: Sequence[float] = ()) -> Verdict:
    """The verdict of a rate claim by its policy: FLOOR (:func:`judge_floor`), else CAP
    (:func:`judge_cap`). The checks, fio-server mode and ``ebsperf judge`` all come here."""
    if expectation.policy == INFO:  # recorded, never judged (a figure AWS does not promise)
        return judge_info(expectation.claim, expectation.what, result, workload,
                          unit=expectation.unit, notes=expectation.notes,
                          source=expectation.source)
    if expectation.policy == FLOOR:
        return judge_floor(expectation, result, workload, metric=metric, cpu_count=cpu_count,
                           policy=policy, prior=prior)
    return judge_cap(expectation, result, workload, metric=metric, cpu_count=cpu_count,
                     policy=policy, prior=prior)


def judged_seconds(expectation: Expectation, result: FioResult, workload: Workload, *,
                   metric: str = "iops") -> tuple[tuple[float, ...], int]:
    """The seconds :func:`judge` judges ``result`` on (the host's left out), and the number
    it was planned for: a run stopped early goes on from here with these as ``prior``."""
    run = _make_run(expectation, result, workload, _metric_key(metric, expectation))
    return run.values, run.planned if run.planned is not None else len(run.values)


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
        "limits": [{"name": lim.name, "kind": lim.kind, "iops": lim.iops, "claim": lim.claim,
                    "source": lim.source} for lim in exp.limits],
        "duty": exp.duty,
        "binding_kind": exp.binding.kind if exp.binding else "",
    }
    if check is not None:
        details.update(check.as_details())
    return {**details, **_host_details(run)}


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
    notes = " ".join(sentence(note) for note in check.notes)
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
    binding = "run length"
    if run.result.emulator_behind:  # the emulator's lost seconds left too few
        binding = "emulator"
        reason = (f"inconclusive: the emulator fell behind in "
                  f"{len(run.result.emulator_behind):,} s, which are this host's, and the "
                  f"{len(run.values):,} s left cannot decide")
    explained = check.explain(run.q)
    message = (f"{exp.what}: {run.q(run.measured)} measured, {run.q(exp.value)} expected "
               f"({run.binding_name}; {check.tolerance(exp.low, exp.high)}) - {reason}. "
               f"{explained + ' ' if explained else ''}{notes + ' ' if notes else ''}"
               f"{_stopped(run)}{run.citation()}")
    return _verdict(run, Outcome.INCONCLUSIVE, binding, reason, message,
                    _base_details(run, check))


def _host_details(run: _Run) -> dict[str, Any]:
    """The emulator's own witness for the results file: the seconds it lost."""
    gone = run.result.emulator_behind
    return {"emulator_behind_s": list(gone)} if gone else {}


def _stopped(run: _Run) -> str:
    """What cut the sample short: fio stopped early, and seconds the emulator lost."""
    host = sentence(run.result.emulator_said) + " " if run.result.emulator_said else ""
    reason = run.result.stop_reason
    if not reason:
        return host
    return host + sentence(f"fio was stopped after {format_seconds(round(run.span_s))} of "
                           f"the planned {format_seconds(run.workload.runtime_s)}: "
                           f"{reason}") + " "


def _above_cap(run: _Run, high: float, interval: intervals.MeanInterval | None = None
               ) -> Verdict:
    exp = run.expectation
    ratio = run.measured / exp.value
    cache = ("page-cache hits (this job ran with direct=0)" if not run.workload.direct
             else "page-cache hits (direct=0 somewhere?)")
    reason = f"far above its cap ({ratio:.2f} x {run.q(exp.value)})"
    if interval is not None:
        conf = evidence.confidence_text(interval.alpha)
        seen = (f"the mean of {interval.n:,} s ({interval.describe()}) is at least "
                f"{run.q(interval.low)} with confidence {conf}. ")
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
                               unit=run.unit, cpu_count=cpu_count, paces=exp.policy == CAP)
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
                          *(sentence(note) for note in check.notes)))
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
