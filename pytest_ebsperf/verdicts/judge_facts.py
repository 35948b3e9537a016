"""The facts ``ebsperf judge`` judges against: the volume or set from its options, the
expectation for a workload (the suites' models; a provisioned initialization rate's floor for
the first read of a restored volume), the level of a kept run's check, Magnetic's record."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel import ebs
from pytest_ebsperf.awsmodel.init_rate import init_rate_expectation, valid_rate
from pytest_ebsperf.awsmodel.stripes import set_expectation
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import is_instance_store
from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.counted import Witness
from pytest_ebsperf.fio.live import LiveSeries
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import evidence, latency, plain
from pytest_ebsperf.verdicts.burst_time import after_knee, knee_again
from pytest_ebsperf.verdicts.outcome import Verdict


def volumes_of(args: argparse.Namespace) -> list[Any]:
    """The volume, or the set's members (``--volume-count``, ``--member``), validated."""

    def volume(vtype: str, size: int | None, iops: int | None, mibps: float | None) -> Any:
        return awsmodel.validate(Volume(vtype, size_gib=size, iops=iops, throughput_mibps=mibps,
                                      instance_type=args.instance_type,
                                      burst_balance_pct=args.burst_balance))

    if args.member:
        members = []
        for text in args.member:
            parts = text.split(":")
            try:
                members.append(volume(parts[0], int(parts[1]) if len(parts) > 1 else None,
                                      int(parts[2]) if len(parts) > 2 and parts[2] else None,
                                      float(parts[3]) if len(parts) > 3 and parts[3] else None))
            except (ValueError, IndexError):
                raise EbsperfError(f"--member={text} is not TYPE:GIB[:IOPS[:MIBPS]] (e.g. "
                                 "gp3:202:4000:1000).") from None
        if args.volume_count not in (None, len(members)):
            raise EbsperfError(f"--volume-count={args.volume_count} but {len(members)} "
                             "--member given: give one or the other, or as many members.")
        return members
    count = args.volume_count or 1
    if not 1 <= count <= ebs.MAX_SET_VOLUMES:
        raise EbsperfError(f"--volume-count={count}: a set is 1 to {ebs.MAX_SET_VOLUMES} volumes.")
    one = volume(args.volume_type, args.volume_size, args.volume_iops, args.volume_throughput)
    return [one] * count


def expectation_for(args: argparse.Namespace, members: Sequence[Any], workload: Workload,
                 what: str, metric: str) -> Any:

    first = members[0]
    credits = first.credits_assumed
    if args.init_rate is not None:
        return _first_read(args, members, workload, what)
    if is_instance_store(first.type):
        # AWS publishes one figure for all of an instance's instance-store devices (B-IS)
        return awsmodel.floor_expectation(args.claim, what, first, workload,
                                        devices=len(members))
    if len(members) == 1:
        return awsmodel.cap_expectation(args.claim, what, first, workload, metric=metric,
                                      credits=credits)

    return set_expectation(args.claim, what, list(members), workload, credits=credits,
                           metric=metric)


def kept_members(kept: dict[str, Any]) -> list[Any] | None:
    """The volume (or the set's members) a kept run's check judged, from its record; None
    when the record holds no volume facts (a part of a check, or an older record)."""
    facts = kept.get("volume")
    if not isinstance(facts, dict):
        return None
    try:
        one = awsmodel.validate(Volume(
            str(facts["type"]), size_gib=_int(facts.get("size_gib")),
            iops=_int(facts.get("iops")), throughput_mibps=_float(facts.get("throughput_mibps")),
            instance_type=facts.get("instance_type") or None,
            burst_balance_pct=_float(facts.get("burst_balance_pct"))))
        count = int(facts.get("count") or 1)
    except (KeyError, TypeError, ValueError, EbsperfError):
        return None
    return [one] * count if 1 <= count <= ebs.MAX_SET_VOLUMES else None


