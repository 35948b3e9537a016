"""sweep_leftovers(): removes what crashed runs left, and nothing else."""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from support.aws import AZ, ec2_client, run_instance

from pytest_ebsperf.aws import AwsClients, SweepReport, sweep_leftovers
from pytest_ebsperf.aws.lifecycle import TAG_RUN_ID, Waiting
from pytest_ebsperf.errors import ConfigError

LATER = datetime.now(timezone.utc) + timedelta(hours=3)  # every volume made now is 3 h old then


def volume(run_id: str | None = None, attach_to: str | None = None, device: str = "/dev/sdf") -> str:
    ec2 = ec2_client()
    tags = [{"ResourceType": "volume", "Tags": [{"Key": TAG_RUN_ID, "Value": run_id}]}]
    volume_id = str(ec2.create_volume(
        AvailabilityZone=AZ, Size=1, **({"TagSpecifications": tags} if run_id else {})
    )["VolumeId"])
    if attach_to:
        ec2.attach_volume(VolumeId=volume_id, InstanceId=attach_to, Device=device)
    return volume_id


def existing() -> set[str]:
    return {v["VolumeId"] for v in ec2_client().describe_volumes()["Volumes"]}


def sweep(**kwargs: Any) -> SweepReport:
    return sweep_leftovers(clients=AwsClients(max_attempts=2), waiting=Waiting(0.1, 5), **kwargs)


def test_a_tagged_leftover_is_deleted_and_untagged_volumes_are_left_alone(aws: str) -> None:
    leftover = volume("ebsperf-20250101T000000Z-abc123")
    untagged = volume()
    foreign = volume("otherteam-run-1")
    report = sweep(older_than=timedelta(hours=1), now=LATER)
    assert report.deleted == (leftover,)
    assert leftover not in existing() and {untagged, foreign} <= existing()


def test_a_leftover_younger_than_the_limit_is_kept_because_its_run_may_still_be_going(
    aws: str,
) -> None:
    recent = volume("ebsperf-20250101T000000Z-def456")
    report = sweep(older_than=timedelta(hours=1))
    assert recent in existing()
    assert report.skipped[0][0] == recent and "too recent" in report.skipped[0][1]


def test_a_leftover_attached_here_is_detached_first_and_one_attached_elsewhere_is_reported(
    instance: str,
) -> None:
    other = run_instance()
    here = volume("ebsperf-run-a", attach_to=instance)
    there = volume("ebsperf-run-b", attach_to=other)
    report = sweep(instance_id=instance, now=LATER)
    assert report.deleted == (here,)
    assert there in existing()
    assert report.skipped == ((there, f"attached to {other}"),)
    assert report.sentence() == (
        f"deleted 1 leftover volume(s); left {there} alone (attached to {other})."
    )


def test_a_dry_run_deletes_nothing(aws: str) -> None:
    leftover = volume("ebsperf-run-c")
    report = sweep(now=LATER, dry_run=True)
    assert leftover in existing() and report.skipped == ((leftover, "dry run"),)


@pytest.mark.parametrize("prefix", ["", "ebsperf-*", "  "])
def test_a_prefix_that_would_match_everything_is_refused(prefix: str) -> None:
    with pytest.raises(ConfigError, match=r"is not a usable run-id prefix for a sweep"):
        sweep_leftovers(prefix)
