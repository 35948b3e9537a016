"""``DescribeVolumes``: the volume record behind a device.

Field meanings follow the EC2 API reference for ``Volume`` (ecosystem-notes §3.2): ``Iops``
is the provisioned IOPS for gp3/io1/io2 but gp2's *baseline* ("the rate at which the volume
accumulates I/O credits"), which is derived from the size and therefore ignored here; st1,
sc1 and standard have none. ``Throughput`` (MiB/s) exists for gp3 only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pytest_ebsperf.aws.devices import DeviceInfo
from pytest_ebsperf.aws.failures import AwsError, NotEbsVolumeError, aws_call
from pytest_ebsperf.aws.imds import InstanceIdentity
from pytest_ebsperf.awsmodel import volume_types


@dataclass(frozen=True)
class VolumeRecord:
    """One ``Volumes[]`` entry of DescribeVolumes, typed."""

    volume_id: str
    volume_type: str
    size_gib: int
    state: str = ""
    iops: int | None = None
    throughput_mibps: float | None = None
    encrypted: bool | None = None
    snapshot_id: str | None = None
    source_volume_id: str | None = None
    fast_restored: bool = False
    #: Provisioned Rate for Volume Initialization in MiB/s (None: none given at creation).
    init_rate_mibps: float | None = None
    availability_zone: str | None = None
    create_time: datetime | None = None
    attachments: tuple[Mapping[str, Any], ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> VolumeRecord:
        """Build from the boto3 dict."""
        return cls(
            volume_id=str(data["VolumeId"]),
            volume_type=str(data["VolumeType"]),
            size_gib=int(data["Size"]),
            state=str(data.get("State", "")),
            iops=data.get("Iops"),
            throughput_mibps=_float_or_none(data.get("Throughput")),
            encrypted=data.get("Encrypted"),
            snapshot_id=data.get("SnapshotId") or None,
            source_volume_id=data.get("SourceVolumeId") or None,
            fast_restored=bool(data.get("FastRestored", False)),
            init_rate_mibps=_float_or_none(data.get("VolumeInitializationRate")),
            availability_zone=data.get("AvailabilityZone"),
            create_time=data.get("CreateTime"),
            attachments=tuple(data.get("Attachments", [])),
            tags={t["Key"]: t["Value"] for t in data.get("Tags", [])},
        )

    @property
    def source(self) -> str | None:
        """The snapshot or volume this one was created from (None: created empty)."""
        return self.snapshot_id or self.source_volume_id

    def attachment_for(self, instance_id: str) -> Mapping[str, Any] | None:
        """This volume's attachment to ``instance_id``, if any."""
        for attachment in self.attachments:
            if attachment.get("InstanceId") == instance_id:
                return attachment
        return None

    @property
    def attachment_state(self) -> str | None:
        """``attached``/``attaching``/... of the first attachment (None when detached)."""
        return str(self.attachments[0].get("State")) if self.attachments else None

    def volume_fields(self) -> tuple[dict[str, Any], set[str]]:
        """Discovered :class:`Volume` fields, and the names that are assumed defaults."""
        found: dict[str, Any] = {
            "type": self.volume_type,
            "size_gib": self.size_gib,
            "encrypted": self.encrypted,
            "volume_id": self.volume_id,
        }
        defaulted: set[str] = set()
        # A type's included IOPS and throughput (gp3's, B-GP3): AWS reports both for every
        # such volume; moto omits Throughput unless it was set, so a missing value is filled
        # in from the type's record and marked assumed.
        kind = volume_types.known(self.volume_type)
        iops_rule = kind.iops if kind is not None else None
        if iops_rule is not None:
            found["iops"] = self.iops
            if self.iops is None and iops_rule.default is not None:
                found["iops"], defaulted = int(iops_rule.default), {"iops"}
        tput_rule = kind.throughput_mibps if kind is not None else None
        if tput_rule is not None:
            found["throughput_mibps"] = self.throughput_mibps
            if self.throughput_mibps is None and tput_rule.default is not None:
                found["throughput_mibps"] = tput_rule.default
                defaulted = defaulted | {"throughput_mibps"}
        return found, defaulted


def describe_volume(ec2: Any, volume_id: str, *, region: str) -> VolumeRecord:
    """DescribeVolumes for one id; a missing volume is an :class:`AwsError` sentence."""
    # botocore: only for a run that talks to AWS
    from botocore.exceptions import ClientError

    try:
        with aws_call("ec2:DescribeVolumes", what=f"looking up {volume_id}"):
            response = ec2.describe_volumes(VolumeIds=[volume_id])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "InvalidVolume.NotFound":
            raise
        response = {"Volumes": []}
    volumes = response.get("Volumes", [])
    if not volumes:
        raise AwsError(
            f"Volume {volume_id} does not exist in region {region}. If the instance runs in "
            "another region, set AWS_REGION to it; otherwise pass the volume facts on the "
            "command line."
        )
    return VolumeRecord.from_api(volumes[0])


def find_attached_volume(
    ec2: Any, info: DeviceInfo, identity: InstanceIdentity, *, region: str
) -> VolumeRecord:
    """The volume behind ``info``: by NVMe serial, else by attachment device name (Xen)."""
    if info.volume_id:
        return describe_volume(ec2, info.volume_id, region=region)
    filters = [
        {"Name": "attachment.instance-id", "Values": [identity.instance_id]},
        {"Name": "attachment.device", "Values": list(info.attachment_names)},
    ]
    with aws_call("ec2:DescribeVolumes", what=f"volumes attached to {identity.instance_id}"):
        volumes = ec2.describe_volumes(Filters=filters).get("Volumes", [])
    if not volumes:
        names = " or ".join(info.attachment_names)
        raise NotEbsVolumeError(
            f"{info.describe()} is not among the EBS volumes attached to {identity.instance_id} "
            f"in {region} (looked for attachment device {names}), so it is not an EBS volume "
            "of this instance: it may be instance store (pass --volume-type=instance-store) or "
            "a disk EC2 did not attach. Pass --volume-type/--volume-size to describe it."
        )
    return VolumeRecord.from_api(volumes[0])


def _float_or_none(value: Any) -> float | None:
    return float(value) if value is not None else None