def kept_expectation(kept: dict[str, Any], claim: str, what: str) -> Any:
    """The expectation the check that kept the run judged it against (None: not recorded,
    or not a figure)."""
    found = kept.get("expectation")
    if not isinstance(found, dict):
        return None
    try:
        value, unit, policy = float(found["value"]), str(found["unit"]), str(found["policy"])
        low = float(found["low"]) if found.get("low") is not None else 0.90
        high = float(found["high"]) if found.get("high") is not None else None
        duty = float(found["duty"]) if found.get("duty") is not None else awsmodel.DUTY_GP
        limits = tuple(awsmodel.Limit(str(lim["name"]), str(lim["kind"]), float(lim["iops"]),
                                  str(lim.get("claim") or ""), str(lim.get("source") or ""))
                       for lim in found.get("limits") or ())
    except (KeyError, TypeError, ValueError):
        return None
    if policy not in (awsmodel.CAP, awsmodel.FLOOR, awsmodel.INFO):
        return None
    binding = next((lim for lim in limits if lim.name == found.get("binding")), None)
    if found.get("what"):  # the check's own words, and where the run came from
        what = f"{found['what']} ({what.rsplit(' (', 1)[-1]}" if " (from " in what else \
            str(found["what"])
    return awsmodel.Expectation(claim, what, policy, value, unit, binding, limits, low=low,
                            high=high, duty=duty, source=str(found.get("source") or ""))


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def kept_again(kept: dict[str, Any], result: FioResult, workload: Workload, name: str
               ) -> Verdict | None:
    """A kept latency or burst check (of the run in file ``name``) judged again by the
    functions the check used, with a note saying so; None when its record cannot say how."""
    claim = str(kept.get("claim") or "B-SLA")
    what = f"{(kept.get('expectation') or {}).get('what') or 'the check'} (from {name})"
    if kept.get("knee") and kept.get("policy") != awsmodel.TIME:
        return None  # the baseline after a knee: a CAP on the seconds after it (after_knee)
    if kept.get("knee"):
        found = knee_again(kept["knee"], claim, what, result, awsmodel.source_url(claim, ""))
    else:
        found = _latency_again(kept, result, workload, claim, what)
    if found is None:
        return None
    check = kept.get("check") or "a check"
    said = (f"{check} ({claim}: {kept.get('outcome')}) judged again by its own test, on the "
            "kept report and logs and what its record holds")
    return replace(found, details={**found.details, "notes": [said]})


def kept_seconds(kept: dict[str, Any], result: FioResult) -> FioResult:
    """The run as its check judged it: a kept after-the-knee run from its knee on."""
    if kept.get("knee") and kept.get("policy") == awsmodel.CAP:
        return after_knee(kept["knee"], result)
    return result


def _latency_again(kept: dict[str, Any], result: FioResult, workload: Workload, claim: str,
                   what: str) -> Verdict | None:
    """A latency check judged again: a percentile's bound, or a mean's on the per-second
    latencies of its logs."""
    found, level = kept.get("latency"), kept_level(kept)
    if not isinstance(found, dict) or level is None:
        return None
    try:
        bound = float(found["bound_ns"])
        percentile = None if found.get("percentile") is None else float(found["percentile"])
    except (KeyError, TypeError, ValueError):
        return None
    direction = found.get("direction") if found.get("direction") in ("read", "write") else None
    if not (bound > 0 and math.isfinite(bound)) or \
            (percentile is not None and not 0 < percentile < 100):
        return None
    if percentile is not None:
        return latency.judge_latency(claim, what, result, workload, percentile=percentile,
                                     bound_ns=bound, direction=direction, alpha=level.alpha)
    return latency.judge_mean_latency(claim, what, result, workload, bound_ns=bound,
                                      direction=direction, alpha=level.alpha,
                                      pass_alpha=level.pass_alpha)


