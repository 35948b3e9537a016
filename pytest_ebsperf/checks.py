"""The ``ebsperf`` fixture's object: run fio on the volume under test and judge claims.

Suites use only this public API, so they double as examples::

    pytestmark = pytest.mark.ebsperf(volume_type="io1")

    def test_random_read_holds_provisioned_iops(ebsperf):
        '''S0-04: io1 delivers >= 90 % of provisioned IOPS 99.9 % of the time.'''
        ebsperf.check_cap("S0-04", "io1 random read", ebsperf.workload("randread", "16k"))

This is the pytest edge: it turns verdicts into passes, failures (``pytest.fail`` without a
traceback) and skips (inconclusive checks, claims that need ``--ebsperf-destructive``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import pytest

from pytest_ebsperf import models, report, verdict
from pytest_ebsperf.errors import DeviceError, FioError, UnsafeDeviceError, VolumeSpecError
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload, parse_size
from pytest_ebsperf.models.types import Expectation
from pytest_ebsperf.results.records import measurement_facts
from pytest_ebsperf.session import EbsperfSession, SuiteMismatch, Target
from pytest_ebsperf.settings import Settings
from pytest_ebsperf.verdict_types import Outcome, Verdict
from pytest_ebsperf.volume import Volume

ROW_KEY = "ebsperf"
MEASUREMENT_KEY = "ebsperf_measurement"


class Ebsperf:
    """Per-test handle on the volume under test (the ``ebsperf`` fixture)."""

    def __init__(self, session: EbsperfSession, item: pytest.Item, settings: Settings,
                 suite_type: str | None) -> None:
        self.session = session
        self.item = item
        self.settings = settings
        self.suite_type = suite_type
        self._volume: Volume | None = None
        self.verdicts: list[Verdict] = []
        self.notes: list[str] = []
        #: Extra report-row fields (``plot``: the PNG of a time-based check).
        self.row_extras: dict[str, Any] = {}

    # -- what is under test --------------------------------------------------------------
    @property
    def volume(self) -> Volume:
        """The validated :class:`~pytest_ebsperf.volume.Volume` this suite checks."""
        if self._volume is None:
            try:
                self._volume = self.session.volume_for(self.suite_type)
            except SuiteMismatch as exc:
                pytest.skip(str(exc))
            except VolumeSpecError as exc:
                pytest.fail(str(exc), pytrace=False)
        return self._volume

    @property
    def target(self) -> Target:
        """The device the checks run on (emulated or ``--device``)."""
        return self._target("device")

    @property
    def reference(self) -> Target:
        """The twin device (``--reference-device``, or a second emulated volume)."""
        return self._target("reference")

    def _target(self, role: str) -> Target:
        try:
            return self.session.target_for(self.volume, role)
        except SuiteMismatch as exc:
            pytest.skip(str(exc))

    # -- workloads and runs --------------------------------------------------------------
    def workload(self, pattern: str, bs: str | int = "16k", *, rwmixread: int | None = None,
                 **overrides: Any) -> Workload:
        """A fio workload with runtime, ramp and engine from the settings and a queue depth
        chosen (Little's law) so the volume, not fio, is the bottleneck."""
        s = self.settings
        base = Workload(pattern, bs=parse_size(bs, what="block size"), rwmixread=rwmixread,
                        runtime_s=s.runtime_s, ramp_s=s.ramp_s, engine=s.engine,
                        name=self.item.name[:60])
        expected = self._rate_for_queue_depth(base)
        iodepth, numjobs = models.default_queue_depth(self.volume, base, expected,
                                                      cpu_count=self.session.cpu_count)
        tuned = base.replace(iodepth=s.iodepth or iodepth, numjobs=s.numjobs or numjobs)
        return tuned.replace(**overrides) if overrides else tuned

    def _rate_for_queue_depth(self, workload: Workload) -> float:
        if self.volume.type == "instance-store":
            return models.instance_store_rate(self.volume, workload)
        return self.expect_cap("", "", workload).value

    def run(self, workload: Workload, *, target: Target | None = None,
            phase: str = "steady") -> FioResult:
        """Run fio once on ``target`` (default: the device under test) and record it.

        ``phase`` tags the measurement: "steady" runs fill the seed-shaped tables; runs over a
        burst knee ("time-series") and confirmation runs ("probe") are kept out of them.
        """
        target = target or self.target
        self._guard_writes(workload, target)
        if target.emulated is not None:
            if workload.engine == "auto":
                # io_uring submits a direct I/O above 256 KiB as more bios than libaio does
                # (5 instead of 4 for 1 MiB on Linux 6.18), and blk-throttle charges each bio:
                # the emulated volume would count I/O unlike EBS. libaio splits exactly.
                workload = workload.replace(engine="libaio")
            if workload.writes:
                target.emulated.allocate()
            # gp2/st1/sc1: the credit controller's burst or baseline limits for this workload
            self.session.credits.pace(target, workload, self.session.emulated_rates)
            target.emulated.set_mix(workload.read_fraction)
        started = time.perf_counter()
        with self.session.credits.track(target, workload) as booked:  # the credit ledger
            try:
                result = self.session.runner.run(workload, target.path,
                                                 readonly=not workload.writes,
                                                 prefix=target.prefix())
            except (FioError, DeviceError) as exc:  # fio's own words, not a traceback
                pytest.fail(f"{workload.label()} on {target.path}: {exc}", pytrace=False)
            booked(result)
        self._record_measurement(workload, target, result, time.perf_counter() - started,
                                 phase)
        return result

    def _guard_writes(self, workload: Workload, target: Target) -> None:
        if not workload.writes or target.emulated is not None or target.report is None:
            return
        from pytest_ebsperf.safety import check_writable

        try:
            check_writable(target.report, destructive=self.settings.destructive)
        except UnsafeDeviceError as exc:
            if not self.settings.destructive:
                pytest.skip(str(exc))
            pytest.fail(str(exc), pytrace=False)

    # -- expectations --------------------------------------------------------------------
    def expect_cap(self, claim: str, what: str, workload: Workload, *, metric: str = "iops",
                   credits: bool | None = None) -> Expectation:
        """The CAP expectation for ``workload`` on this volume (min of volume and instance
        limits). ``credits`` False means an empty burst bucket (gp2/st1/sc1 baseline)."""
        if credits is None:
            credits = self.volume.burst_balance_pct != 0
        return models.cap_expectation(claim, what, self.volume, workload, credits=credits,
                                      metric=metric, instance_limits=self.session.instance_limits)

    # -- checks --------------------------------------------------------------------------
    def check_cap(self, claim: str, what: str, workload: Workload, *, metric: str = "iops",
                  credits: bool | None = None) -> Verdict:
        """Run ``workload`` and judge it against the documented ceiling (policy CAP)."""
        expectation = self.expect_cap(claim, what, workload, metric=metric, credits=credits)
        if expectation.policy == models.INFO:
            return self.record_info(claim, what, workload, expectation=expectation)
        started = time.perf_counter()
        result = self.run(workload)
        found = verdict.judge_cap(expectation, result, workload, metric=metric,
                                  cpu_count=self.session.cpu_count)
        found = self._confirm_shortfall(found, workload, metric)
        return self.conclude(found, workload, result, started)

    def check_floor(self, claim: str, what: str, workload: Workload) -> Verdict:
        """Run ``workload`` and judge it against a published "at least" figure (FLOOR)."""
        expectation = models.floor_expectation(claim, what, self.volume, workload)
        started = time.perf_counter()
        result = self.run(workload)
        found = verdict.judge_floor(expectation, result, workload,
                                    cpu_count=self.session.cpu_count)
        found = self._confirm_shortfall(found, workload, "iops")
        return self.conclude(found, workload, result, started)

    def _confirm_shortfall(self, found: Verdict, workload: Workload, metric: str) -> Verdict:
        """Before calling a shortfall the volume's fault, run briefly with 4x the queue
        depth: a volume at its limit does not go faster, a starved queue does."""
        if found.outcome is not Outcome.FAIL or found.measured is None or \
                found.expected is None or found.measured >= found.expected:
            return found
        probe = verdict.probe_queue_depth(workload)
        probe_result = self.run(probe, phase="probe")
        return verdict.judge_with_probe(found, workload, probe, probe_result, metric=metric)

    def record_info(self, claim: str, what: str, workload: Workload, *,
                    expectation: Expectation | None = None) -> Verdict:
        """Run ``workload`` and record it without judging (policy INFO)."""
        started = time.perf_counter()
        result = self.run(workload)
        notes = expectation.notes if expectation else ()
        found = verdict.judge_info(claim, what, result, workload, notes=notes)
        return self.conclude(found, workload, result, started)

    def check_rel(self, claim: str, what: str, workload: Workload) -> list[Verdict]:
        """Run ``workload`` on the device and on its reference twin; judge IOPS and median
        latency as relative claims (REL, e.g. S2-17 encryption)."""
        reference = self.reference
        started = time.perf_counter()
        mine = self.run(workload)
        theirs = self.run(workload, target=reference)
        found = verdict.judge_rel_pair(claim, what, self.target.label, mine,
                                       reference.label, theirs)
        return [self.conclude(v, workload, mine, started) for v in found]

    def check_sweep(self, claim: str, what: str, pattern: str, sizes: Sequence[str | int]
                    ) -> Verdict:
        """Run ``pattern`` at each block size; judge the curve against min(IOPS cap,
        throughput cap / bs) — flat, then throughput-bound (seed 002, S2-08/S2-10)."""
        started = time.perf_counter()
        points = []
        for size in sizes:
            workload = self.workload(pattern, size)
            points.append((workload.bs, self.expect_cap(claim, what, workload),
                           self.run(workload)))
        found = verdict.judge_sweep(claim, what, points, cpu_count=self.session.cpu_count)
        return self.conclude(found, self.workload(pattern, sizes[-1]), points[-1][2], started)

    def check_discard(self, claim: str, what: str) -> Verdict:
        """Judge that the device supports TRIM/discard (sysfs ``discard_max_bytes`` > 0)."""
        name = os.path.basename(os.path.realpath(self.target.path))
        path = f"/sys/block/{name}/queue/discard_max_bytes"
        text = self.session.runner.host.read_text(path).strip()
        value = int(text) if text.isdigit() else 0
        found = verdict.judge_discard(claim, what, self.target.path, value)
        return self.conclude_plain(found)

    # -- credit preconditions (gp2, st1, sc1) --------------------------------------------
    def require_burst_credits(self) -> None:
        """Skip unless the burst bucket can carry one check at burst level.

        With ``--burst-balance`` unknown the bucket is assumed full and the report row says
        so; a volume whose baseline reaches its burst level needs no credits.
        """
        volume = self.volume
        if volume.type not in ("gp2", "st1", "sc1"):
            return
        seconds = self.settings.runtime_s + self.settings.ramp_s
        problem = self.session.credits.burst_shortfall(volume, seconds)  # after earlier runs
        if problem:
            pytest.skip(problem)
        if volume.burst_balance_pct is None and models.has_burst(volume):
            self.notes.append("burst balance unknown: assumed a full bucket "
                              "(pass --burst-balance=PERCENT)")

    def require_empty_bucket(self) -> None:
        """Skip a baseline-level check unless the burst bucket is known to be empty."""
        volume = self.volume
        if not models.has_burst(volume) or volume.burst_balance_pct == 0:
            return
        drain = models.drain_seconds(volume)
        pytest.skip(f"this claim needs an empty credit bucket: pass --burst-balance=0 once "
                    f"CloudWatch BurstBalance reads 0 (draining this {volume.label()} at "
                    f"burst takes about {drain:,.0f} s; the credit suite does it with "
                    "--ebsperf-long).")

    # -- burst credits over time (gp2, st1, sc1; pytest_ebsperf.credits) ------------------
    def check_burst_duration(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: run ``workload`` at burst level until the bucket is empty and judge when the
        knee came against balance / (burst - baseline). Skips with the duration when that
        is more than a few minutes, unless ``--ebsperf-long``."""
        return self._credit_check("burst_duration", claim, what, workload)

    def check_baseline_after_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """CAP at the baseline once the bucket is empty (drained first when needed)."""
        return self._credit_check("baseline_after_knee", claim, what, workload)

    def check_refill(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: idle N seconds on an empty bucket; the burst then lasts N x baseline /
        (burst - baseline)."""
        return self._credit_check("refill", claim, what, workload)

    def check_no_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """A volume whose baseline reaches its burst level holds it with no knee."""
        return self._credit_check("no_knee", claim, what, workload)

    def _credit_check(self, name: str, claim: str, what: str, workload: Workload) -> Verdict:
        from pytest_ebsperf.credits.checks import CreditChecks, NotApplicable

        try:
            found: Verdict = getattr(CreditChecks(self), name)(claim, what, workload)
        except NotApplicable as exc:
            pytest.skip(str(exc))
        return found

    # -- outcome -------------------------------------------------------------------------
    def conclude(self, found: Verdict, workload: Workload, result: FioResult,
                 started: float) -> Verdict:
        """Record ``found`` in the report and turn it into the test's outcome."""
        fio_s = getattr(self.session.runner, "last_wall_s", None)
        summary = {"fio_version": result.fio_version, "fio_wall_s": fio_s,
                   "check_wall_s": round(time.perf_counter() - started, 3)}
        return self._finish(found, workload.label(), summary)

    def conclude_plain(self, found: Verdict) -> Verdict:
        """Record and apply a verdict that involved no fio run."""
        return self._finish(found, "-", {})

    def _finish(self, found: Verdict, workload_label: str, summary: dict[str, Any]
                ) -> Verdict:
        self.verdicts.append(found)
        row = report.row_from_verdict(found, volume_label=self.target.label,
                                      workload_label=workload_label, nodeid=self.item.nodeid,
                                      fio_summary=summary)
        if self.notes:
            row["notes"] = list(self.notes)
        row.update(self.row_extras)
        self.item.user_properties.append((ROW_KEY, row))
        self.item.config.hook.pytest_ebsperf_verdict(verdict=found, item=self.item)
        if found.outcome is Outcome.FAIL:
            pytest.fail(found.message, pytrace=False)
        if found.outcome is Outcome.INCONCLUSIVE:
            if self.settings.strict:
                pytest.fail(found.message, pytrace=False)
            pytest.skip(found.message)
        return found

    def _record_measurement(self, workload: Workload, target: Target, result: FioResult,
                            wall_s: float, phase: str = "steady") -> None:
        self.item.user_properties.append((MEASUREMENT_KEY, {
            "phase": phase,
            "volume": target.label, "title": workload.title, "pattern": workload.pattern,
            "bs": workload.bs, "iops": result.total_iops, "bw_bytes": result.total_bw_bytes,
            "workload": workload.label(), "wall_s": round(wall_s, 3),
            "fio_wall_s": getattr(self.session.runner, "last_wall_s", None),
            # series, latency and volume facts for the results file, gate and history
            **measurement_facts(workload, result, target.volume, role=target.role,
                                device=target.path, emulated=target.emulated is not None,
                                nodeid=self.item.nodeid),
        }))
