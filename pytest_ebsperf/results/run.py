"""The results side of one pytest run: options, the baseline, what happened per test.

Plain Python (no pytest): :mod:`pytest_ebsperf.plugin.results` builds one :class:`ResultsRun`
in ``pytest_configure`` and calls :meth:`ResultsRun.after_test` once per test with the rows
and measurements the test recorded.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.results import ALPHA, DEFAULT_REGION, DEFAULT_THRESHOLD_PCT
from pytest_ebsperf.results import compare as cmp
from pytest_ebsperf.results.baseline import load_baseline
from pytest_ebsperf.results.compare import REGRESSION
from pytest_ebsperf.results.document import annotate_measurements

#: Rows with these outcomes are gated; an inconclusive check measured the test's limits.
GATED_OUTCOMES = ("pass", "fail", "info")


@dataclass(frozen=True)
class ResultsOptions:
    """The results options as given (``None``: not given)."""

    report: str | None = None
    compare: str | None = None
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    price_region: str | None = None

    def region(self) -> str:
        """``--ebsperf-price-region``, else AWS's own region variables, else us-east-1."""
        return (self.price_region or os.environ.get("AWS_REGION")
                or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION)

    def as_settings(self) -> dict[str, Any]:
        """For the results file: each option with its value and where it came from."""
        names = {"report": "--ebsperf-report", "compare": "--ebsperf-compare",
                 "threshold_pct": "--ebsperf-compare-threshold",
                 "price_region": "--ebsperf-price-region"}
        out = {}
        for name, flag in names.items():
            value = getattr(self, name)
            given = value is not None and not (name == "threshold_pct" and
                                               value == DEFAULT_THRESHOLD_PCT)
            out[name] = {"value": value, "origin": f"command line ({flag})" if given
                         else "default"}
        return out


def check_options(options: ResultsOptions) -> None:
    """Say what is wrong with an option before anything runs."""
    if not options.threshold_pct > 0:
        raise ConfigError(f"--ebsperf-compare-threshold must be a positive percentage, got "
                          f"{options.threshold_pct:g}. Default: {DEFAULT_THRESHOLD_PCT:g}.")
    if options.report and Path(options.report).is_dir():
        raise ConfigError(f"--ebsperf-report={options.report} is a directory; give a file "
                          "name such as ebsperf-results.json.")


@dataclass
class ResultsRun:
    """Options, the baseline (loaded once) and the gate's findings of one run."""

    options: ResultsOptions
    baseline: cmp.Baseline | None = None
    history_note: str = ""
    #: What became of the run in the history database (--ebsperf-history), for the summary.
    history_stored: str = ""
    regressions: list[str] = field(default_factory=list)
    pictures: list[Path] = field(default_factory=list)
    #: Rows of checks on sets of volumes so far (the scaling pictures are drawn from them).
    set_rows: list[dict[str, Any]] = field(default_factory=list)
    #: Set when the results file could not be written at the end: where they were kept.
    unsaved: str | None = None
    #: Set when a picture could not load matplotlib (said once, in the summary).
    cannot_draw: bool = False
    started: float = field(default_factory=time.time)

    @classmethod
    def start(cls, options: ResultsOptions, *, benchmark_storage: str) -> ResultsRun:
        """Check the options and load the baseline; raises ConfigError with a sentence."""
        check_options(options)
        baseline = None
        if options.compare:

            baseline = load_baseline(options.compare, benchmark_storage=benchmark_storage)
        return cls(options, baseline)

    def after_test(self, rows: Sequence[dict[str, Any]],
                   measurements: Sequence[dict[str, Any]]) -> str | None:
        """Annotate one test's rows and measurements; the regression message, if any.

        Every device measurement is compared with the baseline and every row of the test
        carries the result under ``"compare"``. A test with an inconclusive row is annotated
        but never failed by the gate.
        """

        annotate_measurements(rows, measurements)
        if self.baseline is None or not rows:
            return None
        comparisons = [self._compare(m) for m in measurements
                       if m.get("role", "device") == "device"]
        if not comparisons:
            return None
        summary = _row_summary(comparisons)
        for row in rows:
            row["compare"] = summary
        failing = [c for c in comparisons if c.status == cmp.REGRESSION]
        if not failing or any(r.get("outcome") not in GATED_OUTCOMES for r in rows):
            return None
        message = "\n".join(c.message() for c in failing)
        self.regressions.append(message)
        return message

    def _compare(self, measurement: Mapping[str, Any]) -> cmp.Comparison:

        assert self.baseline is not None
        found, note = self.baseline.match(measurement)
        return cmp.compare_measurement(measurement, found,
                                       threshold_pct=self.options.threshold_pct,
                                       check=cmp.describe_check(measurement), note=note,
                                       source=self.baseline.source)

    def compare_settings(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """The gate's settings and counts for the results file."""
        if self.baseline is None:
            return None
        compared, regressed = gate_counts(rows)
        return {"baseline": self.baseline.source, "threshold_pct": self.options.threshold_pct,
                "alpha": ALPHA, "test": "Welch's t-test on per-second samples, "
                "autocorrelation-corrected (Student's pooled test when a run has one sample)",
                "tests_compared": compared, "regressions": regressed}


def gate_counts(rows: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """Tests compared and tests with a regression, from the rows (which, unlike this
    process's counters, include the tests xdist workers ran)."""

    compared = {row.get("nodeid") for row in rows if row.get("compare")}
    regressed = {row.get("nodeid") for row in rows
                 if (row.get("compare") or {}).get("status") == REGRESSION}
    return len(compared), len(regressed)


def _row_summary(comparisons: Sequence[cmp.Comparison]) -> dict[str, Any]:

    status = cmp.worst(c.status for c in comparisons)
    shown = next(c for c in comparisons if c.status == status)
    return {"status": status, "summary": shown.summary(), "headline": shown.headline(),
            "baseline": shown.baseline_source,
            "note": shown.note, "checks": [c.as_dict() for c in comparisons]}
