"""``ebsperf judge`` of a kept comparison: the pairs of blocks a comparison check measured
(S0-08, S1-03, S1-08, S2-17; kept with ``--ebsperf-keep-fio``) judged again from fio's own
reports, as the check judged them.

The check's kept verdict (``STEM.ebsperf.json`` beside its last pair's A side) names its
design (what is compared, the bar, the looks and levels) and where every block's run was
kept. Each block's figure is read from its report by the reader ``judge`` uses for any fio
output (IOPS, or the median completion latency), the pairs' differences are made as the
check made them, and :func:`pytest_ebsperf.verdicts.comparison.run` decides over them; the
verdict is the check's own (:mod:`pytest_ebsperf.verdicts.paired_verdicts`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.parse import result_from_data
from pytest_ebsperf.fio.reports import read_reports, units_of
from pytest_ebsperf.verdicts import comparison
from pytest_ebsperf.verdicts.outcome import Verdict
from pytest_ebsperf.verdicts.paired_verdicts import (
    emulator_spoiled,
    latency_verdict,
    median_latency_ns,
    ratio_verdict,
)

LATENCY = "median latency"


def covered_runs(verdict_file: Path, kept: Mapping[str, Any]) -> set[Path]:
    """The reports of the blocks a kept comparison's verdict covers (resolved paths)."""
    paired = kept.get("paired")
    if not isinstance(paired, dict):
        return set()
    here = verdict_file.parent
    return {(here / f"{run}.json").resolve() for pair in paired.get("runs") or ()
            for run in pair}


def _figure(report: Path, figure: str) -> float:
    reports = read_reports(str(report), "json")
    units = units_of(reports[0].data)
    if len(units) != 1:
        raise EbsperfError(f"{report}: a kept block holds {len(units)} runs, not one.")
    result = result_from_data(units[0].data, None, reports[0].text)
    value = median_latency_ns(result) if figure == LATENCY else result.total_iops
    if value is None or not value > 0 or not math.isfinite(value):
        raise EbsperfError(f"{report}: the block measured no {figure}.")
    return float(value)


def _bar(value: Any, default: float) -> float:
    return default if value is None else float(value)


def judge_pairs(report: str, kept: Mapping[str, Any], claim: str) -> Verdict:
    """The kept comparison whose verdict sits beside ``report``, judged again from its
    blocks' reports."""
    paired = kept["paired"]
    try:
        design = comparison.Design(
            str(paired["kind"]), low=_bar(paired.get("low"), -math.inf),
            high=_bar(paired.get("high"), math.inf), fail_alpha=float(paired["fail_alpha"]),
            pass_alpha=float(paired["pass_alpha"]),
            looks=tuple(int(n) for n in paired["looks"]),
            fail_margin=float(paired.get("fail_margin") or 0.0))
        runs = [(str(a), str(b)) for a, b in paired["runs"]]
        block_s, ramp_s = float(paired["block_s"]), float(paired["ramp_s"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EbsperfError(f"{report}: its kept comparison cannot be read ({exc}); pass the "
                           "folder --ebsperf-keep-fio wrote, unedited.") from None
    here = Path(report).resolve().parent
    figure = str(paired.get("figure") or "IOPS")
    a_values, b_values = [], []
    for a_run, b_run in runs:
        a_values.append(_figure(here / f"{a_run}.json", figure))
        b_values.append(_figure(here / f"{b_run}.json", figure))
    a_label, b_label = str(paired.get("a_label") or "A"), str(paired.get("b_label") or "B")
    what = str(paired.get("what") or kept.get("check") or "a kept comparison")
    blocks = comparison.Blocks(tuple(a_values), tuple(b_values), block_s, ramp_s,
                               shares=_shares(report, paired.get("emulator_shares"), len(runs)))
    if figure == LATENCY:
        factor, slack = float(paired["factor"]), float(paired["slack_ns"])
        seq = comparison.run(design, [a - (factor * b + slack)
                                      for a, b in zip(a_values, b_values)])
        found = latency_verdict(seq, blocks, claim=claim, what=what, a_label=a_label,
                                b_label=b_label, factor=factor, slack_ns=slack)
    else:
        seq = comparison.run(design, [math.log(a) - math.log(b)
                                      for a, b in zip(a_values, b_values)])
        found = ratio_verdict(seq, blocks, claim=claim, what=what, a_label=a_label,
                              b_label=b_label)
    return emulator_spoiled(found, blocks, a_label, b_label)


def _shares(report: str, kept: Any, pairs: int
            ) -> tuple[tuple[float | None, float | None], ...]:
    """Each pair's emulator shares as the check kept them (none for a real volume)."""
    if kept is None:
        return ()
    try:
        shares = tuple((None if a is None else float(a), None if b is None else float(b))
                       for a, b in kept)
    except (TypeError, ValueError):
        shares = ()
    if len(shares) != pairs:
        raise EbsperfError(f"{report}: its kept comparison's emulator shares do not match its "
                           f"{pairs} pairs; pass the folder --ebsperf-keep-fio wrote, "
                           "unedited.")
    return shares
