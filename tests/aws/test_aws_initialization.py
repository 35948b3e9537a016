"""Initialization state of snapshot-restored volumes (claims.md B-INIT).

moto 5.2 does not implement DescribeVolumeStatus (it raises NotImplementedError, HTTP 500 in
server mode), so the parser is tested on responses shaped like the botocore service model;
botocore's Stubber validates them against that model. The end-to-end test injects the same
shape into an otherwise real discovery against the moto server.
"""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from support.aws import AZ, FakeSystem, ec2_client

from pytest_ebsperf.aws import AwsClients, discover
from pytest_ebsperf.aws.initialization import (
    InitializationState,
    initialization_read_argv,
    initialization_read_estimate_s,
    provisioned_rate_time_s,
    read_initialization,
)

VOLUME = "vol-0123456789abcdef0"
SNAPSHOT = "snap-0fedcba9876543210"


def status_response(volume_id: str = VOLUME, **details: Any) -> dict[str, Any]:
    """A DescribeVolumeStatus answer with InitializationStatusDetails (API reference shape)."""
    return {
        "VolumeStatuses": [
            {
                "VolumeId": volume_id,
                "AvailabilityZone": AZ,
                "VolumeStatus": {"Status": "ok", "Details": []},
                "Actions": [],
                "Events": [],
                "InitializationStatusDetails": details,
            }
        ]
    }


def stubbed_read(response: dict[str, Any], **kwargs: Any) -> InitializationState:
    ec2 = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    with Stubber(ec2) as stub:
        stub.add_response("describe_volume_status", response, {"VolumeIds": [VOLUME]})
        state = read_initialization(ec2, VOLUME, **kwargs)
        stub.assert_no_pending_responses()
    return state


def test_a_restored_volume_at_37_percent_gives_the_lazy_loading_skip_reason() -> None:
    state = stubbed_read(
        status_response(InitializationType="default", Progress=37), source=SNAPSHOT
    )
    assert not state.complete
    assert state.skip_reason() == (
        f"volume {VOLUME} was restored from {SNAPSHOT} and is 37 % initialized: numbers would "
        "reflect lazy loading, not the volume type. Wait for 100 % (aws ec2 "
        "describe-volume-status) or opt in to the initialization read that reads every block once."
    )
    assert state.label() == "37 % (default)"


def test_a_provisioned_rate_initialization_says_how_long_is_left() -> None:
    response = status_response(
        InitializationType="provisioned-rate", Progress=80, EstimatedTimeToCompleteInSeconds=5400
    )
    reason = stubbed_read(response, source=SNAPSHOT).skip_reason()
    assert reason is not None and "is 80 % initialized, about 1.5 h to go:" in reason


def test_a_volume_copy_is_described_as_copied() -> None:
    response = status_response(InitializationType="volume-copy", Progress=5)
    reason = stubbed_read(response, source="vol-0aaaaaaaaaaaaaaaa").skip_reason()
    assert reason is not None and "was copied from vol-0aaaaaaaaaaaaaaaa" in reason


def test_a_fully_initialized_volume_has_no_skip_reason() -> None:
    state = stubbed_read(status_response(InitializationType="default", Progress=100), source=SNAPSHOT)
    assert state.complete and state.skip_reason() is None


