"""Provisioned volumes against the moto server: created, tagged, attached, found, and removed
on every path (success, exception, KeyboardInterrupt, interpreter exit)."""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

import atexit
import shutil
from collections.abc import Callable
from typing import Any

import pytest
from support.aws import AZ, FakeSystem, ec2_client

from pytest_ebsperf.aws import (
    AwsClients,
    CostLimitError,
    Provisioner,
    ProvisioningError,
    builtin_prices,
    parse_provision_spec,
)
from pytest_ebsperf.aws.lifecycle import (
    TAG_CREATED_BY,
    TAG_EXPIRES,
    TAG_RUN_ID,
    Waiting,
)
from pytest_ebsperf.awsmodel.volume import DEFAULT, DISCOVERED


class FakeKernel:
    """Stands in for the NVMe driver: between polls, volumes attached in moto appear in sysfs."""

    def __init__(self, system: FakeSystem, instance_id: str) -> None:
        self.system, self.instance_id = system, instance_id
        self.polls = 0

    def __call__(self, seconds: float) -> None:
        self.polls += 1
        volumes = ec2_client().describe_volumes(
            Filters=[{"Name": "attachment.instance-id", "Values": [self.instance_id]}]
        )["Volumes"]
        attached = {v["VolumeId"].replace("-", "") for v in volumes}
        present = {}
        for entry in (self.system.sys / "block").glob("nvme*"):
            serial = (entry / "device" / "serial").read_text().strip()
            if serial in attached:
                present[serial] = entry.name
            else:  # detached: the kernel drops the device
                shutil.rmtree(entry)
                (self.system.dev / entry.name).unlink()
        for serial in sorted(attached - set(present)):
            number = next(n for n in range(1, 99) if f"nvme{n}n1" not in present.values())
            present[serial] = self.system.nvme(f"nvme{number}n1", serial).rsplit("/", 1)[-1]


def provisioner(system: FakeSystem, instance_id: str, spec: str = "gp3:100", **kwargs: Any) -> Provisioner:
    kwargs.setdefault("sleep", FakeKernel(system, instance_id))
    kwargs.setdefault("device_timeout_s", 5)
    return Provisioner(
        parse_provision_spec(spec),
        duration_s=600,
        clients=AwsClients(max_attempts=2),
        prices=builtin_prices("us-east-1"),
        sysfs_root=system.sysfs_root,
        dev_root=system.dev_root,
        waiting=Waiting(delay_s=0.1, max_attempts=5),
        **kwargs,
    )


def ebsperf_volumes() -> list[dict[str, Any]]:
    volumes = ec2_client().describe_volumes()["Volumes"]
    return [v for v in volumes if any(t["Key"] == TAG_RUN_ID for t in v.get("Tags", []))]


def test_each_spec_is_created_tagged_attached_found_and_deleted_after_its_turn(
    instance: str, fake_system: FakeSystem
) -> None:
    seen: list[tuple[Any, str, dict[str, str]]] = []
    with provisioner(fake_system, instance, "gp3:100,io1:200:4000") as run:
        for volume, device in run:
            [live] = ebsperf_volumes()
            seen.append((volume, device, {t["Key"]: t["Value"] for t in live["Tags"]}))
            assert live["Attachments"][0]["InstanceId"] == instance
            assert live["AvailabilityZone"] == AZ
            # the device handed out is the one whose NVMe serial is the volume id
            serial = fake_system.sys / "block" / device.rsplit("/", 1)[-1] / "device" / "serial"
            assert serial.read_text().strip() == str(volume.volume_id).replace("-", "")
    gp3, io1 = seen[0][0], seen[1][0]
    assert (gp3.type, gp3.size_gib, gp3.iops, gp3.throughput_mibps) == ("gp3", 100, 3000, 125.0)
    assert gp3.provenance["throughput_mibps"] == DEFAULT and gp3.provenance["size_gib"] == DISCOVERED
    assert (io1.type, io1.iops, io1.nitro, io1.instance_type) == ("io1", 4000, True, "m5.large")
    tags = seen[0][2]
    assert tags[TAG_RUN_ID] == run.run_id and tags[TAG_RUN_ID].startswith("ebsperf-")
    assert tags[TAG_CREATED_BY].endswith(f"on {instance}") and TAG_EXPIRES in tags
    assert ebsperf_volumes() == []


