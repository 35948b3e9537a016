"""Who am I: instance id, type, region and block-device mapping from EC2 instance metadata.

Uses botocore's own IMDS client (``botocore.utils.IMDSFetcher``) so that the endpoint
override ``AWS_EC2_METADATA_SERVICE_ENDPOINT`` (or ``ec2_metadata_service_endpoint`` in
~/.aws/config), IPv6 endpoint mode, ``AWS_EC2_METADATA_DISABLED`` and
``AWS_EC2_METADATA_V1_DISABLED`` behave exactly as they do for the AWS CLI. IMDSv2 first:
PUT a session token, then GET with it (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/
configuring-instance-metadata-service.html); IMDSv1 only if the token PUT is refused.

Timeouts are short (1 s per attempt, one retry) so that "not on EC2" is decided within
about three seconds: two token attempts, then one IMDSv1 attempt.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_ebsperf.aws.failures import NotOnEc2Error

_META = "latest/meta-data/"
DEFAULT_TIMEOUT_S = 1.0
DEFAULT_ATTEMPTS = 2  # one retry


@dataclass(frozen=True)
class InstanceIdentity:
    """What instance metadata says about the instance running the tests.

    ``block_device_mapping`` maps IMDS keys to device names (``{"root": "/dev/xvda",
    "ebs1": "sdf", "ephemeral0": "sdb"}``). AWS lists EBS volumes there only if they were
    present at launch or last start, so hot-attached volumes are missing (instance metadata
    categories, ``block-device-mapping/ebsN``); it is used to recognise instance store on
    Xen instances, never to find volume ids.
    """

    instance_id: str
    instance_type: str
    availability_zone: str
    region: str
    block_device_mapping: Mapping[str, str] = field(default_factory=dict)
    endpoint: str = ""
    notes: tuple[str, ...] = ()

    def ephemeral_device_names(self) -> frozenset[str]:
        """Short names (``sdb``, ``xvdb``) of instance-store devices in the mapping."""
        names: set[str] = set()
        for key, device in self.block_device_mapping.items():
            if key.startswith("ephemeral"):
                short = device.rsplit("/", 1)[-1]
                names.update({short, _xen_twin(short)})
        return frozenset(names)


def _xen_twin(name: str) -> str:
    """``sdb`` <-> ``xvdb``: Xen kernels rename the requested sdX to xvdX."""
    if name.startswith("xvd"):
        return "sd" + name[3:]
    if name.startswith("sd"):
        return "xvd" + name[2:]
    return name


class ImdsClient:
    """A small IMDSv2 reader around botocore's fetcher."""

    def __init__(
        self,
        *,
        endpoint: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        attempts: int = DEFAULT_ATTEMPTS,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self._endpoint = endpoint
        self._timeout_s = timeout_s
        self._attempts = attempts
        self._token: str | None = None
        self._fetcher: Any = None

    @property
    def disabled(self) -> bool:
        """True when AWS_EC2_METADATA_DISABLED=true (the AWS SDKs' switch)."""
        return self._env.get("AWS_EC2_METADATA_DISABLED", "false").lower() == "true"

    @property
    def endpoint(self) -> str:
        """The base URL botocore resolved (explicit, override, IPv6 mode or the default)."""
        return str(self._get_fetcher().get_base_url())

    def identity(self) -> InstanceIdentity:
        """Read instance id, type, placement and block-device mapping, or raise NotOnEc2Error."""
        if self.disabled:
            raise NotOnEc2Error(
                "EC2 instance metadata is disabled (AWS_EC2_METADATA_DISABLED=true), so the "
                "instance, its region and its volumes cannot be discovered. Unset it, or pass "
                "--volume-type/--volume-size/--instance-type to skip discovery."
            )
        self._connect()
        instance_id = self._require("instance-id")
        az = self._require("placement/availability-zone")
        # placement/region is right for Local Zones too, where stripping the AZ letter is not.
        region = self.get("placement/region") or az[:-1]
        mapping, notes = self._block_device_mapping()
        return InstanceIdentity(
            instance_id=instance_id,
            instance_type=self._require("instance-type"),
            availability_zone=az,
            region=region,
            block_device_mapping=mapping,
            endpoint=self.endpoint,
            notes=notes,
        )

    def region(self) -> str | None:
        """The instance's region, or None when metadata is unavailable (never raises)."""
        try:
            self._connect()
        except NotOnEc2Error:
            return None
        az = self.get("placement/availability-zone")
        return self.get("placement/region") or (az[:-1] if az else None)

    def get(self, path: str) -> str | None:
        """GET ``latest/meta-data/<path>``; None if the key does not exist or fails."""
        # botocore: only for a run that talks to AWS
        from botocore.utils import MetadataRetrievalError

        fetcher = self._get_fetcher()
        try:
            # The same protected calls botocore's own IMDS subclasses make.
            response = fetcher._get_request(
                url_path=_META + path, retry_func=_retry_server_errors, token=self._token
            )
        except (fetcher._RETRIES_EXCEEDED_ERROR_CLS, MetadataRetrievalError):
            return None
        if response.status_code != 200:
            return None
        return str(response.text).strip()

    def _connect(self) -> None:
        """Fetch the IMDSv2 token; decide "not on EC2" if nothing answers."""
        # botocore: only for a run that talks to AWS
        from botocore.utils import BadIMDSRequestError, MetadataRetrievalError

        fetcher = self._get_fetcher()
        try:
            self._token = fetcher._fetch_metadata_token()
        except BadIMDSRequestError as exc:
            raise self._not_on_ec2(f"the token request was refused ({exc})") from exc
        if self._token is None:
            # PUT refused (IMDSv1-only proxy) or no answer: one IMDSv1 attempt decides.
            probe_fetcher = self._new_fetcher(attempts=1)
            try:
                probe = probe_fetcher._get_request(
                    url_path=_META + "instance-id", retry_func=_retry_server_errors, token=None
                )
            except (probe_fetcher._RETRIES_EXCEEDED_ERROR_CLS, MetadataRetrievalError) as exc:
                raise self._not_on_ec2("nothing answered") from exc
            if probe.status_code != 200:
                raise self._not_on_ec2(f"it answered HTTP {probe.status_code}")

    def _require(self, path: str) -> str:
        value = self.get(path)
        if not value:
            raise self._not_on_ec2(f"it has no meta-data/{path}")
        return value

    def _block_device_mapping(self) -> tuple[dict[str, str], tuple[str, ...]]:
        listing = self.get("block-device-mapping/")
        if listing is None:
            note = (
                "instance metadata has no block-device-mapping/ (instance store on Xen "
                "instances cannot be recognised by name)"
            )
            return {}, (note,)
        mapping = {}
        for key in (line.strip().rstrip("/") for line in listing.splitlines()):
            value = self.get(f"block-device-mapping/{key}") if key else None
            if value:
                mapping[key] = value
        return mapping, ()

    def _not_on_ec2(self, why: str) -> NotOnEc2Error:
        return NotOnEc2Error(
            f"Not running on EC2: the instance metadata service at {self.endpoint} did not "
            f"identify an instance ({why}, {self._timeout_s:g} s timeout, {self._attempts} "
            "attempts). Pass --volume-type/--volume-size/--instance-type to describe the volume, "
            "or set AWS_EC2_METADATA_SERVICE_ENDPOINT if metadata is served elsewhere."
        )

    def _get_fetcher(self) -> Any:
        if self._fetcher is None:
            self._fetcher = self._new_fetcher(self._attempts)
        return self._fetcher

    def _new_fetcher(self, attempts: int) -> Any:
        # botocore: only for a run that talks to AWS
        from botocore.utils import IMDSFetcher

        return IMDSFetcher(
            timeout=self._timeout_s,
            num_attempts=attempts,
            env=self._env,
            config=_imds_config(self._endpoint, self._env),
        )


def _retry_server_errors(response: Any) -> bool:
    """Retry only 5xx: a 404 means "no such key" and should not cost another second."""
    return int(response.status_code) >= 500


def _imds_config(endpoint: str | None, env: Mapping[str, str]) -> dict[str, Any]:
    """botocore's IMDS settings: the explicit endpoint, else env and ~/.aws/config."""
    # botocore: only for a run that talks to AWS
    import botocore.session
    from botocore.utils import resolve_imds_endpoint_mode

    session = botocore.session.get_session()
    endpoint = (
        endpoint
        or env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        or (session.get_config_variable("ec2_metadata_service_endpoint"))
    )
    return {
        "ec2_metadata_service_endpoint": endpoint,
        "ec2_metadata_service_endpoint_mode": resolve_imds_endpoint_mode(session),
        "ec2_metadata_v1_disabled": session.get_config_variable("ec2_metadata_v1_disabled"),
    }
