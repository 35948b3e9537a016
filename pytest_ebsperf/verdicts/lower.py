"""A lower bound judged from a sample of seconds: the duty-cycle test on per-second figures and the
mean's confidence interval when only a mean is known (:class:`LowerCheck`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.units import (
    format_percent,
    format_seconds,
)
from pytest_ebsperf.verdicts import evidence, intervals


# -- lower-bound checks ------------------------------------------------------------------
@dataclass(frozen=True)
class LowerCheck:
    """How the lower bound went: per window against the duty cycle (a statistical test, see
    :mod:`pytest_ebsperf.verdicts.evidence`), or on the mean with a confidence interval.

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
    interval: intervals.MeanInterval | None = None

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
            count = sentence(self.test.explain(q(self.threshold), self.window_s))
            iv, least = self.interval, (self.duty or 0.0) * self.threshold
            if iv is None or self.test.state == self.state:
                return count
            level = evidence.confidence_text(iv.alpha)
            if self.state == evidence.FAIL:
                return count + " " + sentence(
                    f"but the mean of {iv.n:,} s ({iv.describe()}) is at most {q(iv.high)} "
                    f"with confidence {level}, below the {q(least)} a volume meeting "
                    f"{format_percent(self.duty or 0.0)} of seconds averages at the least: "
                    "FAIL")
            return count + " " + sentence(
                f"the mean of {iv.n:,} s is {q(iv.mean)}, below the {q(least)} a volume "
                f"meeting {format_percent(self.duty or 0.0)} of seconds averages at the "
                "least, so the count alone is no PASS")
        if self.interval is not None:
            iv = self.interval
            level = evidence.confidence_text(iv.alpha)
            if self.state == evidence.FAIL:
                said = f"is at most {q(iv.high)}"
            elif self.state == evidence.PASS:
                said = f"is at least {q(iv.low)}"
            else:
                said = f"lies between {q(iv.low)} and {q(iv.high)}"
            return sentence(f"the mean of {iv.n:,} s ({iv.describe()}) {said} with "
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
            seen = self.test.spells_seen()
            if seen is not None:
                details["miss_spell_seen"] = {
                    "mean_s": seen.mean, "low_s": seen.low,
                    "high_s": seen.high if math.isfinite(seen.high) else None}
        if self.interval is not None:
            details.update({"mean_low": self.interval.low, "mean_high": self.interval.high,
                            "blocks": self.interval.blocks, "block_s": self.interval.block_s,
                            "mean_rho": self.interval.rho,
                            "mean_needed_s": self.interval.needed_s})
            details["mean_alpha" if self.test is not None else "alpha"] = self.interval.alpha
        return details


def duty_cycle_check(values: Sequence[float], threshold: float, duty: float,
                     window_s: float = 1.0, *, policy: evidence.Policy | None = None,
                     planned: int | None = None) -> LowerCheck:
    """B-SLA as a test: FAIL only when the windows below ``threshold`` are evidence, at the
    policy's false-red level, that more than ``1 - duty`` of windows miss it (misses that
    may come in spells are weighed by the spell model, see :mod:`pytest_ebsperf.verdicts.evidence`).

    Two tests share the level (:data:`evidence.COUNT_SHARE`, :data:`evidence.MEAN_BELOW_SHARE`):
    the count of missed windows, and the mean. A volume that meets the claim averages at
    least ``duty x threshold`` (its met seconds reach the threshold), so a mean whose upper
    bound lies below that is evidence too: it catches a volume a little below the threshold
    whose seconds now and then jitter above it (a throttle's window edges), which the count
    alone lets through. A PASS needs both: the count settled (in a run planned long enough
    for it to FAIL at all) and a mean no lower than a compliant volume's least."""
    policy = policy or evidence.Policy()
    in_spells = policy.spell > 1.0  # the count of spells begun: only under a spell model
    test = evidence.duty_test(values, threshold, duty,
                              alpha=policy.alpha * evidence.COUNT_SHARE, planned=planned,
                              spell=policy.spell, starts_alpha=policy.alpha *
                              evidence.STARTS_SHARE if in_spells else 0.0)
    notes: tuple[str, ...] = ()
    if test.critical > test.planned:
        note = (f"{test.planned:,} {'window is' if test.planned == 1 else 'windows are'} too "
                f"few to show a miss rate above "
                f"{format_percent(1.0 - duty)} at the false-red level "
                f"{test.alpha:.2g}: run longer (--ebsperf-runtime)")
        notes = (note,)
    state, least = test.state, duty * threshold
    interval = None
    if state != evidence.FAIL and len(values) >= 3:
        share = evidence.MEAN_BELOW_SHARE - (evidence.STARTS_SHARE if in_spells else 0.0)
        level = evidence.look_level(policy.alpha * share)
        interval = intervals.mean_interval(values, level, bar=least)
        if interval is not None and interval.high < least:
            state = evidence.FAIL
        elif interval is not None and state == evidence.PASS and interval.mean < least:
            state = evidence.OPEN  # said by explain()
    return LowerCheck(state, threshold, test.seen, test.misses, duty, window_s, notes,
                      test=test, interval=interval)


#: The drift an early look allows for: the level may move linearly by this share of the mean
#: over the planned seconds (a host warming up, a neighbour's load changing), so the seconds
#: seen before the end can sit below (or above) the whole run's mean by up to
#: ``DRIFT x (planned - n) / (2 (planned - 1))`` (seconds 0 to planned - 1). Chosen by simulation (docs/benchmarks.md, "Every
#: one-volume rule over every cell"): without it a drift of +20 % over a 60 s check FAILed
#: an early look 2.2 x as often as its level allows.
DRIFT = 0.20


def drift_allowance(n: int, planned: int | None) -> float:
    """How far (as a share of the threshold) a mean of the first ``n`` of ``planned``
    seconds may sit from the whole run's mean under a linear drift of :data:`DRIFT`: 0 once
    every planned second is seen (or with no plan)."""
    if not planned or n >= planned:
        return 0.0
    return DRIFT * (planned - n) / (2.0 * (planned - 1))


def mean_check(measured: float, threshold: float, *, note: str = "",
               values: Sequence[float] = (), policy: evidence.Policy | None = None,
               planned: int | None = None) -> LowerCheck:
    """The lower bound on the mean (FLOOR, or CAP without a per-second series).

    With per-second ``values`` the mean's batch-means interval decides, asymmetrically: PASS
    when its lower bound at the PASS level clears ``threshold``, FAIL when its upper bound at
    the check's false-red level stays below it, "open" in between. Without them the bare
    mean is compared (and ``note`` says so). Before the ``planned`` seconds are all seen, the
    bounds must clear the threshold by the drift allowance too
    (:func:`drift_allowance`).
    """
    policy = policy or evidence.Policy()
    notes: tuple[str, ...] = (note,) if note else ()
    if len(values) < 2:
        state = evidence.PASS if measured >= threshold else evidence.FAIL
        return LowerCheck(state, threshold, notes=notes)
    passing = intervals.mean_interval(values, evidence.look_level(policy.pass_alpha),
                                     bar=threshold)
    failing = intervals.mean_interval(values, evidence.look_level(policy.alpha),
                                     bar=threshold)
    assert passing is not None and failing is not None
    margin = drift_allowance(len(values), planned)
    if passing.low >= threshold * (1.0 + margin):
        state, interval = evidence.PASS, passing
    elif failing.high < threshold * (1.0 - margin):
        state, interval = evidence.FAIL, failing
    else:
        state, interval = evidence.OPEN, passing
        if interval.needed_s:
            needed = format_seconds(interval.needed_s)
            notes += (f"about {needed} of seconds like these would decide",)
    return LowerCheck(state, threshold, samples=interval.n, notes=notes, interval=interval)


def sentence(text: str) -> str:
    """A note as a sentence: capital first letter, one full stop."""
    text = text.strip()
    # a tool's name keeps its spelling ("fio was stopped ...")
    first = text[:1] if text.split(" ", 1)[0] in ("fio", "ebsperf") else text[:1].upper()
    return f"{first}{text[1:]}" + ("" if text.endswith((".", "!", "?")) else ".")
