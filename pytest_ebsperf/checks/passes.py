"""Checks made of several passes over one device (seed 001's instance-store claims).

* :func:`check_first_write` (S1-03): TRIM a region, write it once (every block's first
  write since the TRIM), write the same offsets again; the first pass must run at least at
  0.90 x the second. Pre-warming (writing every block once) was needed on the virtualized
  instance store of 2014-15; NVMe instance store needs none.
* :func:`check_write_after_trim` (S1-08, S1-04): fill the whole device (the pre-warm, its
  rate recorded like seed 001's ``dd``), measure random writes on the full device, TRIM it,
  measure again; writes after TRIM must not be slower. Seed 001 saw no effect of TRIM
  because its 1.6 GiB working set never filled its 32 GB device.
* :func:`check_stability` (S1-09): the same workload several times, the first run dropped,
  the coefficient of variation of the runs' means at most 10 %.

The passes are recorded with phase ``pass`` (kept out of the seed-shaped tables) and judged
by :mod:`pytest_ebsperf.verdicts.stability`.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import replace
from pathlib import Path

from pytest_ebsperf.checks import paired
from pytest_ebsperf.checks.core import CheckCore, FirstRun
from pytest_ebsperf.emulate.registry import EMULATED_INSTANCE_STORE_BYTES
from pytest_ebsperf.fio.kept import keep_part
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload, format_size
from pytest_ebsperf.units import MIB, format_mibps, format_seconds
from pytest_ebsperf.verdicts import comparison, plain, stability
from pytest_ebsperf.verdicts.outcome import Verdict

#: A pass writes into a region this many times larger than it can cover in its runtime, so
#: fio's random map never brings it back to a block it wrote in the same pass.
REGION_HEADROOM = 1.5
#: A device larger than this is filled only with --ebsperf-long (seed 001 filled 32 GB in
#: 160 s; a 3.75 TB NVMe device takes hours).
FILL_WITHOUT_LONG_BYTES = 64 * 1024**3
#: Longest run of a stability check unless --ebsperf-runtime is given (seconds).
STABILITY_RUN_S = 20.0
#: TRIM runs are given this rate to size their runtime (NVMe deallocates far faster).
TRIM_PLANNING_BPS = 1024**3
#: A sequential fill planned at this rate when the device's write rate is unknown.
FILL_PLANNING_BPS = 100 * 1024**2
#: What seed 001 measured for its dd pre-warm: 32 GB in 160.6 s (claims.md S1-04).
SEED_PREWARM_BPS = 32e9 / 160.6


def device_bytes(runner: CheckCore) -> int:
    """Size of the device under test (its inspection, or the emulated backing file)."""
    target = runner.target
    if target.emulated is not None:
        return int(target.emulated.size_bytes)
    if runner.settings.plan:  # a dry run: the size an emulated or a given device would have

        return EMULATED_INSTANCE_STORE_BYTES
    if target.report is not None and target.report.size_bytes:
        return int(target.report.size_bytes)
    runner.refuse(f"{target.path}: its size is unknown (the device was not inspected), so no "
                  "region can be chosen for a write pass.")


def _trim(runner: CheckCore, size: int, what: str, *, offset: int = 0
          ) -> tuple[FioResult, str]:
    """TRIM ``size`` bytes from ``offset`` with fio (``rw=trim``); a note when less was
    trimmed."""
    result = runner.run(_trim_job(runner, size, offset), phase="TRIM")  # kept as a part: no claim judges rw=trim
    if result.trim.io_bytes < size:
        return result, (f"The TRIM of {what} reached {format_size(result.trim.io_bytes)} of "
                        f"{format_size(size)}: some blocks of the first pass were written "
                        "before.")
    return result, ""


def _trim_job(runner: CheckCore, size: int, offset: int = 0) -> Workload:
    """fio's TRIM of ``size`` bytes from ``offset`` (``rw=trim``, once)."""
    return runner.workload("trim", min(8 * MIB, size)).replace(
        size=size, offset=offset, iodepth=1, numjobs=1, ramp_s=0.0, once=True,
        runtime_s=max(10.0, 3 * math.ceil(size / TRIM_PLANNING_BPS)))


