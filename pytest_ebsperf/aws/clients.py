"""boto3 clients with one retry policy, one region and lazy imports.

Nothing here imports boto3 at module level: a plain run with ``--device`` and every volume
fact given must work on a machine without boto3 or credentials (STYLE.md, "Heavy or optional
imports are lazy").
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pytest_ebsperf.aws.failures import (
    NoCredentialsFoundError,
    RegionError,
    no_credentials_sentence,
)

#: The Price List API is served from a few regions only; us-east-1 is the documented one
#: (https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-price-list-query-api.html).
PRICING_REGION = "us-east-1"

#: Default retry policy. "adaptive" adds client-side rate limiting on top of "standard"'s
#: exponential back-off, which is what a burst of Describe* calls from a CI fleet needs
#: (botocore "Retries" guide). AWS_RETRY_MODE / AWS_MAX_ATTEMPTS or ~/.aws/config win.
DEFAULT_RETRY_MODE = "adaptive"
DEFAULT_MAX_ATTEMPTS = 6


class AwsClients:
    """Creates and caches boto3 clients for one region with the plugin's retry policy.

    ``region`` wins; otherwise boto3's own configuration (AWS_REGION, AWS_DEFAULT_REGION,
    the profile) and finally ``region_fallback`` (the instance metadata placement) decide.
    """

    def __init__(
        self,
        *,
        region: str | None = None,
        profile: str | None = None,
        region_fallback: Callable[[], str | None] | None = None,
        max_attempts: int | None = None,
        retry_mode: str | None = None,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 30.0,
    ) -> None:
        self._region = region
        self._profile = profile
        self._region_fallback = region_fallback
        self._max_attempts = max_attempts
        self._retry_mode = retry_mode
        self._connect_timeout_s = connect_timeout_s
        self._read_timeout_s = read_timeout_s
        self._session: Any = None
        self._clients: dict[tuple[str, str], Any] = {}

    @property
    def session(self) -> Any:
        """The ``boto3.Session`` (created on first use)."""
        if self._session is None:
            # boto3 loads in about 0.2 s: only for a run that talks to AWS
            import boto3

            self._session = boto3.Session(profile_name=self._profile)
        return self._session

    @property
    def region(self) -> str:
        """The region every regional client uses; raises :class:`RegionError` if unknown."""
        if self._region is None:
            self._region = self.session.region_name or (
                self._region_fallback() if self._region_fallback else None
            )
        if not self._region:
            raise RegionError(
                "No AWS region configured and none found in EC2 instance metadata. Set "
                "AWS_REGION or AWS_DEFAULT_REGION, or pass the volume facts on the command line."
            )
        return self._region

    def require_credentials(self) -> None:
        """Raise :class:`NoCredentialsFoundError` now rather than at the first API call."""
        if self.session.get_credentials() is None:
            raise NoCredentialsFoundError(no_credentials_sentence())

    def client(
        self, service: str, *, region: str | None = None, max_attempts: int | None = None
    ) -> Any:
        """A cached boto3 client for ``service`` (in ``region`` or :attr:`region`)."""
        where = region or self.region
        key = (service, where)
        if key not in self._clients:
            self._clients[key] = self.session.client(
                service, region_name=where, config=self._config(max_attempts)
            )
        return self._clients[key]

    def ec2(self) -> Any:
        return self.client("ec2")

    def cloudwatch(self) -> Any:
        return self.client("cloudwatch")

    def pricing(self) -> Any:
        # Prices are optional (the built-in table stands in), so fail fast: two attempts.
        return self.client("pricing", region=PRICING_REGION, max_attempts=2)

    def retry_policy(self) -> tuple[str, int]:
        """``(mode, total attempts)``: explicit arguments, then AWS config, then defaults."""
        # Only values the user set count; botocore's own default mode ("legacy") does not.
        profile = self.session._session.get_scoped_config()  # the botocore session's profile
        mode = self._retry_mode or os.environ.get("AWS_RETRY_MODE") or profile.get("retry_mode")
        attempts = (
            self._max_attempts or os.environ.get("AWS_MAX_ATTEMPTS") or profile.get("max_attempts")
        )
        return str(mode or DEFAULT_RETRY_MODE), int(attempts or DEFAULT_MAX_ATTEMPTS)

    def _config(self, max_attempts: int | None = None) -> Any:
        # botocore: only for a run that talks to AWS
        from botocore.config import Config

        mode, attempts = self.retry_policy()
        attempts = min(attempts, max_attempts) if max_attempts else attempts
        return Config(
            retries={"mode": mode, "total_max_attempts": attempts},
            connect_timeout=self._connect_timeout_s,
            read_timeout=self._read_timeout_s,
        )
