"""The verdict of a comparison measured in paired blocks: what the pairs showed, against the
bar, at the design's levels (:mod:`pytest_ebsperf.verdicts.comparison`). The checks
(:mod:`pytest_ebsperf.checks.paired`) and ``ebsperf judge`` of a kept comparison give it with
these functions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pytest_ebsperf.awsmodel.types import REL
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.units import format_latency, format_quantity, format_seconds
from pytest_ebsperf.verdicts import comparison, stability
from pytest_ebsperf.verdicts.comparison import Blocks, Sequential
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: How much less of its setting one emulated side may deliver than the other before the
#: comparison is the host's (:func:`emulator_spoiled`): S2-17's band is 5 %; twins on a quiet
#: host kept within 0.5 % of each other, beside a memory-streaming neighbour 4.2 % apart.
EVEN_SHARE = 0.02
#: One pair is the host's (:func:`spoiled_pair`) when a side was held back
#: (:data:`pytest_ebsperf.verdicts.stability.HELD_BACK_SHARE`) while its twin's emulator
#: delivered at least this much more. At QD 1 fio's own submission time holds both sides near
#: 94 %; a twin set three times as slow per I/O kept up at 96.6 % against its twin's 106.6 %;
#: after a main job's first comparison blocks on a host busy for a moment, one side's emulator
#: delivered 66-70 % of its setting.
PAIR_UNEVEN = 0.10
#: At most this many pairs of one comparison are measured again for the host's sake; a
#: spoiled pair after them counts, and :func:`emulator_spoiled` judges the sides' keeping-up.
MAX_PAIRS_AGAIN = 4


def median_latency_ns(result: FioResult) -> float | None:
    """p50 completion latency weighted over reads and writes by their IOPS."""
    pairs = [(s.iops, s.clat.p(50.0)) for s in (result.read, result.write) if s.iops > 0]
    known = [(iops, p50) for iops, p50 in pairs if p50]
    total = sum(iops for iops, _ in known)
    if not known or not total:
        return None
    return math.fsum(iops * p50 for iops, p50 in known) / total


def _outcome(seq: Sequential, blocks: Blocks) -> Outcome:
    if seq.outcome == comparison.PASS:
        return Outcome.PASS
    if seq.outcome == comparison.FAIL:
        return Outcome.FAIL
    return Outcome.INCONCLUSIVE


def _pairs_text(blocks: Blocks) -> str:
    return (f"{len(blocks.a)} pairs of {format_seconds(blocks.block_s)} blocks, in the order "
            f"A B, B A, A B ... (each a fresh fio run, its {format_seconds(blocks.ramp_s)} "
            "ramp dropped)")


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def _fail_bar_text(d: comparison.Design) -> str:
    """Where a FAIL's interval must lie, when the design allows for stalls."""
    if d.fail_margin <= 0:
        return ""
    allowed = f"{math.expm1(d.fail_margin) * 100:.1f} %"
    if d.kind == comparison.AT_LEAST:
        where = f"below {comparison.ratio_text(math.exp(d.fail_low))}"
    else:
        where = (f"outside {comparison.ratio_text(math.exp(d.fail_low))}-"
                 f"{comparison.ratio_text(math.exp(d.fail_high))}")
    return f"; a FAIL needs it {where}, {allowed} allowed for rare stalls no pair caught"


def _undecided_text(d: comparison.Design, bounds: tuple[float, float, float] | None,
                    pairs: int) -> str:
    """Why the pairs decided nothing: the interval straddles the bar, or lies beyond it but
    within the stall allowance."""
    if bounds is not None and d.fail_margin > 0 and (bounds[1] < d.low or bounds[0] > d.high):
        return (f"after {pairs} pairs the interval lies beyond the bar, but within the "
                f"{math.expm1(d.fail_margin) * 100:.1f} % allowed for rare stalls no pair "
                "caught")
    return f"after {pairs} pairs the interval still straddles the bar"


