"""What held a recorded run below the volume's figure besides the volume: the job's own
options (its rate, think time, refill level, flow) and a burst bucket that ran dry while it ran
(gp2's I/O credits, B-GP2: a gp2 below 1,000 GiB holds its 3,000 IOPS burst only while credits
last, then its baseline)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pytest_ebsperf.awsmodel.burst import burst_plan
from pytest_ebsperf.awsmodel.volume_types import IO_CREDITS, volume_type
from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.reports import _int, parse_seconds
from pytest_ebsperf.fio.workload import Workload, parse_size
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: A last status line within this fraction of the baseline is "at the baseline".
AT_BASELINE = 0.25


def credits_ran_out(data: Mapping[str, Any], members: Sequence[Any], measured_iops: float
                    ) -> str:
    """A sentence when fio's last status line shows a gp2 at its baseline and the run
    averaged below the burst: its I/O credits ran out while it ran; "" otherwise."""
    status = data.get("status_iops") or []
    if len(members) != 1 or not status:
        return ""
    volume = members[0]
    plan = burst_plan(volume) if volume_type(volume.type).credits == IO_CREDITS else None
    if plan is None or plan.drain_rate <= 0:
        return ""
    last = float(status[-1].get("read", 0)) + float(status[-1].get("write", 0))
    baseline = plan.earn_rate
    if abs(last - baseline) > AT_BASELINE * baseline or measured_iops >= 0.9 * plan.burst_rate:
        return ""
    return (f"burst credits ran out: fio's last status line shows {last:,.0f} IOPS, the "
            f"baseline of this {volume.label()} ({baseline:,.0f} IOPS), and the run averaged "
            f"{measured_iops:,.0f} IOPS; a gp2 holds its {plan.burst_rate:,.0f} IOPS burst only "
            "while its credits last (B-GP2): judge a run started on a full bucket "
            "(--burst-balance=100), or the baseline (--burst-balance=0)")


def held_back(found: Verdict, options: Mapping[str, str], workload: Workload, *,
              ran_dry: str = "") -> Verdict:
    """``found``, or, when it fell short (FAIL or undecided) of a rate and the job's own
    options (:func:`job_limit`) or a bucket that ran dry (``ran_dry``) held the run there,
    INCONCLUSIVE naming them: a shortfall that is the job's is not the volume's. One rule for
    a live check (your --ebsperf-fio-options) and for judge."""
    if found.outcome not in (Outcome.FAIL, Outcome.INCONCLUSIVE) or found.measured is None \
            or found.expected is None or found.unit not in ("IOPS", "B/s"):
        return found
    limit = ran_dry or job_limit(options, workload, found.measured, found.unit)
    if not limit:
        return found
    reason = f"inconclusive: {limit}, below what the volume was to show"
    return replace(found, outcome=Outcome.INCONCLUSIVE, reason=reason,
                   binding="burst credits" if ran_dry else "job's own limit", message=(
                       f"{found.what}: {found.measured:,.0f} {found.unit} measured, "
                       f"{found.expected:,.0f} {found.unit} expected - {reason}. Claim "
                       f"{found.claim}"))


def job_limit(options: Mapping[str, str], workload: Workload, measured: float, unit: str
              ) -> str:
    """A sentence naming the job's own option that bound the run (its rate, its think
    time), or "" when none is set or the run was not at it."""
    jobs = max(1, workload.numjobs)
    side = 0 if workload.read_fraction >= 0.5 else 1
    rate_iops = _per_side(options.get("rate_iops"), side)
    if rate_iops:
        total = rate_iops * jobs
        ceiling = total if unit == "IOPS" else total * workload.bs
        if measured >= 0.9 * ceiling:
            return (f"the job's own rate_iops={options['rate_iops']} ({jobs} job(s): "
                    f"{total:,.0f} IOPS) held it there")
    rate = _per_side(options.get("rate"), side, size=True)
    if rate:
        total_bps = rate * jobs
        ceiling = total_bps if unit == "B/s" else total_bps / workload.bs
        if measured >= 0.9 * ceiling:
            return (f"the job's own rate={options['rate']} ({jobs} job(s): "
                    f"{total_bps / 2**20:,.1f} MiB/s) held it there")
    think = options.get("thinktime")
    if think:
        try:
            seconds = parse_seconds(think if re.search(r"[a-z]", think) else f"{think}us")
        except ValueError:
            seconds = 0.0
        if seconds > 0:
            per_job = _int(options.get("thinktime_blocks"), 1) / seconds
            ceiling = per_job * jobs * (1 if unit == "IOPS" else workload.bs)
            if measured <= 1.1 * ceiling:
                return (f"the job's own thinktime={think} (an idle pause every "
                        f"{_int(options.get('thinktime_blocks'), 1)} I/O(s), at most "
                        f"{per_job * jobs:,.0f} IOPS over {jobs} job(s)) held it there")
    # rate_min / rate_iops_min are minimums: fio aborts a job below them, they never slow
    # one. iodepth_low holds the queue back only below the iodepth it refills to.
    low = _int(options.get("iodepth_low"), 0)
    if low and low < max(1, workload.iodepth):
        return (f"the job set iodepth_low={options['iodepth_low']} (below its iodepth "
                f"{workload.iodepth}): it refills its queue only once it drains to that, "
                "so the run measured the job as written, not the volume's limit")
    if options.get("flow"):
        return (f"the job set flow={options['flow']}, which paces it against other jobs: "
                "the run measured the job as written, not the volume's limit")
    return ""


def _per_side(text: str | None, side: int, *, size: bool = False) -> float:
    """``rate_iops=600`` / ``600,300`` (reads, writes): the value for ``side``."""
    if not text:
        return 0.0
    parts = [p.strip() for p in str(text).split(",")]
    chosen = parts[side] if side < len(parts) and parts[side] else parts[0]
    try:
        return float(parse_size(chosen, what="rate")) if size else float(chosen)
    except (EbsperfError, ValueError):
        return 0.0

