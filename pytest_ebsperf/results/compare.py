"""The regression gate: compare a measurement with the same check of a stored run.

Two runs of the same check (same volume type, size, provisioned values, instance type, role,
claim and workload) are compared on IOPS, throughput and mean completion latency, using the
per-second samples of both. A metric *regressed* only when both hold:

* the relative change of the means is worse than the threshold (``--ebsperf-compare-threshold``,
  default 10 %), and
* the change is statistically clear: Welch's t-test on the runs' batch means (blocks of
  consecutive seconds, see :mod:`.stats`; Student's pooled test when one run has a single
  block) gives p < :data:`ALPHA`.

Anything else is "within noise". Latency percentiles (p50, p99) come from fio's summary, one
number per run with no per-second samples of their own, so the per-second mean latency is
their noise evidence: a percentile regressed when it moved beyond the threshold *and* the mean
latency moved clearly in the same direction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ebsperf.results import ALPHA, records
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts.stats import SampleSummary, relative_change, summarize, t_test

#: Confidence level of the interval printed for a change (matches ALPHA).
CI_LEVEL = 1.0 - ALPHA

REGRESSION = "regression"
IMPROVEMENT = "improvement"
WITHIN_NOISE = "within noise"
NOT_JUDGED = "not judged"
NO_BASELINE = "no baseline"
#: Worst first: the status of a group of comparisons is the first of these found.
STATUS_ORDER = (REGRESSION, NO_BASELINE, NOT_JUDGED, WITHIN_NOISE, IMPROVEMENT)

HOW_TO_RECORD = ("record one on the current AMI with `pytest SUITES --ebsperf-report=FILE.json` "
                 "(or `--benchmark-autosave`) and pass it as --ebsperf-compare=FILE.json")


@dataclass(frozen=True)
class Metric:
    """A compared quantity: how to read its samples and which direction is worse."""

    name: str
    unit: str
    higher_is_better: bool
    samples: Callable[[Mapping[str, Any]], list[float]]


METRICS = (
    Metric("IOPS", "IOPS", True, lambda m: records.series_values(m, "total_iops")),
    Metric("throughput", "B/s", True, lambda m: records.series_values(m, "total_bw")),
    Metric("mean latency", "ns", False, records.latency_samples),
)
PERCENTILES = ("p50", "p99")


@dataclass(frozen=True)
class MetricComparison:
    """One metric of one measurement against its baseline."""

    metric: str
    unit: str
    current: float
    baseline: float
    status: str
    reason: str
    change: float | None = None
    ci: tuple[float, float] | None = None
    p: float | None = None
    now: SampleSummary | None = None
    before: SampleSummary | None = None
    test: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON types for the row, the results file and JUnit."""
        return {
            "metric": self.metric, "unit": self.unit, "current": _finite(self.current),
            "baseline": _finite(self.baseline), "status": self.status, "reason": self.reason,
            "change_pct": _pct(self.change), "ci_pct": [_pct(v) for v in self.ci] if self.ci
            else None, "p_value": _finite(self.p), "test": self.test,
            "noise": {"current": _noise(self.now), "baseline": _noise(self.before)},
        }

    def sentence(self) -> str:
        """``IOPS 3,400 IOPS now vs 4,000 IOPS in the baseline (-15.0 %; ...)``."""
        now, before = (format_quantity(v, self.unit) for v in (self.current, self.baseline))
        return f"{self.metric} {now} now vs {before} in the baseline ({self.reason})"


