"""Before any fio runs: the devices are inspected and the run's options checked against them
(usage errors, with a sentence), the plan of every selected check is tried (--ebsperf-plan's
checks that cannot run are refused early), and writes are allowed only with the opt-in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.checks import discovery, twins
from pytest_ebsperf.checks.session import EbsperfSession, _provisioning
from pytest_ebsperf.config.emulation import parse_latency
from pytest_ebsperf.device import mdraid
from pytest_ebsperf.device.safety import (
    RemoteInspectionError,
    check_block_device,
    check_writable,
)
from pytest_ebsperf.emulate import check_emulation_available, service_time, sweep_stale
from pytest_ebsperf.emulate.on_host import check_remote_emulation, sweep_remote
from pytest_ebsperf.emulate.target import (
    SuiteMismatch,
    volume_from_marker,
)
from pytest_ebsperf.errors import ConfigError, UnsafeDeviceError
from pytest_ebsperf.fio.process import sweep_fio_dirs


def run(session: EbsperfSession) -> EbsperfSession:
    """Checks made once before any check runs: fio, and the device or emulation. Returns
    the session knowing what they found (the device's set, what AWS said of it)."""
    session.runner.version()
    session.runner.resolve_engine(session.settings.engine)  # an engine fio lacks stops the run
    if session.runner.host.is_local:

        sweep_fio_dirs()  # what runs killed with SIGKILL left in the temporary directory
    if session.settings.emulate and not session.runner.host.is_local:

        check_remote_emulation(session.runner.host)  # root and util-linux there
        sweep_remote(session.runner.host)  # what killed runs from here left on that host
        return session
    if session.settings.emulate:

        check_emulation_available()
        if parse_latency(session.settings.emulate_latency) is not None:
            service_time.check_available()  # /dev/fuse, and the daemon builds here
        sweep_stale()
        return session
    if session.settings.provision:
        return session  # each provisioned volume's device is checked when it is attached
    if not session.settings.device:
        raise ConfigError(
            "No device to check: pass --device=PATH (the block device under test, e.g. "
            "/dev/nvme1n1) or --emulate to create an emulated volume."
        )
    if not session.runner.host.is_local:
        return _preflight_remote(session)
    session.device_report(session.settings.device)
    session = _preflight_set(session)
    if session.settings.reference_device:
        session.device_report(session.settings.reference_device)
        _check_reference_differs(session)
    session = discovery.discover(session)
    if session.settings.volume_type is None and session.found is None:
        raise ConfigError(
            f"The volume type of {session.settings.device} is unknown: pass --volume-type "
            f"({', '.join(volume_types.names())}) with --volume-size and, for "
            f"{'/'.join(_provisioning())}, "
            f"--volume-iops.{session.discovery_hint()}"
        )
    if session.found is None:
        session.record_given_volume()
    return session


def check_plan(session: EbsperfSession, markers: Sequence[Mapping[str, Any]]) -> int:
    """What the collected checks need, checked before any fio run (a usage error, exit
    4, not a failed check): each test's marker settings, the volume each suite checks
    (facts AWS would not accept), twins whose facts contradict their claim (S2-17 on two
    encrypted volumes) and an opt-in to write that cannot be honoured.
    ``markers`` holds each collected check's ``ebsperf`` marker keywords. Returns how
    many of them can FAIL: not those that only record (``records=True``) and not those
    whose suite does not apply to the volume under test (they skip)."""

    s = session.settings
    if s.plan and not (s.emulate or s.provision) and session.runner.host.is_local:
        # nothing is inspected in a dry run, but a path that is here and is no block device
        # (/etc/passwd) is refused as the run itself would refuse it
        for path in dict.fromkeys(p for p in (*s.devices, s.reference_device) if p):
            check_block_device(path)
    applies: dict[tuple[Any, ...], bool] = {}
    judged = 0
    for kwargs in markers:
        session.settings.with_marker(kwargs)  # a bad marker value is a sentence now
        emulated = kwargs.get("emulated")
        key = (kwargs.get("volume_type"), repr(emulated), kwargs.get(twins.TWINS_MARKER))
        if key not in applies:
            applies[key] = _plan_one(session, kwargs, emulated, twins, volume_from_marker)
        if applies[key] and not kwargs.get("records"):
            judged += 1
    check_opt_in(session)
    return judged


def _plan_one(session: EbsperfSession, kwargs: Mapping[str, Any], emulated: Any, twins: Any,
              volume_from_marker: Any) -> bool:
    """Check one suite's volume and twins; False when the suite does not apply."""
    if session.settings.provision:
        return True  # each provisioned volume is checked when it is made
    if session.found is not None:  # AWS described it: valid, and read when a check runs
        volume = session.found.volume
        if kwargs.get("volume_type") not in (None, volume.type):
            return False
    else:
        try:
            volume = session.volume_for(kwargs.get("volume_type"), volume_from_marker(
                emulated, kwargs.get("volume_type")) if emulated else None)
        except SuiteMismatch:
            return False  # the suite does not apply here: its checks skip with the reason
    if kwargs.get(twins.TWINS_MARKER) == twins.ENCRYPTED_TWIN and (
            session.settings.reference_device or session.settings.emulate):
        pair = twins.encryption_pair(discovery.twin_facts(session, volume))
        if pair.status == "contradiction":
            raise ConfigError(pair.sentence)
    return True


def check_opt_in(session: EbsperfSession) -> None:
    """--ebsperf-destructive on a device no write may touch (mounted, root, swap, held by
    something above it): the opt-in cannot be honoured, so the run stops here."""
    s = session.settings
    if not s.destructive or s.emulate or s.provision:
        return

    paths = [*(session.md.members if session.md else ()), *s.devices,
             *([s.reference_device] if s.reference_device else [])]
    for path in dict.fromkeys(p for p in paths if p):
        if session.remote_uninspected:
            raise ConfigError(f"--ebsperf-destructive cannot be honoured: writes to {path} "
                              f"on {session.runner.host} are refused ({session.remote_uninspected}"
                              "). Run without it for the read-only checks.")
        try:
            check_writable(session.device_report(path), destructive=True)
        except UnsafeDeviceError as exc:
            raise ConfigError(f"--ebsperf-destructive cannot be honoured: {exc} Run "
                              "without it for the read-only checks.") from None


def _preflight_set(session: EbsperfSession) -> EbsperfSession:
    """Every device of --device=A,B,... is inspected; an md array's members are read
    from sysfs (where fio runs): the session knowing the array, when it is one."""
    devices = session.settings.devices
    for other in devices[1:]:
        session.device_report(other)
    if len(devices) > 1:
        majors = {session.device_report(d).major_minor for d in devices}
        if len(majors) != len(devices):
            raise ConfigError(f"--device={','.join(devices)} names one device twice "
                              "(two paths of the same device): each member of a set is "
                              "a different volume.")
        return session

    host = session.runner.host
    found = mdraid.read_md(session.settings.device or "") if host.is_local else \
        mdraid.read_md_on(host, session.settings.device or "")
    if found is None:
        return session
    for member in found.members:
        session.device_report(member)
    return session.knowing(md=found)


def _check_reference_differs(session: EbsperfSession) -> None:
    device, reference = session.settings.device or "", session.settings.reference_device or ""
    if session.device_report(device).major_minor == \
            session.device_report(reference).major_minor:
        raise ConfigError(
            f"--reference-device={reference} is the device under test ({device}, both "
            f"{session.device_report(device).real_path}): a relative claim compares two volumes. "
            "Pass the twin volume (e.g. the unencrypted copy) as --reference-device.")


def _preflight_remote(session: EbsperfSession) -> EbsperfSession:
    """fio runs on another host: nothing of this machine's may stand for that device.
    Its volume facts must be given (discovery asks this machine's metadata)."""

    device = session.settings.device or ""
    try:  # the device is inspected where fio runs, with the same code as here
        session.device_report(device)
        session = _preflight_set(session)
        if session.settings.reference_device:
            session.device_report(session.settings.reference_device)
            _check_reference_differs(session)
    except RemoteInspectionError as exc:
        # read-only checks can still run (fio opens the device --readonly); writes cannot
        session = session.knowing(remote_uninspected=str(exc))
        session.runner.check_target(device)
    session = discovery.discover(session)  # the host says what its device and instance are; AWS the rest
    if session.settings.volume_type is None and session.found is None:
        raise ConfigError(
            f"The volume type of {session.settings.device} on {session.runner.host} is unknown: "
            f"pass --volume-type ({', '.join(volume_types.names())}) with --volume-size "
            f"and, for {'/'.join(_provisioning())}, --volume-iops, or give them in the "
            "hosts file."
            f"{session.discovery_hint()}")
    if session.found is None:
        session.record_given_volume()
    return session
