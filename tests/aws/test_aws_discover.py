"""discover(): device -> Volume against a moto server, a fake IMDS and a fake sysfs."""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
import pytest
from support.aws import AZ, FakeImds, FakeSystem, ec2_client, metric_points, run_instance

from pytest_ebsperf.aws import AwsClients, discover
from pytest_ebsperf.aws.failures import (
    NotEbsVolumeError,
    VolumeAttachedElsewhereError,
)
from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED, GIVEN, Volume


def attach(instance_id: str, device: str = "/dev/sdf", **create: Any) -> str:
    ec2 = ec2_client()
    volume_id = str(ec2.create_volume(AvailabilityZone=AZ, **create)["VolumeId"])
    ec2.attach_volume(VolumeId=volume_id, InstanceId=instance_id, Device=device)
    return volume_id


def nitro_device(system: FakeSystem, volume_id: str, name: str = "nvme1n1") -> str:
    return system.nvme(name, volume_id.replace("-", ""))


def run(system: FakeSystem, device: str, **kwargs: Any) -> Any:
    kwargs.setdefault("clients", AwsClients(max_attempts=2))
    return discover(device, sysfs_root=system.sysfs_root, dev_root=system.dev_root, **kwargs)


def test_a_nitro_gp3_volume_is_described_from_the_api_and_marked_discovered(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=200, VolumeType="gp3", Iops=6000, Throughput=500)
    found = run(fake_system, nitro_device(fake_system, volume_id))
    volume = found.volume
    assert (volume.type, volume.size_gib, volume.iops, volume.throughput_mibps) == (
        "gp3", 200, 6000, 500.0,
    )
    assert (volume.volume_id, volume.instance_type, volume.nitro) == (volume_id, "m5.large", True)
    assert volume.encrypted is False
    assert set(volume.provenance.values()) == {DISCOVERED}
    assert found.record.attachment_state == "attached"
    assert found.instance.instance_id == instance and found.region == "us-east-1"
    report = json.loads(json.dumps(found.as_dict()))  # goes into JSON reports as it is
    assert (report["initialization"], report["instance_type"]["hypervisor"]) == ("empty", "nitro")


def test_a_gp3_answer_without_throughput_gets_the_included_125_mibps_marked_default(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=50, VolumeType="gp3")  # moto omits Throughput
    volume = run(fake_system, nitro_device(fake_system, volume_id)).volume
    assert (volume.iops, volume.throughput_mibps) == (3000, 125.0)
    assert volume.provenance["throughput_mibps"] == DEFAULT


def test_ebs_optimized_limits_come_from_describe_instance_types(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="io1", Iops=3000)
    limits = run(fake_system, nitro_device(fake_system, volume_id)).ebs_limits
    assert limits is not None and limits.instance_type == "m5.large"
    assert (limits.baseline_iops, limits.maximum_iops) == (3600, 18750)
    assert limits.baseline_throughput_mBps == 81.25
    assert limits.maximum_throughput_mibps == pytest.approx(593.75e6 / 2**20)
    assert limits.burstable


def test_explicit_values_win_over_discovery_and_every_conflict_is_noted(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="io1", Iops=3000)
    given = Volume(
        type="io1", size_gib=100, iops=2000, instance_type="c5.large",
        provenance={"type": GIVEN, "size_gib": GIVEN, "iops": GIVEN, "instance_type": GIVEN},
    )
    found = run(fake_system, nitro_device(fake_system, volume_id), given=given)
    assert (found.volume.iops, found.volume.instance_type) == (2000, "c5.large")
    assert found.volume.provenance["iops"] == GIVEN
    assert found.volume.provenance["encrypted"] == DISCOVERED
    assert f"--volume-iops=2000 was given but AWS says {volume_id} has 3000; using 2000 as given." in (
        found.notes
    )
    assert found.ebs_limits is not None and found.ebs_limits.instance_type == "c5.large"