@dataclass(frozen=True)
class Comparison:
    """All metrics of one measurement against the matching baseline measurements."""

    check: str
    status: str
    metrics: tuple[MetricComparison, ...] = ()
    note: str = ""
    baseline_source: str = ""

    @property
    def regressions(self) -> tuple[MetricComparison, ...]:
        return tuple(m for m in self.metrics if m.status == REGRESSION)

    def headline(self) -> str:
        """The metric that decided the status and its change: ``IOPS -15.0 %``."""
        if not self.metrics:
            return ""
        shown = next((m for m in self.metrics if m.status == self.status), self.metrics[0])
        return f"{shown.metric} {_signed_pct(shown.change)}"

    def summary(self) -> str:
        """A short cell for the claims table: ``within noise (IOPS -3.0 %)``."""
        headline = self.headline()
        return f"{self.status} ({headline})" if headline else self.status

    def message(self) -> str:
        """The failure message: every regressed metric with both values and the noise."""
        lines = [f"Regression against the baseline: {self.check}"]
        for metric in self.regressions:
            lines.append(f"  {metric.sentence()}")
            lines.append(f"    noise: {noise_sentence(metric)}")
        others = [m for m in self.metrics if m.status != REGRESSION]
        if others:
            lines.append("  Other metrics:")
            lines.extend(f"    {m.sentence()}" for m in others)
        if self.note:
            lines.append(f"  Note: {self.note}")
        lines.append(f"  Baseline: {self.baseline_source}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "status": self.status, "summary": self.summary(),
                "headline": self.headline(),
                "note": self.note, "baseline": self.baseline_source,
                "metrics": [m.as_dict() for m in self.metrics]}


def noise_sentence(metric: MetricComparison) -> str:
    """Per-second noise of both runs and the test that judged the change."""
    now, before = metric.now, metric.before
    if now is None or before is None:
        return "no per-second samples"
    parts = [(f"{_sd_text(now, metric.unit)} over {now.n} s now, "
              f"{_sd_text(before, metric.unit)} over {before.n} s in the baseline")]
    if metric.ci is not None and all(math.isfinite(v) for v in metric.ci):
        parts.append(f"{CI_LEVEL:.0%} CI of the change {_signed_pct(metric.ci[0])} to "
                     f"{_signed_pct(metric.ci[1])}")
    if metric.p is not None:
        parts.append(f"{metric.test or 'the t-test'} p {_p_text(metric.p)} (clear below "
                     f"{ALPHA:g})")
    return "; ".join(parts)


def _sd_text(summary: SampleSummary, unit: str) -> str:
    sd = format_quantity(summary.sd, unit) if summary.sd else f"0 {unit}"
    blocks = (f", {summary.blocks} blocks of {summary.block_s} s" if summary.block_s > 1
              else "")
    return f"sd {sd} ({summary.cv:.1%} of the mean{blocks})"


# -- comparing ------------------------------------------------------------------------------
def compare_measurement(current: Mapping[str, Any], baseline: Sequence[Mapping[str, Any]], *,
                        threshold_pct: float, check: str, note: str = "",
                        source: str = "") -> Comparison:
    """Compare ``current`` with the pooled samples of its ``baseline`` measurements."""
    if not baseline:
        return Comparison(check, NO_BASELINE, note=note, baseline_source=source)
    # At a volume's cap every I/O waits its turn: latency is queue depth / rate, so two runs
    # with different queues differ in latency by construction. Their rates still compare.
    queues = {records.workload_queue(str(m.get("workload", ""))) for m in baseline}
    same_queue = queues == {records.workload_queue(str(current.get("workload", "")))}
    if not same_queue:
        note = _join(note, "latency not compared: at a cap it is queue depth / rate, and the "
                           "queues differ")
    capped = [m for m in (current, *baseline) if held_at_cap(m)]
    if same_queue and capped:
        note = _join(note, "latency not gated: the run sat at its cap with "
                           f"{_outstanding(capped[0])} I/Os outstanding, where latency is "
                           "the queue depth over the rate (Little's law), set by the job "
                           "and the cap, not by the volume; its rate is gated")
    gate_latency = same_queue and not capped
    results: list[MetricComparison] = []
    for metric in METRICS:
        if not gate_latency and metric.name == "mean latency":
            continue
        now = metric.samples(current)
        before = [v for m in baseline for v in metric.samples(m)]
        if now and before:
            results.append(compare_samples(metric, now, before, threshold_pct))
    latency = next((m for m in results if m.metric == "mean latency"), None)
    for name in PERCENTILES if gate_latency else ():
        found = _compare_percentile(name, current, baseline, latency, threshold_pct)
        if found is not None:
            results.append(found)
    if not results:
        return Comparison(check, NOT_JUDGED, note=_join(note, "no per-second samples to "
                                                             "compare"), baseline_source=source)
    return Comparison(check, worst(m.status for m in results), tuple(results), note, source)


#: A CAP run whose rate reached this share of its cap sat at the cap.
AT_CAP = 0.9


