"""Latency claims: "p99 read latency stays under 2 ms at QD 4", judged as evidence.

fio keeps every completion in a histogram and reports percentiles from it; the check asks it
for a ladder of percentiles around the claimed one (:func:`percentile_list`), so the share of
completions slower than the bound can be read off: if fio's p97 is already above 2 ms, at
least 3 % of completions were slower than 2 ms.

Completions are not independent: the I/Os in flight together wait in the same queue, so a
slow moment makes a whole queue's worth of them slow. The test therefore counts one trial per
queue turn (``completions / outstanding I/Os``), which is conservative for a deep queue.

* **PASS**: fio's own percentile of the claim is at or under the bound.
* **FAIL**: the share of completions slower than the bound is larger than the claim allows
  (``1 - percentile``) beyond chance: one-sided binomial test on the trials at the check's
  false-alarm level.
* **INCONCLUSIVE**: slower than the bound at the claimed percentile but not beyond chance, or
  too few completions to see the percentile at all (run longer).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.result import FioResult, Latency, Series
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import format_latency, format_number
from pytest_ebsperf.verdicts import evidence, intervals
from pytest_ebsperf.verdicts.diagnosis import steal_sentence
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: The policy name of a latency claim in reports and results files.
LATENCY = "LATENCY"
#: Completions expected beyond the claimed percentile before it is worth reading.
MIN_TAIL_COMPLETIONS = 10
_LADDER = (50.0, 90.0, 95.0, 97.0, 98.0, 98.5, 99.0, 99.5, 99.8, 99.9, 99.95, 99.99)
_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)?\s*$")
_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, None: 1e6}


def parse_duration_ns(value: str | float, *, what: str = "latency bound") -> float:
    """``"2ms"``, ``"500us"``, ``"0.002s"`` or a number of milliseconds -> nanoseconds."""
    if isinstance(value, (int, float)):
        ns = float(value) * 1e6
    else:
        match = _DURATION.match(value)
        if not match:
            raise ConfigError(f"{value!r} is not a {what}: give a duration such as 2ms, "
                              "500us or 0.002s (a bare number is milliseconds).")
        ns = float(match.group(1)) * _NS[match.group(2)]
    if not ns > 0 or not math.isfinite(ns):
        raise ConfigError(f"the {what} must be a positive duration, got {value!r}.")
    return ns


def percentile_list(percentile: float) -> str:
    """fio's ``percentile_list`` value: the ladder plus the claimed percentile."""
    if not 0 < percentile < 100:
        raise ConfigError(f"percentile must be between 0 and 100 (99 for p99), got "
                          f"{percentile:g}.")
    return ":".join(f"{p:g}" for p in sorted({*_LADDER, float(percentile)}))


def _direction(result: FioResult, workload: Workload, direction: str | None) -> tuple[str, Any]:
    if direction is None:
        direction = "read" if workload.read_fraction >= 0.5 else "write"
    if direction not in ("read", "write"):
        raise ConfigError(f"direction must be 'read' or 'write', got {direction!r}.")
    stats = result.mixed if result.mixed.total_ios else getattr(result, direction)
    return direction, stats


def _slower_share(clat: Latency, bound_ns: float) -> tuple[float, float | None]:
    """(at least this share of completions was slower than the bound, the percentile at
    which fio first reports a value above it)."""
    above = sorted(q for q, ns in clat.percentiles.items() if ns > bound_ns)
    if not above:
        return 0.0, None
    return 1.0 - above[0] / 100.0, above[0]