def test_empty_and_fast_restored_volumes_are_complete_without_asking_aws() -> None:
    ec2 = boto3.client("ec2", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    with Stubber(ec2):  # no response queued: any call would raise
        assert read_initialization(ec2, VOLUME, source=None).label() == "empty"
        fast = read_initialization(ec2, VOLUME, source=SNAPSHOT, fast_restored=True)
    assert fast.complete and fast.label() == "fast snapshot restore"


def test_discovery_of_a_restored_volume_carries_the_skip_reason(
    instance: str, fake_system: FakeSystem
) -> None:
    ec2 = ec2_client()
    source = ec2.create_volume(AvailabilityZone=AZ, Size=20)["VolumeId"]
    snapshot = ec2.create_snapshot(VolumeId=source)["SnapshotId"]
    volume_id = ec2.create_volume(AvailabilityZone=AZ, SnapshotId=snapshot, VolumeType="gp3")[
        "VolumeId"
    ]
    ec2.attach_volume(VolumeId=volume_id, InstanceId=instance, Device="/dev/sdf")
    clients = AwsClients(max_attempts=1)
    answer = status_response(volume_id, InitializationType="default", Progress=37)
    clients.ec2().meta.events.register(  # moto lacks this call: answer it like AWS would
        "before-call.ec2.DescribeVolumeStatus", lambda **_: (_Http(), answer)
    )
    found = discover(fake_system.nvme("nvme1n1", volume_id.replace("-", "")), clients=clients,
                     sysfs_root=fake_system.sysfs_root, dev_root=fake_system.dev_root)
    assert found.record is not None and found.record.snapshot_id == snapshot
    assert found.skip_reason is not None
    assert found.skip_reason.startswith(f"volume {volume_id} was restored from {snapshot} and is 37 %")


def test_discovery_notes_an_unknown_initialization_state_when_the_call_fails(
    instance: str, fake_system: FakeSystem
) -> None:
    ec2 = ec2_client()
    source = ec2.create_volume(AvailabilityZone=AZ, Size=20)["VolumeId"]
    snapshot = ec2.create_snapshot(VolumeId=source)["SnapshotId"]
    volume_id = ec2.create_volume(AvailabilityZone=AZ, SnapshotId=snapshot)["VolumeId"]
    ec2.attach_volume(VolumeId=volume_id, InstanceId=instance, Device="/dev/sdf")
    found = discover(fake_system.nvme("nvme1n1", volume_id.replace("-", "")),
                     clients=AwsClients(max_attempts=1), sysfs_root=fake_system.sysfs_root,
                     dev_root=fake_system.dev_root)
    assert found.initialization is None and found.skip_reason is None
    assert any(note.startswith("An optional AWS call failed") for note in found.notes)


class _Http:
    """Just enough of an HTTP response for botocore's before-call short cut."""

    status_code = 200

    @property
    def headers(self) -> dict[str, str]:
        return {}


def test_the_initialization_read_is_awss_documented_fio_command_made_read_only() -> None:
    argv = initialization_read_argv("/dev/nvme1n1")
    documented = ["fio", "--filename=/dev/nvme1n1", "--rw=read", "--bs=1M", "--iodepth=32",
                  "--ioengine=libaio", "--direct=1", "--name=volume-initialize"]
    assert argv[: len(documented)] == documented
    assert {"--readonly", "--allow_file_create=0"} <= set(argv)


def test_the_initialization_read_estimate_counts_only_the_blocks_still_to_fetch() -> None:
    assert initialization_read_estimate_s(100, 250) == pytest.approx(409.6)
    assert initialization_read_estimate_s(100, 250, progress_pct=75) == pytest.approx(102.4)


def test_a_3_tb_volume_at_the_maximum_provisioned_rate_takes_about_2_8_hours() -> None:
    assert provisioned_rate_time_s(3000, 300) / 3600 == pytest.approx(2.84, abs=0.01)
    with pytest.raises(ValueError, match=r"AWS accepts 100-300 MiB/s"):
        provisioned_rate_time_s(100, 500)


def test_a_provisioned_rate_is_read_from_describe_volumes_and_wins_over_fast_restore() -> None:
    from pytest_ebsperf.aws.volumes import VolumeRecord

    record = VolumeRecord.from_api({"VolumeId": VOLUME, "VolumeType": "gp3", "Size": 500,
                                    "SnapshotId": SNAPSHOT, "FastRestored": True,
                                    "VolumeInitializationRate": 300})
    assert record.init_rate_mibps == 300.0
    # a rate given with a fast-restore snapshot: "the volume will be initialized at the
    # specified rate instead" (B-INIT), so AWS is asked how far it is
    state = stubbed_read(status_response(InitializationType="provisioned-rate", Progress=40),
                         source=SNAPSHOT, fast_restored=True, rate_mibps=300)
    assert not state.complete and state.rate_mibps == 300
    assert state.label() == "40 % (provisioned-rate at 300 MiB/s)"


def test_the_initialization_read_workload_is_awss_command() -> None:
    from pytest_ebsperf.aws.initialization import initialization_workload

    work = initialization_workload(900)
    assert (work.pattern, work.bs, work.iodepth, work.numjobs, work.engine, work.direct) == \
        ("read", 2**20, 32, 1, "libaio", True)
    assert work.once and work.runtime_s == 900 and work.ramp_s == 0
