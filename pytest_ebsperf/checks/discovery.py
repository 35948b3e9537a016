"""What the run learns of its volumes before it measures: discovery through AWS of the device under
test, its set's members and the reference twin (with the initialization read's reason), and
what a relative claim needs to know of its two volumes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ebsperf import aws, awsmodel
from pytest_ebsperf.aws import initialization_read_estimate_s
from pytest_ebsperf.aws.initialization import initialization_workload
from pytest_ebsperf.aws.pricing import duration
from pytest_ebsperf.aws.remote import identify_on
from pytest_ebsperf.awsmodel.facts import DiscoveryFacts
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import is_instance_store
from pytest_ebsperf.checks import twins
from pytest_ebsperf.errors import EbsperfError

if TYPE_CHECKING:
    from pytest_ebsperf.aws import Discovery
    from pytest_ebsperf.checks.twins import TwinFacts

from pytest_ebsperf.checks.session import EbsperfSession, FoundVolume


def discover(session: EbsperfSession) -> EbsperfSession:
    """Ask AWS what ``--device`` is when facts are missing; returns the session knowing
    what AWS said. A failure is kept as a sentence
    (:meth:`~pytest_ebsperf.checks.session.EbsperfSession.discovery_hint`) for the error the
    missing facts then cause."""
    s, missing = session.settings, session.missing_facts()
    info: DiscoveryFacts = {"missing": list(missing)}
    session.facts["discovery"] = info
    if not s.no_discovery:
        session = _discover_reference(session)
    if s.no_discovery or not missing:
        info["status"] = ("off (--ebsperf-no-discovery)" if s.no_discovery else
                          "not needed: every fact was given")
        return session

    try:
        found = aws.discover(str(s.device), given=session.given_volume(),
                             **_discovery_options(session, str(s.device)))
    except Exception as exc:  # noqa: BLE001 - every failure becomes a sentence, not a trace
        info["status"] = "failed"
        info["error"] = str(exc) if isinstance(exc, EbsperfError) else (
            f"AWS discovery failed ({type(exc).__name__}: {exc}).")
        return session
    volume = awsmodel.validate(found.volume)
    info["status"], info["aws"] = "discovered", found.as_dict()
    if found.ebs_limits is not None:
        session = session.knowing(
            instance_limits=awsmodel.as_ebs_limits(found.ebs_limits))
    origin = f"discovered from AWS: {found.volume_id or found.device.path}"
    reason = _initialization_reason(session, found, volume)
    session = session.knowing(discovery=found).with_volume(
        FoundVolume(volume, str(s.device), origin, reason))
    session.record_volume(str(s.device), volume, found.notes)
    members = {other: _discover_member(session, other, volume) for other in s.devices[1:]}
    known = {path: member for path, member in members.items() if member is not None}
    return session.knowing(member_volumes=known) if known else session


def _discover_reference(session: EbsperfSession) -> EbsperfSession:
    """--reference-device's type and encryption from AWS, when an option leaves them
    out (the relative claims need them: S2-17's encrypted twin, S0-08's Magnetic one).
    A failure is a note: the claims then say what to pass."""
    s = session.settings
    if not s.reference_device or (s.reference_volume_type is not None
                                  and s.reference_encrypted is not None):
        return session

    given = Volume(s.reference_volume_type or "", encrypted=s.reference_encrypted)
    try:
        found = aws.discover(s.reference_device, given=given,
                             **_discovery_options(session, s.reference_device))
    except Exception as exc:  # noqa: BLE001 - a note, never a trace
        why = str(exc) if isinstance(exc, EbsperfError) else f"{type(exc).__name__}: {exc}"
        session.facts["discovery"]["reference_error"] = why
        return session
    session.record_volume(s.reference_device, found.volume,
                          ["the reference twin (--reference-device), discovered"])
    return session.knowing(reference_found=found.volume)


def twin_facts(session: EbsperfSession, device: Volume, claim_type: str | None = None) -> TwinFacts:
    """Type and encryption of the device under test and its reference twin (given,
    discovered, or for emulated twins what the claim asks for: ``claim_type``)."""

    s = session.settings
    if s.emulate:
        source = "given" if s.reference_volume_type else "emulated"
        return twins.emulated_facts(device, "the emulated volume", "its emulated twin",
                                    reference_type=s.reference_volume_type or claim_type,
                                    device_encrypted=s.volume_encrypted,
                                    reference_encrypted=s.reference_encrypted,
                                    type_source=source)
    found = session.reference_found
    enc_source = device.provenance.get("encrypted", "default")
    return twins.TwinFacts(
        str(s.device), str(s.reference_device),
        twins.Fact(device.type, device.provenance.get("type", "given")),
        twins.fact(s.reference_volume_type, "given", found.type if found else None,
                   "discovered"),
        twins.fact(device.encrypted, enc_source, None, ""),
        twins.fact(s.reference_encrypted, "given", found.encrypted if found else None,
                   "discovered"))


def _discover_member(session: EbsperfSession, path: str, first: Volume) -> Volume | None:
    """A further device of a set described by AWS on its own (its own size, IOPS, type);
    None on failure: its facts are the first device's, and the note says why."""

    try:
        found = aws.discover(path, given=session.given_volume(),
                             **_discovery_options(session, path))
        volume = awsmodel.validate(found.volume)
    except Exception as exc:  # noqa: BLE001 - a note for this member, not a trace
        why = str(exc) if isinstance(exc, EbsperfError) else f"{type(exc).__name__}: {exc}"
        session.record_volume(path, first, [(f"a member of the set: discovery could not tell "
                                         f"({why.rstrip('.')}); facts taken as the first "
                                         f"device's ({session.settings.device}).")])
        return None
    session.record_volume(path, volume, [*found.notes, ("a member of the set, discovered on "
                                                         "its own.")])
    return volume