def _pass_plan(runner: CheckCore, workload: Workload, capacity: int
               ) -> tuple[Workload, int, str]:
    """The write pass for ``workload`` and the region it writes into."""
    rate = max(runner.expected_rate(workload), 1.0)
    covers = rate * workload.bs * workload.runtime_s * REGION_HEADROOM
    region = min(capacity, max(int(covers), 64 * MIB))
    region -= region % (1 * MIB) or 0
    runtime = workload.runtime_s
    note = ""
    if region < covers:  # the device is small: shorten the pass so it writes no block twice
        runtime = max(1.0, region / (rate * workload.bs * REGION_HEADROOM))
        note = (f"The device holds {format_size(capacity)}, so each pass lasted "
                f"{format_seconds(runtime)}.")
    return (workload.replace(size=region, ramp_s=0.0, runtime_s=runtime, random_map=True),
            region, note)


def check_first_write(runner: CheckCore, claim: str, what: str, workload: Workload
                      ) -> Verdict:
    """S1-03: first writes into a TRIMmed region at least 0.90 x the second writes, in
    rounds (TRIM a region, write it once, write the same offsets again), each round one pair,
    the regions taken in turn over the device."""
    started = time.perf_counter()
    capacity = device_bytes(runner)
    block = paired.block_workload(workload, runner.settings)
    job, region, note = _pass_plan(runner, block, capacity)
    regions = max(1, capacity // region)
    runner.announce(f"{claim}: rounds of TRIM, first write, second write on regions of "
                    f"{format_size(region)} ({job.label()}, {format_seconds(job.runtime_s)} "
                    "each)")
    trim_notes: list[str] = []

    def one_round(index: int) -> paired.Pair:
        offset = (index % regions) * region
        _, trim_note = _trim(runner, region, "the region", offset=offset)
        if trim_note and not trim_notes:
            trim_notes.append(trim_note)
        at = job.replace(offset=offset)
        first = runner.run(at, phase="pair")
        second = runner.run(at, phase="pair")  # same seed: the same offsets, written before
        return first.total_iops, second.total_iops, first, second

    seq, blocks, last = _rounds_at_least(runner, one_round, job)
    found = paired.ratio_verdict(
        seq, blocks, claim=claim, what=what, a_label="first write", b_label="second write",
        notes=[n for n in ((f"Each round TRIMs a region of {format_size(region)} "
                            f"({regions} region(s) in turn) before its first write."), note,
                           *trim_notes) if n])
    found = paired.emulator_spoiled(found, blocks, "first write", "second write")
    found = paired.measured_again(found, blocks, "first write", "second write")
    if last is None:
        return runner.conclude_plain(found)
    return runner.conclude(found, job, last, started)


def check_write_after_trim(runner: CheckCore, claim: str, what: str, workload: Workload,
                           *, prewarm_claim: str = "") -> list[Verdict]:
    """S1-08 (and S1-04 with ``prewarm_claim``): fill the device, then rounds on its regions
    in turn: random writes into the full region, TRIM it, random writes again (after TRIM),
    refill it; after-TRIM at least 0.90 x full, judged on the rounds' pairs."""
    capacity, fill = _fill_job(runner)
    target = runner.target
    started = time.perf_counter()
    verdicts: list[Verdict] = []
    runner.announce(f"{claim}: fill {target.path} ({format_size(capacity)}), then rounds of "
                    "measure, TRIM, measure on its regions")
    filled = runner.run(fill, phase="pass")
    if filled.write.io_bytes < capacity:
        runner.refuse(f"{claim}: the fill wrote {format_size(filled.write.io_bytes)} of "
                      f"{format_size(capacity)} in {format_seconds(fill.runtime_s)}, the time "
                      f"planned at a third of {format_mibps(FILL_PLANNING_BPS)}: this device "
                      "writes far slower than an instance store should.")
    if prewarm_claim:
        rate = filled.total_bw_bytes
        whole_s = capacity / rate if rate > 0 else math.inf
        info = plain.judge_info(
            prewarm_claim, "pre-warm: sequential 1 MiB writes over the whole device", rate,
            fill, unit="B/s", expected=SEED_PREWARM_BPS,
            notes=[(f"Writing every block once takes {format_seconds(whole_s)} here; seed 001's "
                   "dd wrote 32 GB in 160.6 s (201 MB/s). NVMe instance store needs no "
                   "pre-warm (S1-03)")])
        verdicts.append(runner.conclude(info, fill, filled, started))
        started = time.perf_counter()
    block = paired.block_workload(workload, runner.settings)
    job, region, note = _pass_plan(runner, block, capacity)
    regions = max(1, capacity // region)
    trim_notes: list[str] = []
    trimmed: set[int] = set()

    def one_round(index: int) -> paired.Pair:
        offset = (index % regions) * region
        at = job.replace(offset=offset)
        if offset in trimmed:  # TRIMmed in an earlier round (or this one, measured again)
            refill = fill.replace(size=region, offset=offset,
                                  runtime_s=max(10.0, 3 * math.ceil(region / FILL_PLANNING_BPS)))
            runner.run(refill, phase="pass")
        full = runner.run(at, phase="pair")
        _, trim_note = _trim(runner, region, "the region", offset=offset)
        trimmed.add(offset)
        if trim_note and not trim_notes:
            trim_notes.append(trim_note)
        after = runner.run(at, phase="pair")
        return after.total_iops, full.total_iops, after, full

    seq, blocks, last = _rounds_at_least(runner, one_round, job)
    found = paired.ratio_verdict(
        seq, blocks, claim=claim, what=what, a_label="after TRIM", b_label="full device",
        notes=[n for n in ((f"The whole device ({format_size(capacity)}) was written first; "
                            f"each round writes into a full region of {format_size(region)}, "
                            "TRIMs it and writes again."), note, *trim_notes) if n])
    found = paired.emulator_spoiled(found, blocks, "after TRIM", "full device")
    found = paired.measured_again(found, blocks, "after TRIM", "full device")
    found = replace(found, message=f"{found.message} {trim_help(found)}")
    if last is None:
        verdicts.append(runner.conclude_plain(found))
    else:
        verdicts.append(runner.conclude(found, job, last, started))
    return verdicts


def _fill_job(runner: CheckCore) -> tuple[int, Workload]:
    """The device's size and the sequential fill of all of it (S1-08's first pass); a skip
    when that takes long and --ebsperf-long was not given."""
    capacity = device_bytes(runner)
    if capacity > FILL_WITHOUT_LONG_BYTES and not runner.settings.long:
        hours = capacity / FILL_PLANNING_BPS / 3600
        runner.skip(f"this claim fills the whole device first ({format_size(capacity)}, about "
                    f"{hours:.1f} h at {format_mibps(FILL_PLANNING_BPS)}); pass --ebsperf-long "
                    "to run it.")
    return capacity, runner.workload("write", "1m").replace(
        size=capacity, ramp_s=0.0, iodepth=8, numjobs=1, once=True,
        runtime_s=max(10.0, 3 * math.ceil(capacity / FILL_PLANNING_BPS)))


def check_stability(runner: CheckCore, claim: str, what: str, workload: Workload
                    ) -> Verdict:
    """S1-09: ``--ebsperf-runs`` runs of ``workload``; the first dropped, CV <= 10 %."""
    started = time.perf_counter()
    runs = runner.settings.runs
    workload = _stability_run(runner, workload)
    means: list[float] = []
    kept: list[str] = []
    shares: list[float | None] = []
    again: list[float] = []
    result: FioResult | None = None
    # the runs are compared with each other and held as a comparison is (paired.held): on a
    # real device alone; on an emulated one beside the other workers, a run its emulator says
    # the host held back measured again (beside another worker's fio, one run of an emulated
    # instance store came at 17,714 IOPS among nine at 27,234-27,822: CV 12 %)
    with paired.held(runner):
        while len(means) < runs:
            index = len(means)
            # The kept runs are steady: they fill seed 001's runs table (run A, B, C, mean,
            # CV).
            result = runner.run(workload, phase="pass" if index < stability.DROPPED_RUNS
                                else "steady")
            share = _emulator_share(runner, workload, result)
            if stability.spoiled_run(share) and len(again) < stability.MAX_RUNS_AGAIN:
                assert share is not None
                again.append(share)  # the host held this run back: it is measured again
                if result.kept_as:
                    keep_part(Path(result.kept_as), check=runner.nodeid, result=result,
                              planned_s=workload.runtime_s,
                              phase="stability run (measured again: the host held it back)")
                continue
            if index < runs - 1 and result.kept_as:
                # a run of the series, kept with what it was judged on: judge judges the
                # series again from them (the last run holds the verdict)
                keep_part(Path(result.kept_as), check=runner.nodeid, result=result,
                          planned_s=workload.runtime_s,
                          phase="stability run" + (" (dropped)" if index <
                                                   stability.DROPPED_RUNS else ""))
            means.append(result.total_iops)
            kept.append(result.kept_as)
            shares.append(share)
    assert result is not None
    alpha = runner.session.policy.alpha
    found = stability.judge_stability(claim, what, means, alpha=alpha)
    found = _runs_spoiled(runner, found, shares[stability.DROPPED_RUNS:])
    found = stability.measured_again(found, again)
    if all(kept):  # every run kept: their reports, for judge to judge the series again
        found = replace(found, details={**found.details, "stability": {
            "runs": kept, "dropped": stability.DROPPED_RUNS, "max_cv": stability.MAX_RUN_CV,
            "alpha": alpha, "emulator_shares": found.details.get("emulator_shares"),
            "measured_again": again, "volume_type": runner.volume.type}})
    return runner.conclude(found, workload, result, started)


def _stability_run(runner: CheckCore, workload: Workload) -> Workload:
    """One of S1-09's runs: seed 001's lasted 6-40 s (1.6 GiB each); the spread of runs'
    means needs many runs more than long ones (on an emulated volume, runs as long as a
    block of a comparison)."""
    if runner.settings.given("runtime"):
        return workload
    longest = paired.block_seconds(runner.settings) if runner.settings.emulate \
        else STABILITY_RUN_S
    return workload.replace(runtime_s=min(workload.runtime_s, longest))


def _emulator_share(runner: CheckCore, workload: Workload, result: FioResult
                    ) -> float | None:
    """What a run of an emulated volume delivered over what its throttle was set to
    deliver over the run's measured seconds; None on a real volume (or a set)."""
    device, started = runner.target.emulated, runner.session.runner.last_started
    if device is None or started is None or result.total_iops <= 0:
        return None
    from pytest_ebsperf.emulate import witness  # only where a volume is emulated

    begin = started + max(workload.ramp_s, 0.0)
    owed = witness.allowed_iops(device, begin, begin + workload.runtime_s, workload.bs,
                                workload.iodepth * workload.numjobs)
    return result.total_iops / owed if owed else None


def _runs_spoiled(runner: CheckCore, found: Verdict, shares: list[float | None]) -> Verdict:
    """S1-09 on an emulated volume: its runs' shares of their setting go to the results file
    and, kept, to judge; runs that kept up unevenly make a check that did not PASS
    INCONCLUSIVE naming the host (:func:`stability.emulator_uneven`)."""
    if runner.target.emulated is None:
        return found
    found = stability.emulator_uneven(found, shares, runner.volume.type)
    return replace(found, details={**found.details, "emulator_shares": shares})


def trim_help(found: Verdict) -> str:
    """What S1-08's check can show, said with its verdict: that writes after TRIM are not
    more than 10 % slower than on the full device; that TRIM helps only when the whole
    interval of the ratio lies above 1."""
    low = found.details.get("ratio_low")
    if not isinstance(low, (int, float)):
        return ""
    can = ("What this check shows: writes after TRIM are not more than "
           f"{(1 - stability.MIN_PASS_RATIO) * 100:.0f} % slower than on the full device.")
    if low > 1.0:
        return f"{can} TRIM helped: at least +{(low - 1) * 100:.0f} % with that confidence."
    return (f"{can} That TRIM helps is not shown (the ratio's interval reaches down to "
            f"{low:.3f}, at or below 1): on a device that keeps fresh blocks in reserve a "
            "full device writes as fast as a TRIMmed one.")


class PassChecks:
    """Claims made of several passes over one device (seed 001's instance store)."""

    def __init__(self, core: CheckCore) -> None:
        #: The runner's core: the volume, its devices, one fio run, concluding.
        self.core = core

    def check_first_write(self, claim: str, what: str, workload: Workload) -> Verdict:
        """First writes into a TRIMmed region run at >= 0.90 x second writes (S1-03)."""
        return check_first_write(self.core, claim, what, workload)

    def check_write_after_trim(self, claim: str, what: str, workload: Workload, *,
                               prewarm_claim: str = "") -> list[Verdict]:
        """Fill the device (its rate recorded under ``prewarm_claim``), measure, TRIM,
        measure: after-TRIM >= 0.90 x full (S1-08, S1-04)."""
        return check_write_after_trim(self.core, claim, what, workload,
                                      prewarm_claim=prewarm_claim)

    def check_stability(self, claim: str, what: str, workload: Workload) -> Verdict:
        """--ebsperf-runs runs, the first dropped, CV of their means <= 10 % (S1-09)."""
        return check_stability(self.core, claim, what, workload)

    # what each would run first (the dry run asks; Check.first_run)
    def first_check_first_write(self, claim: str, what: str, workload: Workload) -> FirstRun:
        capacity = device_bytes(self.core)
        block = paired.block_workload(workload, self.core.settings)
        return _trim_job(self.core, _pass_plan(self.core, block, capacity)[1]), \
            self.core.target

    def first_check_write_after_trim(self, claim: str, what: str, workload: Workload, *,
                                     prewarm_claim: str = "") -> FirstRun:
        return _fill_job(self.core)[1], self.core.target

    def first_check_stability(self, claim: str, what: str, workload: Workload) -> FirstRun:
        return _stability_run(self.core, workload), self.core.target

    def first_check_discard(self, claim: str, what: str) -> FirstRun:
        return "the device's sysfs"

    def check_discard(self, claim: str, what: str) -> Verdict:
        """Judge that the device supports TRIM/discard (sysfs ``discard_max_bytes`` > 0)."""
        name = os.path.basename(os.path.realpath(self.core.target.path))
        path = f"/sys/block/{name}/queue/discard_max_bytes"
        text = self.core.session.runner.host.read_text(path).strip()
        value = int(text) if text.isdigit() else 0
        found = plain.judge_discard(claim, what, self.core.target.path, value)
        return self.core.conclude_plain(found)


def _rounds_at_least(runner: CheckCore, one_round: paired.PairRun, job: Workload
                     ) -> tuple[comparison.Sequential, comparison.Blocks, FioResult | None]:
    """S1-03's and S1-08's rounds as one comparison (the first of each round at least
    :data:`stability.MIN_PASS_RATIO` x the second), held as a comparison is
    (:func:`paired.held`). A round
    is measured again whole (its TRIM included) when the host held one side back, as a
    comparison's pair is: in a main job a fresh emulated instance store's first two first
    writes came at 25,196 and 21,112 of 27,500 IOPS, every later one at 27,418-27,500, and
    the check took 32 rounds instead of 4. A volume slow to write its first blocks keeps
    up with what it owes (its emulator delivers its setting), so its rounds count."""
    design = comparison.ratio_design(comparison.AT_LEAST, stability.MIN_PASS_RATIO,
                                     fail_alpha=runner.session.policy.alpha,
                                     pass_alpha=runner.session.policy.pass_alpha)
    with paired.held(runner):
        return paired.measure(design, one_round, paired.log_ratio, block=job,
                              again_when_spoiled=True)
