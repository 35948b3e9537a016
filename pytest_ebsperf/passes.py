"""Judge claims about several passes over the same device: one pass against another (first
write vs second write, writes after TRIM vs writes into a full region: S1-03, S1-08) and the
spread of repeated runs (run-to-run stability, S1-09).

Both are statistical statements about a sample. A ratio is judged on the per-second IOPS of
the two passes (the ratio of their means with a confidence interval): PASS when the whole
interval is at or above the required ratio, FAIL only when the whole interval lies below
it, INCONCLUSIVE when the seconds cannot tell. Stability is judged on the runs' means, the
first run dropped as seed 001 did: the coefficient of variation (CV) with a chi-square
interval for the standard deviation; FAIL only when even its lower bound exceeds the allowed
CV, PASS when its upper bound stays within it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

from pytest_ebsperf import evidence
from pytest_ebsperf.models.types import REL
from pytest_ebsperf.units import format_percent, format_quantity
from pytest_ebsperf.verdict_types import Outcome, Verdict

#: S1-03/S1-08 (claims.md): the first (or after-TRIM) pass at least 90 % of the second.
MIN_PASS_RATIO = 0.90
#: S1-09 (claims.md): run-to-run CV of NVMe instance store at most 10 %.
MAX_RUN_CV = 0.10
#: Seed 001 dropped the first of its runs (the device and caches settle).
DROPPED_RUNS = 1
#: A PASS on stability needs the CV's upper bound at 95 % confidence within the allowance
#: (a FAIL needs the lower bound above it at the run's far stricter false-alarm level).
STABILITY_PASS_CONFIDENCE = 0.95


def judge_ratio_at_least(claim: str, what: str, a_label: str, a_values: Sequence[float],
                         b_label: str, b_values: Sequence[float], *,
                         min_ratio: float = MIN_PASS_RATIO, alpha: float = 0.01,
                         unit: str = "IOPS", source: str = "",
                         notes: Sequence[str] = ()) -> Verdict:
    """REL "at least": mean(a) / mean(b) >= ``min_ratio``, judged on per-second samples."""
    cite = f"Claim {claim}" + (f", {source}" if source else "")
    a_mean = statistics.fmean(a_values) if a_values else 0.0
    b_mean = statistics.fmean(b_values) if b_values else 0.0
    pair = (f"{a_label} {format_quantity(a_mean, unit)} vs {b_label} "
            f"{format_quantity(b_mean, unit)}")
    extra = "".join(f" {note}" for note in notes if note)
    details: dict[str, Any] = {"min_ratio": min_ratio, "a_label": a_label, "b_label": b_label,
                               "a_seconds": len(a_values), "b_seconds": len(b_values)}
    interval = evidence.ratio_interval(a_values, b_values, alpha)
    if interval is None:
        reason = (f"inconclusive: {pair} - fewer than two seconds measured in a pass, or "
                  f"{b_label} measured nothing")
        return Verdict(Outcome.INCONCLUSIVE, claim, what, min_ratio, None, "ratio", b_label,
                       reason, f"{what}: {reason}.{extra} {cite}", REL, details)
    details.update({"ratio": interval.ratio, "ratio_low": interval.low,
                    "ratio_high": interval.high, "alpha": alpha})
    conf = format_percent(1.0 - 2.0 * alpha)
    seen = (f"ratio {interval.ratio:.3f}, between {max(0.0, interval.low):.3f} and "
            f"{interval.high:.3f} "
            f"with {conf} confidence; at least {min_ratio:.2f} required")
    if interval.low >= min_ratio:
        outcome, reason = Outcome.PASS, f"{a_label} / {b_label} = {interval.ratio:.3f}"
    elif interval.high < min_ratio:
        outcome = Outcome.FAIL
        # "n % below" reads right against "at least 0.90 x"; against "at least 3 x" the
        # required ratio is what the reader needs, even when the device is the slower one
        reason = (f"{a_label} is {(1 - interval.ratio) * 100:.0f} % below {b_label} "
                  f"(ratio {interval.ratio:.3f})" if interval.ratio < 1.0 and min_ratio <= 1.0
                  else
                  f"{a_label} / {b_label} = {interval.ratio:.3f}, below the {min_ratio:.2f} "
                  "required")
    else:
        outcome = Outcome.INCONCLUSIVE
        reason = (f"inconclusive: the seconds cannot tell whether {a_label} reaches "
                  f"{min_ratio:.2f} x {b_label} - run longer (--ebsperf-runtime)")
    message = f"{what}: {pair} ({seen}).{extra} {cite}"
    return Verdict(outcome, claim, what, min_ratio, interval.ratio, "ratio", b_label, reason,
                   message, REL, details)


def _gamma_p(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x) (series below a + 1, else the continued
    fraction; Numerical Recipes 6.2)."""
    if x <= 0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        n = a
        for _ in range(500):
            n += 1.0
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return total * math.exp(log_front)
    b, c, d = x + 1.0 - a, 1e300, 1.0 / (x + 1.0 - a)
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = b + an / c if abs(c) > 1e-300 else b + an / 1e-300
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return 1.0 - math.exp(log_front) * h


def chi2_quantile(q: float, df: float) -> float:
    """The ``q`` quantile of chi-square with ``df`` degrees of freedom (bisection on the
    regularized incomplete gamma; exact to 1e-12 relative)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile level must be in (0, 1), got {q}")
    low, high = 0.0, max(1.0, df)
    while _gamma_p(df / 2.0, high / 2.0) < q:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if _gamma_p(df / 2.0, mid / 2.0) < q:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * high:
            break
    return (low + high) / 2.0


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
    low = sd * math.sqrt(df / chi2_quantile(1.0 - alpha, df)) / mean
    high_q = chi2_quantile(alpha if pass_alpha is None else pass_alpha, df)
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
    q_pass = chi2_quantile(1.0 - STABILITY_PASS_CONFIDENCE, df)
    q_fail = chi2_quantile(1.0 - alpha, df)
    p_pass = _gamma_p(df / 2.0, scale * q_pass / 2.0)
    p_fail = 1.0 - _gamma_p(df / 2.0, scale * q_fail / 2.0)
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