def _discovery_options(session: EbsperfSession, path: str) -> dict[str, Any]:
    """aws.discover's keywords: the local roots, or for a device on another host what
    that host said of it and of itself (aws.remote.identify_on)."""
    if session.runner.host.is_local:
        return dict(session.aws_options)

    roots = {k: v for k, v in session.aws_options.items() if k in ("sysfs_root", "dev_root")}
    info, identity = identify_on(session.runner.host, path, **roots)
    rest = {k: v for k, v in session.aws_options.items()
            if k not in ("sysfs_root", "dev_root", "imds")}
    return {**rest, "info": info, "identity": identity}


def _initialization_reason(session: EbsperfSession, found: Discovery, volume: Volume) -> str | None:
    """The skip reason of a volume still initializing, with what the opt-in read costs."""

    state, reason = found.initialization, found.skip_reason
    if state is not None and state.rate_mibps is not None:
        # the rate it was created with, for the check of it (B-INIT)
        session.facts["initialization"] = {"state": state.label(), "read_s": None,
                                           "rate_mibps": state.rate_mibps,
                                           "complete": state.complete}
    if state is None or reason is None or is_instance_store(volume.type):
        return None
    read = initialization_workload(1.0)  # the read's ceilings, the volume's and instance's
    caps = awsmodel.limits(volume, read, instance_limits=session.instance_limits)
    rate = min((cap.iops for cap in caps), default=0.0) * read.bs or \
        awsmodel.volume_caps(volume).throughput_bps
    seconds = initialization_read_estimate_s(
        volume.size_gib or 0, rate / 2**20, progress_pct=state.progress_pct)
    session.facts["initialization"] = {**session.facts.get("initialization", {}),
                                       "state": state.label(), "skip_reason": reason,
                                       "read_estimate_s": round(seconds), "read_s": None}
    return (f"{reason.rstrip('.')} (--ebsperf-initialize; reading it takes at least "
            f"{duration(seconds)} at {rate / 2**20:,.0f} MiB/s).")