def _outstanding(measurement: Mapping[str, Any]) -> int:
    spec = measurement.get("spec") or {}
    try:
        return int(spec.get("iodepth") or 1) * int(spec.get("numjobs") or 1)
    except (TypeError, ValueError):
        return 1


def held_at_cap(measurement: Mapping[str, Any]) -> bool:
    """Whether a measurement ran at its volume's rate cap with more than one I/O
    outstanding: its latency is then the queue over the rate (a throttle's, bimodal: a
    served I/O or one held until the next token), not the volume's service time. A run
    below its cap (the QD-1 latency checks) keeps its latency gated."""
    check = measurement.get("check") or {}
    expected = check.get("expected")
    if check.get("policy") != "CAP" or not isinstance(expected, (int, float)) or \
            expected <= 0 or _outstanding(measurement) <= 1:
        return False
    rate = measurement.get("bw_bytes") if check.get("unit") == "B/s" else \
        measurement.get("iops")
    return isinstance(rate, (int, float)) and rate >= AT_CAP * expected


def compare_samples(metric: Metric, now: Sequence[float], before: Sequence[float],
                    threshold_pct: float) -> MetricComparison:
    """Judge one metric from per-second samples (see the module docstring)."""
    a, b = summarize(now), summarize(before)
    test = t_test(a, b)
    change = relative_change(a, b, test, CI_LEVEL)
    p = test.p if test else None
    if change is None:
        return MetricComparison(metric.name, metric.unit, a.mean, b.mean, NOT_JUDGED,
                                "the baseline measured 0", p=p, now=a, before=b)
    worse = change.change < 0 if metric.higher_is_better else change.change > 0
    status, reason = _decide(change.change, worse, p, threshold_pct)
    return MetricComparison(metric.name, metric.unit, a.mean, b.mean, status, reason,
                            change.change, (change.low, change.high), p, a, b,
                            test.name if test else "")


def _decide(change: float, worse: bool, p: float | None, threshold_pct: float
            ) -> tuple[str, str]:
    moved = f"{_signed_pct(change)}, threshold {threshold_pct:g} %"
    if abs(change) * 100.0 <= threshold_pct:
        return WITHIN_NOISE, f"{moved}: within the threshold"
    if p is None:
        return NOT_JUDGED, (f"{moved}: one per-second sample only, so the noise is unknown - "
                            "run longer (--ebsperf-runtime)")
    if p >= ALPHA:
        return WITHIN_NOISE, f"{moved}: not statistically clear (p {_p_text(p)})"
    if worse:
        return REGRESSION, f"{moved}: statistically clear (p {_p_text(p)})"
    return IMPROVEMENT, f"{moved}: statistically clear (p {_p_text(p)})"


def _compare_percentile(name: str, current: Mapping[str, Any],
                        baseline: Sequence[Mapping[str, Any]],
                        latency: MetricComparison | None,
                        threshold_pct: float) -> MetricComparison | None:
    now = records.latency_percentile(current, name)
    values = [v for m in baseline if (v := records.latency_percentile(m, name)) is not None]
    if now is None or not values:
        return None
    before = math.fsum(values) / len(values)
    change = now / before - 1.0 if before else None
    metric = f"{name} latency"
    if change is None:
        return MetricComparison(metric, "ns", now, before, NOT_JUDGED, "the baseline measured 0")
    moved = f"{_signed_pct(change)}, threshold {threshold_pct:g} %"
    if abs(change) * 100.0 <= threshold_pct:
        return MetricComparison(metric, "ns", now, before, WITHIN_NOISE,
                                f"{moved}: within the threshold", change)
    same_way = latency is not None and latency.change is not None and \
        latency.change * change > 0
    clear = same_way and latency is not None and latency.p is not None and latency.p < ALPHA
    if not clear:
        return MetricComparison(metric, "ns", now, before, WITHIN_NOISE,
                                f"{moved}: the per-second mean latency did not move clearly "
                                "the same way", change)
    status = REGRESSION if change > 0 else IMPROVEMENT
    assert latency is not None
    return MetricComparison(metric, "ns", now, before, status,
                            f"{moved}: the per-second mean latency moved clearly the same "
                            f"way (p {_p_text(latency.p or 0.0)})", change,
                            now=latency.now, before=latency.before, p=latency.p,
                            test=f"{latency.test} on the per-second mean latency")


