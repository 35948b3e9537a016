"""Discovery: from ``--device`` to a complete :class:`~pytest_ebsperf.awsmodel.volume.Volume`.

    device --(sysfs: NVMe serial / Xen name)--> volume id or attachment name
    IMDS   --> instance id, type, region, AZ
    DescribeVolumes --> type, size, IOPS, throughput, encryption, snapshot, attachment
    DescribeInstanceTypes --> EBS-optimized limits, Nitro or Xen, instance store
    CloudWatch BurstBalance (gp2, st1, sc1) and DescribeVolumeStatus (restored volumes)

Explicit values from the user always win over discovered ones (:mod:`.merge`). Optional
facts that fail (BurstBalance, initialization state) become notes; the volume itself not
being found, or not being ours, is an error with a sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from pytest_ebsperf.aws import devices
from pytest_ebsperf.aws.clients import AwsClients
from pytest_ebsperf.aws.devices import DeviceInfo
from pytest_ebsperf.aws.failures import (
    AccessDeniedError,
    AwsError,
    NotEbsVolumeError,
    VolumeAttachedElsewhereError,
)
from pytest_ebsperf.aws.imds import ImdsClient, InstanceIdentity
from pytest_ebsperf.aws.initialization import InitializationState, read_initialization
from pytest_ebsperf.aws.instance import (
    EbsLimits,
    InstanceTypeFacts,
    describe_instance_type,
)
from pytest_ebsperf.aws.merge import given_fields, merge
from pytest_ebsperf.aws.metrics import (
    BurstReading,
    exceeded_note,
    read_burst_balance,
    read_exceeded_checks,
)
from pytest_ebsperf.aws.volumes import VolumeRecord, find_attached_volume
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import INSTANCE_STORE, is_instance_store

_T = TypeVar("_T")


@dataclass(frozen=True)
class Discovery:
    """Everything discovery learnt about the device under test.

    ``volume`` is the merged fact sheet the models use; the rest are the facts behind it
    for reports (``as_dict``) and for decisions such as :attr:`skip_reason`.
    """

    volume: Volume
    device: DeviceInfo
    instance: InstanceIdentity
    region: str
    instance_type: InstanceTypeFacts | None = None
    record: VolumeRecord | None = None
    initialization: InitializationState | None = None
    burst: BurstReading | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def ebs_limits(self) -> EbsLimits | None:
        """The instance type's EBS-optimized limits from the API (None if not known)."""
        return self.instance_type.ebs if self.instance_type else None

    @property
    def volume_id(self) -> str | None:
        return self.volume.volume_id

    @property
    def skip_reason(self) -> str | None:
        """Why measuring now would be meaningless (initialization running), else None."""
        return self.initialization.skip_reason() if self.initialization else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly summary for reports and machine info."""
        record = self.record
        return {
            "device": self.device.path,
            "kernel_name": self.device.kernel_name,
            "instance_id": self.instance.instance_id,
            "availability_zone": self.instance.availability_zone,
            "region": self.region,
            "volume": self.volume.as_dict(),
            "snapshot_id": record.snapshot_id if record else None,
            "attachment_state": record.attachment_state if record else None,
            "initialization": self.initialization.label() if self.initialization else None,
            "instance_type": self.instance_type.as_dict() if self.instance_type else None,
            "notes": list(self.notes),
        }


def discover(
    device: str,
    *,
    given: Volume | None = None,
    clients: AwsClients | None = None,
    imds: ImdsClient | None = None,
    identity: InstanceIdentity | None = None,
    region: str | None = None,
    sysfs_root: str = "/sys",
    dev_root: str = "/dev",
    now: datetime | None = None,
    info: devices.DeviceInfo | None = None,
) -> Discovery:
    """Find out what ``device`` is, merging with the ``given`` facts (which always win).

    Raises :class:`~pytest_ebsperf.errors.DeviceError` (no such device),
    :class:`NotEbsVolumeError`, :class:`NotOnEc2Error`, :class:`NoCredentialsFoundError`,
    :class:`AccessDeniedError`, :class:`VolumeAttachedElsewhereError` or another
    :class:`AwsError` with a sentence for the user.
    """
    if info is None:  # (a remote host's device comes identified: aws.remote.identify_on)
        info = devices.identify_device(device, sysfs_root=sysfs_root, dev_root=dev_root)
    refuse_non_aws(info)
    identity = identity or (imds or ImdsClient()).identity()
    clients = clients or AwsClients(region=region, region_fallback=lambda: identity.region)
    clients.require_credentials()
    notes: list[str] = list(identity.notes)
    if clients.region != identity.region:
        notes.append(
            f"The configured region {clients.region} is not the instance's region "
            f"{identity.region}; volumes attached here live in {identity.region}."
        )
    if _is_instance_store(info, identity):
        return _instance_store(info, identity, clients, given, notes)
    record = find_attached_volume(clients.ec2(), info, identity, region=clients.region)
    _check_attachment(record, identity, info)
    return _ebs(info, identity, clients, given, record, notes, now)


def _ebs(
    info: DeviceInfo,
    identity: InstanceIdentity,
    clients: AwsClients,
    given: Volume | None,
    record: VolumeRecord,
    notes: list[str],
    now: datetime | None,
) -> Discovery:
    explicit = given_fields(given)
    found, defaulted = record.volume_fields()
    type_facts = _instance_type(clients, given, identity, explicit, notes)
    found["instance_type"] = identity.instance_type
    # An EBS volume that shows up as NVMe is on Nitro whatever the type lookup said.
    nitro = type_facts.nitro if type_facts else None
    found["nitro"] = True if info.kind == devices.EBS_NVME else nitro
    volume_type = given.type if given is not None and "type" in explicit else record.volume_type
    burst = None
    kind = volume_types.known(volume_type)
    if kind is not None and kind.bursts and "burst_balance_pct" not in explicit:
        burst = _optional(
            notes, lambda: read_burst_balance(clients.cloudwatch(), record.volume_id, now=now)
        )
        if burst is not None:
            found["burst_balance_pct"] = burst.percent
            notes.extend([burst.note] if burst.note else [])
    exceeded = _optional(
        notes, lambda: read_exceeded_checks(clients.cloudwatch(), record.volume_id, now=now))
    if exceeded is not None:
        said = exceeded_note(record.volume_id, exceeded)
        notes.extend([said] if said else [])
    init = _optional(
        notes,
        lambda: read_initialization(
            clients.ec2(),
            record.volume_id,
            source=record.source,
            fast_restored=record.fast_restored,
            rate_mibps=record.init_rate_mibps,
        ),
    )
    volume, conflicts = merge(
        given, found, defaulted=frozenset(defaulted), subject=record.volume_id
    )
    return Discovery(
        volume,
        info,
        identity,
        clients.region,
        type_facts,
        record,
        init,
        burst,
        tuple(notes + list(conflicts)),
    )


def _instance_store(
    info: DeviceInfo,
    identity: InstanceIdentity,
    clients: AwsClients,
    given: Volume | None,
    notes: list[str],
) -> Discovery:
    if given is not None and "type" in given_fields(given) and not is_instance_store(given.type):
        raise NotEbsVolumeError(
            f"{info.describe()} is instance storage, not an EBS volume, so "
            f"--volume-type={given.type} cannot describe it. Pass --volume-type=instance-store, "
            "or name the device of an attached EBS volume (lsblk -o +SERIAL,MODEL)."
        )
    type_facts = _instance_type(clients, given, identity, given_fields(given), notes)
    found = {
        "type": INSTANCE_STORE,
        "instance_type": identity.instance_type,
        "nitro": type_facts.nitro if type_facts else None,
    }
    volume, conflicts = merge(given, found, subject=info.path)
    return Discovery(
        volume, info, identity, clients.region, type_facts, notes=tuple(notes + list(conflicts))
    )


def _instance_type(
    clients: AwsClients,
    given: Volume | None,
    identity: InstanceIdentity,
    explicit: frozenset[str],
    notes: list[str],
) -> InstanceTypeFacts | None:
    """Facts for the instance type the models will use: the given one if any (it wins)."""
    name = given.instance_type if given is not None and "instance_type" in explicit else None
    name = name or identity.instance_type
    facts = describe_instance_type(clients.ec2(), name)
    if facts is None:
        notes.append(f"DescribeInstanceTypes does not know {name}; its EBS limits are unknown.")
    return facts


def _optional(notes: list[str], call: Callable[[], _T]) -> _T | None:
    """Run a call for a nice-to-have fact; a failure becomes a note, not an error."""
    # botocore: only for a run that talks to AWS
    from botocore.exceptions import BotoCoreError, ClientError
    from botocore.parsers import (
        ResponseParserError,  # e.g. an HTML error page from a proxy
    )

    try:
        return call()
    except AccessDeniedError as exc:
        notes.append(str(exc))
    except AwsError as exc:
        notes.append(f"{exc} (continuing without it)")
    except (BotoCoreError, ClientError, ResponseParserError) as exc:
        notes.append(f"An optional AWS call failed ({exc}); continuing without it.")
    return None


def refuse_non_aws(info: DeviceInfo) -> None:
    if info.kind in (devices.LOOP, devices.OTHER, devices.OTHER_NVME):
        what = {
            devices.LOOP: "a loop device",
            devices.OTHER_NVME: f"an NVMe drive with model {info.model or 'unknown'!r}",
        }.get(info.kind, "not a disk name EC2 attaches volumes under")
        raise NotEbsVolumeError(
            f"{info.describe()} is {what}, not an EBS volume or instance store, so there is "
            "nothing to discover. Pass --volume-type/--volume-size (and --volume-iops, "
            "--volume-throughput, --instance-type) to describe it, or use --emulate."
        )


def _is_instance_store(info: DeviceInfo, identity: InstanceIdentity) -> bool:
    if info.kind == devices.INSTANCE_STORE:
        return True
    # On Xen, instance store has no model string; IMDS lists it as ephemeralN.
    return info.kind == devices.XEN and info.kernel_name in identity.ephemeral_device_names()


def _check_attachment(record: VolumeRecord, identity: InstanceIdentity, info: DeviceInfo) -> None:
    if record.attachment_for(identity.instance_id) is not None:
        return
    others = ", ".join(sorted({str(a.get("InstanceId")) for a in record.attachments}))
    where = f"attached to {others}" if others else f"not attached to any instance ({record.state})"
    raise VolumeAttachedElsewhereError(
        f"Volume {record.volume_id} behind {info.describe()} is {where}, not to this instance "
        f"{identity.instance_id}. The instance metadata and the device disagree: check "
        "AWS_EC2_METADATA_SERVICE_ENDPOINT and that --device names a disk of this machine."
    )