def judge_latency(claim: str, what: str, result: FioResult, workload: Workload, *,
                  percentile: float, bound_ns: float, alpha: float,
                  direction: str | None = None, source: str = "") -> Verdict:
    """Judge "the ``percentile``-th completion latency is at most ``bound_ns``"."""
    direction, stats = _direction(result, workload, direction)
    clat: Latency = stats.clat
    completions = int(stats.total_ios)
    outstanding = max(workload.queue_depth, 1)
    trials = max(completions // outstanding, 0)
    measured = clat.p(percentile)
    label = f"p{percentile:g} {direction} latency"
    base = {"percentile": percentile, "bound_ns": bound_ns, "direction": direction,
            "completions": completions, "outstanding": outstanding, "trials": trials,
            "alpha": alpha, "percentiles_ns": {f"{q:g}": ns for q, ns in
                                               sorted(clat.percentiles.items())}}

    def verdict(outcome: Outcome, reason: str, sentence: str, **details: Any) -> Verdict:
        shown = format_latency(measured) if measured is not None else "-"
        message = (f"{what}: {label} {shown} measured, at most {format_latency(bound_ns)} "
                   f"claimed, over {format_number(completions)} completions at QD "
                   f"{outstanding}. {sentence} Claim {claim}" + (f", {source}" if source
                                                                    else "."))
        return Verdict(outcome=outcome, claim=claim, what=what, expected=bound_ns,
                       measured=measured, unit="ns", binding=f"claimed {label}",
                       reason=reason, message=message, policy=LATENCY,
                       details={**base, **details})

    allowed = 1.0 - percentile / 100.0
    if measured is None or completions * allowed < MIN_TAIL_COMPLETIONS:
        need = math.ceil(round(MIN_TAIL_COMPLETIONS / allowed, 6))
        return verdict(Outcome.INCONCLUSIVE, f"inconclusive: too few completions for p"
                       f"{percentile:g}", f"The {label} needs at least {need:,} completions "
                       f"to be seen at all; this run had {completions:,}. Run longer "
                       "(--ebsperf-runtime).")
    if measured <= bound_ns:
        return verdict(Outcome.PASS, f"p{percentile:g} within {format_latency(bound_ns)}",
                       "Within the claim (fio's histogram of every completion).")
    share, first_above = _slower_share(clat, bound_ns)
    slower = math.floor(share * trials)
    p_value = evidence.binomial_tail(slower, trials, allowed) if trials else 1.0
    seen = (f"At least {share:.2%} of completions were slower than "
            f"{format_latency(bound_ns)} (fio's p{first_above:g} is above it), "
            f"{allowed:.2%} allowed. Counting one trial per queue turn ({trials:,} trials, "
            f"completions in flight together are not independent), a volume meeting the "
            f"claim would show {slower:,} or more slow turns with probability "
            f"{p_value:.2g}")
    if p_value <= alpha:
        return verdict(Outcome.FAIL, f"p{percentile:g} above {format_latency(bound_ns)}",
                       f"{seen}, below the false-alarm level {alpha:.2g}: FAIL.",
                       p_value=p_value, slower_share=share)
    return verdict(Outcome.INCONCLUSIVE, f"inconclusive: p{percentile:g} above "
                   f"{format_latency(bound_ns)} within chance",
                   f"{seen}, not below the false-alarm level {alpha:.2g}: not evidence yet; "
                   "run longer.", p_value=p_value, slower_share=share)


def judge_mean_latency(claim: str, what: str, result: FioResult, workload: Workload, *,
                       bound_ns: float, alpha: float, direction: str | None = None,
                       source: str = "", pass_alpha: float = evidence.PASS_ALPHA) -> Verdict:
    """Judge "the average completion latency is under ``bound_ns``" (io2's < 500 µs).

    The sample is the per-second mean completion latency from fio's logs, each second
    weighted by its I/Os (the average over I/Os, as fio's report gives it; a second stalled
    behind one slow I/O holds few), with batch means of consecutive seconds: its upper
    bound at ``pass_alpha`` must lie under the bound for PASS, its lower bound at ``alpha``
    (the check's false-red level) above it for FAIL; else INCONCLUSIVE. Without per-second
    I/O counts the seconds weigh the same.

    Seconds in which an emulated volume fell behind its setting
    (:attr:`FioResult.emulator_behind`) are the host's. They only make I/Os slower, so a
    PASS is judged on every second, as before (the host's slowness cannot make it); a FAIL
    only on the others, which can be no volume's miss; and when neither is shown with such
    seconds in the run, the verdict names the emulator, not the run's length. At queue depth
    1 a second counts as behind from 10 % under the setting's rate, so a run of 0.34 ms
    seconds on a 0.3 ms setting can be behind in all of them and still PASS 0.5 ms."""
    direction, stats = _direction(result, workload, direction)
    clat_series = result.series.get(f"{direction}_clat")
    windows = list(clat_series.values) if clat_series is not None else []
    measured = stats.clat.mean_ns if stats.clat.samples else None
    weights = _ios_per_window(result, direction, clat_series)
    host = _host_windows(result, clat_series)
    own = [w for i, w in enumerate(windows) if i not in host]
    own_weights = [w for i, w in enumerate(weights) if i not in host]

    def interval_at(level: float, values: list[float], weighed: list[float]
                    ) -> intervals.MeanInterval | None:
        return (intervals.weighted_mean_interval(values, weighed, level) if weighed
                else intervals.mean_interval(values, level))

    interval = interval_at(pass_alpha, windows, weights)
    failing = interval_at(alpha, own, own_weights)
    label = f"mean {direction} latency"
    base = {"bound_ns": bound_ns, "direction": direction, "windows": len(windows),
            "alpha": alpha, "window_means_ns": windows,
            **({"emulator_behind_s": sorted(host)} if host else {})}
    # said instead of "run longer" when the emulator fell behind in some of the seconds
    lost = (f"The emulated volume fell behind its setting in {len(host):,} of "
            f"{len(windows):,} s: this host could not emulate its service time there, and "
            "those seconds, the host's, cannot show a miss" if host else "")
    stolen = steal_sentence(result.host_cpu_steal_pct) if host else ""
    lost += f"; {stolen}" if stolen else ""

    def verdict(outcome: Outcome, reason: str, sentence: str, **details: Any) -> Verdict:
        shown = format_latency(measured) if measured is not None else "-"
        message = (f"{what}: {label} {shown} measured, under {format_latency(bound_ns)} "
                   f"claimed, at QD {workload.queue_depth}. {sentence} Claim {claim}"
                   + (f", {source}" if source else "."))
        return Verdict(outcome=outcome, claim=claim, what=what, expected=bound_ns,
                       measured=measured, unit="ns", binding=f"claimed {label}",
                       reason=reason, message=message, policy=LATENCY,
                       details={**base, **details})

    if measured is None or interval is None:
        return verdict(Outcome.INCONCLUSIVE, "inconclusive: too few seconds",
                       "Its per-second means need at least two seconds of fio's logs; run "
                       "longer (--ebsperf-runtime).")
    weighed = ", each weighted by its I/Os" if weights else ""
    seen = (f"Per-second means over {interval.n} s ({interval.describe()}){weighed}: "
            f"{format_latency(interval.mean)}")
    found = {"low_ns": failing.low if failing is not None else None,
             "high_ns": interval.high, "pass_alpha": pass_alpha,
             "blocks": interval.blocks, "block_s": interval.block_s}
    if interval.high < bound_ns:
        return verdict(Outcome.PASS, f"mean under {format_latency(bound_ns)}",
                       f"{seen}, at most {format_latency(interval.high)} with confidence "
                       f"{evidence.confidence_text(pass_alpha)}: PASS.", **found)
    if failing is not None and failing.low > bound_ns:
        own_seen = (f" (the {failing.n} s the emulator kept up with: "
                    f"{format_latency(failing.mean)})" if host else "")
        return verdict(Outcome.FAIL, f"mean above {format_latency(bound_ns)}",
                       f"{seen}{own_seen}, at least {format_latency(failing.low)} with "
                       f"confidence {evidence.confidence_text(alpha)} (the check's false-red "
                       "level): above the claim, FAIL.", **found)
    if lost:
        low = (f"at least {format_latency(failing.low)} on the {failing.n} s it kept up "
               "with" if failing is not None else "fewer than two seconds it kept up with")
        return verdict(Outcome.INCONCLUSIVE, "inconclusive: the emulator fell behind",
                       f"{seen}, at most {format_latency(interval.high)}; {low}: the claim's "
                       f"bound lies between. {lost}.", **found)
    # no host seconds: ``failing`` is over the same seconds as ``interval``
    low_ns = failing.low if failing is not None else interval.low
    return verdict(Outcome.INCONCLUSIVE, f"inconclusive: mean near {format_latency(bound_ns)}",
                   f"{seen}, between {format_latency(low_ns)} and "
                   f"{format_latency(interval.high)}: the claim's bound lies inside; run "
                   "longer.", **found)


def _host_windows(result: FioResult, clat: Series | None) -> set[int]:
    """The latency windows (indices) of the seconds an emulated volume fell behind in,
    matched by window end with the IOPS series its witness judged."""
    if not result.emulator_behind or clat is None:
        return set()
    judged = next((result.series[key] for key in ("total_iops", "read_iops", "write_iops")
                   if key in result.series and len(result.series[key])), None)
    if judged is None:
        return set()
    ends = {round(judged.t_s[i], 3) for i in result.emulator_behind if i < len(judged.t_s)}
    return {i for i, t in enumerate(clat.t_s) if round(t, 3) in ends}


def _ios_per_window(result: FioResult, direction: str, clat: Series | None) -> list[float]:
    """Each latency window's I/Os (its IOPS, matched by window end), or [] when fio's
    IOPS log misses more than one latency window in ten."""
    iops = result.series.get(f"{direction}_iops")
    if clat is None or iops is None or not len(iops) or not len(clat):
        return []
    by_end = {round(t, 3): v for t, v in zip(iops.t_s, iops.values, strict=False)}
    weights = [by_end.get(round(t, 3)) for t in clat.t_s]
    missing = sum(w is None for w in weights)
    if missing > max(1, len(weights) // 10):
        return []
    # a window the IOPS log did not complete (the last, cut by the runtime) weighs as an
    # average window does
    known = [float(w) for w in weights if w is not None]
    average = math.fsum(known) / len(known) if known else 0.0
    return [float(w) if w is not None else average for w in weights]


def ladder() -> Sequence[float]:
    """The percentiles asked of fio besides the claimed one."""
    return _LADDER
