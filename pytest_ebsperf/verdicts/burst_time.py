"""Verdicts of the time-based credit checks, from a detected knee and the model's levels.

Wording follows the TIME and CAP policies of the rest of the plugin (``plain.judge_time``,
``verdict.judge_cap``); what is added here is the credit story: which level the run
started at, how many credits it consumed above the baseline against how many the model
said the bucket held, and, on an emulated volume, what the times mean on a real one.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.awsmodel.claims import source_url
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import volume_type
from pytest_ebsperf.fio.result import DirectionStats, FioResult, Latency, Series
from pytest_ebsperf.units import format_percent, format_quantity, format_seconds
from pytest_ebsperf.verdicts import plain
from pytest_ebsperf.verdicts.knee import Knee, excess_integral, find_knee
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

BINDING = "burst credits"
#: A burst under this share of the model's level times the bucket at the measured level.
SHORT_BURST = 0.9
#: The reason of a burst check whose bucket was empty from the start.
NO_CREDITS = "no credits at start"


@dataclass(frozen=True)
class Levels:
    """The model's two levels for one workload, in the check's ``unit`` ("IOPS" or "B/s"),
    and the credits per second a burst spends (``burst_credits``) and the bucket earns."""

    unit: str
    burst: float
    baseline: float
    burst_credits: float
    earn: float
    credit_unit: str

    @property
    def key(self) -> str:
        """The series the check reads (``total_iops`` or ``total_bw``)."""
        return "total_bw" if self.unit == "B/s" else "total_iops"

    @property
    def metric(self) -> str:
        return "throughput" if self.unit == "B/s" else "iops"

    @property
    def drain(self) -> float:
        """Credits per second a burst-level load takes out of the bucket, net."""
        return self.burst_credits - self.earn

    @property
    def middle(self) -> float:
        """Halfway between baseline and burst: above it a run is bursting."""
        return (self.burst + self.baseline) / 2.0

    def q(self, value: float) -> str:
        return format_quantity(value, self.unit)


@dataclass(frozen=True)
class Timing:
    """The model's knee time, its TIME tolerance and the run's time scale."""

    expected_s: float
    min_abs_s: float
    observed_s: float
    timescale: float = 1.0
    rel_tol: float = plain.TIME_REL_TOL

    @property
    def slack_s(self) -> float:
        return max(self.rel_tol * self.expected_s, self.min_abs_s)


def _insert_before_citation(message: str, claim: str, extra: str) -> str:
    """Put ``extra`` sentences before the ``Claim ...`` citation that ends a finding."""
    marker = f" Claim {claim}"
    cut = message.rfind(marker)
    if cut < 0:
        return f"{message} {extra}"
    return f"{message[:cut]} {extra}{message[cut:]}"


def at_burst_level(timing: Timing, knee: Knee, levels: Levels) -> tuple[Timing, str]:
    """The knee time a bucket of the model's size gives at the level the run burst at.

    The bucket drains at (delivered - earned) credits a second, so a volume that burst
    below the model's burst level (a host, an instance or another limit set the pace)
    drains it more slowly and its knee comes later: that says nothing about the bucket.
    Below ``SHORT_BURST`` of the model's level the knee is judged at the measured level,
    and a sentence says so; the burst-rate checks judge the rate itself.
    """
    if knee.before >= SHORT_BURST * levels.burst or levels.burst <= 0:
        return timing, ""
    drain = knee.before * levels.burst_credits / levels.burst - levels.earn
    if drain <= 0:
        return timing, ""
    at_level = timing.expected_s * levels.drain / drain
    sentence = (f"The volume burst at {levels.q(knee.before)}, under "
                f"{format_percent(SHORT_BURST)} of the model's {levels.q(levels.burst)} (the burst-rate "
                "checks judge the rate): at that level the model's bucket lasts "
                f"{format_seconds(at_level)}, not {format_seconds(timing.expected_s)}, "
                "and that is the time judged.")
    return dataclasses.replace(timing, expected_s=at_level), sentence


def real_time_note(timing: Timing, measured_s: float | None) -> str:
    """On an emulated volume: what the times are on a real one (the bucket is scaled)."""
    if timing.timescale == 1.0:
        return ""
    scale = timing.timescale
    seen = (f"{format_seconds(measured_s)} here is {format_seconds(measured_s * scale)} "
            "and " if measured_s is not None else "")
    return (f"Emulated bucket at time scale {scale:,.4g}: {seen}the model's "
            f"{format_seconds(timing.expected_s)} is {format_seconds(timing.expected_s * scale)} "
            "on a real volume.")


def no_credits_at_start(claim: str, what: str, knee: Knee, levels: Levels, origin: str,
                        *, source: str = "") -> Verdict:
    """The run never reached the burst level: the bucket was empty, the volume may be fine."""
    level = levels.q(knee.before)
    reason = (f"{NO_CREDITS}: burst level {levels.q(levels.burst)} never reached "
              f"(ran at {level}, baseline {levels.q(levels.baseline)})")
    message = (f"{what}: {reason}. The bucket was empty when the check began, so there was no "
               f"burst to time; this says nothing against the volume. The model's balance: "
               f"{origin}. Pass --burst-balance with CloudWatch BurstBalance, or let the "
               f"volume refill and run again. Claim {claim}" + (f", {source}" if source else ""))
    return Verdict(Outcome.INCONCLUSIVE, claim, what, None, None, "s", BINDING, reason,
                   message, "TIME", {"level": knee.before, "baseline": levels.baseline,
                                     "burst": levels.burst})


def judge_knee_time(claim: str, what: str, knee: Knee, levels: Levels, timing: Timing, *,
                    consumed: float, modelled: float, origin: str, context: str = "",
                    source: str = "") -> Verdict:
    """TIME: the knee came ``timing.expected_s`` ± tolerance after the load began.

    ``consumed`` is the credits the run spent above the baseline (∫ delivered − baseline),
    ``modelled`` what the model said the bucket held; ``context`` an extra sentence (e.g.
    the idle time of a refill).
    """
    if knee.before < levels.middle:
        return no_credits_at_start(claim, what, knee, levels, origin, source=source)
    model_s = timing.expected_s
    timing, short = at_burst_level(timing, knee, levels)
    found = plain.judge_time(claim, what, knee.t_s if knee.found else None,
                               timing.expected_s, rel_tol=timing.rel_tol,
                               min_abs_s=timing.min_abs_s, observed_for_s=timing.observed_s,
                               binding=BINDING, source=source)
    sentences = [context] if context else []
    if short:
        sentences.append(short)
    if knee.found and knee.after is not None:
        sentences.append(f"Burst at {levels.q(knee.before)}, then {levels.q(knee.after)} "
                         f"(model: {levels.q(levels.burst)}, then {levels.q(levels.baseline)}).")
    if modelled > 0:
        sentences.append(f"Credits consumed above the baseline: {consumed:,.0f} "
                         f"{levels.credit_unit} of the {modelled:,.0f} the model put in the "
                         f"bucket ({100 * consumed / modelled:.0f} %; {origin}).")
    note = real_time_note(timing, knee.t_s if knee.found else None)
    if note:
        sentences.append(note)
    details = {**found.details, "knee_s": knee.t_s, "level_before": knee.before,
               "model_knee_s": model_s,
               "level_after": knee.after, "noise": knee.noise, "consumed_credits": consumed,
               "modelled_credits": modelled, "timescale": timing.timescale,
               "knee_reason": knee.reason}
    message = _insert_before_citation(found.message, claim, " ".join(sentences))
    return dataclasses.replace(found, message=message, details=details)


def knee_held_back(found: Verdict, result: FioResult) -> Verdict:
    """A knee timed on a run whose emulated volume fell behind its setting
    (:attr:`FioResult.emulator_behind`, the emulator's witness): a burst the host held back
    delivered less, and the emulated bucket charges what was delivered, so it spent its
    credits later and its knee came late or after the run's end. Such a verdict that is not a
    PASS is this host's, INCONCLUSIVE naming it; a knee *earlier* than the model's stands (the
    host can delay a knee, never hasten it: a bucket 30 % smaller still FAILs). The live check
    and ``ebsperf judge`` of its kept run apply the same rule. A bucket empty from the start
    ("no credits at start": the run never came near its burst level) stands too: a host that
    held back a second at the baseline cannot have hidden a burst (a CI run beside other
    tests: one second of 15 at 269 of 300 IOPS)."""
    behind = len(result.emulator_behind)
    if found.outcome is Outcome.PASS or not behind or found.reason.startswith(NO_CREDITS):
        return found
    if found.measured is not None and found.expected is not None \
            and found.measured < found.expected:
        return found
    said = result.emulator_said or (
        f"this host could not emulate the volume at its set rate in {behind:,} s (the "
        "emulated volume delivered clearly less than its setting there)")
    reason = "inconclusive: this host could not emulate the burst at its rate"
    message = (f"{found.what}: {said}. A burst held back spends its credits later, so when "
               f"its knee came says nothing about the volume's bucket; not judged "
               f"(the verdict on the volume's own seconds would have been: {found.reason}). "
               f"Claim {found.claim}")
    return dataclasses.replace(found, outcome=Outcome.INCONCLUSIVE, reason=reason,
                               binding="emulator", message=message,
                               details={**found.details, "emulator_behind_s": behind,
                                        "knee_verdict": found.outcome.value})


def consumed_credits(series: Series, levels: Levels, credit_per_unit: float,
                     window_s: float) -> float:
    """Credits a run spent above what the bucket earned: the integral of each window's
    credits (its figure times ``credit_per_unit``) above the earn rate."""
    return excess_integral([v * credit_per_unit for v in series.values], levels.earn,
                           window_s)


def unexpected_knee(claim: str, what: str, knee: Knee, levels: Levels, volume: Volume
                    ) -> Verdict:
    """FAIL: a volume whose baseline is its burst level fell to a lower level."""
    reason = (f"fell from {levels.q(knee.before)} to {levels.q(knee.after or 0.0)} at "
              f"{format_seconds(knee.t_s or 0.0)}")
    message = (f"{what}: {reason}, but this {volume.label()} has no burst bucket to run "
               f"out of: its baseline {levels.q(levels.baseline)} is its burst level. "
               f"Claim {claim}, {source_url(claim, '')}")
    return Verdict(Outcome.FAIL, claim, what, levels.baseline, knee.after, levels.unit,
                   "volume baseline", reason, message, "CAP",
                   {"knee_s": knee.t_s, "knee_reason": knee.reason})


def knee_of(series: Series, levels: Levels, window_s: float) -> Knee:
    """The knee of a run's series at the model's levels, and where its burst ended."""
    found = find_knee(series.values, series.t_s, window_s=window_s, describe=levels.q)
    return burst_end(found, series.values, levels)


def knee_facts(levels: Levels, timing: Timing, *, modelled: float, origin: str, context: str,
               window_s: float, credit_per_unit: float) -> dict[str, Any]:
    """What a burst check knew before its run (the model's levels, the balance, the time
    expected and its tolerance), as a kept verdict records it for :func:`knee_again`."""
    return {"levels": dataclasses.asdict(levels),
            "timing": {"expected_s": timing.expected_s, "min_abs_s": timing.min_abs_s,
                       "timescale": timing.timescale, "rel_tol": timing.rel_tol},
            "modelled": modelled, "origin": origin, "context": context, "window_s": window_s,
            "credit_per_unit": credit_per_unit}


def after_knee(facts: Any, result: FioResult) -> FioResult:
    """A kept after-the-knee run as its check judged it: from the window after its knee on
    (:func:`trim_result`), found at the levels the check recorded; unchanged when there is
    no knee or the facts cannot be read."""
    read = _read_facts(facts)
    series = result.series.get(read[0].key) if read else None
    if read is None or series is None or not len(series):
        return result
    knee = knee_of(series, read[0], read[2])
    return trim_result(result, first_settled_s(knee)) if knee.found else result


def _read_facts(facts: Any) -> tuple[Levels, Timing, float, float, float, str, str] | None:
    """(levels, timing, window_s, modelled, credits per unit, origin, context) of
    :func:`knee_facts`; None when they cannot be read."""
    try:
        given = facts["levels"]
        levels = Levels(str(given["unit"]), float(given["burst"]), float(given["baseline"]),
                        float(given["burst_credits"]), float(given["earn"]),
                        str(given["credit_unit"]))
        timed = facts["timing"]
        timing = Timing(float(timed["expected_s"]), float(timed["min_abs_s"]), 0.0,
                        float(timed["timescale"]), float(timed["rel_tol"]))
        window_s = float(facts["window_s"])
        return (levels, timing, window_s, float(facts["modelled"]),
                float(facts["credit_per_unit"]), str(facts.get("origin") or ""),
                str(facts.get("context") or "")) if window_s > 0 else None
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def knee_again(facts: Any, claim: str, what: str, result: FioResult, source: str = ""
               ) -> Verdict | None:
    """A kept burst check's knee timed again from its run's per-second series and the facts
    its check recorded (:func:`knee_facts`), by the functions the check used; None when the
    facts cannot be read or the run holds no series."""
    read = _read_facts(facts)
    if read is None:
        return None
    levels, timing, window_s, modelled, per_unit, origin, context = read
    series = result.series.get(levels.key)
    if series is None or not len(series):
        return None
    knee = knee_of(series, levels, window_s)
    timing = dataclasses.replace(timing, observed_s=_span(series))
    return knee_held_back(judge_knee_time(
        claim, what, knee, levels, timing,
        consumed=consumed_credits(series, levels, per_unit, window_s), modelled=modelled,
        origin=origin, context=context, source=source), result)


def trim_result(result: FioResult, from_s: float) -> FioResult:
    """The run from ``from_s`` on: series cut, read/write means recomputed from them, so
    a CAP judge sees only the windows after the knee. Latency too: fio's whole-run figures
    mix the burst's fast I/Os with the baseline's paced ones (a 68 MiB/s baseline judged with
    the run's 22 ms mean latency looked like a queue fio kept at 1.5 of 8), so the slice's
    mean completion latency is the windows' own (IOPS-weighted) and its percentiles, which
    fio reports for the whole run only, are left out."""

    def cut(series: Series) -> Series:
        kept = [(t, v) for t, v in zip(series.t_s, series.values) if t - 1e-9 > from_s]
        return Series(tuple(t for t, _ in kept), tuple(v for _, v in kept))

    series = {key: cut(value) for key, value in result.series.items()}

    def stats(direction: DirectionStats, name: str) -> DirectionStats:
        iops, bw = series.get(f"{name}_iops", Series()), series.get(f"{name}_bw", Series())
        latency = _slice_latency(iops, series.get(f"{name}_clat", Series()))
        return dataclasses.replace(direction, iops=iops.mean(), bw_bytes=bw.mean(),
                                   clat=latency, lat=latency)

    return dataclasses.replace(result, series=series, read=stats(result.read, "read"),
                               write=stats(result.write, "write"))


def _slice_latency(iops: Series, clat: Series) -> Latency:
    """The mean completion latency of a slice's windows, each weighted by its I/Os; none
    (an empty :class:`Latency`) without a latency log or I/Os."""
    if len(clat) != len(iops) or not len(clat):
        return Latency()
    weight = math.fsum(iops.values)
    if weight <= 0:
        return Latency()
    return Latency(mean_ns=math.fsum(n * ns for n, ns in zip(iops.values, clat.values)) / weight)


def first_settled_s(knee: Knee) -> float:
    """Where the after-knee level is settled: the end of the window holding the knee."""
    if knee.t_s is None:
        return 0.0
    return knee.t_s + knee.window_s


def model_curve(levels: Levels, knee_s: float | None, end_s: float,
                idle_prefix: Sequence[tuple[float, float]] = ()) -> list[tuple[float, float]]:
    """Corners of the expected curve: burst until ``knee_s``, then baseline, to ``end_s``."""
    if knee_s is None:
        return [*idle_prefix, (0.0, levels.baseline), (end_s, levels.baseline)]
    knee_s = min(knee_s, end_s)
    return [*idle_prefix, (0.0, levels.burst), (knee_s, levels.burst),
            (knee_s, levels.baseline), (end_s, levels.baseline)]


def burst_end(knee: Knee, values: Sequence[float], levels: Levels) -> Knee:
    """``knee`` when it is the end of a burst: a fall to below the middle between the burst
    level and the baseline. A step that leaves the level above the middle (the first
    window of a run above the rest, as a throttle's start-up allowance or a late first
    status report makes it) is no knee: the volume is still bursting after it."""
    if not knee.found or knee.after is None or knee.after < levels.middle:
        return knee
    level = statistics.median(values)
    reason = (f"no knee: the level stepped from {levels.q(knee.before)} to "
              f"{levels.q(knee.after)} at {format_seconds(knee.t_s or 0.0)} but stayed above "
              f"{levels.q(levels.middle)}, halfway between the burst level and the baseline: "
              "still bursting")
    return Knee(False, level, None, None, None, knee.noise, reason, knee.window_s)


def _span(series: Series) -> float:
    return series.t_s[-1] if series.t_s else 0.0


def _no_knee_sizes(volume: Volume) -> str:
    sizes = volume_type(volume.type).never_drains
    if sizes:
        return f"{volume.type} volumes of {sizes}"
    return f"{volume.type} volumes whose baseline reaches their burst level"


def _plot_notes(timing: Timing, knee: Knee) -> list[str]:
    notes = [knee.reason]
    if timing.timescale != 1.0:
        notes.append(f"emulated bucket, time scale {timing.timescale:,.4g}: multiply times by "
                     "it for a real volume")
    return notes
