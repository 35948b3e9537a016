"""Run-wide state: the volume under test for each suite, its device (real or emulated), fio.

Built once per pytest run from :class:`~pytest_ebsperf.config.settings.Settings`; holds no pytest
objects. Errors are domain exceptions with sentences; the plugin turns them into usage
errors or skips.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pytest_ebsperf import spec
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.device.target import (
    SuiteMismatch,
    Target,
    given_volume,
    volume_from_settings,
)
from pytest_ebsperf.errors import ConfigError, EbsperfError, UnsafeDeviceError, VolumeSpecError
from pytest_ebsperf.spec import volume_types
from pytest_ebsperf.spec.facts import DiscoveryFacts, RunFacts, VolumeEntry
from pytest_ebsperf.spec.volume import DEFAULT, Volume
from pytest_ebsperf.spec.volume_types import is_instance_store

if TYPE_CHECKING:
    from pytest_ebsperf.aws import Discovery
    from pytest_ebsperf.checks.twins import TwinFacts
    from pytest_ebsperf.credits.book import CreditBook
    from pytest_ebsperf.credits.progress import ProgressWriter
    from pytest_ebsperf.device.mdraid import MdArray
    from pytest_ebsperf.device.safety import DeviceReport
    from pytest_ebsperf.emulate.registry import EmulatedVolumes
    from pytest_ebsperf.fio.runner import FioRunner
    from pytest_ebsperf.fio.workload import Workload
    from pytest_ebsperf.verdicts import evidence



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
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 1)
    _runner: FioRunner | None = None
    _targets: dict[tuple[Volume, str], Target] = field(default_factory=dict)
    _reports: dict[str, DeviceReport] = field(default_factory=dict)
    #: Why the remote device could not be inspected (no python3 there): writes are refused.
    remote_uninspected: str | None = None
    _written: set[str] = field(default_factory=set)
    #: Whether the run has said that the device keeps no EBS NVMe statistics.
    ebs_nvme_said: bool = False
    #: The volume(s) under test as plain JSON-friendly data, for reports and result files:
    #: ``volumes`` (per device each fact with its source: given, discovered, default, and
    #: notes), ``discovery`` (status, error, what AWS said), ``initialization`` and
    #: ``provisioning`` (cost, sweep, clean-up) when they apply.
    facts: RunFacts = field(default_factory=lambda: RunFacts())
    #: The instance's EBS-optimized limits from DescribeInstanceTypes; when set, the models
    #: use them instead of the built-in instance table.
    instance_limits: spec.EbsLimits | None = None
    #: The volume under test when AWS described it; None when the options describe it.
    found: FoundVolume | None = None
    #: The fleet host this session measures (testinfra's id, ``ssh://10.0.0.2``); None when
    #: the run has one host.
    host_id: str | None = None
    #: fio servers measured together (--ebsperf-fio-servers), with their settings.
    fio_servers: list[Any] = field(default_factory=list)
    #: The other devices of a set (--device=A,B,...) as discovery described each; empty when
    #: their facts are taken as the first device's.
    member_volumes: dict[str, Volume] = field(default_factory=dict)
    #: Everything discovery learnt (:class:`pytest_ebsperf.aws.Discovery`), when it ran.
    discovery: Discovery | None = None
    #: Read every block of a volume that is not fully initialized before measuring it.
    initialize: bool = False
    #: Keyword arguments for :func:`pytest_ebsperf.aws.discover` (``sysfs_root``, ``dev_root``).
    aws_options: dict[str, Any] = field(default_factory=dict)
    _credits: CreditBook | None = None
    #: Checks of this run that can FAIL (the false-red budget is split over them): not
    #: those that only record, not those whose suite does not apply; 0: unknown.
    checks_planned: int = 0
    #: Where live lines go while fio runs (a terminal line or CI heartbeat); None: nowhere.
    progress: ProgressWriter | None = None
    _emulation: EmulatedVolumes | None = None
    #: The md array ``--device`` names, when it is one (its members are the set).
    md: MdArray | None = None
    #: What AWS said of --reference-device (type, encryption), when discovery ran for it.
    reference_found: Volume | None = None

    @property
    def policy(self) -> evidence.Policy:
        """How this run weighs evidence: ``--ebsperf-false-alarm`` split over its checks."""
        from pytest_ebsperf.verdicts import evidence

        checks = self.checks_planned or evidence.DEFAULT_CHECKS_PER_RUN
        return evidence.Policy.for_run(self.settings.false_alarm, checks,
                                       self.settings.miss_spell)

    @property
    def credits(self) -> CreditBook:
        """Burst-credit ledgers of the volumes and bucket controllers of emulated devices."""
        if self._credits is None:
            from pytest_ebsperf.credits.book import CreditBook

            self._credits = CreditBook(self.settings)
        return self._credits

    # -- fio -----------------------------------------------------------------------------
    @property
    def runner(self) -> FioRunner:
        if self._runner is None:
            from pytest_ebsperf.fio.host import FioHost
            from pytest_ebsperf.fio.runner import FioRunner

            spec = self.settings.host
            if spec in ("", "local://"):
                host = FioHost()
            else:
                import testinfra

                host = FioHost(testinfra.get_host(spec))
            self._runner = FioRunner(host=host, fio=self.settings.fio)
        return self._runner

    def preflight(self) -> None:
        """Checks made once before any check runs: fio, and the device or emulation."""
        self.runner.version()
        self.runner.resolve_engine(self.settings.engine)  # an engine fio lacks stops the run
        if self.runner.host.is_local:
            from pytest_ebsperf.fio.process import sweep_fio_dirs

            sweep_fio_dirs()  # what runs killed with SIGKILL left in the temporary directory
        if self.settings.emulate and not self.runner.host.is_local:
            from pytest_ebsperf.emulate.on_host import check_remote_emulation, sweep_remote

            check_remote_emulation(self.runner.host)  # root and util-linux there
            sweep_remote(self.runner.host)  # what killed runs from here left on that host
            return
        if self.settings.emulate:
            from pytest_ebsperf.emulate import check_emulation_available, service_time, sweep_stale

            check_emulation_available()
            if service_time.parse(self.settings.emulate_latency) is not None:
                service_time.check_available()  # /dev/fuse, and the daemon builds here
            sweep_stale()
            return
        if self.settings.provision:
            return  # each provisioned volume's device is checked when it is attached
        if not self.settings.device:
            raise ConfigError(
                "No device to check: pass --device=PATH (the block device under test, e.g. "
                "/dev/nvme1n1) or --emulate to create an emulated volume."
            )
        if not self.runner.host.is_local:
            return self._preflight_remote()
        self.device_report(self.settings.device)
        self._preflight_set()
        if self.settings.reference_device:
            self.device_report(self.settings.reference_device)
            self._check_reference_differs()
        self.discover()
        if self.settings.volume_type is None and self.found is None:
            raise ConfigError(
                f"The volume type of {self.settings.device} is unknown: pass --volume-type "
                f"({', '.join(volume_types.names())}) with --volume-size and, for "
                f"{'/'.join(_provisioning())}, "
                f"--volume-iops.{self._discovery_hint()}"
            )
        if self.found is None:
            self._record_given_volume()

    def check_plan(self, markers: Sequence[Mapping[str, Any]]) -> int:
        """What the collected checks need, checked before any fio run (a usage error, exit
        4, not a failed check): each test's marker settings, the volume each suite checks
        (facts AWS would not accept), twins whose facts contradict their claim (S2-17 on two
        encrypted volumes) and an opt-in to write that cannot be honoured.
        ``markers`` holds each collected check's ``ebsperf`` marker keywords. Returns how
        many of them can FAIL: not those that only record (``records=True``) and not those
        whose suite does not apply to the volume under test (they skip)."""
        from pytest_ebsperf.checks import twins
        from pytest_ebsperf.device.target import volume_from_marker

        applies: dict[tuple[Any, ...], bool] = {}
        judged = 0
        for kwargs in markers:
            self.settings.with_marker(kwargs)  # a bad marker value is a sentence now
            emulated = kwargs.get("emulated")
            key = (kwargs.get("volume_type"), repr(emulated), kwargs.get(twins.TWINS_MARKER))
            if key not in applies:
                applies[key] = self._plan_one(kwargs, emulated, twins, volume_from_marker)
            if applies[key] and not kwargs.get("records"):
                judged += 1
        self.check_opt_in()
        return judged

    def _plan_one(self, kwargs: Mapping[str, Any], emulated: Any, twins: Any,
                  volume_from_marker: Any) -> bool:
        """Check one suite's volume and twins; False when the suite does not apply."""
        if self.settings.provision:
            return True  # each provisioned volume is checked when it is made
        if self.found is not None:  # AWS described it: valid, and read when a check runs
            volume = self.found.volume
            if kwargs.get("volume_type") not in (None, volume.type):
                return False
        else:
            try:
                volume = self.volume_for(kwargs.get("volume_type"), volume_from_marker(
                    emulated, kwargs.get("volume_type")) if emulated else None)
            except SuiteMismatch:
                return False  # the suite does not apply here: its checks skip with the reason
        if kwargs.get(twins.TWINS_MARKER) == twins.ENCRYPTED_TWIN and (
                self.settings.reference_device or self.settings.emulate):
            pair = twins.encryption_pair(self.twin_facts(volume))
            if pair.status == "contradiction":
                raise ConfigError(pair.sentence)
        return True

    def check_opt_in(self) -> None:
        """--ebsperf-destructive on a device no write may touch (mounted, root, swap, held by
        something above it): the opt-in cannot be honoured, so the run stops here."""
        s = self.settings
        if not s.destructive or s.emulate or s.provision:
            return
        from pytest_ebsperf.device.safety import check_writable

        paths = [*(self.md.members if self.md else ()), *s.devices,
                 *([s.reference_device] if s.reference_device else [])]
        for path in dict.fromkeys(p for p in paths if p):
            if self.remote_uninspected:
                raise ConfigError(f"--ebsperf-destructive cannot be honoured: writes to {path} "
                                  f"on {self.runner.host} are refused ({self.remote_uninspected}"
                                  "). Run without it for the read-only checks.")
            try:
                check_writable(self.device_report(path), destructive=True)
            except UnsafeDeviceError as exc:
                raise ConfigError(f"--ebsperf-destructive cannot be honoured: {exc} Run "
                                  "without it for the read-only checks.") from None

    def _preflight_set(self) -> None:
        """Every device of --device=A,B,... is inspected; an md array's members are read
        from sysfs (where fio runs)."""
        devices = self.settings.devices
        for other in devices[1:]:
            self.device_report(other)
        if len(devices) > 1:
            majors = {self._reports[d].major_minor for d in devices}
            if len(majors) != len(devices):
                raise ConfigError(f"--device={','.join(devices)} names one device twice "
                                  "(two paths of the same device): each member of a set is "
                                  "a different volume.")
            return
        from pytest_ebsperf.device import mdraid

        host = self.runner.host
        found = mdraid.read_md(self.settings.device or "") if host.is_local else \
            mdraid.read_md_on(host, self.settings.device or "")
        if found is not None:
            self.md = found
            for member in found.members:
                self.device_report(member)

    def _check_reference_differs(self) -> None:
        device, reference = self.settings.device or "", self.settings.reference_device or ""
        if self._reports[device].major_minor == self._reports[reference].major_minor:
            raise ConfigError(
                f"--reference-device={reference} is the device under test ({device}, both "
                f"{self._reports[device].real_path}): a relative claim compares two volumes. "
                "Pass the twin volume (e.g. the unencrypted copy) as --reference-device.")

    def _preflight_remote(self) -> None:
        """fio runs on another host: nothing of this machine's may stand for that device.
        Its volume facts must be given (discovery asks this machine's metadata)."""
        from pytest_ebsperf.device.safety import RemoteInspectionError

        device = self.settings.device or ""
        try:  # the device is inspected where fio runs, with the same code as here
            self.device_report(device)
            self._preflight_set()
            if self.settings.reference_device:
                self.device_report(self.settings.reference_device)
                self._check_reference_differs()
        except RemoteInspectionError as exc:
            # read-only checks can still run (fio opens the device --readonly); writes cannot
            self.remote_uninspected = str(exc)
            self.runner.check_target(device)
        self.discover()  # the host says what its device and instance are; AWS the rest
        if self.settings.volume_type is None and self.found is None:
            raise ConfigError(
                f"The volume type of {self.settings.device} on {self.runner.host} is unknown: "
                f"pass --volume-type ({', '.join(volume_types.names())}) with --volume-size "
                f"and, for {'/'.join(_provisioning())}, --volume-iops, or give them in the "
                "hosts file."
                f"{self._discovery_hint()}")
        if self.found is None:
            self._record_given_volume()

    def device_report(self, path: str) -> DeviceReport:
        """What ``path`` is and holds, on the host fio runs on (inspected once, at preflight;
        writing checks inspect it again right before they write)."""
        if path not in self._reports:
            from pytest_ebsperf.device.safety import inspect_on

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

    def _record_given_volume(self) -> None:
        try:
            volume = self.volume_for(None)  # a volume AWS would not accept stops the run here
        except VolumeSpecError as exc:
            raise VolumeSpecError(f"{exc}{self._discovery_hint()}") from None
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

    def discover(self) -> None:
        """Ask AWS what ``--device`` is when facts are missing; a failure is kept as a
        sentence (:meth:`_discovery_hint`) for the error the missing facts then cause."""
        s, missing = self.settings, self.missing_facts()
        info: DiscoveryFacts = {"missing": list(missing)}
        self.facts["discovery"] = info
        if not s.no_discovery:
            self._discover_reference()
        if s.no_discovery or not missing:
            info["status"] = ("off (--ebsperf-no-discovery)" if s.no_discovery else
                              "not needed: every fact was given")
            return
        from pytest_ebsperf import aws

        try:
            found = aws.discover(str(s.device), given=self.given_volume(),
                                 **self._discovery_options(str(s.device)))
        except Exception as exc:  # noqa: BLE001 - every failure becomes a sentence, not a trace
            info["status"] = "failed"
            info["error"] = str(exc) if isinstance(exc, EbsperfError) else (
                f"AWS discovery failed ({type(exc).__name__}: {exc}).")
            return
        volume = spec.validate(found.volume)
        self.discovery, info["status"], info["aws"] = found, "discovered", found.as_dict()
        if found.ebs_limits is not None:
            self.instance_limits = spec.as_ebs_limits(found.ebs_limits)
        origin = f"discovered from AWS: {found.volume_id or found.device.path}"
        reason = self._initialization_reason(found, volume)
        self.found = FoundVolume(volume, str(s.device), origin, reason)
        self.record_volume(str(s.device), volume, found.notes)
        for other in s.devices[1:]:
            self._discover_member(other, volume)

    def _discover_reference(self) -> None:
        """--reference-device's type and encryption from AWS, when an option leaves them
        out (the relative claims need them: S2-17's encrypted twin, S0-08's Magnetic one).
        A failure is a note: the claims then say what to pass."""
        s = self.settings
        if not s.reference_device or (s.reference_volume_type is not None
                                      and s.reference_encrypted is not None):
            return
        from pytest_ebsperf import aws

        given = Volume(s.reference_volume_type or "", encrypted=s.reference_encrypted)
        try:
            found = aws.discover(s.reference_device, given=given,
                                 **self._discovery_options(s.reference_device))
        except Exception as exc:  # noqa: BLE001 - a note, never a trace
            why = str(exc) if isinstance(exc, EbsperfError) else f"{type(exc).__name__}: {exc}"
            self.facts["discovery"]["reference_error"] = why
            return
        self.reference_found = found.volume
        self.record_volume(s.reference_device, found.volume,
                           ["the reference twin (--reference-device), discovered"])

    def twin_facts(self, device: Volume, claim_type: str | None = None) -> TwinFacts:
        """Type and encryption of the device under test and its reference twin (given,
        discovered, or for emulated twins what the claim asks for: ``claim_type``)."""
        from pytest_ebsperf.checks import twins

        s = self.settings
        if s.emulate:
            source = "given" if s.reference_volume_type else "emulated"
            return twins.emulated_facts(device, "the emulated volume", "its emulated twin",
                                        reference_type=s.reference_volume_type or claim_type,
                                        device_encrypted=s.volume_encrypted,
                                        reference_encrypted=s.reference_encrypted,
                                        type_source=source)
        found = self.reference_found
        enc_source = device.provenance.get("encrypted", "default")
        return twins.TwinFacts(
            str(s.device), str(s.reference_device),
            twins.Fact(device.type, device.provenance.get("type", "given")),
            twins.fact(s.reference_volume_type, "given", found.type if found else None,
                       "discovered"),
            twins.fact(device.encrypted, enc_source, None, ""),
            twins.fact(s.reference_encrypted, "given", found.encrypted if found else None,
                       "discovered"))

    def _discover_member(self, path: str, first: Volume) -> None:
        """Each further device of a set described by AWS on its own (its own size, IOPS,
        type); on failure its facts are the first device's, and the note says why."""
        from pytest_ebsperf import aws

        try:
            found = aws.discover(path, given=self.given_volume(),
                                 **self._discovery_options(path))
            volume = spec.validate(found.volume)
        except Exception as exc:  # noqa: BLE001 - a note for this member, not a trace
            why = str(exc) if isinstance(exc, EbsperfError) else f"{type(exc).__name__}: {exc}"
            self.record_volume(path, first, [(f"a member of the set: discovery could not tell "
                                             f"({why.rstrip('.')}); facts taken as the first "
                                             f"device's ({self.settings.device}).")])
            return
        self.member_volumes[path] = volume
        self.record_volume(path, volume, [*found.notes, ("a member of the set, discovered on "
                                          "its own.")])

    def _discovery_options(self, path: str) -> dict[str, Any]:
        """aws.discover's keywords: the local roots, or for a device on another host what
        that host said of it and of itself (aws.remote.identify_on)."""
        if self.runner.host.is_local:
            return dict(self.aws_options)
        from pytest_ebsperf.aws.remote import identify_on

        roots = {k: v for k, v in self.aws_options.items() if k in ("sysfs_root", "dev_root")}
        info, identity = identify_on(self.runner.host, path, **roots)
        rest = {k: v for k, v in self.aws_options.items()
                if k not in ("sysfs_root", "dev_root", "imds")}
        return {**rest, "info": info, "identity": identity}

    def _initialization_reason(self, found: Discovery, volume: Volume) -> str | None:
        """The skip reason of a volume still initializing, with what the opt-in read costs."""
        from pytest_ebsperf.aws import initialization_read_estimate_s
        from pytest_ebsperf.aws.pricing import duration

        state, reason = found.initialization, found.skip_reason
        if state is None or reason is None or is_instance_store(volume.type):
            return None
        rate = spec.volume_caps(volume).throughput_bps
        if self.instance_limits is not None:
            rate = min(rate, self.instance_limits.bytes_per_s())
        seconds = initialization_read_estimate_s(
            volume.size_gib or 0, rate / 2**20, progress_pct=state.progress_pct)
        self.facts["initialization"] = {"state": state.label(), "skip_reason": reason,
                                        "read_estimate_s": round(seconds), "read_s": None}
        return (f"{reason.rstrip('.')} (--ebsperf-initialize; reading it takes at least "
                f"{duration(seconds)} at {rate / 2**20:,.0f} MiB/s).")

    def _discovery_hint(self) -> str:
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
        """AWS's documented read of every block (B-INIT), once, before the first check."""
        from pytest_ebsperf.aws.initialization import initialization_read

        estimate = float(self.facts["initialization"].get("read_estimate_s") or 0.0)
        read_s, problem = initialization_read(self.runner, found.path, estimate)
        if problem:
            self.found = replace(found, skip_reason=problem)
            self.facts["initialization"]["error"] = problem
            raise SuiteMismatch(problem)
        self.found = replace(found, skip_reason=None)
        self.facts["initialization"]["read_s"] = round(read_s, 1)

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
            from pytest_ebsperf.emulate.registry import EmulatedVolumes

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
