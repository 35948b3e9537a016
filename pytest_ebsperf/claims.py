"""Run claims without pytest: the :class:`ClaimRunner` measures, stops fio when the verdict
is settled, confirms shortfalls, judges and records.

Given a session (settings, fio runner, volumes and devices), a claim's expectation and a
workload, it runs fio (with the confirmation run and the fail-fast stop), judges, and hands
back the verdict, fio's result and the measurement records. The ``ebsperf`` fixture
(:mod:`pytest_ebsperf.plugin.fixture`) is a runner whose hooks turn verdicts into passes,
failures and skips; scripts and benchmarks use the runner directly::

    runner = ClaimRunner(session, settings, "io1", name="nightly")
    found = runner.check_cap("S0-04", "io1 random read", runner.workload("randread", "16k"))
    print(found.outcome, found.message)

Where a test would be skipped or fail without a verdict, the runner raises
:class:`ClaimSkipped` or :class:`ClaimRefused` with the sentence.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn

from pytest_ebsperf import diagnosis, evidence, models, report, verdict
from pytest_ebsperf.errors import (
    DeviceError,
    EbsperfError,
    FioError,
    UnsafeDeviceError,
    VolumeSpecError,
)
from pytest_ebsperf.fio.live import LiveSeries
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.runner import Monitor
from pytest_ebsperf.fio.workload import Workload, parse_size
from pytest_ebsperf.kernelstat import BlockStat
from pytest_ebsperf.models.types import Expectation
from pytest_ebsperf.results.records import measurement_facts
from pytest_ebsperf.session import EbsperfSession, Target
from pytest_ebsperf.settings import Settings
from pytest_ebsperf.target import SuiteMismatch, volume_from_marker
from pytest_ebsperf.units import MIB, format_quantity
from pytest_ebsperf.verdict_types import Outcome, Verdict
from pytest_ebsperf.volume import Volume

if TYPE_CHECKING:
    from pytest_ebsperf.hold import DeviceHold

#: Seconds a mean-latency check runs at least (unless --ebsperf-runtime is given).
MEAN_LATENCY_MIN_RUNTIME_S = 15.0
#: S3-03 (claims.md): an instance-bound run lies within 0.90-1.05 x the instance's maximum.
INSTANCE_BOUND_HIGH = 1.05


class ClaimSkipped(EbsperfError):
    """The claim does not apply here (another volume type, a write without the opt-in, an
    empty bucket...); ``str`` is the reason."""


class ClaimRefused(EbsperfError):
    """The claim could not be measured (fio refused, an unsafe device, a wrong argument);
    ``str`` is the sentence that says why."""


class ClaimRunner:
    """Measure and judge claims on the volume under test of ``session``.

    ``suite_type`` is the volume type the claims are about (None: the run's own); ``name``
    names the runs (fio job names, progress lines) and ``nodeid`` the records. Subclasses
    adapt the hooks :meth:`skip`, :meth:`refuse`, :meth:`announce`, :meth:`record` and
    :meth:`decided`.
    """

    def __init__(self, session: EbsperfSession, settings: Settings | None = None,
                 suite_type: str | None = None, *, name: str = "ebsperf",
                 nodeid: str | None = None, emulated: dict[str, Any] | None = None) -> None:
        self.session = session
        #: The volume --emulate makes for these claims (a suite's own, e.g. seed 004's
        #: 2,000-IOPS io1 on c1.xlarge); None: the type's default.
        self.emulated_default = None if emulated is None else volume_from_marker(emulated)
        self.settings = settings or session.settings
        self.suite_type = suite_type
        self.name = name
        self.nodeid = nodeid or name
        #: Report rows and measurement records, in the order they were made.
        self.rows: list[dict[str, Any]] = []
        self.measurements: list[dict[str, Any]] = []
        self._volume: Volume | None = None
        self.verdicts: list[Verdict] = []
        self.notes: list[str] = []
        #: Extra report-row fields (``plot``: the PNG of a time-based check).
        self.row_extras: dict[str, Any] = {}
        #: Volumes measured together by this runner's checks (None: the one volume).
        self.set_count: int | None = None
        #: INCONCLUSIVE parts of a check made of parts, decided when it ends.
        self._held: list[Verdict] | None = None

    def over(self, count: int | None = None) -> ClaimRunner:
        """A runner whose checks measure the first ``count`` volumes of the set together
        (default: all of them, ``--volume-count`` or the devices of ``--device=A,B,...``),
        against ``count`` x a member's ceiling, bounded by the instance (S4-04, S2-22).
        Rows, measurements and verdicts go where this runner's go."""
        twin = copy.copy(self)
        twin.set_count = count or self.session.set_size
        twin.notes = []
        twin.row_extras = {"volumes": twin.set_count}  # the sets table and scaling plot
        return twin

    # -- what is under test --------------------------------------------------------------
    @property
    def volume(self) -> Volume:
        """The validated :class:`~pytest_ebsperf.volume.Volume` this suite checks."""
        if self._volume is None:
            try:
                self._volume = self.session.volume_for(self.suite_type,
                                                       self.emulated_default)
            except SuiteMismatch as exc:
                self.skip(str(exc))
            except VolumeSpecError as exc:
                self.refuse(str(exc))
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
            if self.set_count is not None and role == "device":
                return self.session.set_target(self.volume, self.set_count)
            return self.session.target_for(self.volume, role)
        except SuiteMismatch as exc:
            self.skip(str(exc))

    # -- workloads and runs --------------------------------------------------------------
    def workload(self, pattern: str, bs: str | int = "16k", *, rwmixread: int | None = None,
                 **overrides: Any) -> Workload:
        """A fio workload with runtime, ramp and engine from the settings and a queue depth
        chosen (Little's law) so the volume, not fio, is the bottleneck."""
        s = self.settings
        base = Workload(pattern, bs=parse_size(bs, what="block size"), rwmixread=rwmixread,
                        runtime_s=s.runtime_s, ramp_s=s.ramp_s, engine=s.engine,
                        name=self.name[:60])
        expected = self._rate_for_queue_depth(base)
        iodepth, numjobs = models.default_queue_depth(self.volume, base, expected,
                                                      cpu_count=self.session.cpu_count)
        tuned = base.replace(iodepth=s.iodepth or iodepth, numjobs=s.numjobs or numjobs)
        try:
            mine = s.user_fio_options  # --ebsperf-job-file, --ebsperf-fio-options
        except EbsperfError as exc:
            self.refuse(str(exc))
        if mine:
            tuned = tuned.replace(extra=(*mine, *overrides.pop("extra", ())))
        return tuned.replace(**overrides) if overrides else tuned

    def expected_rate(self, workload: Workload) -> float:
        """IOPS the model expects of ``workload`` on the volume under test."""
        return self._rate_for_queue_depth(workload)

    def _rate_for_queue_depth(self, workload: Workload) -> float:
        if self.volume.type == "instance-store":
            return models.instance_store_rate(self.volume, workload)
        return self.expect_cap("", "", workload).value

    def run(self, workload: Workload, *, target: Target | None = None,
            phase: str = "steady", monitor: Monitor | None = None) -> FioResult:
        """Run fio once on ``target`` (default: the device under test) and record it.

        ``phase`` tags the measurement: "steady" runs fill the seed-shaped tables; runs over a
        burst knee ("time-series"), confirmation runs ("probe") and the passes of seed 001's
        write and stability checks ("pass") are kept out of them.
        ``monitor`` sees every second while fio runs and may stop it once the verdict is
        settled (see :meth:`check_cap`); without one the live line still shows progress.
        """
        if self.session.fio_servers:
            self.skip("this check is not available with --ebsperf-fio-servers (fio's client/"
                      "server mode runs the cap and floor checks of every host at once); run "
                      "it over ssh with --hosts.")
        target = target or self.target
        # one load per piece of storage at a time; a write claims the device (and every
        # other name of its data) under that lock, and fio inherits lock and claims
        with self._one_load_at_a_time(target) as lock, contextlib.ExitStack() as holds:
            claims: list[int] = list(lock.fds)
            for member in self._members_alone(target):
                held = self._guard_writes(workload, member)
                if held is not None:
                    holds.callback(held.close)
                    claims += list(held.fds.values())
            result, started, before, nvme_before = self._run_locked(workload, target, monitor,
                                                                    claims)
        seen = self._kernel_seen(target, before, result, workload)
        volume_said = self._ebs_nvme_seen(target, nvme_before, result)
        self._record_measurement(workload, target, result, time.perf_counter() - started,
                                 phase, seen, volume_said)
        return result

    def _run_locked(self, workload: Workload, target: Target, monitor: Monitor | None,
                    claims: list[int]) -> tuple[FioResult, float, Any, Any]:
        """fio on ``target`` with ``claims`` (descriptors of locks and holds) inherited; the
        result, when it started, and the kernel's and the volume's counters before it."""
        if target.emulated is not None:
            workload = target.emulated.prepare(workload)  # the emulator's own needs
            # gp2/st1/sc1: the credit controller's burst or baseline limits for this workload
            self.session.credits.pace(target, workload, self.session.emulated_rates)
        elif target.emulated_set is not None:
            for device in target.emulated_set.members:
                if device.path in target.members:
                    workload = device.prepare(workload)
            self.session.pace_set(target, workload)
        started = time.perf_counter()
        nvme_before = self._ebs_nvme_stats(target)
        before = self._kernel_stat(target)
        from pytest_ebsperf.kernelstat import read_cpu

        cpu_before = read_cpu(self.session.runner.host)
        with self.session.credits.track(target, workload) as booked:  # the credit ledger
            try:
                result = self.session.runner.run(workload, target.fio_filename,
                                                 readonly=not workload.writes,
                                                 prefix=target.prefix(),
                                                 keep_fds=claims,
                                                 monitor=monitor or self._plain_progress(
                                                     workload))
            except (FioError, DeviceError) as exc:  # fio's own words, not a traceback
                self.refuse(f"{workload.label()} on {target.path}: {exc}")
            finally:
                if self.session.progress is not None:
                    self.session.progress.finish()  # end the live line before the outcome
            cpu_after = read_cpu(self.session.runner.host)
            if cpu_before is not None and cpu_after is not None:
                result = replace(result, host_cpu_busy_pct=cpu_after.busy_pct_since(cpu_before))
            booked(result)
        return result, started, before, nvme_before

    def _members_alone(self, target: Target) -> list[Target]:
        """The devices a run writes to: each member of a set driven together, else itself."""
        if not target.members or target.md is not None:
            return [target]
        reports = dict(zip(target.members, target.member_reports))
        return [Target(m, target.volume, emulated=target.emulated, report=reports.get(m),
                       role=target.role, emulated_set=target.emulated_set)
                for m in target.members]

    def _kernel_stat(self, target: Target) -> BlockStat | None:
        from pytest_ebsperf import kernelstat

        if target.members and target.md is None:
            stats = [self._kernel_stat(member) for member in self._members_alone(target)
                     if member.members == ()]
            total: BlockStat | None = None
            for stat in stats:
                if stat is None:
                    return None
                total = stat if total is None else total + stat
            return total
        host = self.session.runner.host
        if host.is_local:
            return kernelstat.read(target.path)
        if target.report is None:
            return None
        return kernelstat.read_on(host, target.report.name)

    def _kernel_seen(self, target: Target, before: BlockStat | None, result: FioResult,
                     workload: Workload | None = None) -> dict[str, float] | None:
        """What the kernel counted on the device during the run (a second witness)."""
        if before is None:
            return None
        from pytest_ebsperf import kernelstat

        after = self._kernel_stat(target)
        if after is None:
            return None
        seen = after - before
        # fio's bytes exclude its ramp; the kernel counts it too, so it never sees less
        fio_bytes = result.read.io_bytes + result.write.io_bytes
        problem = kernelstat.mismatch(seen, fio_bytes, target.path)
        merged = kernelstat.merge_note(seen, workload.bs, target.path) if workload else None
        for said in (problem, merged):
            if said and said not in self.notes:
                self.notes.append(said)
        return seen.facts()

    def _ebs_nvme_stats(self, target: Target) -> Any:
        """The volume's own counters (EBS NVMe log page 0xD0), when it has them."""
        if target.emulated_any or target.members or not self.session.runner.host.is_local:
            return None
        from pytest_ebsperf import ebsnvme

        if not ebsnvme.is_ebs_nvme(target.path):
            if not self.session.ebs_nvme_said:  # said once per run, then out of the way
                self.session.ebs_nvme_said = True
                self.notes.append(f"{target.path} is not an EBS NVMe device: the volume's own "
                                  "statistics (NVMe log page 0xD0) are not available")
            return None
        try:
            return ebsnvme.parse_log_page(ebsnvme.read_log_page(target.path))
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            if not self.session.ebs_nvme_said:
                self.session.ebs_nvme_said = True
                self.notes.append(f"the volume's own statistics of {target.path} could not "
                                  f"be read ({exc})")
            return None

    def _ebs_nvme_seen(self, target: Target, before: Any, result: FioResult
                       ) -> dict[str, int] | None:
        """What the volume itself counted during the run, and which limit it says bound."""
        if before is None:
            return None
        from pytest_ebsperf import ebsnvme

        after = self._ebs_nvme_stats(target)
        if after is None:
            return None
        delta = after - before
        seconds = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
        said = ebsnvme.bound_sentence(delta, seconds)
        if said and said not in self.notes:
            self.notes.append(said)
        facts: dict[str, int] = delta.facts()
        return facts

    def _one_load_at_a_time(self, target: Target) -> Any:
        """A real device is measured by one fio at a time (pytest-xdist workers, other runs):
        two loads at once would each see half the volume."""
        from pytest_ebsperf.devlock import DeviceLock

        if target.emulated_any or not self.session.runner.host.is_local:
            return DeviceLock([])  # the run's own loop devices; a remote host's own runs
        return DeviceLock(sorted({target.path, *target.members}))

    def _guard_writes(self, workload: Workload, target: Target) -> DeviceHold | None:
        """Before every writing workload on a real device, under its lock: inspect it again,
        claim it (and every other name of its data) exclusively until this workload's fio is
        gone, and say once what will be lost. Returns the claim (None: nothing to claim)."""
        if not workload.writes or target.emulated_any:
            return None
        from pytest_ebsperf.hold import hold
        from pytest_ebsperf.safety import check_writable, inspect_on

        host = self.session.runner.host
        try:
            if self.session.remote_uninspected:
                raise UnsafeDeviceError(
                    f"writes to {target.path} on {host} are refused: "
                    f"{self.session.remote_uninspected}")
            # inspected right before each writing workload (a remote device cannot be held:
            # no process of this run lives there)
            report = inspect_on(host, target.path)  # now, not at preflight
            check_writable(report, destructive=self.settings.destructive)
            held = hold(target.path) if host.is_local else None
            note = report.overwrite_note() if self.session.first_write(target.path) else None
            if note:
                where = "" if host.is_local else f" on {host}"
                self.announce(f"ebsperf: {note}{where} (--ebsperf-destructive): its data is "
                               "lost from this write on.")
            return held
        except UnsafeDeviceError as exc:
            if not self.settings.destructive:
                self.skip(str(exc))
            self.refuse(str(exc))
        except DeviceError as exc:
            self.refuse(str(exc))

    # -- hooks (the pytest fixture overrides them) ----------------------------------------
    def skip(self, reason: str) -> NoReturn:
        """The claim does not apply: raise :class:`ClaimSkipped`."""
        raise ClaimSkipped(reason)

    def refuse(self, message: str) -> NoReturn:
        """The claim cannot be measured: raise :class:`ClaimRefused`."""
        raise ClaimRefused(message)

    def announce(self, line: str) -> None:
        """Say one line to the person running (before data is overwritten)."""
        print(line, file=sys.stderr, flush=True)

    def record(self, key: str, value: dict[str, Any]) -> None:
        """Keep a report row (``key`` "row") or a measurement record ("measurement")."""
        (self.rows if key == "row" else self.measurements).append(value)

    def decided(self, found: Verdict) -> Verdict:
        """Called with every recorded verdict; the runner returns it as it is."""
        return found

    # -- expectations --------------------------------------------------------------------
    def expect_cap(self, claim: str, what: str, workload: Workload, *, metric: str = "iops",
                   credits: bool | None = None) -> Expectation:
        """The CAP expectation for ``workload`` on this volume (min of volume and instance
        limits). ``credits`` False means an empty burst bucket (gp2/st1/sc1 baseline)."""
        if credits is None:
            credits = self.volume.burst_balance_pct != 0
        if self.set_count is not None:
            from pytest_ebsperf.models.sets import set_expectation

            members = self.session.set_members(self.volume, self.set_count)
            return set_expectation(claim, what, members, workload, credits=credits,
                                   metric=metric, era=self.settings.era,
                                   instance_limits=self.session.instance_limits)
        return models.cap_expectation(claim, what, self.volume, workload, credits=credits,
                                      metric=metric, instance_limits=self.session.instance_limits,
                                      era=self.settings.era)

    # -- checks --------------------------------------------------------------------------
    def check_cap(self, claim: str, what: str, workload: Workload, *, metric: str = "iops",
                  credits: bool | None = None) -> Verdict:
        """Run ``workload`` and judge it against the documented ceiling (policy CAP).

        The duty cycle is a statistical test (:mod:`pytest_ebsperf.evidence`): fio is stopped
        as soon as the seconds seen settle it either way, so a volume far below its cap
        fails in seconds, not after the whole runtime.
        """
        expectation = self.expect_cap(claim, what, workload, metric=metric, credits=credits)
        return self._check_expectation(expectation, workload, metric, credits)

    def check_instance_bound(self, claim: str, what: str, workload: Workload, *,
                             metric: str = "throughput") -> Verdict:
        """CAP at the instance's EBS-optimized limit, for a volume faster than its instance
        (S3-03: a 6 TiB st1 bursts to 500 MiB/s, a d2.xlarge carries 93.75 MB/s): measured
        within 0.90-1.05 x the instance's maximum. Skipped where the volume itself binds."""
        expectation = self.expect_cap(claim, what, workload, metric=metric)
        binding = expectation.binding
        if binding is None or binding.kind != models.INSTANCE:
            instance = self.volume.instance_type or "an unknown instance type"
            self.skip(f"this claim is about a volume faster than its instance's EBS bandwidth; "
                      f"here {binding.name if binding else 'no limit'} binds, not {instance}'s "
                      "EBS-optimized limit (give --instance-type, or run on a smaller "
                      "instance).")
        expectation = replace(expectation, high=INSTANCE_BOUND_HIGH, notes=(
            *expectation.notes, (f"The instance binds ({binding.name}): within 0.90-"
            f"{INSTANCE_BOUND_HIGH:.2f} x its maximum required, as seed 003 measured 93.6-94.4 "
            "MB/s on a d2.xlarge's 93.75.")))
        return self._check_expectation(expectation, workload, metric, None)

    def _check_expectation(self, expectation: Expectation, workload: Workload, metric: str,
                           credits: bool | None) -> Verdict:
        claim, what = expectation.claim, expectation.what
        if self.session.fio_servers:  # every server at once, each host judged on its own
            from pytest_ebsperf.server_checks import check_on_servers

            return check_on_servers(self, claim, what, workload, metric=metric,
                                    credits=credits)
        if expectation.policy == models.INFO:
            return self.record_info(claim, what, workload, expectation=expectation)
        started = time.perf_counter()
        found, result = self._measure(expectation, workload, metric)
        found, workload, result = self._confirm_shortfall(found, expectation, workload, metric,
                                                          result)
        if self.set_count is not None and found.outcome is not Outcome.PASS and \
                found.measured is not None and found.expected is not None and \
                found.measured < found.expected:
            found = self._name_slow_member(found, workload, metric, credits)
        return self.conclude(found, workload, result, started)

    def _name_slow_member(self, found: Verdict, workload: Workload, metric: str,
                          credits: bool | None) -> Verdict:
        """The set fell short: measure each member alone (read-only) and name the slow one.

        Each member runs the set's pattern as reads at the same block size for a short
        while, against its own ceiling; the lowest share of its ceiling is named."""
        from pytest_ebsperf.models.sets import member_expectation

        target = self.target
        pattern = {"randwrite": "randread", "randrw": "randread", "write": "read",
                   "rw": "read", "readwrite": "read"}.get(workload.pattern, workload.pattern)
        runtime = min(workload.runtime_s, max(3.0, workload.runtime_s / 4))
        solo = copy.copy(self)
        solo.set_count = None  # the queue is sized for one member, not the set
        alone = solo.workload(pattern, workload.bs).replace(runtime_s=runtime)
        if credits is None:
            credits = self.volume.burst_balance_pct != 0
        figures: list[tuple[float, str, float, float]] = []
        members = self.session.set_members(self.volume, len(target.members))
        for path, volume in zip(target.members, members):
            mine = self.session.member_target(target, path)
            expect = member_expectation(found.claim, found.what, volume, alone,
                                        credits=credits, metric="iops",
                                        era=self.settings.era)
            if target.emulated_set is not None:
                target.emulated_set.prepare(alone)
            got = self.run(alone, target=mine, phase="probe")
            share = got.total_iops / expect.value if expect.value else math.nan
            figures.append((share, path, got.total_iops, expect.value))
        figures.sort()
        worst = figures[0]
        said = "; ".join(f"{path} {format_quantity(iops, 'IOPS')} of "
                         f"{format_quantity(cap, 'IOPS')} ({share:.0%})"
                         for share, path, iops, cap in figures)
        if worst[0] < 0.9 and (len(figures) == 1 or figures[1][0] >= 0.9 or
                               worst[0] < figures[1][0] * 0.9):
            named = (f" Measured alone ({alone.label()}): {said}. The slow member is "
                     f"{worst[1]}: {format_quantity(worst[2], 'IOPS')}, {worst[0]:.0%} of its "
                     f"{format_quantity(worst[3], 'IOPS')}; a stripe runs at the pace of its "
                     "slowest member.")
        elif worst[0] < 0.9:
            named = (f" Measured alone ({alone.label()}): {said}. Several members fall short "
                     "of their own ceilings.")
        else:
            named = (f" Measured alone ({alone.label()}): {said}. Every member reaches its "
                     "ceiling alone: the set falls short only together (the instance, the "
                     "host or the stripe's layout).")
        details = {**found.details, "members_alone": [
            {"device": path, "iops": iops, "expected": cap, "share": share}
            for share, path, iops, cap in figures]}
        return replace(found, message=found.message + named, details=details)

    def check_floor(self, claim: str, what: str, workload: Workload) -> Verdict:
        """Run ``workload`` and judge it against a published "at least" figure (FLOOR)."""
        if self.session.fio_servers:
            from pytest_ebsperf.server_checks import check_on_servers

            return check_on_servers(self, claim, what, workload)
        expectation = models.floor_expectation(claim, what, self.volume, workload)
        started = time.perf_counter()
        found, result = self._measure(expectation, workload, "iops")
        found, workload, result = self._confirm_shortfall(found, expectation, workload, "iops",
                                                          result)
        return self.conclude(found, workload, result, started)

    def _measure(self, expectation: Expectation, workload: Workload, metric: str
                 ) -> tuple[Verdict, FioResult]:
        policy = self.session.policy
        result = self.run(workload, monitor=self._monitor(expectation, workload, metric, policy))
        judge = verdict.judge_floor if expectation.policy == models.FLOOR else verdict.judge_cap
        found = judge(expectation, result, workload, metric=metric,
                      cpu_count=self.session.cpu_count, policy=policy)
        if found.details.get("evidence") == evidence.SUSPECT:
            return self._look_again(found, expectation, workload, metric, result)
        return found, result

    def _look_again(self, found: Verdict, expectation: Expectation, workload: Workload,
                    metric: str, result: FioResult, policy: evidence.Policy | None = None
                    ) -> tuple[Verdict, FioResult]:
        """The first look failed in one stretch of the run: pause longer than a spell, look
        again (``LookPlan.looks`` times), and FAIL only when every look misses too;
        otherwise the check's remaining seconds are run and judged by the robust test."""
        policy = policy or self.session.policy
        plan = evidence.plan_looks(int(found.details["planned_samples"]),
                                   1.0 - float(found.details["duty"]), policy.alpha,
                                   policy.spell)
        assert plan is not None and plan.looks > 0
        first = [float(v) for v in found.details["values"]]
        threshold = float(found.details["threshold"])
        window = float(found.details.get("window_s") or 1.0)
        looks: list[tuple[int, int]] = []
        for index in range(plan.looks):
            self.announce(f"{expectation.claim}: {found.details['misses']} of {len(first)} s "
                          f"below {format_quantity(threshold, found.unit)} in one stretch; "
                          f"pausing {plan.gap_s} s (longer than a spell) for look "
                          f"{index + 1} of {plan.looks}")
            time.sleep(plan.gap_s)
            # one second more than judged: fio's last logged window may be cut short
            look = workload.replace(runtime_s=(plan.windows + 1) * window)
            seen = verdict.look_values(expectation, self.run(look, phase="look"), look,
                                       metric=metric)[:plan.windows]
            misses = sum(1 for value in seen if value < threshold)
            looks.append((misses, len(seen)))
            if misses < plan.critical:
                break
        else:
            return verdict.judge_cap(expectation, result, workload, metric=metric,
                                     cpu_count=self.session.cpu_count, policy=policy,
                                     looks=looks), result
        # a spell, not the volume's level: the check's remaining seconds, robust test alone
        remaining = max(0, int(found.details["planned_samples"]) - len(first))
        missed, seconds = looks[-1]
        note = (f"The first {len(first)} s missed {found.details['misses']} times in one "
                f"stretch; after a pause of {plan.gap_s} s a look missed {missed} of {seconds} s "
                f"(fewer than the {plan.critical} that confirm), so the misses were taken as a "
                f"spell and the check went on for its remaining {remaining} s, judged with its "
                f"first seconds by the test for misses in spells of {plan.spell:g} s.")
        said = {"looks": [{"misses": m, "seconds": n} for m, n in looks],
                "first_look": {"misses": found.details["misses"], "seconds": len(first)}}
        if remaining <= 0:
            again = verdict.judge_cap(expectation, result, workload, metric=metric,
                                      cpu_count=self.session.cpu_count, policy=policy,
                                      first_spent=True)
            return replace(again, message=f"{again.message} {note}",
                           details={**again.details, **said}), result
        rest = workload.replace(runtime_s=remaining * window)
        rest_result = self.run(rest, monitor=self._monitor(expectation, rest, metric, policy,
                                                           prior=first, first_spent=True))
        again = verdict.judge_cap(expectation, rest_result, rest, metric=metric,
                                  cpu_count=self.session.cpu_count, policy=policy,
                                  prior=first, first_spent=True)
        return replace(again, message=f"{again.message} {note}",
                       details={**again.details, **said}), rest_result

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
        probe_result = self.run(probe, phase="probe")
        probed = diagnosis.judge_with_probe(found, workload, probe, probe_result, metric=metric)
        if not probed.details.get("probe_reached") or self.settings.iodepth:
            # A queue depth the user chose is not overridden: inconclusive, both figures.
            return probed, workload, result
        deeper = workload.replace(iodepth=probe.iodepth)
        again, again_result = self._measure(expectation, deeper, metric)
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

    def _monitor(self, expectation: Expectation, workload: Workload, metric: str,
                 policy: evidence.Policy, *, prior: Sequence[float] = (),
                 first_spent: bool = False) -> Monitor:
        """Stop fio once the seconds seen settle the verdict (same test as the final one)."""
        key = verdict.METRICS[metric][0]
        low = expectation.low * expectation.value
        high = expectation.high * expectation.value if expectation.high else None
        duty = expectation.duty if expectation.policy == models.CAP else None
        line = self._plain_progress(workload)

        def monitor(series: LiveSeries) -> str | None:
            values = [*prior, *series.values(key)]
            window = statistics.median(series.window_s)
            planned = max(len(values), len(prior) + round(workload.runtime_s / window))
            if line is not None:
                line(series)
            if not expectation.value or not math.isfinite(expectation.value):
                return None
            interval = evidence.mean_interval(values, policy.alpha) if len(values) >= 3 \
                else None
            if high is not None and interval is not None and interval.low > high:
                return (f"the mean of {len(values)} s is above the cap's "
                        f"{format_quantity(high, expectation.unit)} beyond the seconds' noise")
            if high is not None and duty is not None and statistics.fmean(values) > high:
                above_tests = evidence.spell_tests([-v for v in values], -high, duty,
                                                   alpha=policy.alpha, planned=planned,
                                                   spell=policy.spell)
                above = above_tests.test
                if above_tests.state == evidence.FAIL:
                    return (f"{above.misses} of {len(values)} s above the cap's "
                            f"{format_quantity(high, expectation.unit)} settle it")
            if duty is None:
                if interval is not None and interval.high < low:
                    return (f"the mean of {len(values)} s is below "
                            f"{format_quantity(low, expectation.unit)} beyond its noise")
                return None
            tests = evidence.spell_tests(values, low, duty, alpha=policy.alpha,
                                         planned=planned, spell=policy.spell,
                                         first_spent=first_spent)
            test = tests.test
            # One miss beyond the critical count before stopping: the verdict is made on
            # fio's logs, whose last window (cut short by the stop) may not count.
            if tests.state == evidence.FAIL and test.misses > test.critical:
                return (f"{test.misses} of {len(values)} s below "
                        f"{format_quantity(low, expectation.unit)} settle the duty-cycle test")
            if tests.state == evidence.SUSPECT and test.misses > test.critical:
                return (f"{test.misses} of {len(values)} s below "
                        f"{format_quantity(low, expectation.unit)}: a look after a pause "
                        "tells a spell from the volume's level")
            upper_settled = high is None or (interval is not None and interval.high <= high)
            if tests.state == evidence.PASS and upper_settled and len(values) < planned:
                return (f"{test.misses} of {len(values)} s below "
                        f"{format_quantity(low, expectation.unit)}: no remaining second could "
                        "change the verdict")
            return None

        return monitor

    def _plain_progress(self, workload: Workload) -> Monitor | None:
        """A monitor that only shows the live line (the rate every second on a terminal, a
        heartbeat in CI logs)."""
        writer = self.session.progress
        if writer is None:
            return None
        name = self.name[:48]
        key = "total_bw" if workload.bs >= 1024 * 1024 else "total_iops"

        def line(series: LiveSeries) -> str | None:
            values = series.values(key)
            now = values[-1] if values else 0.0
            rate = format_quantity(now, "B/s" if key == "total_bw" else "IOPS")
            writer.update(f"ebsperf {name}: {series.measured_s:,.0f} s of "
                          f"{workload.runtime_s:,.0f} s | {rate} now | "
                          f"{workload.label()}")
            return None

        return line

    def record_info(self, claim: str, what: str, workload: Workload, *,
                    expectation: Expectation | None = None) -> Verdict:
        """Run ``workload`` and record it without judging (policy INFO)."""
        started = time.perf_counter()
        result = self.run(workload)
        notes = expectation.notes if expectation else ()
        found = verdict.judge_info(claim, what, result, workload, notes=notes)
        return self.conclude(found, workload, result, started)

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
        if (iops is None) == (mibps is None):
            self.refuse(f"{claim}: give exactly one of iops= or mibps= (the rate you claim "
                         "for this workload).")
        value = float(iops if iops is not None else (mibps or 0.0) * MIB)
        if not value > 0 or not math.isfinite(value):
            self.refuse(f"{claim}: the claimed rate must be a positive number, got "
                         f"{iops if iops is not None else mibps!r}.")
        if not 0 < share_of_seconds <= 1:
            self.refuse(f"{claim}: share_of_seconds is a fraction of the seconds (0.99 for "
                         f"99 %), got {share_of_seconds!r}.")
        unit, metric = ("IOPS", "iops") if iops is not None else ("B/s", "throughput")
        shown = format_quantity(value, unit)
        per_io = value if iops is not None else value / workload.bs
        limit = models.Limit(f"claimed {shown}", "claim", per_io, claim, source)
        expectation = Expectation(claim, what, models.CAP, value, unit, limit, (limit,),
                                  low=1.0, high=None, duty=share_of_seconds, source=source)
        started = time.perf_counter()
        found, result = self._measure(expectation, workload, metric)
        found, workload, result = self._confirm_shortfall(found, expectation, workload, metric,
                                                          result)
        return self.conclude(found, workload, result, started)

    def check_latency(self, claim: str, what: str, workload: Workload, *,
                      percentile: float = 99.0, below: str | float = "2ms",
                      direction: str | None = None, source: str = "") -> Verdict:
        """Your own latency bound: fio's ``percentile``-th completion latency of ``workload``
        is at most ``below`` ("2ms", "500us"; a number is milliseconds), e.g. "p99 read
        latency stays under 2 ms at QD 4". ``direction`` is "read" or "write" (default: the
        workload's main one). See :mod:`pytest_ebsperf.latency` for the test."""
        from pytest_ebsperf import latency

        try:
            bound_ns = latency.parse_duration_ns(below)
            ladder = latency.percentile_list(percentile)
        except EbsperfError as exc:
            self.refuse(f"{claim}: {exc}")
        extra = tuple((k, v) for k, v in workload.extra if k != "percentile_list")
        workload = workload.replace(extra=(*extra, ("percentile_list", ladder)))
        started = time.perf_counter()
        result = self.run(workload)
        found = latency.judge_latency(claim, what, result, workload, percentile=percentile,
                                      bound_ns=bound_ns, direction=direction,
                                      alpha=self.session.policy.alpha, source=source)
        return self.conclude(found, workload, result, started)

    def check_mean_latency(self, claim: str, what: str, workload: Workload, *,
                           below: str | float, direction: str | None = None,
                           source: str = "") -> Verdict:
        """The average completion latency of ``workload`` is under ``below`` ("500us"; a
        number is milliseconds), judged on fio's per-second means (e.g. io2's "< 500 µs
        average for 16 KiB I/O", B-IO2)."""
        from pytest_ebsperf import latency

        try:
            bound_ns = latency.parse_duration_ns(below)
        except EbsperfError as exc:
            self.refuse(f"{claim}: {exc}")
        if not self.settings.given("runtime"):
            # the interval of a mean of per-second means needs seconds: at the run's
            # false-alarm level 5 of them left 77 us - 0.55 ms around a 0.31 ms mean when one
            # second was slow; 15 narrow it to a few percent
            workload = workload.replace(runtime_s=max(workload.runtime_s,
                                                      MEAN_LATENCY_MIN_RUNTIME_S))
        started = time.perf_counter()
        result = self.run(workload)
        found = latency.judge_mean_latency(claim, what, result, workload, bound_ns=bound_ns,
                                           direction=direction,
                                           alpha=self.session.policy.alpha, source=source)
        return self.conclude(found, workload, result, started)

    def check_rel(self, claim: str, what: str, workload: Workload) -> list[Verdict]:
        """Run ``workload`` on the device and on its reference twin; judge IOPS and median
        latency as relative claims (REL): the twins give the same (see
        :mod:`pytest_ebsperf.rel_checks`)."""
        from pytest_ebsperf import rel_checks

        return rel_checks.check_same(self, claim, what, workload)

    def check_encrypted_twin(self, claim: str, what: str, workload: Workload
                             ) -> list[Verdict]:
        """S2-17: :meth:`check_rel` on an encrypted volume and its plain twin, once the
        facts say which is which (given or discovered; emulated twins are marked).
        INCONCLUSIVE before any fio run when nothing says which twin is encrypted."""
        from pytest_ebsperf import rel_checks

        return rel_checks.check_encrypted_twin(self, claim, what, workload)

    def check_faster_than(self, claim: str, what: str, workload: Workload, *,
                          reference_type: str, at_least: float, notes: Sequence[str] = ()
                          ) -> Verdict:
        """REL "at least": ``workload`` runs at least ``at_least`` x as fast on the device as
        on a ``reference_type`` twin (S0-08: gp2 vs Magnetic, 3 x)."""
        from pytest_ebsperf import rel_checks

        return rel_checks.check_faster_than(self, claim, what, workload,
                                            reference_type=reference_type,
                                            at_least=at_least, notes=notes)

    def check_sweep(self, claim: str, what: str, pattern: str, sizes: Sequence[str | int]
                    ) -> Verdict:
        """Run ``pattern`` at each block size; judge the curve against min(IOPS cap,
        throughput cap / bs) — flat, then throughput-bound (seed 002, S2-08/S2-10).

        Each point stops as soon as its seconds settle it; the sweep stops at the first point
        that is off the model beyond its noise (one such point fails the curve)."""
        chosen = self.settings.sweep_sizes_bytes  # --ebsperf-sweep-sizes
        if chosen:
            sizes = chosen
        started = time.perf_counter()
        policy = self.session.policy
        point_policy = policy.split(len(sizes))
        points = []
        decided: dict[int, str] = {}  # block size -> its looks' verdict (misses in spells)
        for size in sizes:
            workload = self.workload(pattern, size)
            expectation = self.expect_cap(claim, what, workload)
            result = self.run(workload, monitor=self._monitor(expectation, workload, "iops",
                                                              point_policy))
            alone = verdict.judge_cap(expectation, result, workload, metric="iops",
                                      cpu_count=self.session.cpu_count, policy=point_policy)
            if alone.details.get("evidence") == evidence.SUSPECT:
                looked, result = self._look_again(alone, expectation, workload, "iops",
                                                  result, point_policy)
                decided[workload.bs] = looked.details.get("evidence", evidence.OPEN)
                if looked.outcome is Outcome.FAIL:
                    decided[workload.bs] = evidence.FAIL
            points.append((workload.bs, expectation, result, workload))
            if not verdict.judge_sweep(claim, what, [points[-1]], policy=point_policy,
                                       cpu_count=self.session.cpu_count,
                                       decided=decided).outcome is Outcome.PASS:
                break  # one point off the model (or not judgeable) decides the sweep
        found = verdict.judge_sweep(claim, what, points, cpu_count=self.session.cpu_count,
                                    policy=policy, planned_points=len(sizes), decided=decided)
        if len(points) < len(sizes):
            skipped = ", ".join(str(size) for size in sizes[len(points):])
            found = replace(found, message=f"{found.message} The sweep stopped there; "
                            f"{skipped} not measured.")
        return self.conclude(found, points[-1][3], points[-1][2], started)

    # -- several passes over the device (seed 001) ------------------------------------
    def check_first_write(self, claim: str, what: str, workload: Workload) -> Verdict:
        """First writes into a TRIMmed region run at >= 0.90 x second writes (S1-03); see
        :mod:`pytest_ebsperf.pass_checks`."""
        from pytest_ebsperf import pass_checks

        return pass_checks.check_first_write(self, claim, what, workload)

    def check_write_after_trim(self, claim: str, what: str, workload: Workload, *,
                               prewarm_claim: str = "") -> list[Verdict]:
        """Fill the device (its rate recorded under ``prewarm_claim``), measure, TRIM,
        measure: after-TRIM >= 0.90 x full (S1-08, S1-04)."""
        from pytest_ebsperf import pass_checks

        return pass_checks.check_write_after_trim(self, claim, what, workload,
                                                  prewarm_claim=prewarm_claim)

    def check_stability(self, claim: str, what: str, workload: Workload) -> Verdict:
        """--ebsperf-runs runs, the first dropped, CV of their means <= 10 % (S1-09)."""
        from pytest_ebsperf import pass_checks

        return pass_checks.check_stability(self, claim, what, workload)

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
            self.skip(problem)
        if volume.burst_balance_pct is None and models.has_burst(volume):
            self.notes.append("burst balance unknown: assumed a full bucket "
                              "(pass --burst-balance=PERCENT)")

    def require_empty_bucket(self) -> None:
        """Skip a baseline-level check unless the burst bucket is known to be empty."""
        volume = self.volume
        if not models.has_burst(volume) or volume.burst_balance_pct == 0:
            return
        drain = models.drain_seconds(volume)
        self.skip(f"this claim needs an empty credit bucket: pass --burst-balance=0 once "
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
            self.skip(str(exc))
        return found

    # -- outcome -------------------------------------------------------------------------
    def conclude(self, found: Verdict, workload: Workload, result: FioResult,
                 started: float) -> Verdict:
        """Record ``found`` in the report and turn it into the test's outcome."""
        fio_s = getattr(self.session.runner, "last_wall_s", None)
        measured_s = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
        summary = {"fio_version": result.fio_version, "fio_wall_s": fio_s,
                   "check_wall_s": round(time.perf_counter() - started, 3),
                   "measured_s": round(measured_s, 3), "planned_s": workload.runtime_s,
                   "stopped_early": bool(result.stop_reason),
                   "stop_reason": result.stop_reason or "ran its whole runtime",
                   "host_cpu_busy_pct": None if result.host_cpu_busy_pct is None
                   else round(result.host_cpu_busy_pct, 1),
                   **_latency_percentiles(result, workload)}
        return self._finish(found, workload.label(), summary)

    def conclude_plain(self, found: Verdict) -> Verdict:
        """Record and apply a verdict that involved no fio run."""
        return self._finish(found, "-", {})

    @contextlib.contextmanager
    def as_one_check(self) -> Iterator[None]:
        """The parts of one check (a REL check's rate and latency terms) are all measured
        when one cannot decide: an INCONCLUSIVE part is decided when the check ends, after
        the others (a FAIL still ends the check at once)."""
        outer, self._held = self._held, []
        try:
            yield
            held = self._held
        finally:
            self._held = outer
        for found in held:
            self.decided(found)

    def _finish(self, found: Verdict, workload_label: str, summary: dict[str, Any]
                ) -> Verdict:
        self.verdicts.append(found)
        row = report.row_from_verdict(found, volume_label=self.target.label,
                                      workload_label=workload_label, nodeid=self.nodeid,
                                      fio_summary=summary)
        if self.notes:
            row["notes"] = list(self.notes)
        if self.session.host_id:
            row["host"] = self.session.host_id
        row.update(self.row_extras)
        self.record("row", row)
        if self._held is not None and found.outcome is Outcome.INCONCLUSIVE:
            self._held.append(found)
            return found
        return self.decided(found)

    def _record_measurement(self, workload: Workload, target: Target, result: FioResult,
                            wall_s: float, phase: str = "steady",
                            kernel: dict[str, float] | None = None,
                            volume_said: dict[str, int] | None = None) -> None:
        self.record("measurement", {
            "phase": phase,
            **({"host": self.session.host_id} if self.session.host_id else {}),
            "volume": target.label,
            "title": workload.title, "pattern": workload.pattern,
            "volumes": len(target.members) if target.members else None,  # a set's size
            "bs": workload.bs, "iops": result.total_iops, "bw_bytes": result.total_bw_bytes,
            "workload": workload.label(), "wall_s": round(wall_s, 3),
            "fio_wall_s": getattr(self.session.runner, "last_wall_s", None),
            "kernel": kernel,
            # the EBS volume's own counters over the run (NVMe log page 0xD0), if it has them
            "ebs_nvme": volume_said,
            # the job's own options beyond what the check builds (yours included)
            "fio_options": [f"{k}={v}" if v != "" else k for k, v in workload.extra],
            # series, latency and volume facts for the results file, gate and history
            **measurement_facts(workload, result, target.volume, role=target.role,
                                device=" + ".join(target.members) if target.members
                                else target.path, emulated=target.emulated_any,
                                nodeid=self.nodeid),
        })


def _latency_percentiles(result: FioResult, workload: Workload) -> dict[str, float | None]:
    """p50/p99/p99.9 completion latency (ns) of the workload's main direction."""
    stats = result.mixed if result.mixed.total_ios else (
        result.read if workload.read_fraction >= 0.5 else result.write)
    return {f"clat_p{label}_ns": stats.clat.p(q)
            for label, q in (("50", 50.0), ("99", 99.0), ("99.9", 99.9))}