def worst(statuses: Iterable[str]) -> str:
    """The most important status of several (regression first)."""
    found = set(statuses)
    return next((s for s in STATUS_ORDER if s in found), NOT_JUDGED)


# -- finding the baseline of a measurement ---------------------------------------------------
@dataclass
class Baseline:
    """Measurements of a stored run, indexed by what identifies a check across runs."""

    source: str
    measurements: list[Mapping[str, Any]] = field(default_factory=list)

    def match(self, current: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], str]:
        """Baseline measurements of the same check, and a note when the match is loose.

        Exact: volume key, role, claim and workload label. Loose: the same, ignoring the queue
        depth in the label (chosen from the CPU count, so it differs between host sizes).
        A fleet host (``host`` in the measurement) is compared with the same host in the
        baseline; a host the baseline does not have, with the other hosts' measurements of
        the same check (the volume key holds the instance type) and a note saying so.
        """
        pool, note = self._host_pool(current)
        key = check_key(current)
        exact = [m for m in pool if check_key(m) == key]
        if exact:
            return exact, note
        loose_key = check_key(current, loose=True)
        loose = [m for m in pool if check_key(m, loose=True) == loose_key]
        if loose:
            labels = sorted({str(m.get("workload")) for m in loose})
            said = (f"the baseline ran {', '.join(labels)}, this run "
                    f"{current.get('workload')}: the queue depth differs")
            return loose, f"{note}; {said}" if note else said
        return [], self.missing_note(current)

    def _host_pool(self, current: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], str]:
        host = current.get("host")
        if not host:
            return self.measurements, ""
        mine = [m for m in self.measurements if m.get("host") == host]
        if mine:
            return mine, ""
        others = sorted({str(m.get("host")) for m in self.measurements if m.get("host")})
        if not others:
            return self.measurements, ""
        return self.measurements, (f"the baseline has no run on {host}: compared with the same "
                                   f"volume and instance type on {', '.join(others)}")

    def missing_note(self, current: Mapping[str, Any]) -> str:
        """Why nothing matched and how to get a baseline that does."""
        volume = records.describe_volume_key(records.volume_key(current.get("volume_facts")
                                                                 or {}))
        volumes = sorted({records.describe_volume_key(records.volume_key(m.get("volume_facts")
                                                                          or {}))
                          for m in self.measurements})
        has = f"it has {', '.join(volumes)}" if volumes else "it has no measurements"
        return (f"no baseline for {current.get('claim', '?')} {current.get('workload')} on "
                f"{volume} in {self.source} ({has}); {HOW_TO_RECORD}")


def check_key(measurement: Mapping[str, Any], *, loose: bool = False) -> tuple[Any, ...]:
    """Identity of a check across runs (see :meth:`Baseline.match`)."""
    label = str(measurement.get("workload", ""))
    return (records.volume_key(measurement.get("volume_facts") or {}),
            measurement.get("role", "device"), measurement.get("claim"),
            records.workload_shape(label) if loose else label)


def describe_check(measurement: Mapping[str, Any]) -> str:
    """``S0-04 io1 random read 16 KiB (randread 16KiB QD32x1 on io1 100 GiB 4,000 IOPS)``."""
    volume = records.describe_volume_key(records.volume_key(measurement.get("volume_facts")
                                                            or {}))
    role = "" if measurement.get("role", "device") == "device" else \
        f", {measurement.get('role')} device"
    return (f"{measurement.get('claim', '?')} {measurement.get('what', '')} "
            f"({measurement.get('workload')} on {volume}{role})").replace("  ", " ")


# -- number formatting ----------------------------------------------------------------------
def _signed_pct(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "?"
    return f"{value * 100:+.1f} %"


def _p_text(p: float) -> str:
    """``< 0.0001`` or ``= 0.0035``: the relation is part of the text."""
    return "< 0.0001" if p < 1e-4 else f"= {p:.2g}"


def _pct(value: float | None) -> float | None:
    return round(value * 100.0, 3) if value is not None and math.isfinite(value) else None


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _noise(summary: SampleSummary | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    return {"n": summary.n, "mean": _finite(summary.mean), "sd": _finite(summary.sd),
            "cv": _finite(summary.cv), "blocks": summary.blocks, "block_s": summary.block_s,
            "n_eff": _finite(summary.n_eff)}


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