def test_volumes_are_deleted_when_the_run_raises(instance: str, fake_system: FakeSystem) -> None:
    run = provisioner(fake_system, instance)
    with pytest.raises(RuntimeError, match="fio failed"), run:
        run.provision(run.specs[0])
        assert len(ebsperf_volumes()) == 1
        raise RuntimeError("fio failed")
    assert ebsperf_volumes() == []


def test_volumes_are_deleted_on_keyboard_interrupt(instance: str, fake_system: FakeSystem) -> None:
    run = provisioner(fake_system, instance, "gp2:10,sc1:125")
    with pytest.raises(KeyboardInterrupt), run:
        for _volume, _device in run:
            raise KeyboardInterrupt
    assert ebsperf_volumes() == []


def test_an_interrupt_while_waiting_for_the_device_still_removes_the_new_volume(
    instance: str, fake_system: FakeSystem
) -> None:
    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    run = provisioner(fake_system, instance, sleep=interrupted)
    with pytest.raises(KeyboardInterrupt), run:
        run.provision(run.specs[0])
    assert ebsperf_volumes() == []


def test_a_device_that_never_appears_is_a_sentence_and_the_volume_is_removed(
    instance: str, fake_system: FakeSystem
) -> None:
    run = provisioner(fake_system, instance, sleep=lambda s: None, device_timeout_s=0.2)
    with pytest.raises(ProvisioningError) as caught, run:
        run.provision(run.specs[0])
    assert "was attached as /dev/sdf but no local device appeared within 0.2 s" in str(caught.value)
    assert ebsperf_volumes() == []


def test_volumes_left_by_a_run_that_never_exited_are_removed_at_interpreter_exit(
    instance: str, fake_system: FakeSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    registered: list[Callable[[], None]] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    run = provisioner(fake_system, instance).__enter__()
    run.provision(run.specs[0])
    assert len(ebsperf_volumes()) == 1 and len(registered) == 1
    registered[0]()  # what the interpreter would call on the way out
    assert ebsperf_volumes() == []


def test_the_run_is_refused_above_the_cost_limit_before_anything_is_created(
    instance: str, fake_system: FakeSystem
) -> None:
    run = provisioner(fake_system, instance, "io2:1000:64000", max_cost_usd=0.50)
    with pytest.raises(CostLimitError) as caught, run:
        pytest.fail("the body must not run")
    message = str(caught.value)
    assert message.startswith("Refusing to create volumes: 1 volume (io2 1,000 GiB 64,000 IOPS, "
                              "billed 1 h) for 10 min in us-east-1: about $5.08")
    assert "above the limit of $0.5. Raise the cost limit" in message
    assert ec2_client().describe_volumes(Filters=[{"Name": "volume-type", "Values": ["io2"]}])[
        "Volumes"
    ] == []


def test_a_free_device_name_skips_names_already_attached(
    instance: str, fake_system: FakeSystem
) -> None:
    ec2 = ec2_client()
    taken = ec2.create_volume(AvailabilityZone=AZ, Size=1)["VolumeId"]
    ec2.attach_volume(VolumeId=taken, InstanceId=instance, Device="/dev/sdf")
    fake_system.disk("xvdg")  # present locally although the API does not list it
    with provisioner(fake_system, instance) as run:
        run.provision(run.specs[0])
        [mine] = ebsperf_volumes()
        assert mine["Attachments"][0]["Device"] == "/dev/sdh"
    assert ec2.describe_volumes(VolumeIds=[taken])["Volumes"][0]["State"] == "in-use"


def test_cleanup_also_finds_volumes_of_this_run_it_never_heard_back_about(
    instance: str, fake_system: FakeSystem
) -> None:
    run = provisioner(fake_system, instance)
    with run:
        orphan = ec2_client().create_volume(
            AvailabilityZone=AZ, Size=1,
            TagSpecifications=[{"ResourceType": "volume",
                                "Tags": [{"Key": TAG_RUN_ID, "Value": run.run_id}]}],
        )["VolumeId"]
    assert orphan not in [v["VolumeId"] for v in ec2_client().describe_volumes()["Volumes"]]


def test_without_a_price_table_the_estimate_tries_the_price_list_and_says_what_it_used(
    instance: str, fake_system: FakeSystem
) -> None:
    run = Provisioner(parse_provision_spec("gp3:100"), duration_s=60,
                      clients=AwsClients(max_attempts=1))
    estimate = run.estimate()  # moto has no Price List API: the built-in table stands in
    assert estimate.source.startswith("built-in price table (us-east-1, as of 2025); the Price "
                                      "List API was not usable")
    assert estimate.total_usd == pytest.approx(100 * 0.08 * 60 / (30 * 86_400))
