"""Judge the spread of repeated runs (run-to-run stability, S1-09) and hold the bars of the
claims about several passes over one device (S1-03 first vs second write, S1-08 after TRIM vs
full: those are measured in paired blocks, :mod:`pytest_ebsperf.checks.paired`).

Stability is judged on the runs' means, the first run dropped as seed 001 did: the
coefficient of variation (CV) with a chi-square interval for the standard deviation; FAIL
only when even its lower bound exceeds the allowed CV, PASS when its upper bound stays
within it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pytest_ebsperf.awsmodel.types import REL
from pytest_ebsperf.units import format_percent, format_quantity
from pytest_ebsperf.verdicts import stats
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: S1-03/S1-08 (claims.md): the first (or after-TRIM) pass at least 90 % of the second.
MIN_PASS_RATIO = 0.90
#: S1-09 (claims.md): run-to-run CV of NVMe instance store at most 10 %.
MAX_RUN_CV = 0.10
#: Seed 001 dropped the first of its runs (the device and caches settle).
DROPPED_RUNS = 1
#: A PASS on stability needs the CV's upper bound at 95 % confidence within the allowance
#: (a FAIL needs the lower bound above it at the run's far stricter false-alarm level).
STABILITY_PASS_CONFIDENCE = 0.95


def cv_interval(values: Sequence[float], alpha: float, pass_alpha: float | None = None
                ) -> tuple[float, float, float]:
    """(CV, lower, upper): the sample's CV, its lower bound at confidence ``1 - alpha`` and
    its upper bound at ``1 - pass_alpha`` (default ``alpha``), from the chi-square interval of
    the standard deviation (the mean taken as known: its own error is a CV-th of the
    deviation's)."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2 or mean <= 0:
        return math.nan, math.nan, math.nan
    sd = statistics.stdev(values)
    df = n - 1
    low = sd * math.sqrt(df / stats.chi2_quantile(1.0 - alpha, df)) / mean
    high_q = stats.chi2_quantile(alpha if pass_alpha is None else pass_alpha, df)
    high = sd * math.sqrt(df / high_q) / mean if high_q > 0 else math.inf
    return sd / mean, low, high


def stability_power(runs: int, cv: float, alpha: float, *, max_cv: float = MAX_RUN_CV,
                    dropped: int = DROPPED_RUNS) -> tuple[float, float]:
    """(P(PASS), P(FAIL)) of :func:`judge_stability` on ``runs`` runs of a volume whose
    runs' means vary with coefficient of variation ``cv`` (normal runs; the kept runs'
    sample variance follows sigma^2 chi-square(df) / df, df = kept - 1; the mean's own
    error, a CV-th of the deviation's, is left out as in the judge)."""
    df = runs - dropped - 1
    if df < 2 or cv <= 0:
        return (1.0, 0.0) if cv <= 0 and df >= 2 else (0.0, 0.0)
    scale = (max_cv / cv) ** 2
    q_pass = stats.chi2_quantile(1.0 - STABILITY_PASS_CONFIDENCE, df)
    q_fail = stats.chi2_quantile(1.0 - alpha, df)
    p_pass = stats.chi2_cdf(scale * q_pass, df)
    p_fail = 1.0 - stats.chi2_cdf(scale * q_fail, df)
    return p_pass, p_fail


def judge_stability(claim: str, what: str, run_means: Sequence[float], *,
                    max_cv: float = MAX_RUN_CV, dropped: int = DROPPED_RUNS,
                    alpha: float = 0.01, unit: str = "IOPS", source: str = "") -> Verdict:
    """Run-to-run stability: the CV of the runs' means (the first ``dropped`` left out) is at
    most ``max_cv``. Needs three kept runs to say anything."""
    cite = f"Claim {claim}" + (f", {source}" if source else "")
    kept = list(run_means[dropped:])
    shown = ", ".join(format_quantity(v, unit) for v in run_means)
    details: dict[str, Any] = {"runs": list(run_means), "dropped": dropped, "max_cv": max_cv}
    if len(kept) < 3:
        reason = (f"inconclusive: {len(kept)} run(s) kept after dropping {dropped}; a CV "
                  "needs at least 3")
        return Verdict(Outcome.INCONCLUSIVE, claim, what, max_cv, None, "CV", "run count",
                       reason, f"{what}: runs {shown} - {reason}. {cite}", REL, details)
    mean = statistics.fmean(kept)
    pass_alpha = 1.0 - STABILITY_PASS_CONFIDENCE
    cv, low, high = cv_interval(kept, alpha, pass_alpha)
    details.update({"mean": mean, "cv": cv, "cv_low": low, "cv_high": high, "alpha": alpha,
                    "pass_alpha": pass_alpha})
    seen = (f"mean {format_quantity(mean, unit)}, CV {format_percent(cv)}: at most "
            f"{format_percent(high)} with {format_percent(STABILITY_PASS_CONFIDENCE)} "
            f"confidence, at least {format_percent(low)} with {format_percent(1.0 - alpha)}; "
            f"{format_percent(max_cv)} allowed")
    if high <= max_cv:
        outcome, reason = Outcome.PASS, f"CV {format_percent(cv)} over {len(kept)} runs"
    elif low > max_cv:
        outcome = Outcome.FAIL
        reason = f"runs vary by CV {format_percent(cv)}, above {format_percent(max_cv)}"
    else:
        outcome = Outcome.INCONCLUSIVE
        reason = (f"inconclusive: CV {format_percent(cv)} over {len(kept)} runs cannot be "
                  f"placed against {format_percent(max_cv)} - more runs (--ebsperf-runs)")
    message = (f"{what}: runs {shown}, the first {dropped} dropped; {seen}. {cite}")
    return Verdict(outcome, claim, what, max_cv, cv, "CV", "run-to-run variation", reason,
                   message, REL, details)


#: Runs of one emulated volume, all set to deliver the same, that kept up with their setting
#: unevenly: the lowest below this share of it while another reached :data:`EVEN_RUNS` x
#: the lowest (a quiet host's runs of a 27,500 IOPS instance store: 99-101 %).
LOW_RUN_SHARE = 0.95
EVEN_RUNS = 1.05
#: The one rule for an emulated volume the host held back: what fio saw under this share of
#: what the volume was set to deliver (its throttle and service time) was this host's doing,
#: not the volume's. A second of a run below it is left out of the verdict
#: (:mod:`pytest_ebsperf.emulate.witness`), a run below it is measured again, at most
#: :data:`MAX_RUNS_AGAIN` times a check, and so is a comparison's pair with one side below it
#: (:func:`pytest_ebsperf.verdicts.paired_verdicts.spoiled_pair`). A quiet host's runs
#: deliver 99-101 % (at QD 1 fio's own submission time holds them near 94 %); a volume *set*
#: slower delivers its setting and is never held back. In two main jobs a fresh
#: instance-store volume's first 6 and 7 runs of 1 s delivered 35-92 % (its loop worker busy
#: for 14 s), every later run 100 %: ten runs again cover such a start; a main job's S2-17
#: block at 86 % of its setting (its twin at 100 %) took the comparison from 4 pairs to 32
#: while the rule for a pair was 85 %.
HELD_BACK_SHARE = 0.9
MAX_RUNS_AGAIN = 10


def spoiled_run(share: float | None) -> bool:
    """A run (or one side of a pair) of an emulated volume that the host held back
    (:data:`HELD_BACK_SHARE`)."""
    return share is not None and 0 < share < HELD_BACK_SHARE


def measured_again(found: Verdict, again: Sequence[float]) -> Verdict:
    """``found`` saying which runs were measured again, and why (the host's)."""
    if not again:
        return found
    shares = ", ".join(f"{share * 100:.0f} %" for share in again)
    count = len(again)
    return replace(found, message=(
        f"{found.message} {count} run{'s' if count != 1 else ''} measured again: the emulator "
        f"delivered {shares} of its setting there, this host's doing, not the volume's."),
        details={**found.details, "measured_again": list(again)})


def uneven_runs(shares: Sequence[float | None], what: str) -> str:
    """The sentence naming this host when runs of an emulated volume set alike delivered
    their setting unevenly (S1-09's runs compared with each other); "" when they kept up
    alike or a run's setting is unknown."""
    known = [share for share in shares if share is not None and share > 0]
    if not known or len(known) < len(shares):
        return ""
    low, high = min(known), max(known)
    if low >= LOW_RUN_SHARE or high < EVEN_RUNS * low:
        return ""
    return (f"this host could not emulate {what} evenly: its runs, each set to deliver the "
            f"same, delivered {low * 100:.0f}-{high * 100:.0f} % of it (its throttle), so "
            "the I/Os of the slow runs waited in this host's own I/O path and their spread is "
            "the host's, not the volume's; run it on a quieter host")


def emulator_uneven(found: Verdict, shares: Sequence[float | None], volume_type: str
                    ) -> Verdict:
    """S1-09 on an emulated volume that did not PASS, whose runs (each set to deliver the
    same) kept up with that setting unevenly: INCONCLUSIVE naming the host
    (:func:`uneven_runs`); the live check and ``ebsperf judge`` of its kept runs alike."""
    said = uneven_runs(shares, volume_type)
    if found.passed or not said:
        return found
    reason = "inconclusive: this host could not emulate the runs evenly"
    return replace(found, outcome=Outcome.INCONCLUSIVE, reason=reason, binding="emulator",
                   message=f"{found.what}: {reason}. {said[0].upper()}{said[1:]}. What the runs "
                   f"showed: {found.message}")
