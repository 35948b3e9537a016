"""Every AWS failure a user can fix reads as a sentence: credentials, IAM, EC2, throttling."""

# Fixtures are imported from test_aws_support, so using them as arguments redefines the name.

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from botocore.exceptions import ClientError, NoCredentialsError
from support.aws import LOOPBACK, FakeImds, FakeSystem, closed_port_url

from pytest_ebsperf.aws import AwsClients, discover
from pytest_ebsperf.aws.failures import (
    AccessDeniedError,
    NoCredentialsFoundError,
    NotOnEc2Error,
    ThrottledError,
    aws_call,
    denied_action,
)

EC2_DENIAL = (
    "You are not authorized to perform this operation. User: arn:aws:sts::123456789012:"
    "assumed-role/ci/i-0abc is not authorized to perform: ec2:DescribeVolumes because no "
    "identity-based policy allows the ec2:DescribeVolumes action. Encoded authorization "
    "failure message: AbCdEf"
)


def client_error(code: str, message: str, operation: str = "DescribeVolumes", **meta: Any) -> ClientError:
    response: Any = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": meta}
    return ClientError(response, operation)


def raised_by(exc: BaseException, action: str = "ec2:DescribeVolumes") -> BaseException:
    with pytest.raises(BaseException) as caught, aws_call(action, what="looking up vol-1"):
        raise exc
    return caught.value


def test_ec2_unauthorized_operation_names_the_missing_action() -> None:
    error = raised_by(client_error("UnauthorizedOperation", EC2_DENIAL))
    assert isinstance(error, AccessDeniedError) and error.action == "ec2:DescribeVolumes"
    assert str(error).startswith(
        "AWS denied ec2:DescribeVolumes (looking up vol-1): the credentials in use lack the IAM "
        "permission 'ec2:DescribeVolumes'. Add it to the role or user (docs/aws-iam-policy.md"
    )
    assert str(error).endswith("to skip discovery.")


def test_a_denial_naming_another_service_names_that_action() -> None:
    message = "User: arn:aws:iam::1:user/x is not authorized to perform: kms:CreateGrant on ..."
    error = raised_by(client_error("AccessDenied", message), "ec2:CreateVolume")
    assert isinstance(error, AccessDeniedError) and error.action == "kms:CreateGrant"
    assert "instead of provisioning" in str(error)


def test_a_denial_without_an_action_in_its_text_names_the_called_action() -> None:
    assert denied_action("Access Denied", "pricing:GetProducts") == "pricing:GetProducts"


def test_throttling_after_retries_says_how_often_it_was_retried() -> None:
    error = raised_by(client_error("RequestLimitExceeded", "Request limit exceeded.", RetryAttempts=5))
    assert isinstance(error, ThrottledError)
    assert str(error).startswith(
        "AWS throttled ec2:DescribeVolumes (looking up vol-1) (RequestLimitExceeded) and kept "
        "doing so after 5 retries."
    )


def test_no_credentials_names_the_chain_and_the_options_that_skip_discovery() -> None:
    error = raised_by(NoCredentialsError())
    assert isinstance(error, NoCredentialsFoundError)
    assert str(error).startswith("No AWS credentials found (botocore looked at environment")
    assert str(error).endswith(
        "Pass --volume-type/--volume-size/--volume-iops/--volume-throughput/--instance-type to "
        "skip discovery, or configure credentials (AWS_PROFILE, instance role)."
    )


def test_errors_nobody_can_fix_are_passed_through_unchanged() -> None:
    original = client_error("InvalidParameterValue", "bad filter")
    assert raised_by(original) is original
    assert isinstance(raised_by(KeyError("x")), KeyError)


# --------------------------------------------------------------- against real HTTP endpoints
def test_discovery_without_credentials_stops_with_the_credentials_sentence(
    aws: str, fake_imds: FakeImds, fake_system: FakeSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    device = fake_system.nvme("nvme1n1", "vol0123456789abcdef0")
    with pytest.raises(NoCredentialsFoundError, match=r"^No AWS credentials found"):
        discover(device, sysfs_root=fake_system.sysfs_root, dev_root=fake_system.dev_root)
    # botocore's instance-role provider asked the (fake) metadata service, and nothing else.
    assert any("iam/security-credentials" in path for _, path in fake_imds.requests)




def test_discovery_with_a_policy_lacking_describe_volumes_names_that_permission(
    instance: str, fake_system: FakeSystem, restricted_user: None
) -> None:
    device = fake_system.nvme("nvme1n1", "vol0123456789abcdef0")
    with pytest.raises(AccessDeniedError) as caught:
        discover(device, sysfs_root=fake_system.sysfs_root, dev_root=fake_system.dev_root)
    assert caught.value.action == "ec2:DescribeVolumes"
    assert "lack the IAM permission 'ec2:DescribeVolumes'" in str(caught.value)


def test_discovery_off_ec2_says_so_and_what_to_pass(
    aws: str, fake_system: FakeSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", closed_port_url())
    device = fake_system.nvme("nvme1n1", "vol0123456789abcdef0")
    with pytest.raises(NotOnEc2Error, match=r"^Not running on EC2: the instance metadata service"):
        discover(device, sysfs_root=fake_system.sysfs_root, dev_root=fake_system.dev_root)


@pytest.fixture
def throttling_ec2() -> Iterator[list[str]]:
    """An EC2 endpoint on 127.0.0.1 that answers every call with RequestLimitExceeded."""
    calls: list[str] = []
    body = (b'<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>'
            b"RequestLimitExceeded</Code><Message>Request limit exceeded.</Message></Error>"
            b"</Errors><RequestID>r-1</RequestID></Response>")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            calls.append(self.rfile.read(length).decode())
            self.send_response(503)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    calls.append(f"http://{LOOPBACK}:{server.server_address[1]}")
    try:
        yield calls
    finally:
        server.shutdown()
        server.server_close()


def test_throttled_discovery_retries_as_configured_then_stops_with_a_sentence(
    aws: str, fake_system: FakeSystem, throttling_ec2: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", throttling_ec2.pop(0))
    device = fake_system.nvme("nvme1n1", "vol0123456789abcdef0")
    clients = AwsClients(max_attempts=2, retry_mode="standard")
    with pytest.raises(ThrottledError, match=r"\(RequestLimitExceeded\) and kept doing so after 1 retries"):
        discover(device, clients=clients, sysfs_root=fake_system.sysfs_root,
                 dev_root=fake_system.dev_root)
    assert len(throttling_ec2) == 2 and all("Action=DescribeVolumes" in c for c in throttling_ec2)


def test_clients_default_to_adaptive_retries_and_honour_the_aws_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("AWS_RETRY_MODE", raising=False)
    monkeypatch.delenv("AWS_MAX_ATTEMPTS", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    assert AwsClients(region="us-east-1").retry_policy() == ("adaptive", 6)
    monkeypatch.setenv("AWS_RETRY_MODE", "standard")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "9")
    assert AwsClients(region="us-east-1").retry_policy() == ("standard", 9)


def test_importing_the_aws_package_loads_neither_boto3_nor_botocore() -> None:
    code = ("import sys, pytest_ebsperf.aws; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
