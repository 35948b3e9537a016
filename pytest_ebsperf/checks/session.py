"""Run-wide state: the volume under test for each suite, its device (real or emulated), fio.

A value built once per pytest run from :class:`~pytest_ebsperf.config.settings.Settings` and
what discovery and preflight return (each derives a session that knows more; nothing assigns
one); what it holds while it measures is :mod:`pytest_ebsperf.checks.resources`. It holds no
pytest objects. Errors are domain exceptions with sentences; the plugin turns them into usage
errors or skips.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.aws.initialization import initialization_read
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.facts import RunFacts, VolumeEntry
from pytest_ebsperf.awsmodel.volume import DEFAULT, Volume
from pytest_ebsperf.checks.resources import SessionResources
from pytest_ebsperf.config.session_inputs import ProgressWriter, SessionInputs
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.credits.book import CreditBook
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


@dataclass(frozen=True, eq=False)
class EbsperfSession:
    """Everything the checks of one pytest run share: a value built once from the settings and
    what discovery and preflight found (each returns a session :meth:`knowing` more), never
    assigned. The devices, fio runner and record it holds are :attr:`resources`, shared by
    every session derived from the first."""

    settings: Settings
    #: What the pytest run gives besides the settings (progress, servers, AWS options...).
    inputs: SessionInputs = field(default_factory=SessionInputs)
    #: The host fio runs on when it is not the settings' ``--ebsperf-host`` (a fleet host's).
    fio_host: FioHost | None = None
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 1)
    #: The fleet host this session measures (testinfra's id, ``ssh://10.0.0.2``); None when
    #: the run has one host.
    host_id: str | None = None
    #: Why the remote device could not be inspected (no python3 there): writes are refused.
    remote_uninspected: str | None = None
    #: The instance's EBS-optimized limits from DescribeInstanceTypes; when set, the models
    #: use them instead of the built-in instance table.
    instance_limits: awsmodel.EbsLimits | None = None
    #: The volume under test when AWS described it; None when the options describe it.
    found: FoundVolume | None = None
    #: The other devices of a set (--device=A,B,...) as discovery described each; empty when
    #: their facts are taken as the first device's.
    member_volumes: Mapping[str, Volume] = field(default_factory=dict)
    #: Everything discovery learnt (:class:`pytest_ebsperf.aws.Discovery`), when it ran.
    discovery: Discovery | None = None
    #: The md array ``--device`` names, when it is one (its members are the set).
    md: MdArray | None = None
    #: What AWS said of --reference-device (type, encryption), when discovery ran for it.
    reference_found: Volume | None = None
    #: Checks of this run that can FAIL once preflight knows which suites apply; 0: as
    #: collected (:attr:`checks_planned`).
    checks_judged: int = 0
    _held: SessionResources | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self._held is None:  # the first session of a run: its resources start here
            object.__setattr__(self, "_held", SessionResources(self.settings, self.inputs,
                                                               self.fio_host))

    def knowing(self, **learnt: Any) -> EbsperfSession:
        """This session with what discovery, preflight or AWS learnt (the fields named),
        holding the same resources."""
        return replace(self, **learnt)

    def settle_checks(self, judged: int) -> EbsperfSession:
        """The checks that can FAIL once preflight knows which suites apply (at least 1)."""
        return self.knowing(checks_judged=max(1, judged))

    def with_volume(self, found: FoundVolume | None) -> EbsperfSession:
        """``found`` as the volume under test (None: none); forgets the previous one's
        device state, since a later volume may appear under the same path."""
        if self.found is not None:
            self.resources.forget(self.found.path)
        if found is not None:
            self.resources.forget(found.path)
        return self.knowing(found=found)

    # -- what the run gives and holds ----------------------------------------------------
    @property
    def resources(self) -> SessionResources:
        """The fio runner, devices, notes said and record this session shares."""
        assert self._held is not None  # made in __post_init__
        return self._held

    @property
    def facts(self) -> RunFacts:
        """The run's record of its volumes (:attr:`SessionResources.facts`)."""
        return self.resources.facts

    @property
    def progress(self) -> ProgressWriter | None:
        """Where live lines go while fio runs (a terminal line or CI heartbeat)."""
        return self.inputs.progress

    @property
    def fio_servers(self) -> list[Any]:
        """fio servers measured together (--ebsperf-fio-servers), with their settings."""
        return self.inputs.fio_servers

    @property
    def initialize(self) -> bool:
        """Read every block of a volume that is not fully initialized before measuring it."""
        return self.inputs.initialize

    @property
    def aws_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`pytest_ebsperf.aws.discover` (``sysfs_root``...)."""
        return self.inputs.aws_options

    @property
    def checks_planned(self) -> int:
        """Checks of this run that can FAIL (the false-red budget is split over them): not
        those that only record, not those whose suite does not apply; 0: unknown."""
        return self.checks_judged or self.inputs.checks_planned

    @property
    def initialization_result(self) -> FioResult | None:
        """What fio measured in the initialization read (B-INIT), once made."""
        return self.resources.initialization_result

    @property
    def policy(self) -> evidence.Policy:
        """How this run weighs evidence: ``--ebsperf-false-alarm`` split over its checks."""

        checks = self.checks_planned or evidence.DEFAULT_CHECKS_PER_RUN
        return evidence.Policy.for_run(self.settings.false_alarm, checks,
                                       self.settings.miss_spell)

    @property
    def credits(self) -> CreditBook:
        """Burst-credit ledgers of the volumes and bucket controllers of emulated devices."""
        held = self.resources
        if held.credits is None:
            book = CreditBook(self.settings)
            book.configure(bucket_factor=self.settings.emulate_bucket_factor,
                           start_pct=self.settings.emulate_burst_balance,
                           plots=self.inputs.plots, progress=self.inputs.progress)
            held.credits = book
        return held.credits

    @property
    def runner(self) -> FioRunner:
        return self.resources.runner

    def device_report(self, path: str) -> DeviceReport:
        """What ``path`` is and holds, on the host fio runs on (inspected once, at preflight;
        writing checks inspect it again right before they write)."""
        return self.resources.device_report(path)

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

    def first_to_say(self, what: str) -> bool:
        """True the first time a note about ``what`` is asked for in this run (a note said
        once per run, then out of the way), False after."""
        return self.resources.first(self.resources.said, what)

    def _found_for(self, suite_type: str | None) -> Volume:
        found = self.found
        if found is None:
            raise SuiteMismatch("no provisioned volume is attached for this check.")
        if suite_type and found.volume.type != suite_type:
            raise SuiteMismatch(f"this suite checks {suite_type} volumes; the volume under "
                                f"test is {found.volume.type} ({found.origin}).")
        if found.skip_reason is not None:
            read = self.resources.initialized
            if found.path not in read:
                if not self.initialize:
                    raise SuiteMismatch(found.skip_reason)
                read[found.path] = self._initialization_read(found)
            problem = read[found.path]
            if problem is not None:
                raise SuiteMismatch(problem)
        return found.volume

    def _initialization_read(self, found: FoundVolume) -> str | None:
        """AWS's documented read of every block (B-INIT), once, before the first check; what
        fio measured is kept for the check of a provisioned initialization rate. Returns
        why the read could not be made, else None."""

        estimate = float(self.facts["initialization"].get("read_estimate_s") or 0.0)
        read_s, problem, result = initialization_read(self.runner, found.path, estimate)
        if problem:
            self.facts["initialization"]["error"] = problem
            return problem
        self.facts["initialization"]["read_s"] = round(read_s, 1)
        self.resources.initialization_result = result
        return None

    # -- devices -------------------------------------------------------------------------
    def target_for(self, volume: Volume, role: str = "device") -> Target:
        """The device (emulated or given) for ``volume``; ``role`` "reference" for the twin."""
        key, made = (volume, role), self.resources.targets
        if key not in made:
            made[key] = self._make_target(volume, role)
        return made[key]

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
        key, made = (volume, f"set{count}"), self.resources.targets
        if key in made:
            return made[key]
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
        made[key] = target
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
        held = self.resources
        if held.emulation is None:
            held.emulation = EmulatedVolumes(
                self.settings, host=lambda: self.runner.host, limits=lambda: self.instance_limits,
                credits=lambda: self.credits, record=self.record_volume,
                set_size=lambda: self.set_size)
        return held.emulation

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
        return self.resources.first(self.resources.written, path)

    def close(self) -> None:
        """Remove every emulated device and release held devices; safe to call twice."""
        self.resources.close()


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
