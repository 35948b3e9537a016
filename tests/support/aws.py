"""Fixtures and helpers of the AWS tests: loopback-only network guard, moto server, fake IMDS,
fake sysfs.

Nothing in the AWS tests may leave 127.0.0.1: ``tests/aws/conftest.py`` puts the guard on every
test there; it fails a test that tries to connect anywhere else (169.254.169.254 included) and
also fails it afterwards if some library swallowed the failure. The fixtures are a plugin of the
test run (``tests/conftest.py``), so any test can ask for them by name; helpers are imported.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

LOOPBACK = "127.0.0.1"
REGION = "us-east-1"
AZ = "us-east-1a"
AMI = "ami-12c6146b"  # one of moto's bundled example AMIs


# --------------------------------------------------------------------------- network guard
@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Fail any connection attempt to an address other than 127.0.0.1."""
    refused: list[Any] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def allowed(address: Any) -> bool:
        return isinstance(address, (str, bytes)) or address[0] == LOOPBACK

    def connect(self: socket.socket, address: Any) -> None:
        if not allowed(address):
            refused.append(address)
            pytest.fail(f"test tried to connect to {address!r}; only {LOOPBACK} is allowed")
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not allowed(address):
            refused.append(address)
            pytest.fail(f"test tried to connect to {address!r}; only {LOOPBACK} is allowed")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    yield refused
    assert not refused, f"connections outside loopback were attempted: {refused}"


# --------------------------------------------------------------------------- fake IMDS
@dataclass
class FakeImds:
    """State of the fake instance metadata service (IMDSv2 tokens required by default)."""

    instance_id: str = "i-0123456789abcdef0"
    instance_type: str = "m5.large"
    availability_zone: str = AZ
    region: str | None = REGION
    block_device_mapping: dict[str, str] = field(
        default_factory=lambda: {"ami": "/dev/xvda", "root": "/dev/xvda"}
    )
    bdm_status: int = 200  # 500 imitates moto's NotImplementedError
    require_token: bool = True
    token_status: int = 200  # 403/404/405 imitate an IMDSv1-only proxy
    requests: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""

    def answer(self, path: str) -> tuple[int, str]:
        meta = "/latest/meta-data/"
        if not path.startswith(meta):
            return 404, "Not Found"
        key = path[len(meta):]
        if key.startswith("block-device-mapping/"):
            if self.bdm_status != 200:
                return self.bdm_status, "error"
            name = key[len("block-device-mapping/"):]
            if not name:
                return 200, "\n".join(self.block_device_mapping)
            value = self.block_device_mapping.get(name)
            return (200, value) if value else (404, "Not Found")
        values = {
            "instance-id": self.instance_id,
            "instance-type": self.instance_type,
            "placement/availability-zone": self.availability_zone,
            "placement/region": self.region,
        }
        value = values.get(key)
        return (200, value) if value else (404, "Not Found")


def _imds_handler(state: FakeImds) -> type[BaseHTTPRequestHandler]:
    tokens: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, body: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PUT(self) -> None:
            state.requests.append(("PUT", self.path))
            if self.path != "/latest/api/token" or not self.headers.get(
                "x-aws-ec2-metadata-token-ttl-seconds"
            ):
                self._send(400, "Bad Request")
                return
            if state.token_status != 200:
                self._send(state.token_status, "no tokens here")
                return
            token = f"token-{len(tokens)}"
            tokens.add(token)
            self._send(200, token)

        def do_GET(self) -> None:
            state.requests.append(("GET", self.path))
            if state.require_token and self.headers.get("x-aws-ec2-metadata-token") not in tokens:
                self._send(401, "Unauthorized")
                return
            self._send(*state.answer(self.path))

    return Handler


@pytest.fixture
def fake_imds() -> Iterator[FakeImds]:
    """A fake IMDS on 127.0.0.1:<free port>; ``.url`` is its base URL."""
    state = FakeImds()
    server = ThreadingHTTPServer((LOOPBACK, 0), _imds_handler(state))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://{LOOPBACK}:{server.server_address[1]}/"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (connection refused at once)."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        port = probe.getsockname()[1]
    return f"http://{LOOPBACK}:{port}/"


