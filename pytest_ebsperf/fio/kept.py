"""What a check concluded from a kept fio run (``--ebsperf-keep-fio``), kept beside it.

fio's report says what ran, not why fio was stopped nor which claim the run was judged
against: the live check stops fio with SIGINT once its verdict is settled, and names the
claim of its suite. ``STEM.ebsperf.json`` beside the kept ``STEM.json`` holds both, with the
verdict given, so ``ebsperf judge`` on the kept folder judges the run as the check did (the
same claim, the seconds it was planned for, the stop's reason) and a reader can compare.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from pytest_ebsperf.fio.result import FioResult

#: The file beside a kept report: ``randread-15-1.json`` -> ``randread-15-1.ebsperf.json``.
KEPT_SUFFIX = ".ebsperf.json"
KEPT_FORMAT = "pytest-ebsperf kept verdict"


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def keep_verdict(stem: Path | None, *, claim: str, policy: str, outcome: str,
                 measured: float | None, expected: float | None, unit: str,
                 planned_s: float, stop_reason: str, details: dict[str, Any],
                 level: Any = None, check: str = "", what: str = "",
                 volume: dict[str, Any] | None = None, binding: str = "",
                 result: FioResult | None = None) -> None:
    """Write the check's verdict beside the kept report ``stem``.json (best effort: a kept
    folder that cannot be written loses the note, never the check). ``volume``: the facts
    of the volume judged (``type``, ``size_gib`` ..., ``count`` for a set), so that judge
    needs none given; with them the expectation the check used (``binding``: its limit).
    ``result``: the run judged, for what its report does not hold (:func:`judged_on`)."""
    if stem is None:
        return
    record = {"format": KEPT_FORMAT, "check": check, "claim": claim, "policy": policy, "outcome": outcome,
              "measured": _number(measured), "expected": _number(expected), "unit": unit,
              "planned_s": planned_s, "stop_reason": stop_reason or None,
              "samples": details.get("samples"), "misses": details.get("misses")}
    if details.get("sweep_points"):  # a sweep's last point: judged over all its points
        record["sweep_points"] = details["sweep_points"]
    for key in ("sweep", "stability"):  # a sweep's points, a stability check's runs
        series = details.get(key)
        if isinstance(series, dict) and all(series.get("runs") or [None]):
            # every run kept: their reports (relative to this folder) for judge to judge again
            record[key] = {**series, "runs": [os.path.relpath(run, stem.parent)
                                              for run in series["runs"]]}
    if isinstance(details.get("knee_facts"), dict):  # a burst's knee: the bucket before it
        record["knee"] = details["knee_facts"]
    if details.get("bound_ns") is not None and unit == "ns":  # a latency claim's bound
        record["latency"] = {"bound_ns": details["bound_ns"],
                             "percentile": details.get("percentile"),
                             "direction": details.get("direction")}
    if level is not None:  # the check's level (evidence.Policy): judge applies the same
        record.update({"alpha": level.alpha, "pass_alpha": level.pass_alpha,
                       "miss_spell_s": level.spell})
    if volume:
        record["volume"] = volume
        record["expectation"] = {
            "what": what, "value": _number(expected), "unit": unit, "policy": policy,
            "low": details.get("low"), "high": details.get("high"),
            "duty": details.get("duty"), "binding": binding,
            "limits": details.get("limits") or []}
    seconds = judged_on(result, details) if result is not None else None
    if seconds:
        record["judged_on"] = seconds
    pairs = _pairs(stem, {**details, "what": what})
    if pairs is not None:
        record["paired"] = pairs
    try:
        stem.with_name(stem.name + KEPT_SUFFIX).write_text(json.dumps(record, indent=1) + "\n")
    except OSError:
        pass


def judged_on(result: FioResult, details: dict[str, Any]) -> dict[str, Any]:
    """What a check judged its run on that fio's report does not hold: the windows of the
    status reports it decided on (a run it stopped: its logs leave out the window the stop
    cut short), the seconds an emulated volume fell behind (the host's, left out), the
    device's count the check read around the run (``counted``: judge weighs fio's figure
    against it, not against fio's own lagging sample), and the seconds of a first part the
    run went on from (``prior``, with the rest's planned s)."""
    found: dict[str, Any] = {}
    if result.stop_reason and result.live is not None:
        found["live"] = result.live.record()
    if result.emulator_behind:
        found["host_s"] = list(result.emulator_behind)
    if result.counted:  # the kernel's count the check weighed fio's against
        found["counted"] = dict(result.counted)
    first = details.get("first_part")
    if isinstance(first, dict) and first.get("values"):
        found["prior"] = list(first["values"])
        found["rest_s"] = first.get("rest_s")
    return found


def _pairs(stem: Path, details: dict[str, Any]) -> dict[str, Any] | None:
    """A comparison's design and the kept runs of its pairs (relative to the verdict's
    folder), for judge to judge the pairs again; None for a check of one run, or pairs not
    all kept."""
    paired = details.get("paired")
    if not isinstance(paired, dict):
        return None
    blocks = paired.get("blocks") or {}
    kept = blocks.get("kept") or []
    if not kept or not all(a and b for a, b in kept):
        return None
    here = stem.parent

    def where(run: str) -> str:
        return os.path.relpath(run, here)

    levels = paired.get("levels") or {}
    latency = "slack_ns" in details
    return {"kind": paired.get("kind"), "low": paired.get("low"), "high": paired.get("high"),
            "fail_margin": paired.get("fail_margin") or 0.0, "looks": paired.get("looks_planned"), "fail_alpha": levels.get("fail_share"),
            "pass_alpha": levels.get("pass"), "block_s": blocks.get("block_s"),
            "ramp_s": blocks.get("ramp_s"),
            "figure": "median latency" if latency else "IOPS",
            "factor": details.get("factor"), "slack_ns": details.get("slack_ns"),
            "a_label": details.get("a_label") or "A", "b_label": details.get("b_label") or "B",
            "what": details.get("what"),
            "runs": [[where(a), where(b)] for a, b in kept],
            # what each block's emulated volume delivered of its setting: judge names the
            # host as the check did (:func:`~pytest_ebsperf.verdicts.paired_verdicts.emulator_spoiled`)
            "emulator_shares": blocks.get("emulator_shares")}


def keep_part(stem: Path | None, *, check: str, phase: str,
              result: FioResult | None = None, planned_s: float | None = None) -> None:
    """Mark the kept run ``stem`` as a part of ``check`` that no verdict came from (a probe,
    one block of a comparison, a pass of a check made of several): judge says so rather than
    read it as the check. The check's own run is marked by :func:`keep_verdict`. With the
    run judged as a part (a sweep's point), what it was judged on: why it stopped, the
    seconds it was planned for and :func:`judged_on`."""
    if stem is None:
        return
    record: dict[str, Any] = {"format": KEPT_FORMAT, "check": check, "phase": phase,
                              "outcome": None}
    if result is not None:
        record.update(stop_reason=result.stop_reason or None, planned_s=planned_s)
        seconds = judged_on(result, {})
        if seconds:
            record["judged_on"] = seconds
    try:
        stem.with_name(stem.name + KEPT_SUFFIX).write_text(json.dumps(record, indent=1) + "\n")
    except OSError:
        pass


def kept_verdict(report: str | Path) -> dict[str, Any] | None:
    """The kept verdict beside fio's report ``report`` (None when there is none, or it is
    not one: a file of that name someone else wrote is ignored)."""
    path = Path(report)
    side = path.with_name(path.name[:-len(path.suffix)] + KEPT_SUFFIX) if path.suffix \
        else path.with_name(path.name + KEPT_SUFFIX)
    try:
        record = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != KEPT_FORMAT:
        return None
    return record