def test_a_xen_device_is_found_through_its_attachment_device_name(
    aws: str, fake_imds: FakeImds, fake_system: FakeSystem
) -> None:
    fake_imds.instance_id = run_instance("m3.xlarge")
    fake_imds.instance_type = "m3.xlarge"
    volume_id = attach(fake_imds.instance_id, "/dev/sdg", Size=100, VolumeType="gp2")
    found = run(fake_system, fake_system.disk("xvdg"))
    assert found.volume.volume_id == volume_id
    assert (found.volume.type, found.volume.iops, found.volume.nitro) == ("gp2", None, False)


def test_burst_balance_is_the_newest_cloudwatch_datapoint_of_a_gp2_volume(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="gp2")
    now = datetime.now(timezone.utc)
    boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(
        Namespace="AWS/EBS",
        MetricData=metric_points(volume_id, [(now - timedelta(minutes=7), 80.0),
                                             (now - timedelta(minutes=2), 42.5)]),
    )
    found = run(fake_system, nitro_device(fake_system, volume_id), now=now)
    assert found.volume.burst_balance_pct == 42.5
    assert found.volume.provenance["burst_balance_pct"] == DISCOVERED
    assert found.burst is not None and found.burst.timestamp is not None


def test_a_gp3_volume_never_takes_a_burst_balance_from_cloudwatch(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="gp3")
    boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(
        Namespace="AWS/EBS", MetricData=metric_points(volume_id, [(datetime.now(timezone.utc), 5.0)])
    )
    found = run(fake_system, nitro_device(fake_system, volume_id))
    assert found.volume.burst_balance_pct is None and found.burst is None


def test_a_gp2_volume_without_burst_datapoints_gets_a_note_not_an_error(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="gp2")
    found = run(fake_system, nitro_device(fake_system, volume_id))
    assert found.volume.burst_balance_pct is None
    assert any(note.startswith(f"CloudWatch has no BurstBalance for {volume_id}") for note in found.notes)


def test_a_given_burst_balance_is_kept_and_cloudwatch_is_not_asked(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="gp2")
    given = Volume(type="gp2", burst_balance_pct=12.0, provenance={"burst_balance_pct": GIVEN})
    found = run(fake_system, nitro_device(fake_system, volume_id), given=given)
    assert found.volume.burst_balance_pct == 12.0 and found.burst is None
    assert found.volume.provenance["type"] == DISCOVERED


