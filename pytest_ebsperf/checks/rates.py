"""Checks of rates against a documented figure: caps (a duty cycle per second, stopped once
settled, confirmed at a deeper queue before a shortfall is the volume's), floors, the instance's limit, block-size
sweeps, latency bounds, claims of your own, and records of best-effort figures (INFO).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.types import Expectation
from pytest_ebsperf.checks.core import CheckCore, FirstRun
from pytest_ebsperf.checks.servers import check_on_servers, first_on_servers
from pytest_ebsperf.checks.sets import name_slow_member
from pytest_ebsperf.checks.time import burst_contradicted
from pytest_ebsperf.checks.witnesses import path_again
from pytest_ebsperf.device.lock import set_aside
from pytest_ebsperf.fio.kept import keep_part
from pytest_ebsperf.fio.live import LiveSeries
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.runner import Monitor
from pytest_ebsperf.fio.workload import Workload, format_size
from pytest_ebsperf.units import MIB, format_quantity
from pytest_ebsperf.verdicts import (
    block_sizes,
    diagnosis,
    evidence,
    plain,
    stop_rule,
    verdict,
)
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict, measured_alone

#: Seconds a floor check runs at least (unless --ebsperf-runtime is given): a PASS needs the
#: mean's lower bound at the PASS level to clear the bar
#: (:data:`~pytest_ebsperf.checks.latencies.MEAN_LATENCY_MIN_RUNTIME_S`).
FLOOR_MIN_RUNTIME_S = 10.0
#: S3-03 (claims.md): an instance-bound run lies within 0.90-1.05 x the instance's maximum.
INSTANCE_BOUND_HIGH = 1.05



class RateChecks:
    """Rates against documented figures (CAP, FLOOR, INFO, sweeps, latency)."""

    def __init__(self, core: CheckCore) -> None:
        #: The runner's core: the volume, its devices, one fio run, concluding.
        self.core = core

    # -- checks --------------------------------------------------------------------------
    def check_cap(self, claim: str, what: str, workload: Workload, *, metric: str = "iops",
                  credits: bool | None = None) -> Verdict:
        """Run ``workload`` and judge it against the documented ceiling (policy CAP).

        The duty cycle is a statistical test (:mod:`pytest_ebsperf.verdicts.evidence`): fio is
        stopped as soon as the seconds seen settle it either way, so a volume far below its cap
        fails in seconds, not after the whole runtime.
        """
        expectation = self.core.expect_cap(claim, what, workload, metric=metric, credits=credits)
        return self._check_expectation(expectation, workload, metric, credits)

    def first_check_cap(self, claim: str, what: str, workload: Workload, *,
                        metric: str = "iops", credits: bool | None = None) -> FirstRun:
        expectation = self.core.expect_cap(claim, what, workload, metric=metric, credits=credits)
        return self._first_of_expectation(expectation, workload, metric, credits)

    def check_instance_bound(self, claim: str, what: str, workload: Workload, *,
                             metric: str = "throughput") -> Verdict:
        """CAP at the instance's EBS-optimized limit, for a volume faster than its instance
        (S3-03: a 6 TiB st1 bursts to 500 MiB/s, a d2.xlarge carries 93.75 MB/s): measured
        within 0.90-1.05 x the instance's maximum. Skipped where the volume itself binds."""
        expectation = self._instance_expectation(claim, what, workload, metric)
        return self._check_expectation(expectation, workload, metric, None)

    def first_check_instance_bound(self, claim: str, what: str, workload: Workload, *,
                                   metric: str = "throughput") -> FirstRun:
        expectation = self._instance_expectation(claim, what, workload, metric)
        return self._first_of_expectation(expectation, workload, metric, None)

    def _instance_expectation(self, claim: str, what: str, workload: Workload, metric: str
                              ) -> Expectation:
        """S3-03's expectation: the instance's limit, within 0.90-1.05 x (a skip where the
        volume itself binds)."""
        expectation = self.core.expect_cap(claim, what, workload, metric=metric)
        binding = expectation.binding
        if binding is None or binding.kind != awsmodel.INSTANCE:
            instance = self.core.volume.instance_type or "an unknown instance type"
            self.core.skip(
                f"this claim is about a volume faster than its instance's EBS bandwidth; "
                f"here {binding.name if binding else 'no limit'} binds, not {instance}'s "
                      "EBS-optimized limit (give --instance-type, or run on a smaller "
                      "instance).")
        return replace(expectation, high=INSTANCE_BOUND_HIGH, notes=(
            *expectation.notes, (f"The instance binds ({binding.name}): within 0.90-"
            f"{INSTANCE_BOUND_HIGH:.2f} x its maximum required, as seed 003 measured 93.6-94.4 "
            "MB/s on a d2.xlarge's 93.75.")))

    def _first_of_expectation(self, expectation: Expectation, workload: Workload, metric: str,
                              credits: bool | None) -> FirstRun:
        """What :meth:`_check_expectation` runs first."""
        if self.core.session.fio_servers:
            return first_on_servers(self.core, expectation.claim, expectation.what, workload,
                                    metric=metric, credits=credits)
        if expectation.policy == awsmodel.INFO:
            return workload, self.core.target
        return self._decidable(expectation, workload, credits), self.core.target

    def _check_expectation(self, expectation: Expectation, workload: Workload, metric: str,
                           credits: bool | None) -> Verdict:
        claim, what = expectation.claim, expectation.what
        if self.core.session.fio_servers:  # every server at once, each host judged on its own
            return check_on_servers(self.core, claim, what, workload, metric=metric,
                                    credits=credits)
        if expectation.policy == awsmodel.INFO:
            return self.record_info(claim, what, workload, expectation=expectation)
        started = time.perf_counter()
        workload = self._decidable(expectation, workload, credits)
        found, result = self._measure(expectation, workload, metric)
        found, result = self._alone_if_spoiled(found, expectation, workload, metric, result)
        found, workload, result = self._confirm_shortfall(found, expectation, workload, metric,
                                                          result)
        found, workload, result = self._too_short(found, expectation, workload, metric,
                                                  credits, result)
        if self.core.set_count is not None and found.outcome is not Outcome.PASS and \
                found.measured is not None and found.expected is not None and \
                found.measured < found.expected:
            found = name_slow_member(self.core, found, workload, metric, credits)
        found = burst_contradicted(self.core, found, workload, metric, credits)
        return self.core.conclude(found, workload, result, started)

    def _decidable(self, expectation: Expectation, workload: Workload,
                   credits: bool | None = None, policy: evidence.Policy | None = None
                   ) -> Workload:
        """A duty cycle planned for fewer seconds than its test needs to FAIL at all (an
        emulated 5 s check under the spell model; a sweep's point at its ``policy``) is
        planned for that many, unless the runtime was given (a healthy volume still stops
        once its PASS is settled): no PASS that could not have failed."""
        if self.core.settings.given("runtime") or workload.runtime_s <= 0:
            return workload
        if expectation.policy != awsmodel.CAP or not expectation.duty:
            return workload
        policy = policy or self.core.session.policy
        needed = evidence.decidable_runtime_s(evidence.windows_to_fail(expectation.duty, policy))
        if needed <= workload.runtime_s:
            return workload
        longer = workload.replace(runtime_s=needed)
        volume = self.core.volume
        if credits is not False and awsmodel.has_burst(volume) and \
                self.core.session.credits.credit_wait_s(volume, needed + workload.ramp_s) > 0:
            return workload  # the bucket holds the planned seconds, not more: no knee mid-check
        return longer

    def _too_short(self, found: Verdict, expectation: Expectation, workload: Workload,
                   metric: str, credits: bool | None, result: FioResult
                   ) -> tuple[Verdict, Workload, FioResult]:
        """A burst-level check whose bucket could not carry a decidable run
        (:meth:`_decidable`) missed a second in too few seconds for its test to ever FAIL:
        after the bucket earns the credits (at most
        ``evidence.MAX_DECIDING_WAIT_S``), a fresh run
        planned for enough seconds decides. Its FAIL is the fixed-length test's on fresh
        seconds, so the level holds; the first run only chose to run it."""
        details = found.details
        planned, critical = details.get("planned_samples"), details.get("critical_misses")
        if found.outcome is not Outcome.INCONCLUSIVE or planned is None or critical is None \
                or critical <= planned or self.core.settings.given("runtime"):
            return found, workload, result
        policy = self.core.session.policy
        needed = evidence.decidable_runtime_s(evidence.windows_to_fail(expectation.duty, policy))
        volume = self.core.volume
        waited = ""
        if awsmodel.has_burst(volume) and credits is not False:
            wait = self.core.session.credits.credit_wait_s(volume, needed + workload.ramp_s)
            if wait > evidence.MAX_DECIDING_WAIT_S:
                return found, workload, result
            if wait > 0:
                self.core.announce(f"{self.core.name}: waiting {wait:,.0f} s for the bucket to "
                                   f"carry a {needed:g} s run")
                with set_aside():
                    time.sleep(wait)
                waited = f" after {wait:,.0f} s idle for the bucket to earn it"
        longer = workload.replace(runtime_s=needed)
        again, again_result = self._measure(expectation, longer, metric)
        # the fresh run's emulator may fall behind beside another worker as the first's can
        again, again_result = self._alone_if_spoiled(again, expectation, longer, metric,
                                                     again_result)
        again, longer, again_result = self._confirm_shortfall(again, expectation, longer,
                                                              metric, again_result)
        self._kept_as_part(result, "too-short")  # only chose to run the fresh one
        note = (f"The first run ({details.get('samples')} s) missed {details.get('misses')} "
                f"s: too few seconds for the test ever to be evidence ({critical} misses "
                f"would be); this verdict is a fresh run's, planned for {needed:g} s{waited}.")
        again = replace(again, message=f"{again.message} {note}",
                        details={**again.details, "first_run": {
                            "samples": details.get("samples"), "misses": details.get("misses"),
                            "measured": found.measured}})
        return again, longer, again_result

    def check_floor(self, claim: str, what: str, workload: Workload) -> Verdict:
        """Run ``workload`` and judge it against a published "at least" figure (FLOOR)."""
        if self.core.session.fio_servers:
            return check_on_servers(self.core, claim, what, workload)
        workload = self._floor_workload(workload)
        expectation = awsmodel.floor_expectation(claim, what, self.core.volume, workload)
        started = time.perf_counter()
        found, result = self._measure(expectation, workload, "iops")
        found, result = self._alone_if_spoiled(found, expectation, workload, "iops", result,
                                               floor=True)
        found, workload, result = self._confirm_shortfall(found, expectation, workload, "iops",
                                                          result)
        return self.core.conclude(found, workload, result, started)

    def first_check_floor(self, claim: str, what: str, workload: Workload) -> FirstRun:
        if self.core.session.fio_servers:
            return first_on_servers(self.core, claim, what, workload)
        return self._floor_workload(workload), self.core.target

    def _floor_workload(self, workload: Workload) -> Workload:
        if self.core.settings.given("runtime"):
            return workload
        # a mean needs seconds enough to bound their correlation (a healthy volume still
        # stops at an early look)
        return workload.replace(runtime_s=max(workload.runtime_s, FLOOR_MIN_RUNTIME_S,
                                              evidence.MEAN_PLANNED_S))

    def _measure(self, expectation: Expectation, workload: Workload, metric: str
                 ) -> tuple[Verdict, FioResult]:
        policy = self.core.session.policy
        monitor = self._monitor(expectation, workload, metric, policy)
        result = self.core.run(workload, monitor=monitor)
        found = verdict.judge(expectation, result, workload, metric=metric,
                              cpu_count=self.core.session.cpu_count, policy=policy)
        return self._go_on(found, expectation, workload, metric, result)

    def _go_on(self, found: Verdict, expectation: Expectation, workload: Workload,
               metric: str, result: FioResult) -> tuple[Verdict, FioResult]:
        """Stopped on fio's live reports, but its logs of those seconds do not settle the
        verdict: the run goes on for its planned seconds, judged with these as one run (at
        its later looks' own share of the level). A stop the logs confirm is kept."""
        if found.outcome is not Outcome.INCONCLUSIVE or not result.stop_reason:
            return found, result
        values, planned = verdict.judged_seconds(expectation, result, workload, metric=metric)
        window = workload.runtime_s / planned if planned else 1.0
        left = planned - len(values)
        if left < 1 or not values:
            return found, result
        policy = self.core.session.policy
        rest = workload.replace(runtime_s=float(math.ceil(left * window)))
        monitor = self._monitor(expectation, rest, metric, policy, prior=values)
        rest_result = self.core.run(rest, monitor=monitor)
        again = verdict.judge(expectation, rest_result, rest, metric=metric,
                              cpu_count=self.core.session.cpu_count, policy=policy,
                              prior=values)
        self._kept_as_part(result, "first part")  # its seconds are in the record's prior
        note = (f"fio's live reports had settled the verdict after {len(values)} s "
                f"({result.stop_reason}), but its logs of those seconds did not: the run "
                f"went on for the rest of its {planned} s, and both parts were judged as one.")
        return replace(again, message=f"{again.message} {note}", details={
            **again.details, "first_part": {"samples": len(values), "planned": planned,
                                            "stop_reason": result.stop_reason,
                                            "measured": found.measured,
                                            "values": list(values),
                                            "rest_s": rest.runtime_s}}), rest_result

    def _alone_if_spoiled(self, found: Verdict, expectation: Expectation, workload: Workload,
                          metric: str, result: FioResult, *, floor: bool = False
                          ) -> tuple[Verdict, FioResult]:
        """An emulated volume's witness said it fell behind beside another worker, or its
        host was too busy to tell ("host bound"; for a ``floor``, any undecided mean: an
        emulated volume too fast for a witness is the host's CPUs), and the check is undecided: that run is the
        host's, so a run holding the host alone decides (its seconds alone: a false FAIL has
        at most twice the check's level, the first run's chance and this one's)."""
        behind = len(result.emulator_behind)
        target = self.core.target
        busy = found.binding in (("host", "run length") if floor else ("host",)) and \
            (target.emulated or target.emulated_set) is not None
        if found.outcome is not Outcome.INCONCLUSIVE or not (behind or busy):
            return found, result
        with self.core.measuring_alone("its first run was the host's: measured again alone"):
            path_again(target)
            again, again_result = self._measure(expectation, workload, metric)
        self._kept_as_part(result, "host-spoiled")
        why = ("" if behind else "host's CPUs were too busy to tell" if found.binding == "host"
               else "seconds could not decide")
        return measured_alone(again, found, behind, why=why,
                              host_bound=busy and not behind), again_result

    def _confirm_shortfall(self, found: Verdict, expectation: Expectation, workload: Workload,
                           metric: str, result: FioResult
                           ) -> tuple[Verdict, Workload, FioResult]:
        """Before calling a shortfall the volume's fault, run briefly with 4x the queue
        depth: a volume at its limit does not go faster, a starved queue does. When the deeper
        queue reaches the claim, the check is run again at that depth and that run decides."""
        if found.outcome is not Outcome.FAIL or found.measured is None or \
                found.expected is None or found.measured >= found.expected:
            return found, workload, result
        probe = diagnosis.probe_queue_depth(workload)
        probe_result = self.core.run(probe, phase="probe")
        probed = diagnosis.judge_with_probe(found, workload, probe, probe_result, metric=metric)
        if not probed.details.get("probe_reached") or self.core.settings.iodepth:
            # A queue depth the user chose is not overridden: inconclusive, both figures.
            return probed, workload, result
        deeper = workload.replace(iodepth=probe.iodepth)
        again, again_result = self._measure(expectation, deeper, metric)
        self._kept_as_part(result, "starved-queue")
        note = (f"At QD {workload.queue_depth} the check fell short "
                f"({format_quantity(found.measured, found.unit)}); a short run at QD "
                f"{probe.queue_depth} reached the claim, so the check was run again at QD "
                f"{deeper.queue_depth}.")
        details = {**again.details, "first_run": {"qd": workload.queue_depth,
                                                   "measured": found.measured,
                                                   "probe_value": probed.details.get(
                                                       "probe_value")}}
        again = replace(again, message=f"{again.message} {note}", details=details)
        return again, deeper, again_result

    def _kept_as_part(self, result: FioResult, phase: str, *,
                      planned_s: float | None = None) -> None:
        """A kept run this verdict did not come from (``planned_s``: a sweep's point)."""
        if result.kept_as:
            keep_part(Path(result.kept_as), check=self.core.nodeid, phase=phase,
                      result=result if planned_s else None, planned_s=planned_s)

    def _monitor(self, expectation: Expectation, workload: Workload, metric: str,
                 policy: evidence.Policy, *, prior: Sequence[float] = ()) -> Monitor:
        """Stop fio once the seconds seen settle the verdict (:func:`stop_rule.settled`)."""
        key = verdict.METRICS[metric][0]
        line = self.core._plain_progress(workload)

        def monitor(series: LiveSeries) -> str | None:
            values = [*prior, *series.values(key)]
            window = statistics.median(series.window_s)
            planned = max(len(values), len(prior) + round(workload.runtime_s / window))
            if line is not None:
                line(series)
            return stop_rule.settled(values, expectation, policy, planned=planned)

        return monitor

    def record_info(self, claim: str, what: str, workload: Workload, *,
                    expectation: Expectation | None = None) -> Verdict:
        """Run ``workload`` and record it without judging (policy INFO)."""
        started = time.perf_counter()
        result = self.core.run(workload)
        found = plain.judge_info(claim, what, result, workload,
                                 notes=expectation.notes if expectation else ())
        return self.core.conclude(found, workload, result, started)

    def first_record_info(self, claim: str, what: str, workload: Workload, *,
                          expectation: Expectation | None = None) -> FirstRun:
        return workload, self.core.target

    # -- claims of your own ----------------------------------------------------------------
    def check_at_least(self, claim: str, what: str, workload: Workload, *,
                       iops: float | None = None, mibps: float | None = None,
                       share_of_seconds: float = 0.99, source: str = "") -> Verdict:
        """Your own number: ``workload`` holds at least ``iops`` (or ``mibps``) in
        ``share_of_seconds`` of the seconds, e.g. "random 4 KiB reads on our database volume
        hold 12,000 IOPS in 99 % of seconds". Judged like the documented caps: each second is
        a trial, a FAIL needs evidence at the run's false-alarm level, fio stops as soon as
        the verdict is settled, and a shortfall is diagnosed (load generator, host, queue
        depth, a deeper-queue confirmation run) before it is called the volume's."""
        expectation = _claimed(self.core, claim, what, workload, iops, mibps,
                               share_of_seconds, source)
        metric = "iops" if iops is not None else "throughput"
        started = time.perf_counter()
        workload = self._decidable(expectation, workload)
        found, result = self._measure(expectation, workload, metric)
        found, workload, result = self._confirm_shortfall(found, expectation, workload, metric,
                                                          result)
        return self.core.conclude(found, workload, result, started)

    def first_check_at_least(self, claim: str, what: str, workload: Workload, *,
                             iops: float | None = None, mibps: float | None = None,
                             share_of_seconds: float = 0.99, source: str = "") -> FirstRun:
        expectation = _claimed(self.core, claim, what, workload, iops, mibps,
                               share_of_seconds, source)
        return self._decidable(expectation, workload), self.core.target

    def check_sweep(self, claim: str, what: str, pattern: str, sizes: Sequence[str | int]
                    ) -> Verdict:
        """Run ``pattern`` at each block size; judge the curve against min(IOPS cap,
        throughput cap / bs) — flat, then throughput-bound (seed 002, S2-08/S2-10).

        Each point stops as soon as its seconds settle it; the sweep stops at the first point
        that is off the model beyond its noise (one such point fails the curve)."""
        sizes = self.core.settings.sweep_sizes_bytes or sizes  # --ebsperf-sweep-sizes
        started = time.perf_counter()
        policy = self.core.session.policy
        point_policy = policy.split(len(sizes))
        points = []
        notes: list[str] = []
        for size in sizes:
            expectation, workload = self._sweep_point_job(claim, what, pattern, size,
                                                          point_policy)
            result, point, note = _sweep_point(self, claim, what, expectation, workload,
                                               point_policy)
            notes.extend(note)
            points.append((workload.bs, expectation, result, workload))
            if point.outcome is not Outcome.PASS:
                break  # one point off the model (or not judgeable) decides the sweep
        found = block_sizes.judge_sweep(claim, what, points, cpu_count=self.core.session.cpu_count,
                                    policy=policy, planned_points=len(sizes))
        if len(points) < len(sizes):
            skipped = ", ".join(str(size) for size in sizes[len(points):])
            found = replace(found, message=f"{found.message} The sweep stopped there; "
                            f"{skipped} not measured.")
        found = replace(found, message=" ".join([found.message, *notes]))
        for _, _, result, workload in points[:-1]:  # kept: points of the sweep, not checks
            self._kept_as_part(result, "sweep point", planned_s=workload.runtime_s)
        sweep = {"runs": [result.kept_as for _, _, result, _ in points],  # for judge
                 "planned_points": len(sizes), "cpu_count": self.core.session.cpu_count,
                 "expectations": [expectation.record() for _, expectation, _, _ in points]}
        found = replace(found, details={**found.details, "sweep_points": len(points),
                                        "sweep": sweep})
        return self.core.conclude(found, points[-1][3], points[-1][2], started)

    def first_check_sweep(self, claim: str, what: str, pattern: str,
                          sizes: Sequence[str | int]) -> FirstRun:
        sizes = self.core.settings.sweep_sizes_bytes or sizes
        policy = self.core.session.policy.split(len(sizes))
        return self._sweep_point_job(claim, what, pattern, sizes[0], policy)[1], \
            self.core.target

    def _sweep_point_job(self, claim: str, what: str, pattern: str, size: str | int,
                         policy: evidence.Policy) -> tuple[Expectation, Workload]:
        """A sweep point's expectation and workload, judged alone at ``policy``."""
        workload = self.core.workload(pattern, size)
        expectation = self.core.expect_cap(claim, what, workload)
        return expectation, self._decidable(expectation, workload, policy=policy)


