"""Run-wide state: the volume under test for each suite, its device (real or emulated), fio.

Built once per pytest run from :class:`~pytest_ebsperf.config.settings.Settings`; holds no pytest
objects. Errors are domain exceptions with sentences; the plugin turns them into usage
errors or skips.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.aws.initialization import initialization_read
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.facts import RunFacts, VolumeEntry
from pytest_ebsperf.awsmodel.volume import DEFAULT, Volume
from pytest_ebsperf.config.session_inputs import SessionInputs
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.credits.book import CreditBook
from pytest_ebsperf.device.safety import inspect_on
from pytest_ebsperf.emulate.registry import EmulatedVolumes
from pytest_ebsperf.emulate.target import (
    SuiteMismatch,
    Target,
    given_volume,
    volume_from_settings,
)
from pytest_ebsperf.errors import VolumeSpecError
from pytest_ebsperf.fio.host import FioHost
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.verdicts import evidence

if TYPE_CHECKING:
    from pytest_ebsperf.aws import Discovery
    from pytest_ebsperf.config.session_inputs import ProgressWriter
    from pytest_ebsperf.device.mdraid import MdArray
    from pytest_ebsperf.device.safety import DeviceReport
    from pytest_ebsperf.fio.workload import Workload



@dataclass(frozen=True)
class FoundVolume:
    """A volume AWS described: discovered behind ``--device``, or provisioned for the run.

    ``origin`` says where it came from in messages; ``skip_reason`` is why measuring it now
    would be meaningless (still initializing from its snapshot), else None.
    """

    volume: Volume
    path: str
    origin: str
    skip_reason: str | None = None


@dataclass
class EbsperfSession:
    """Everything the checks of one pytest run share."""

    settings: Settings
    #: What the pytest run gives besides the settings (progress, servers, AWS options...),
    #: read once here: nothing sets a session's fields from outside.
    inputs: SessionInputs = field(default_factory=SessionInputs)
    #: The host fio runs on when it is not the settings' ``--ebsperf-host`` (a fleet host's).
    fio_host: FioHost | None = None
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 1)
    _runner: FioRunner | None = None
    _targets: dict[tuple[Volume, str], Target] = field(default_factory=dict)
    _reports: dict[str, DeviceReport] = field(default_factory=dict)
    #: Why the remote device could not be inspected (no python3 there): writes are refused.
    remote_uninspected: str | None = None
    _written: set[str] = field(default_factory=set)
    #: The notes said once per run (:meth:`first_to_say`).
    _said: set[str] = field(default_factory=set)
    #: The volume(s) under test as plain JSON-friendly data, for reports and result files:
    #: ``volumes`` (per device each fact with its source: given, discovered, default, and
    #: notes), ``discovery`` (status, error, what AWS said), ``initialization`` and
    #: ``provisioning`` (cost, sweep, clean-up) when they apply.
    facts: RunFacts = field(default_factory=lambda: RunFacts())
    #: The instance's EBS-optimized limits from DescribeInstanceTypes; when set, the models
    #: use them instead of the built-in instance table.
    instance_limits: awsmodel.EbsLimits | None = None
    #: The volume under test when AWS described it; None when the options describe it.
    found: FoundVolume | None = None
    #: The fleet host this session measures (testinfra's id, ``ssh://10.0.0.2``); None when
    #: the run has one host.
    host_id: str | None = None
    #: fio servers measured together (--ebsperf-fio-servers), with their settings.
    fio_servers: list[Any] = field(init=False, default_factory=list)
    #: The other devices of a set (--device=A,B,...) as discovery described each; empty when
    #: their facts are taken as the first device's.
    member_volumes: dict[str, Volume] = field(default_factory=dict)
    #: Everything discovery learnt (:class:`pytest_ebsperf.aws.Discovery`), when it ran.
    discovery: Discovery | None = None
    #: Read every block of a volume that is not fully initialized before measuring it.
    initialize: bool = field(init=False, default=False)
    #: What fio measured in that read (B-INIT), once made; judged by the check of a
    #: provisioned initialization rate.
    initialization_result: FioResult | None = field(init=False, default=None)
    #: Keyword arguments for :func:`pytest_ebsperf.aws.discover` (``sysfs_root``, ``dev_root``).
    aws_options: dict[str, Any] = field(init=False, default_factory=dict)
    _credits: CreditBook | None = None
    #: Checks of this run that can FAIL (the false-red budget is split over them): not
    #: those that only record, not those whose suite does not apply; 0: unknown.
    checks_planned: int = field(init=False, default=0)
    #: Where live lines go while fio runs (a terminal line or CI heartbeat); None: nowhere.
    progress: ProgressWriter | None = field(init=False, default=None)
    _emulation: EmulatedVolumes | None = None
    #: The md array ``--device`` names, when it is one (its members are the set).
    md: MdArray | None = None
    #: What AWS said of --reference-device (type, encryption), when discovery ran for it.
    reference_found: Volume | None = None

    def __post_init__(self) -> None:
        given = self.inputs
        self.progress = given.progress
        self.checks_planned = given.checks_planned
        self.fio_servers = list(given.fio_servers)
        self.initialize = given.initialize
        self.aws_options = dict(given.aws_options)

    def settle_checks(self, judged: int) -> None:
        """The checks that can FAIL once preflight knows which suites apply (at least 1)."""
        self.checks_planned = max(1, judged)

    def use_instance_limits(self, limits: awsmodel.EbsLimits) -> None:
        """The instance's EBS-optimized limits as AWS described them (provisioning asks
        DescribeInstanceTypes); the models use them instead of the built-in table."""
        self.instance_limits = limits

    @property
    def policy(self) -> evidence.Policy:
        """How this run weighs evidence: ``--ebsperf-false-alarm`` split over its checks."""

        checks = self.checks_planned or evidence.DEFAULT_CHECKS_PER_RUN
        return evidence.Policy.for_run(self.settings.false_alarm, checks,
                                       self.settings.miss_spell)

    @property
    def credits(self) -> CreditBook:
        """Burst-credit ledgers of the volumes and bucket controllers of emulated devices."""
        if self._credits is None:
            book = CreditBook(self.settings)
            book.configure(bucket_factor=self.settings.emulate_bucket_factor,
                           start_pct=self.settings.emulate_burst_balance,
                           plots=self.inputs.plots, progress=self.inputs.progress)
            self._credits = book
        return self._credits

    # -- fio -----------------------------------------------------------------------------
    @property
    def runner(self) -> FioRunner:
        if self._runner is None:
            host = self.fio_host
            spec = self.settings.host
            if host is None and spec in ("", "local://"):
                host = FioHost()
            elif host is None:
                # testinfra (and its backends): only for a remote --ebsperf-host
                import testinfra

                host = FioHost(testinfra.get_host(spec))
            self._runner = FioRunner(host=host, fio=self.settings.fio,
                                     keep_dir=self.inputs.keep_dir)
        return self._runner

    def device_report(self, path: str) -> DeviceReport:
        """What ``path`` is and holds, on the host fio runs on (inspected once, at preflight;
        writing checks inspect it again right before they write)."""
        if path not in self._reports:

            self._reports[path] = inspect_on(self.runner.host, path)
        return self._reports[path]

    # -- the volume under test -----------------------------------------------------------
    def volume_for(self, suite_type: str | None, emulated: Volume | None = None) -> Volume:
        """The validated volume a suite of ``suite_type`` checks (``emulated``: the volume
        ``--emulate`` makes for it when no volume options are given).

        Raises :class:`SuiteMismatch` when the suite does not apply (its reason is a skip
        reason) and VolumeSpecError when the options describe no valid volume.
        """
        if self.found is not None or self.settings.provision:
            return self._found_for(suite_type)
        if self.fio_servers:  # the first server's volume stands for the suite's workloads
            return volume_from_settings(self.fio_servers[0].settings, suite_type, emulated)
        return volume_from_settings(self.settings, suite_type, emulated)

    def record_given_volume(self) -> None:
        """The volume the options describe, as the volume under test in :attr:`facts`."""
        try:
            volume = self.volume_for(None)  # a volume AWS would not accept stops the run here
        except VolumeSpecError as exc:
            raise VolumeSpecError(f"{exc}{self.discovery_hint()}") from None
        notes = [self.facts["discovery"]["error"]] if "error" in self.facts["discovery"] else []
        self.record_volume(str(self.settings.device), volume, notes)
        for other in self.settings.devices[1:]:
            note = ("a member of the set: facts taken as the first device's "
                    f"({self.settings.device})")
            self.record_volume(other, volume, [note])

    # -- discovery and provisioning (pytest_ebsperf.aws; boto3 only when AWS is asked) ----
    def missing_facts(self) -> tuple[str, ...]:
        """The options whose values discovery would find (``--volume-type``, ...)."""
        s = self.settings
        wanted: dict[str, object] = {"--volume-type": s.volume_type,
                                     "--instance-type": s.instance_type}
        kind = volume_types.known(s.volume_type)
        if kind is None or kind.size_gib is not None:
            wanted["--volume-size"] = s.volume_size
        if kind is None or kind.iops is not None:
            wanted["--volume-iops"] = s.volume_iops
        if kind is None or kind.throughput_mibps is not None:
            wanted["--volume-throughput"] = s.volume_throughput
        return tuple(flag for flag, value in wanted.items() if value is None)

    def given_volume(self) -> Volume:
        """The facts the options give, each marked GIVEN so that discovery keeps them."""
        return given_volume(self.settings)

    def discovery_hint(self) -> str:
        """What discovery said, for a sentence that asks for a fact it could not find."""
        info = self.facts.get("discovery", {})
        if "error" in info:
            return f" Discovery could not tell: {info['error']}"
        return " (Discovery is off: --ebsperf-no-discovery.)" if self.settings.no_discovery else ""

    def record_volume(self, path: str, volume: Volume, notes: Sequence[str] = (), *,
                      emulated: bool | None = None, noswap: bool | None = None,
                      spec: str | None = None) -> None:
        """Add ``volume`` on ``path`` to :attr:`facts` (each fact with where it came from)."""
        entry: VolumeEntry = {"device": path, "label": volume.label(),
                              "facts": volume_facts(volume), "notes": list(notes)}
        if emulated is not None:
            entry["emulated"] = emulated
        if noswap is not None:
            entry["noswap"] = noswap
        if spec is not None:
            entry["spec"] = spec
        self.facts.setdefault("volumes", []).append(entry)

    # -- what discovery and preflight learnt: entered here, never assigned from outside --
    def use_discovery(self, discovery: Discovery, found: FoundVolume) -> None:
        """What AWS said of the device under test, and the volume it makes of it."""
        self.discovery = discovery
        self.use_volume(found)

    def use_reference(self, volume: Volume) -> None:
        """What AWS said of --reference-device (its type and encryption)."""
        self.reference_found = volume

    def use_member(self, path: str, volume: Volume) -> None:
        """A further device of a set, as AWS described it on its own."""
        self.member_volumes[path] = volume

    def use_md(self, array: MdArray) -> None:
        """--device names an md array: its members are the set."""
        self.md = array

    def refuse_writes_uninspected(self, reason: str) -> None:
        """The remote device could not be inspected (``reason``): writes are refused."""
        self.remote_uninspected = reason

    def first_to_say(self, what: str) -> bool:
        """True the first time a note about ``what`` is asked for in this run (a note said
        once per run, then out of the way), False after."""
        if what in self._said:
            return False
        self._said.add(what)
        return True

    def use_volume(self, found: FoundVolume | None) -> None:
        """Make ``found`` the volume under test (None: none); forgets the previous one's
        device state, since a later volume may appear under the same path."""
        if self.found is not None:
            old = self.found.path
            self._reports.pop(old, None)
            self._targets = {k: t for k, t in self._targets.items() if t.path != old}
        self.found = found

    def _found_for(self, suite_type: str | None) -> Volume:
        found = self.found
        if found is None:
            raise SuiteMismatch("no provisioned volume is attached for this check.")
        if suite_type and found.volume.type != suite_type:
            raise SuiteMismatch(f"this suite checks {suite_type} volumes; the volume under "
                                f"test is {found.volume.type} ({found.origin}).")
        if found.skip_reason is not None:
            if not self.initialize or self.facts["initialization"].get("error"):
                raise SuiteMismatch(found.skip_reason)
            self._initialization_read(found)
        return found.volume

    def _initialization_read(self, found: FoundVolume) -> None:
        """AWS's documented read of every block (B-INIT), once, before the first check; what
        fio measured is kept for the check of a provisioned initialization rate."""

        estimate = float(self.facts["initialization"].get("read_estimate_s") or 0.0)
        read_s, problem, result = initialization_read(self.runner, found.path, estimate)
        if problem:
            self.found = replace(found, skip_reason=problem)
            self.facts["initialization"]["error"] = problem
            raise SuiteMismatch(problem)
        self.found = replace(found, skip_reason=None)
        self.facts["initialization"]["read_s"] = round(read_s, 1)
        self.initialization_result = result

    # -- devices -------------------------------------------------------------------------
    def target_for(self, volume: Volume, role: str = "device") -> Target:
        """The device (emulated or given) for ``volume``; ``role`` "reference" for the twin."""
        key = (volume, role)
        if key not in self._targets:
            self._targets[key] = self._make_target(volume, role)
        return self._targets[key]

    def _make_target(self, volume: Volume, role: str) -> Target:
        if self.settings.plan:  # a dry run makes no device and inspects none
            where = (f"emulated-{volume.type}{'-twin' if role != 'device' else ''}"
                     if self.settings.emulate else
                     (self.settings.device if role == "device" else
                      self.settings.reference_device) or f"{role}-device")
            return Target(f"/dev/{where}" if not where.startswith("/") else where, volume,
                          role=role)
        if self.settings.emulate:
            device = self.emulation.start(volume, role)
            return Target(device.path, volume, emulated=device, role=role)
        if role == "device" and self.found is not None:
            found = self.found.path
            return Target(found, volume, report=self.device_report(found), role=role)
        path = self.settings.device if role == "device" else self.settings.reference_device
        if not path:
            raise SuiteMismatch("this check compares two devices: pass "
                                "--reference-device=PATH (e.g. the unencrypted twin).")
        if self.remote_uninspected:
            return Target(path, volume, role=role)
        return Target(path, volume, report=self.device_report(path), role=role)

    # -- sets of volumes measured together (RAID0; the raid0 suite) -----------------------
    @property
    def set_size(self) -> int:
        """Volumes in the set: an md array's members, the devices named, or --volume-count."""
        if self.md is not None:
            return len(self.md.members)
        return self.settings.set_size

    def set_members(self, volume: Volume, count: int) -> list[Volume]:
        """The volumes of a set of ``count``: each member as discovery described it, else
        the first device's facts (given or discovered: a stripe is usually built from alike
        volumes). Members that differ make the set's expectation N x the slowest member."""
        if not self.member_volumes:
            return [volume] * count
        members = [volume] + [self.member_volumes.get(path, volume)
                              for path in self.settings.devices[1:]]
        return members[:count]

    def set_target(self, volume: Volume, count: int) -> Target:
        """The first ``count`` volumes of the set, measured together."""
        if not 1 <= count <= self.set_size:
            raise SuiteMismatch(
                f"this check measures {count} volumes together; the set under test has "
                f"{self.set_size} (--device=A,B,... or --emulate --volume-count=N).")
        key = (volume, f"set{count}")
        if key in self._targets:
            return self._targets[key]
        if self.settings.plan:  # a dry run makes no device
            names = (tuple(f"/dev/emulated-{volume.type}-{n + 1}" for n in range(count))
                     if self.settings.emulate else tuple(self.settings.devices[:count]))
            return Target(names[0], volume, role=f"set{count}", members=names)
        if self.settings.emulate:
            pool = self.emulation.emulated_set(volume)
            members = pool.paths[:count]
            target = Target(members[0], volume, role=f"set{count}", members=members,
                            emulated_set=pool)
        elif self.md is not None and count == len(self.md.members):
            target = Target(self.md.path, volume, report=self.device_report(self.md.path),
                            role=f"set{count}", members=self.md.members, md=self.md)
        else:
            members = (self.md.members if self.md else self.settings.devices)[:count]
            reports = () if self.remote_uninspected else tuple(
                self.device_report(m) for m in members)
            target = Target(members[0], volume, role=f"set{count}", members=members,
                            member_reports=reports)
        self._targets[key] = target
        return target

    def member_target(self, target: Target, member: str) -> Target:
        """One member of a set alone (for naming the slow one)."""
        if target.emulated_set is not None:
            return Target(member, target.volume, role="member", members=(member,),
                          emulated_set=target.emulated_set)
        report = None if self.remote_uninspected else self.device_report(member)
        return Target(member, target.volume, report=report, role="member")

    @property
    def emulation(self) -> EmulatedVolumes:
        """The run's emulated volumes (made as checks need them; rates and pacing)."""
        if self._emulation is None:

            self._emulation = EmulatedVolumes(
                self.settings, host=lambda: self.runner.host, limits=lambda: self.instance_limits,
                credits=lambda: self.credits, record=self.record_volume,
                set_size=lambda: self.set_size)
        return self._emulation

    def emulated_rates(self, volume: Volume, workload: Workload | None = None,
                       exact_io_bytes: int | None = None
                       ) -> tuple[float | None, float | None, int]:
        """Kernel throttle settings that make a device behave like ``volume``
        (:meth:`~pytest_ebsperf.emulate.registry.EmulatedVolumes.rates`)."""
        return self.emulation.rates(volume, workload, exact_io_bytes)

    def pace_set(self, target: Target, workload: Workload | None = None) -> None:
        """Each active member of an emulated set gets its share of the instance's limit."""
        self.emulation.pace_set(target, workload)

    def first_write(self, path: str) -> bool:
        """True the first time a writing check reaches ``path`` (the overwrite is said once)."""
        if path in self._written:
            return False
        self._written.add(path)
        return True

    def close(self) -> None:
        """Remove every emulated device and release held devices; safe to call twice."""
        # Every device is closed whatever became of the one before (a remote host that
        # dropped a connection must not keep the next volume's loop device, mount and
        # cgroup in place); the first error is raised once all were tried.
        errors: list[Exception] = []

        def attempt(close: Callable[[], None]) -> None:
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - raised below, after the others
                errors.append(exc)

        if self._credits is not None:
            attempt(self._credits.close)  # stop the bucket threads before their devices go
        for target in list(self._targets.values()):
            if target.emulated is not None:
                attempt(target.emulated.close)
        if self._emulation is not None:
            attempt(self._emulation.close)
        self._targets.clear()
        if errors:
            raise errors[0]


def volume_facts(volume: Volume) -> dict[str, dict[str, Any]]:
    """Each known fact of ``volume`` with where it came from (``given``, ``discovered``...)."""
    data = volume.as_dict()
    provenance = data.pop("provenance")
    return {name: {"value": value, "source": provenance.get(name, DEFAULT)}
            for name, value in data.items() if value is not None or name in provenance}


def _provisioning() -> list[str]:
    """The volume types whose IOPS are provisioned (gp3, io1, io2)."""
    return [name for name in volume_types.names()
            if volume_types.volume_type(name).iops is not None]


__all__ = ["EbsperfSession", "FoundVolume", "SuiteMismatch", "Target",
           "VolumeSpecError", "volume_facts"]