# --------------------------------------------------------------------------- moto
@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    """One moto server for the session, on 127.0.0.1 and a free port; yields its URL."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per call
    server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def post(url: str, data: bytes = b"") -> None:
    # moto's reset-auth reads the raw body, so it must not look like a submitted form.
    headers = {"Content-Type": "application/octet-stream"}
    request = urllib.request.Request(url, data=data, method="POST", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:  # loopback only
        response.read()


def isolate_aws_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy credentials, no profile files, no proxies: nothing of the developer's leaks in."""
    for name in (
        "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_ENDPOINT_URL",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE",
        "AWS_EC2_METADATA_DISABLED", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("NO_PROXY", LOOPBACK)


@pytest.fixture
def aws(
    moto_server: str, fake_imds: FakeImds, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> str:
    """Environment for HTTP tests: moto server endpoint, fake IMDS, dummy credentials."""
    isolate_aws_config(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", fake_imds.url)
    post(f"{moto_server}/moto-api/reset")
    return moto_server


@pytest.fixture
def mocked_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """In-process moto (``mock_aws``) for tests where HTTP does not matter."""
    from moto import mock_aws

    isolate_aws_config(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with mock_aws():
        yield


def ec2_client(region: str = REGION) -> Any:
    import boto3

    return boto3.client("ec2", region_name=region)


def run_instance(instance_type: str = "m5.large", az: str = AZ) -> str:
    """Start a moto instance; returns its id."""
    region = az[:-1]
    reply = ec2_client(region).run_instances(
        ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=instance_type,
        Placement={"AvailabilityZone": az},
    )
    return str(reply["Instances"][0]["InstanceId"])


@pytest.fixture
def instance(aws: str, fake_imds: FakeImds) -> str:
    """A moto m5.large in us-east-1a that the fake IMDS says we are running on."""
    instance_id = run_instance()
    fake_imds.instance_id = instance_id
    return instance_id


def reset_auth(moto_url: str, count: float) -> None:
    """moto: authorize the next ``count`` requests without IAM checks, then enforce IAM."""
    post(f"{moto_url}/moto-api/reset-auth", str(count).encode())


# --------------------------------------------------------------------------- fake sysfs
class FakeSystem:
    """A fake ``/sys`` and ``/dev`` in a temporary directory."""

    def __init__(self, root: Path) -> None:
        self.sys = root / "sys"
        self.dev = root / "dev"
        (self.sys / "block").mkdir(parents=True)
        (self.dev / "disk" / "by-id").mkdir(parents=True)

    @property
    def sysfs_root(self) -> str:
        return str(self.sys)

    @property
    def dev_root(self) -> str:
        return str(self.dev)

    def nvme(self, name: str, serial: str, model: str = "Amazon Elastic Block Store") -> str:
        """Add ``/dev/<name>`` with NVMe serial and model (space-padded like the kernel's)."""
        controller = self.sys / "block" / name / "device"
        controller.mkdir(parents=True)
        (controller / "serial").write_text(serial.ljust(20) + "\n")
        (controller / "model").write_text(model.ljust(40) + "\n")
        (self.dev / name).touch()
        return f"/dev/{name}"

    def disk(self, name: str) -> str:
        """Add a plain disk (Xen ``xvdf``, ``loop0``) with a sysfs entry and no serial."""
        (self.sys / "block" / name).mkdir(parents=True)
        (self.dev / name).touch()
        return f"/dev/{name}"

    def link(self, link: str, target: str) -> str:
        """Add a udev-style relative symlink, e.g. ``sdf`` -> ``nvme1n1``."""
        path = self.dev / link
        path.symlink_to(Path("../" * link.count("/")) / target)
        return f"/dev/{link}"


@pytest.fixture
def restricted_user(aws: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Switch to an IAM user that may only call ec2:DescribeInstanceTypes (moto enforces IAM)."""
    import boto3

    reset_auth(aws, 3)  # the three IAM calls below run unauthenticated
    try:
        iam = boto3.client("iam")
        iam.create_user(UserName="ci")
        policy = {"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": ["ec2:DescribeInstanceTypes"], "Resource": "*"}]}
        iam.put_user_policy(UserName="ci", PolicyName="p", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="ci")["AccessKey"]
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
        yield
    finally:
        reset_auth(aws, float("inf"))


@pytest.fixture
def fake_system(tmp_path: Path) -> FakeSystem:
    """A fake sysfs and /dev tree; pass ``sysfs_root``/``dev_root`` to the code under test."""
    return FakeSystem(tmp_path / "root")


def metric_points(volume_id: str, points: list[tuple[Any, float]]) -> list[dict[str, Any]]:
    """``put_metric_data`` entries for BurstBalance of one volume."""
    return [
        {
            "MetricName": "BurstBalance",
            "Dimensions": [{"Name": "VolumeId", "Value": volume_id}],
            "Timestamp": stamp,
            "Value": value,
            "Unit": "Percent",
        }
        for stamp, value in points
    ]