def ratio_verdict(seq: Sequential, blocks: Blocks, *, claim: str, what: str, a_label: str,
                  b_label: str, unit: str = "IOPS", notes: Sequence[str] = (),
                  source: str = "") -> Verdict:
    """The verdict of a ratio comparison (``AT_LEAST`` a ratio, or ``WITHIN`` a band)."""
    d = seq.design
    cite = f"Claim {claim}" + (f", {source}" if source else "")
    extra = "".join(f" {note}" for note in notes if note)
    a_mean, b_mean = _mean(blocks.a), _mean(blocks.b)
    summary = seq.summary()
    ratio = math.exp(summary.mean) if summary else math.nan
    details: dict[str, Any] = {
        "a_label": a_label, "b_label": b_label, "ratio": ratio if math.isfinite(ratio) else None,
        "a_mean": a_mean if blocks.a else None, "b_mean": b_mean if blocks.b else None,
        **comparison.evidence_details(seq, blocks)}
    if d.kind == comparison.AT_LEAST:
        bar = math.exp(d.low)
        required = f"at least {comparison.ratio_text(bar)} required"
        details["min_ratio"] = bar
    else:
        dev = math.exp(d.high) - 1.0
        required = f"within {dev * 100:g} % required"
        details["max_ratio_dev"] = dev
    required += _fail_bar_text(d)
    bounds = seq.last_bounds()
    if bounds is not None:
        details.update({"ratio_low": math.exp(bounds[0]) if math.isfinite(bounds[0]) else 0.0,
                        "ratio_high": math.exp(bounds[1]) if math.isfinite(bounds[1])
                        else None, "alpha": bounds[2]})
    if not blocks.a:
        reason = f"inconclusive: nothing was measured - {blocks.stopped}"
        return Verdict(Outcome.INCONCLUSIVE, claim, what, details.get("min_ratio"), None,
                       "ratio", b_label, reason, f"{what}: {reason}.{extra} {cite}", REL,
                       details)
    pair = (f"{a_label} {format_quantity(a_mean, unit)} vs {b_label} "
            f"{format_quantity(b_mean, unit)}")
    looks = comparison.describe_looks(
        seq, lambda v: comparison.ratio_text(math.exp(v)) if math.isfinite(v) else "-")
    outcome = _outcome(seq, blocks)
    shown = comparison.ratio_text(ratio)
    if outcome is Outcome.PASS:
        reason = f"{a_label} / {b_label} = {shown}"
        level = (f"A pair exactly at the bar passes with probability at most "
                 f"{comparison.level_text(d.pass_alpha)}.")
    elif outcome is Outcome.FAIL:
        if d.kind == comparison.AT_LEAST and d.low <= 0 and ratio < 1.0:
            reason = f"{a_label} is {(1 - ratio) * 100:.0f} % below {b_label} ({shown})"
        elif d.kind == comparison.AT_LEAST:
            reason = f"{a_label} / {b_label} = {shown}, below the {comparison.ratio_text(bar)} required"
        else:
            reason = f"{a_label} / {b_label} = {shown}, outside the band"
        level = (f"A pair exactly at the bar fails both stages with probability at most "
                 f"{comparison.level_text(d.false_fail_bound)} (half this check's share of the "
                 "run's false-red budget).")
    else:
        why = blocks.stopped or _undecided_text(d, bounds, len(blocks.a))
        reason = (f"inconclusive: {why} - cannot tell whether {a_label} vs {b_label} meets "
                  f"it (more pairs: --ebsperf-block, or a quieter host)")
        level = ""
    message = (f"{what}: {pair} over {_pairs_text(blocks)}: ratio {shown} ({required}); "
               f"{looks}. {level}{extra} {cite}").replace("  ", " ")
    return Verdict(outcome, claim, what, details.get("min_ratio") or 1.0,
                   ratio if math.isfinite(ratio) else None, "ratio", f"{b_label} (reference)",
                   reason, message, REL, details)


def latency_verdict(seq: Sequential, blocks: Blocks, *, claim: str, what: str, a_label: str,
                    b_label: str, factor: float, slack_ns: float, notes: Sequence[str] = (),
                    source: str = "") -> Verdict:
    """The verdict of ``A <= factor x B + slack`` on paired block medians (S2-17's latency
    term), ``d = A - (factor x B + slack)`` judged against 0."""
    cite = f"Claim {claim}" + (f", {source}" if source else "")
    extra = "".join(f" {note}" for note in notes if note)
    a_mean, b_mean = _mean(blocks.a), _mean(blocks.b)
    allowed = factor * b_mean + slack_ns
    tolerance = (f"<= {factor:g} x {b_label} + {format_latency(slack_ns)}")
    details: dict[str, Any] = {"a_label": a_label, "b_label": b_label,
                               "allowed_ns": allowed if blocks.b else None, "factor": factor,
                               "slack_ns": slack_ns, "reference_ns": b_mean if blocks.b else None,
                               **comparison.evidence_details(seq, blocks)}
    if not blocks.a:
        reason = f"inconclusive: nothing was measured - {blocks.stopped}"
        return Verdict(Outcome.INCONCLUSIVE, claim, what, None, None, "ns",
                       f"{b_label} (reference)", reason, f"{what}: {reason}.{extra} {cite}",
                       REL, details)
    looks = comparison.describe_looks(
        seq, lambda v: (f"{format_latency(abs(v), 3)} {'over' if v > 0 else 'under'} the "
                        "bound" if math.isfinite(v) else "-"))
    outcome = _outcome(seq, blocks)
    a_text, b_text = format_latency(a_mean, 3), format_latency(b_mean, 3)
    reason = f"{a_label} {a_text} vs {b_label} {b_text} ({tolerance})"
    if outcome is Outcome.INCONCLUSIVE:
        why = blocks.stopped or f"after {len(blocks.a)} pairs the interval still straddles the bound"
        reason = f"inconclusive: {why}"
    message = (f"{what}: median completion latency {a_label} {a_text} vs {b_label} {b_text} "
               f"over {_pairs_text(blocks)} ({tolerance} = {format_latency(allowed, 3)} "
               f"required); {looks}.{extra} {cite}")
    return Verdict(outcome, claim, what, allowed, a_mean, "ns", f"{b_label} (reference)",
                   reason, message, REL, details)


