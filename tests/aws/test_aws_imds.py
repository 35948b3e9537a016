"""Instance metadata through botocore's IMDS client, against a fake IMDS on 127.0.0.1."""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

import time

import pytest
from support.aws import FakeImds, closed_port_url

from pytest_ebsperf.aws.failures import NotOnEc2Error
from pytest_ebsperf.aws.imds import ImdsClient


def client(url: str, **env: str) -> ImdsClient:
    return ImdsClient(endpoint=url, env=env)


def test_identity_is_read_with_an_imdsv2_token_put_before_any_get(fake_imds: FakeImds) -> None:
    identity = client(fake_imds.url).identity()
    assert (identity.instance_id, identity.instance_type) == ("i-0123456789abcdef0", "m5.large")
    assert (identity.region, identity.availability_zone) == ("us-east-1", "us-east-1a")
    assert fake_imds.requests[0] == ("PUT", "/latest/api/token")
    assert all(method == "GET" for method, _ in fake_imds.requests[1:])


def test_the_region_falls_back_to_the_availability_zone_without_placement_region(
    fake_imds: FakeImds,
) -> None:
    fake_imds.region = None
    fake_imds.availability_zone = "eu-west-3c"
    assert client(fake_imds.url).identity().region == "eu-west-3"


def test_placement_region_wins_over_the_zone_name_for_local_zones(fake_imds: FakeImds) -> None:
    fake_imds.availability_zone = "us-west-2-lax-1a"
    fake_imds.region = "us-west-2"
    assert client(fake_imds.url).identity().region == "us-west-2"


def test_ephemeral_entries_of_the_block_device_mapping_name_instance_store(
    fake_imds: FakeImds,
) -> None:
    fake_imds.block_device_mapping.update({"ephemeral0": "sdb", "ebs1": "sdf"})
    identity = client(fake_imds.url).identity()
    assert identity.block_device_mapping["ebs1"] == "sdf"
    assert identity.ephemeral_device_names() == {"sdb", "xvdb"}


def test_a_failing_block_device_mapping_becomes_a_note_after_one_retry(
    fake_imds: FakeImds,
) -> None:
    fake_imds.bdm_status = 500  # what moto's IMDS answers for block-device-mapping/
    identity = client(fake_imds.url).identity()
    assert identity.block_device_mapping == {}
    assert "no block-device-mapping/" in identity.notes[0]
    asked = [path for _, path in fake_imds.requests if "block-device-mapping" in path]
    assert len(asked) == 2  # one retry, as configured


def test_the_endpoint_override_environment_variable_is_honoured(
    fake_imds: FakeImds, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", fake_imds.url)
    imds = ImdsClient()
    assert imds.endpoint == fake_imds.url
    assert imds.identity().instance_id == "i-0123456789abcdef0"


def test_disabled_metadata_is_reported_without_any_request(fake_imds: FakeImds) -> None:
    imds = client(fake_imds.url, AWS_EC2_METADATA_DISABLED="true")
    with pytest.raises(NotOnEc2Error, match=r"AWS_EC2_METADATA_DISABLED=true"):
        imds.identity()
    assert fake_imds.requests == []


def test_an_unreachable_endpoint_means_not_on_ec2_within_seconds() -> None:
    url = closed_port_url()
    started = time.monotonic()
    with pytest.raises(NotOnEc2Error) as caught:
        client(url).identity()
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert message.startswith(f"Not running on EC2: the instance metadata service at {url}")
    assert "--volume-type/--volume-size/--instance-type" in message


def test_something_that_is_not_imds_answering_is_not_taken_for_an_instance(
    fake_imds: FakeImds,
) -> None:
    fake_imds.instance_id = ""  # answers the token, but has no instance-id
    with pytest.raises(NotOnEc2Error, match=r"it has no meta-data/instance-id"):
        client(fake_imds.url).identity()


def test_imdsv1_is_used_when_the_token_put_is_refused(fake_imds: FakeImds) -> None:
    fake_imds.require_token = False
    fake_imds.token_status = 405
    assert client(fake_imds.url).identity().instance_id == "i-0123456789abcdef0"
    assert ("GET", "/latest/meta-data/instance-id") in fake_imds.requests


def test_region_lookup_returns_none_off_ec2_instead_of_raising() -> None:
    assert client(closed_port_url()).region() is None