def _claimed(core: CheckCore, claim: str, what: str, workload: Workload, iops: float | None,
             mibps: float | None, share_of_seconds: float, source: str) -> Expectation:
    """The expectation of a claim of your own (a refusal when it is not one)."""
    if (iops is None) == (mibps is None):
        core.refuse(f"{claim}: give exactly one of iops= or mibps= (the rate you claim for "
                    "this workload).")
    value = float(iops if iops is not None else (mibps or 0.0) * MIB)
    if not value > 0 or not math.isfinite(value):
        core.refuse(f"{claim}: the claimed rate must be a positive number, got "
                    f"{iops if iops is not None else mibps!r}.")
    if not 0 < share_of_seconds <= 1:
        core.refuse(f"{claim}: share_of_seconds is a fraction of the seconds (0.99 for "
                    f"99 %), got {share_of_seconds!r}.")
    unit = "IOPS" if iops is not None else "B/s"
    shown = format_quantity(value, unit)
    per_io = value if iops is not None else value / workload.bs
    limit = awsmodel.Limit(f"claimed {shown}", "claim", per_io, claim, source)
    return Expectation(claim, what, awsmodel.CAP, value, unit, limit, (limit,), low=1.0,
                       high=None, duty=share_of_seconds, source=source)


def _sweep_point(rates: RateChecks, claim: str, what: str, expectation: Expectation,
                 workload: Workload, policy: evidence.Policy
                 ) -> tuple[FioResult, Verdict, list[str]]:
    """One point of a sweep, judged alone at ``policy``. A point the emulator left undecided
    (its seconds fell behind: the host's) is measured again holding the host alone, as a
    plain check is; that run is the point, and the note says so."""
    core, cpus = rates.core, rates.core.session.cpu_count
    result = core.run(workload, monitor=rates._monitor(expectation, workload, "iops", policy))
    point = block_sizes.judge_sweep(claim, what, [(workload.bs, expectation, result, workload)],
                                    policy=policy, cpu_count=cpus)
    if point.outcome is not Outcome.INCONCLUSIVE or point.binding != "emulator":
        return result, point, []
    with core.measuring_alone("the point's first run was the host's: it measures again alone"):
        again = core.run(workload, monitor=rates._monitor(expectation, workload, "iops", policy))
    rates._kept_as_part(result, "host-spoiled")
    note = (f"The {format_size(workload.bs)} point's first run was left undecided by "
            f"{len(result.emulator_behind)} s the emulator fell behind in (this host's): it "
            "was measured again holding the host's measuring lock alone, and that run is the "
            "point.")
    point = block_sizes.judge_sweep(claim, what, [(workload.bs, expectation, again, workload)],
                                    policy=policy, cpu_count=cpus)
    return again, point, [note]