def emulator_spoiled(found: Verdict, blocks: Blocks, a_label: str, b_label: str) -> Verdict:
    """A comparison of emulated volumes that did not PASS, whose sides kept up with what
    their emulators were set to deliver (their throttles and service times, over their
    blocks) unevenly, in the direction that moves the ratio away from the claim:
    INCONCLUSIVE naming the emulator. Twins set alike whose one side delivered
    :data:`EVEN_SHARE` less of its setting than the other is this host's doing (its CPUs,
    wake-ups or memory bandwidth went elsewhere while that side measured), not the volumes'
    difference; a twin *set* slower (``--emulate-factor``) delivers its setting as its twin
    does, and its FAIL stands. On a quiet host both sides keep up alike (measured: within
    0.5 %, whatever each side's own share: at QD 1 fio's submission time puts both at about
    94 %). The shares go to the results file either way."""
    a_share, b_share = blocks.emulator_shares()
    if a_share is None or b_share is None or not (a_share > 0 and b_share > 0):
        return _held_back_pairs(found, blocks)  # no pair knows both: none compares the sides
    details = {**found.details, "emulator_share": {"a": a_share, "b": b_share}}
    # the host can only hold a side back: a share over 1 (more than the least its setting
    # owed, as a queue-depth-1 run past the path's bound delivers) is a side that kept up
    uneven = min(a_share, 1.0) / min(b_share, 1.0)
    kind = (found.details.get("paired") or {}).get("kind")
    hurts = (abs(math.log(uneven)) > -math.log(1.0 - EVEN_SHARE) if kind == comparison.WITHIN
             else uneven < 1.0 - EVEN_SHARE)  # at least / at most: A held back hurts A
    if found.outcome in (Outcome.PASS, Outcome.INFO) or not hurts or \
            _fail_beyond(found, blocks, uneven):
        return _held_back_pairs(replace(found, details=details), blocks)
    pairs = len(blocks.a)
    reason = "inconclusive: this host could not emulate the twins evenly"
    message = (f"{found.what}: {reason}. Over {pairs} pair{'s' if pairs != 1 else ''} "
               f"{a_label} delivered {a_share * 100:.1f} % of what its emulated volume was set "
               f"to deliver (its throttle and service time) and {b_label} "
               f"{b_share * 100:.1f} %: the I/Os of one side waited longer in this host's own "
               "I/O path (the loop device, the latency daemon), so the difference measured is "
               "the host's, not the volumes'; run it on a quieter host. What the pairs showed: "
               f"{found.message}")
    return replace(found, outcome=Outcome.INCONCLUSIVE, reason=reason, message=message,
                   details=details)


