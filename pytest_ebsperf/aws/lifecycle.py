"""Tagging, waiting, detaching and deleting volumes the plugin created.

Every volume the plugin creates carries three tags, so that a crashed run can be cleaned up
later by :func:`~pytest_ebsperf.aws.sweep.sweep_leftovers` and so that the IAM policy can
restrict Attach/Detach/Delete to volumes that carry them (docs/aws-iam-policy.md):

* ``ebsperf:run-id``: ``ebsperf-<UTC time>-<random>``, one per run;
* ``ebsperf:created-by``: plugin version and instance id;
* ``ebsperf:expires``: ISO 8601 time after which the volume is certainly garbage.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from pytest_ebsperf import __version__
from pytest_ebsperf.aws.failures import ProvisioningError, aws_call

TAG_RUN_ID = "ebsperf:run-id"
TAG_CREATED_BY = "ebsperf:created-by"
TAG_EXPIRES = "ebsperf:expires"
RUN_ID_PREFIX = "ebsperf-"


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by time and does not collide between parallel runs."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    return f"{RUN_ID_PREFIX}{stamp}-{secrets.token_hex(3)}"


def run_tags(run_id: str, instance_id: str, expires: datetime) -> list[dict[str, str]]:
    """The three ebsperf tags, in the shape TagSpecifications wants."""
    return [
        {"Key": TAG_RUN_ID, "Value": run_id},
        {"Key": TAG_CREATED_BY, "Value": f"pytest-ebsperf {__version__} on {instance_id}"},
        {
            "Key": TAG_EXPIRES,
            "Value": expires.astimezone(timezone.utc).isoformat(timespec="seconds"),
        },
    ]


@dataclass(frozen=True)
class Waiting:
    """How to wait for EC2 state changes (botocore waiters: ``Delay`` s x ``MaxAttempts``).

    The EC2 waiters default to 15 s x 40; a fresh volume is usually available within
    seconds, so a shorter delay saves most of a poll interval per step.
    """

    delay_s: float = 5.0
    max_attempts: int = 60

    def config(self) -> dict[str, Any]:
        return {"Delay": self.delay_s, "MaxAttempts": self.max_attempts}


def wait_for(ec2: Any, waiter_name: str, volume_id: str, waiting: Waiting, what: str) -> None:
    """Run a botocore waiter (``volume_available``, ``volume_in_use``, ``volume_deleted``)."""
    # botocore: only for a run that talks to AWS
    from botocore.exceptions import WaiterError

    try:
        with aws_call("ec2:DescribeVolumes", what=what):
            ec2.get_waiter(waiter_name).wait(VolumeIds=[volume_id], WaiterConfig=waiting.config())
    except WaiterError as exc:
        seconds = waiting.delay_s * waiting.max_attempts
        raise ProvisioningError(
            f"Volume {volume_id} did not reach the expected state while {what} "
            f"(waited up to {seconds:g} s): {exc}."
        ) from exc


def detach_and_delete(
    ec2: Any, volume: dict[str, Any], *, instance_id: str | None, waiting: Waiting
) -> None:
    """Detach ``volume`` from ``instance_id`` if attached there, then delete it.

    A volume attached to any other instance is never touched: the caller decides what to
    say about it.
    """
    volume_id = str(volume["VolumeId"])
    attachments = [a for a in volume.get("Attachments", []) if a.get("State") != "detached"]
    if any(a.get("InstanceId") != instance_id for a in attachments):
        raise ProvisioningError(
            f"Volume {volume_id} is attached to another instance; it was left alone."
        )
    if attachments:
        with aws_call("ec2:DetachVolume", what=f"detaching {volume_id}"):
            ec2.detach_volume(VolumeId=volume_id, InstanceId=instance_id)
        wait_for(ec2, "volume_available", volume_id, waiting, f"detaching {volume_id}")
    with aws_call("ec2:DeleteVolume", what=f"deleting {volume_id}"):
        ec2.delete_volume(VolumeId=volume_id)


def describe(ec2: Any, volume_id: str) -> dict[str, Any] | None:
    """The DescribeVolumes entry for ``volume_id``, or None if it is already gone."""
    # botocore: only for a run that talks to AWS
    from botocore.exceptions import ClientError

    try:
        with aws_call("ec2:DescribeVolumes", what=f"looking up {volume_id}"):
            volumes = ec2.describe_volumes(VolumeIds=[volume_id]).get("Volumes", [])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "InvalidVolume.NotFound":
            return None
        raise
    return dict(volumes[0]) if volumes else None


def tagged_volumes(ec2: Any, run_id_pattern: str) -> list[dict[str, Any]]:
    """Volumes whose ``ebsperf:run-id`` tag matches ``run_id_pattern`` (EC2 ``*`` wildcards)."""
    filters = [{"Name": f"tag:{TAG_RUN_ID}", "Values": [run_id_pattern]}]
    found: list[dict[str, Any]] = []
    with aws_call("ec2:DescribeVolumes", what=f"volumes tagged {TAG_RUN_ID}={run_id_pattern}"):
        for page in ec2.get_paginator("describe_volumes").paginate(Filters=filters):
            found.extend(page.get("Volumes", []))
    return found


def tag_value(volume: dict[str, Any], key: str) -> str | None:
    """One tag's value from a DescribeVolumes entry."""
    for tag in volume.get("Tags", []):
        if tag.get("Key") == key:
            return str(tag.get("Value"))
    return None


def expiry(now: datetime, duration_s: float, margin: timedelta = timedelta(hours=1)) -> datetime:
    """When a volume of a run lasting ``duration_s`` is certainly no longer needed."""
    return now + timedelta(seconds=duration_s) + margin