def kept_judged_on(kept: dict[str, Any], result: FioResult
                   ) -> tuple[FioResult, tuple[float, ...], float | None, list[str]]:
    """``result`` with what the kept check judged its run on beyond fio's report
    (:func:`pytest_ebsperf.fio.kept.judged_on`): the status reports' windows of a run it
    stopped, the seconds its emulated volume fell behind; and the seconds of a first part
    the run went on from with the rest's planned seconds, and the notes that say so."""
    found = kept.get("judged_on")
    if not isinstance(found, dict):
        return result, (), None, []
    notes = []
    live = LiveSeries.from_record(found.get("live"))
    if live is not None and result.stop_reason:
        result = replace(result, live=live)
        notes.append(f"the {len(live.window_s)} windows of fio's status reports the check "
                     "decided on, from its record (fio's logs leave out the window its stop "
                     "cut short)")
    host = found.get("host_s")
    if isinstance(host, list) and host and all(isinstance(i, int) and i >= 0 for i in host):
        result = replace(result, emulator_behind=tuple(host))
        notes.append(f"{len(host)} s in which the emulated volume fell behind what it was set "
                     "to deliver (the host's, as the check's witness found them) left out")
    prior, rest = found.get("prior"), found.get("rest_s")
    try:
        seconds = tuple(float(v) for v in prior) if isinstance(prior, list) else ()
        rest_s = float(rest) if seconds and rest is not None else None
    except (TypeError, ValueError):
        return result, (), None, notes
    if not seconds or not all(math.isfinite(v) and v >= 0 for v in seconds) or \
            rest_s is None or not 0 < rest_s < 1e7:
        return result, (), None, notes
    notes.append(f"judged with the {len(seconds)} s of the part of the run before it, from "
                 "the check's record (the check went on after fio's logs did not confirm "
                 "its stop)")
    return result, seconds, rest_s, notes


def kept_count(kept: dict[str, Any]) -> Witness | None:
    """The device's count the kept check read around its run (the kernel's counters, read
    after fio ended): judge weighs fio's figure against it as the check did, rather than
    against fio's own sample of the counters, which may lag (a run stopped early)."""
    found = kept.get("judged_on")
    return Witness.from_record(found.get("counted")) if isinstance(found, dict) else None


def kept_planned_s(kept: dict[str, Any]) -> float | None:
    """The seconds the check that kept the run planned it for."""
    try:
        planned = float(kept["planned_s"])
    except (TypeError, KeyError, ValueError):
        return None
    return planned if 0.0 < planned < 1e7 else None


def kept_level(kept: dict[str, Any]) -> evidence.Policy | None:
    """The level of the check that kept the run (None: judge's own)."""
    try:
        alpha, spell = float(kept["alpha"]), float(kept["miss_spell_s"])
        pass_alpha = float(kept["pass_alpha"])
    except (TypeError, KeyError, ValueError):
        return None
    if not (0.0 < alpha < 1.0 and 0.0 < pass_alpha < 1.0 and spell >= 1.0):
        return None
    return evidence.Policy(alpha, spell, pass_alpha)


def magnetic(expectation: Any, result: FioResult, workload: Workload) -> Verdict:
    """Magnetic (standard) is best effort (B-STD): recorded, as the suites record it; a
    figure far above what a Magnetic volume can deliver is named as not the volume's."""

    found = plain.judge_info(expectation.claim, expectation.what, result, workload,
                               notes=(MAGNETIC_NOTE,))
    measured = found.measured or 0.0
    if workload.is_random and measured > MAGNETIC_MOST_IOPS:
        extra = (f" {measured:,.0f} IOPS of random I/O is more than a Magnetic volume "
                 f"delivers (about {MAGNETIC_MOST_IOPS // 2:,} at most): the figure is not the "
                 "volume's (the page cache, or another volume).")
        found = replace(found, message=found.message + extra)
    return found


#: Twice Magnetic's documented best (about 200 random IOPS, B-STD).
MAGNETIC_MOST_IOPS = 400
MAGNETIC_NOTE = "Magnetic is best effort: AWS documents about 40-200 IOPS for random I/O (B-STD)"


def _first_read(args: argparse.Namespace, members: Sequence[Any], workload: Workload,
                what: str) -> Any:
    """``--init-rate``: the output is the first read of every block of a volume restored
    with that Provisioned Rate for Volume Initialization (B-INIT)."""
    try:
        rate = valid_rate(args.init_rate, "--init-rate")
    except ValueError as exc:
        raise EbsperfError(f"{exc} Pass the rate the volume was created with.") from None
    if len(members) > 1 or is_instance_store(members[0].type):
        raise EbsperfError("--init-rate judges the first read of one EBS volume restored from "
                           "a snapshot: drop --volume-count/--member (instance store is never "
                           "restored).")
    caps = awsmodel.limits(members[0], workload)
    return init_rate_expectation(args.claim, what, members[0], workload, rate, caps=caps)