def _held_back_pairs(found: Verdict, blocks: Blocks) -> Verdict:
    """An undecided comparison whose pairs include ones the host held back on one side
    (:func:`spoiled_pair`: counted once :data:`MAX_PAIRS_AGAIN` had been measured again), and
    whose other pairs alone would have decided (:func:`_decided`): INCONCLUSIVE naming the
    host, since those pairs' differences are what left it undecided. Still INCONCLUSIVE:
    pairs are never dropped after the fact. (A quiet main job's S2-17 QD-1 term: 9 of 32
    pairs held back, at 33-75 % of their setting or beside an unknown twin, up to 594 µs
    either way; of the 23 others, 22 between 104 µs under the bound and 22 µs over it and
    one 410 µs under it beside an unknown share; "not yet decided" after 32 pairs.)"""
    if found.outcome is not Outcome.INCONCLUSIVE or blocks.stopped:
        return found
    paired = found.details.get("paired") or {}
    differences = list(paired.get("differences") or [])
    held = {i for i, shares in enumerate(blocks.shares[:len(differences)])
            if spoiled_pair(shares)}
    levels = paired.get("levels") or {}
    if not held or "fail_share" not in levels or "pass" not in levels:
        return found  # (a results file kept before the levels were written: nothing to redo)
    low, high = paired.get("low"), paired.get("high")
    design = comparison.Design(
        str(paired.get("kind")), low=-math.inf if low is None else float(low),
        high=math.inf if high is None else float(high),
        fail_alpha=float(levels["fail_share"]), pass_alpha=float(levels["pass"]),
        looks=tuple(int(k) for k in paired.get("looks_planned") or comparison.LOOKS),
        fail_margin=float(paired.get("fail_margin") or 0.0))
    others = [d for i, d in enumerate(differences) if i not in held]
    said = _decided(design, others)
    if said is None:
        return found
    reason = "inconclusive: this host held back one side of some pairs"
    message = (f"{found.what}: {reason}. In {len(held)} of the {len(differences)} pairs one "
               f"side's emulator fell behind its twin's (beyond the {MAX_PAIRS_AGAIN} pairs "
               "measured again), and their differences left the comparison undecided; the "
               f"{len(others)} other pairs alone would have said {said.upper()}. Those "
               "differences are the host's, not the volumes': run it on a quieter host. "
               f"What the pairs showed: {found.message}")
    return replace(found, reason=reason, message=message,
                   details={**found.details, "held_back_pairs": sorted(held),
                            "without_held_back_pairs": said})


def _decided(design: comparison.Design, differences: list[float]) -> str | None:
    """What ``differences`` decide at the design's looks, or, when they run out before its
    last look, at their own number judged as a last look (PASS or FAIL; None: neither)."""
    run = comparison.run(design, differences)
    if run.outcome in (comparison.PASS, comparison.FAIL):
        return run.outcome
    if run.outcome is not None or len(differences) < 2:
        return None
    sample = comparison.paired(differences)
    if design.passes(sample):
        return comparison.PASS
    return comparison.FAIL if design.beyond(sample, design.confirm_level) else None


def spoiled_pair(shares: tuple[float | None, float | None]) -> bool:
    """A pair whose one side the host held back (:func:`stability.spoiled_run`, its twin's
    emulator :data:`PAIR_UNEVEN` more or unknown): not a difference between the volumes, so
    it is measured again (a twin *set* slower delivers its setting as its twin does, and its
    pairs count)."""
    known = [share for share in shares if share is not None and share > 0]
    if not any(stability.spoiled_run(share) for share in known):
        return False
    return len(known) == 1 or max(known) >= min(known) * (1.0 + PAIR_UNEVEN)


def measured_again(found: Verdict, blocks: Blocks, a_label: str, b_label: str) -> Verdict:
    """``found`` saying which pairs were measured again, and why (the host's)."""
    if not blocks.again:
        return found

    def share(value: float | None) -> str:
        return "?" if value is None else f"{value * 100:.0f} %"

    count = len(blocks.again)
    said = "; ".join(f"{a_label} {share(a)}, {b_label} {share(b)}" for a, b in blocks.again)
    text = (f" {count} pair{'s' if count != 1 else ''} measured again: one side's emulator "
            f"fell behind its twin's ({said} of what each was set to deliver), this host's "
            "doing, not the volumes'.")
    return replace(found, message=found.message + text,
                   details={**found.details, "measured_again": [list(p) for p in blocks.again]})


def _fail_beyond(found: Verdict, blocks: Blocks, uneven: float) -> bool:
    """A FAIL that the sides' uneven keeping-up cannot explain: its last bound clears the
    bar (with the FAIL's margin) even with A's side moved by what it lost against B's (a
    ratio by ``1 / uneven``; a latency's A by ``uneven``). A twin three times as slow per
    I/O fails however its emulator kept up."""
    paired = found.details.get("paired") or {}
    looks = paired.get("looks") or []
    if found.outcome is not Outcome.FAIL or not looks:
        return False
    low, high = looks[-1].get("low"), looks[-1].get("high")
    margin = float(paired.get("fail_margin") or 0.0)
    bar_low, bar_high = paired.get("low"), paired.get("high")
    shift = (-(1.0 - uneven) * _mean(blocks.a) if "slack_ns" in found.details
             else -math.log(uneven))  # what A's side would gain had it kept up as B's
    return bool((low is not None and bar_high is not None and low + shift > bar_high + margin)
                or (high is not None and bar_low is not None and
                    high + shift < bar_low - margin))
