"""The core every check family stands on (:class:`CheckCore`): the volume under test and its
devices, workloads, one fio run (locks, write claims, the kernel's and the volume's own
counters, the live line), expectations, the hooks a caller adapts, and how a verdict is
concluded and recorded. Families of checks (:mod:`pytest_ebsperf.checks.rates`, ``sets``,
``passes``, ``time``, ``relative``, ``servers``) build on it; :class:`pytest_ebsperf.checks.claim_runner.
ClaimRunner` is all of them together.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.stripes import set_expectation
from pytest_ebsperf.awsmodel.types import Expectation
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.checks.witnesses import Witnesses, members_alone
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.device.hold import hold
from pytest_ebsperf.device.kernelstat import CpuTimes, read_cpu
from pytest_ebsperf.device.lock import (
    DeviceLock,
    held_from_first_measurement,
    hold_now,
    measuring,
)
from pytest_ebsperf.device.safety import check_writable, inspect_on
from pytest_ebsperf.emulate.target import SuiteMismatch, Target, volume_from_marker
from pytest_ebsperf.errors import (
    DeviceError,
    EbsperfError,
    FioError,
    UnsafeDeviceError,
    VolumeSpecError,
)
from pytest_ebsperf.fio.kept import keep_part, keep_verdict
from pytest_ebsperf.fio.live import LiveSeries
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.runner import Monitor
from pytest_ebsperf.fio.workload import Workload, parse_size
from pytest_ebsperf.results import report
from pytest_ebsperf.results.records import measurement_facts
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict
from pytest_ebsperf.verdicts.run_bounds import held_back

if TYPE_CHECKING:
    from pytest_ebsperf.device.hold import DeviceHold



#: What a check would run first (:meth:`~pytest_ebsperf.checks.claim_runner.Check.first_run`):
#: a workload and the target it would run on, or the sentence saying why it runs no fio.
FirstRun = tuple[Workload, Target] | str


class ClaimSkipped(EbsperfError):
    """The claim does not apply here (another volume type, a write without the opt-in, an
    empty bucket...); ``str`` is the reason."""


class ClaimRefused(EbsperfError):
    """The claim could not be measured (fio refused, an unsafe device, a wrong argument);
    ``str`` is the sentence that says why."""


class CheckCore:
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
        self.emulated_default = (None if emulated is None
                                 else volume_from_marker(emulated, suite_type))
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
        #: The kernel's and the volume's own counts of each run, beside fio's.
        self.witnesses = Witnesses(session, self.notes)
        #: Extra report-row fields (``plot``: the PNG of a time-based check).
        self.row_extras: dict[str, Any] = {}
        #: Volumes measured together by this runner's checks (None: the one volume).
        self.set_count: int | None = None
        #: INCONCLUSIVE parts of a check made of parts, decided when it ends.
        self._held: list[Verdict] | None = None

    # -- what is under test --------------------------------------------------------------
    @property
    def volume(self) -> Volume:
        """The validated :class:`~pytest_ebsperf.awsmodel.volume.Volume` this suite checks."""
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
        if self.settings.emulate and awsmodel.has_burst(self.volume):
            hold_now()  # before its bucket is born: a wait then lets it earn unplanned credit
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
        tuned = awsmodel.plan_queue(self.volume, base, self.expected_rate(base),
                                cpu_count=self.session.cpu_count, iodepth=s.iodepth,
                                numjobs=s.numjobs)
        try:
            mine = s.user_fio_options  # --ebsperf-job-file, --ebsperf-fio-options
        except EbsperfError as exc:
            self.refuse(str(exc))
        if mine:
            tuned = tuned.replace(extra=(*mine, *overrides.pop("extra", ())))
        return tuned.replace(**overrides) if overrides else tuned

    def expected_rate(self, workload: Workload) -> float:
        """IOPS the model expects of ``workload`` on the volume under test (of the set, when
        a set is measured)."""
        credits = self.volume.credits_assumed
        if self.set_count is not None:
            return self.expect_cap("", "", workload, credits=credits).value
        return awsmodel.expected_iops(self.volume, workload, credits=credits, era=self.settings.era,
                                  instance_limits=self.session.instance_limits)

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
        # a dry run asks each check what it would run (Check.first_run) and runs none of it
        if self.settings.plan:  # never stripped, unlike an assert under python -O
            self.refuse("a dry run starts no fio: this check was run, not asked what it "
                        "would run (Check.first_run)")
        # one load per piece of storage at a time; a write claims the device (and its other
        # names) under that lock, fio inherits both; the host's measuring lock is shared
        # (held alone: :meth:`measuring_alone`, :attr:`Target.measures_alone`)
        with self._measuring(alone=target.measures_alone), \
                self._one_load_at_a_time(target) as lock, \
                contextlib.ExitStack() as holds:
            claims: list[int] = list(lock.fds)
            for member in members_alone(target):
                held = self._guard_writes(workload, member)
                if held is not None:
                    holds.callback(held.close)
                    claims += list(held.fds.values())
            result, started, before, nvme_before = self._run_locked(workload, target, monitor,
                                                                    claims)
        result, seen = self.witnesses.kernel_seen(target, before, result, workload)
        volume_said = self.witnesses.volume_seen(target, nvme_before, result)
        self._record_measurement(workload, target, result, time.perf_counter() - started,
                                 phase, seen, volume_said)
        if phase != "steady" and result.kept_as:
            keep_part(Path(result.kept_as), check=self.nodeid, phase=phase)
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
        nvme_before = self.witnesses.volume_counts(target)
        before = self.witnesses.kernel_counts(target)

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
            result = _with_host_cpu(result, cpu_before, read_cpu(self.session.runner.host))
            if target.emulated_any:  # its device is this host's own work
                result = replace(result, fio_wait_share=None)
            booked(result)
        result = self.witnesses.emulator_seen(target, workload, result, self.volume.type)
        return result, started, before, nvme_before

    def _measuring(self, *, alone: bool = False) -> Any:
        """The host-wide measuring lock (:func:`pytest_ebsperf.device.lock.measuring`), where
        fio runs on this host."""

        if not self.session.runner.host.is_local:
            return contextlib.nullcontext(False)
        # a burst check keeps its hold to its end (its bucket earns while it waits, which its
        # plan cannot know); others per run: a comparison waits for a run, not a check
        return measuring(alone=alone, whole_check=awsmodel.has_burst(self.volume))

    def measuring_shared(self) -> Any:
        """A check measures beside other measuring workers; one on a volume with a burst
        bucket from its first measurement to its end (a comparison waits for it to end; a
        check that first idles waits for no comparison meanwhile; an emulated one takes it
        before its bucket is born: an empty gp2 bucket that earned while its check waited
        for a comparison ran 3 s at 2,724 IOPS against its 300 IOPS baseline), others run
        by run (:meth:`_measuring`)."""
        if not self.session.runner.host.is_local:
            return contextlib.nullcontext()
        return held_from_first_measurement()

    @contextlib.contextmanager
    def measuring_alone(self, why: str = "a comparison measures alone") -> Iterator[None]:
        """Hold the host alone for the block (a comparison on real devices, a run measured
        again, a latency claim: ``why``, said when it waited): no other worker's fio beside."""
        with self._measuring(alone=True) as waited:
            if waited:
                self.announce(f"{self.name}: waited for the other measuring workers to finish "
                              f"their runs ({why})")
            yield

    def _one_load_at_a_time(self, target: Target) -> Any:
        """A real device is measured by one fio at a time (pytest-xdist workers, other runs):
        two loads at once would each see half the volume."""

        if target.emulated_any or not self.session.runner.host.is_local:
            return DeviceLock([])  # the run's own loop devices; a remote host's own runs
        return DeviceLock(sorted({target.path, *target.members}))

    def _guard_writes(self, workload: Workload, target: Target) -> DeviceHold | None:
        """Before every writing workload on a real device, under its lock: inspect it again,
        claim it (and every other name of its data) exclusively until this workload's fio is
        gone, and say once what will be lost. Returns the claim (None: nothing to claim)."""
        if not workload.writes or target.emulated_any:
            return None

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
            credits = self.volume.credits_assumed
        if self.set_count is not None:

            members = self.session.set_members(self.volume, self.set_count)
            return set_expectation(claim, what, members, workload, credits=credits,
                                   metric=metric, era=self.settings.era,
                                   instance_limits=self.session.instance_limits)
        return awsmodel.cap_expectation(claim, what, self.volume, workload, credits=credits,
                                      metric=metric, instance_limits=self.session.instance_limits,
                                      era=self.settings.era)

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

    # -- outcome -------------------------------------------------------------------------
    def conclude(self, found: Verdict, workload: Workload, result: FioResult,
                 started: float) -> Verdict:
        """Record ``found`` in the report and turn it into the test's outcome (a shortfall
        your fio options held the run to is not the volume's: judge's rule, ``held_back``)."""
        found = held_back(found, result.job_options, workload)
        fio_s = getattr(self.session.runner, "last_wall_s", None)
        measured_s = max(result.read.runtime_ms, result.write.runtime_ms) / 1000.0
        summary = {"fio_version": result.fio_version, "fio_wall_s": fio_s,
                   "check_wall_s": round(time.perf_counter() - started, 3),
                   "measured_s": round(measured_s, 3), "planned_s": workload.runtime_s,
                   "stopped_early": bool(result.stop_reason),
                   "stop_reason": result.stop_reason or "ran its whole runtime",
                   "host_cpu_busy_pct": _tenths(result.host_cpu_busy_pct),
                   "host_cpu_steal_pct": _tenths(result.host_cpu_steal_pct),
                   "fio_wait_share": result.fio_wait_share,
                   **_latency_percentiles(result, workload)}
        keep_verdict(Path(result.kept_as) if result.kept_as else None, claim=found.claim,
                     policy=found.policy, outcome=found.outcome.value,
                     measured=found.measured, expected=found.expected, unit=found.unit,
                     planned_s=workload.runtime_s, stop_reason=result.stop_reason,
                     details=dict(found.details), level=self.session.policy,
                     check=self.nodeid, what=found.what, volume=self._volume_facts(),
                     binding=found.binding, result=result)
        return self._finish(found, workload.label(), summary)

    def _volume_facts(self) -> dict[str, Any]:
        """The volume judged, as a kept verdict records it (judge reads it back)."""
        v = self.volume
        return {"type": v.type, "size_gib": v.size_gib, "iops": v.iops,
                "throughput_mibps": v.throughput_mibps, "instance_type": v.instance_type,
                "burst_balance_pct": v.burst_balance_pct, "count": self.set_count or 1}

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



def _with_host_cpu(result: FioResult, before: CpuTimes | None,
                   after: CpuTimes | None) -> FioResult:
    """``result`` with the host's CPU time while fio ran: the share busy and, part of it, the
    share the hypervisor took (steal)."""
    if before is None or after is None:
        return result
    return replace(result, host_cpu_busy_pct=after.busy_pct_since(before),
                   host_cpu_steal_pct=after.steal_pct_since(before))


def _tenths(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _latency_percentiles(result: FioResult, workload: Workload) -> dict[str, float | None]:
    """p50/p99/p99.9 completion latency (ns) of the workload's main direction."""
    stats = result.mixed if result.mixed.total_ios else (
        result.read if workload.read_fraction >= 0.5 else result.write)
    return {f"clat_p{label}_ns": stats.clat.p(q)
            for label, q in (("50", 50.0), ("99", 99.0), ("99.9", 99.9))}