def test_the_region_comes_from_instance_metadata_when_none_is_configured(
    aws: str, fake_imds: FakeImds, fake_system: FakeSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    fake_imds.instance_id = run_instance(az="eu-west-1b")
    fake_imds.availability_zone, fake_imds.region = "eu-west-1b", "eu-west-1"
    ec2 = ec2_client("eu-west-1")
    volume_id = str(ec2.create_volume(AvailabilityZone="eu-west-1b", Size=10)["VolumeId"])
    ec2.attach_volume(VolumeId=volume_id, InstanceId=fake_imds.instance_id, Device="/dev/sdf")
    found = discover(nitro_device(fake_system, volume_id), sysfs_root=fake_system.sysfs_root,
                     dev_root=fake_system.dev_root)
    assert (found.region, found.volume.volume_id) == ("eu-west-1", volume_id)


def test_instance_store_on_nitro_is_discovered_as_instance_store(
    aws: str, fake_imds: FakeImds, fake_system: FakeSystem
) -> None:
    fake_imds.instance_id, fake_imds.instance_type = run_instance("c5d.large"), "c5d.large"
    device = fake_system.nvme("nvme1n1", "AWS1234ABCD", model="Amazon EC2 NVMe Instance Storage")
    found = run(fake_system, device)
    assert found.volume.type == "instance-store"
    assert found.instance_type is not None and found.instance_type.instance_storage_gb == 50


def test_instance_store_with_an_ebs_type_given_is_refused_with_a_sentence(
    instance: str, fake_system: FakeSystem
) -> None:
    device = fake_system.nvme("nvme1n1", "AWS1234ABCD", model="Amazon EC2 NVMe Instance Storage")
    given = Volume(type="gp3", provenance={"type": GIVEN})
    with pytest.raises(NotEbsVolumeError, match=r"is instance storage, not an EBS volume, so "
                       r"--volume-type=gp3 cannot describe it\. Pass --volume-type=instance-store"):
        run(fake_system, device, given=given)


def test_a_xen_ephemeral_disk_named_in_metadata_is_instance_store(
    aws: str, fake_imds: FakeImds, fake_system: FakeSystem
) -> None:
    fake_imds.instance_id, fake_imds.instance_type = run_instance("m3.xlarge"), "m3.xlarge"
    fake_imds.block_device_mapping["ephemeral0"] = "sdb"
    assert run(fake_system, fake_system.disk("xvdb")).volume.type == "instance-store"


def test_a_xen_disk_missing_from_the_attachments_is_not_an_ebs_volume(
    instance: str, fake_system: FakeSystem
) -> None:
    with pytest.raises(NotEbsVolumeError) as caught:
        run(fake_system, fake_system.disk("xvdh"))
    assert str(caught.value).startswith(
        f"/dev/xvdh is not among the EBS volumes attached to {instance} in us-east-1 "
        "(looked for attachment device /dev/sdh or /dev/xvdh)"
    )


def test_a_loop_device_is_refused_before_any_aws_call(
    fake_imds: FakeImds, fake_system: FakeSystem
) -> None:
    with pytest.raises(NotEbsVolumeError, match=r"^/dev/loop0 is a loop device, not an EBS volume"):
        run(fake_system, fake_system.disk("loop0"), clients=None)
    assert fake_imds.requests == []


def test_a_volume_attached_to_another_instance_is_refused(
    instance: str, fake_system: FakeSystem
) -> None:
    other = run_instance()
    volume_id = attach(other, Size=10, VolumeType="gp3")
    with pytest.raises(VolumeAttachedElsewhereError) as caught:
        run(fake_system, nitro_device(fake_system, volume_id))
    assert f"is attached to {other}, not to this instance {instance}" in str(caught.value)


def test_a_nitro_serial_of_a_volume_from_another_region_is_a_sentence_naming_the_region(
    instance: str, fake_system: FakeSystem
) -> None:
    with pytest.raises(Exception, match=r"Volume vol-0123456789abcdef0 does not exist in region "
                       r"us-east-1\. If the instance runs in another region, set AWS_REGION"):
        run(fake_system, fake_system.nvme("nvme1n1", "vol0123456789abcdef0"))


def test_cloudwatch_exceeded_checks_become_a_note_in_discovery(
    instance: str, fake_system: FakeSystem
) -> None:
    volume_id = attach(instance, Size=100, VolumeType="gp3")
    now = datetime.now(timezone.utc)
    boto3.client("cloudwatch", region_name="us-east-1").put_metric_data(
        Namespace="AWS/EBS", MetricData=[
            {"MetricName": "VolumeIOPSExceededCheck",
             "Dimensions": [{"Name": "VolumeId", "Value": volume_id}],
             "Timestamp": now - timedelta(minutes=2), "Value": value, "Unit": "None"}
            for value in (0.0, 1.0)])
    found = run(fake_system, nitro_device(fake_system, volume_id), now=now)
    said = [note for note in found.notes if note.startswith("CloudWatch: in the last")]
    assert said == [(f"CloudWatch: in the last 10 minutes the application drove more IOPS than "
                    f"{volume_id} is provisioned for (VolumeIOPSExceededCheck = 1): something "
                    "else was using the volume, or its limits bound")]


def test_no_exceeded_datapoints_say_nothing(instance: str, fake_system: FakeSystem) -> None:
    volume_id = attach(instance, Size=100, VolumeType="gp3")
    found = run(fake_system, nitro_device(fake_system, volume_id))
    assert not [note for note in found.notes if "ExceededCheck" in note]
