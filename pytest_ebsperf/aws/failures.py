"""AWS failures turned into sentences a user can act on.

botocore raises a zoo of exceptions (``NoCredentialsError``, ``ClientError`` with dozens of
codes, connection errors). :func:`aws_call` wraps one API call and re-raises the ones a user
can fix as an :class:`~pytest_ebsperf.errors.AwsError` subclass whose message says what went
wrong and what to pass or configure instead. botocore is only imported when a call fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_ebsperf.errors import AwsError, ConfigError, DeviceError, VolumeSpecError

__all__ = [
    "AccessDeniedError",
    "AwsError",
    "CleanupError",
    "CostLimitError",
    "NoCredentialsFoundError",
    "NotEbsVolumeError",
    "NotOnEc2Error",
    "ProvisionSpecError",
    "ProvisioningError",
    "RegionError",
    "ThrottledError",
    "VolumeAttachedElsewhereError",
    "aws_call",
    "translate",
]

#: The options that describe a volume so that nothing has to be discovered (DESIGN.md).
VOLUME_OPTIONS = "--volume-type/--volume-size/--volume-iops/--volume-throughput/--instance-type"

#: The chain botocore walks, in order (boto3 "Credentials" guide); named so the user knows
#: which of them to fix.
CREDENTIAL_CHAIN = (
    "environment variables AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the "
    "shared files ~/.aws/credentials and ~/.aws/config, SSO, credential_process, the "
    "container endpoint and the EC2 instance role"
)

#: Error codes botocore's standard retry mode treats as throttling
#: (``botocore/retries/standard.py``, ``_THROTTLED_ERROR_CODES``).
THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "RequestThrottled",
        "SlowDown",
        "EC2ThrottledException",
    }
)

#: Codes AWS services use for a missing IAM permission (EC2 says UnauthorizedOperation,
#: query APIs such as CloudWatch say AccessDenied, JSON APIs such as Pricing
#: AccessDeniedException).
ACCESS_DENIED_CODES = frozenset(
    {"UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "UnauthorizedAccess"}
)

#: Calls only provisioning makes (their failures should not suggest skipping discovery).
PROVISIONING_ACTIONS = frozenset(
    {"CreateVolume", "CreateTags", "AttachVolume", "DetachVolume", "DeleteVolume"}
)

# "... is not authorized to perform: ec2:DescribeVolumes because ..." (IAM's wording in EC2,
# CloudWatch and Pricing denials; also moto's).
_ACTION_RE = re.compile(r"not authorized to perform:?\s+([A-Za-z0-9-]+:[A-Za-z0-9*]+)")


class NoCredentialsFoundError(AwsError):
    """botocore's credential chain found nothing."""


class AccessDeniedError(AwsError):
    """The credentials lack an IAM permission; ``action`` names it (``ec2:DescribeVolumes``)."""

    def __init__(self, message: str, *, action: str) -> None:
        super().__init__(message)
        self.action = action


class NotOnEc2Error(AwsError):
    """The instance metadata service did not answer: this is not an EC2 instance."""


class ThrottledError(AwsError):
    """AWS kept throttling a call after botocore's retries."""


class RegionError(AwsError):
    """No region configured and none could be read from instance metadata."""


class NotEbsVolumeError(AwsError, DeviceError):
    """The device is instance storage, a loop device or not attached as an EBS volume."""


class VolumeAttachedElsewhereError(AwsError):
    """The volume is attached to another instance than the one running the tests."""


class ProvisioningError(AwsError):
    """Creating, attaching, detaching or deleting a test volume failed."""


class CleanupError(ProvisioningError):
    """Volumes created for the run could not all be removed; ``volume_ids`` lists them."""

    def __init__(self, message: str, *, volume_ids: tuple[str, ...]) -> None:
        super().__init__(message)
        self.volume_ids = volume_ids


class CostLimitError(ConfigError):
    """The estimated cost of a provisioned run is above ``--ebsperf-max-cost``."""


class ProvisionSpecError(VolumeSpecError):
    """A ``type:size[:iops[:throughput]]`` volume spec that cannot be provisioned."""


def denied_action(message: str, fallback: str) -> str:
    """The IAM action named in an access-denied message, or ``fallback`` if none is named."""
    match = _ACTION_RE.search(message)
    return match.group(1) if match else fallback


@contextmanager
def aws_call(action: str, *, what: str = "") -> Iterator[None]:
    """Run one AWS call, turning user-fixable botocore failures into sentences.

    ``action`` is the IAM action the call needs (``ec2:DescribeVolumes``); it names the
    permission when the error message does not. ``what`` says what the call was for.
    """
    try:
        yield
    except AwsError:
        raise
    except Exception as exc:
        translated = translate(exc, action=action, what=what)
        if translated is None:
            raise
        raise translated from exc


def translate(exc: BaseException, *, action: str, what: str = "") -> AwsError | None:
    """The :class:`AwsError` for a botocore exception, or None if it is not one we explain."""
    # botocore: only for a run that talks to AWS
    from botocore import exceptions as bce

    purpose = f" ({what})" if what else ""
    if isinstance(exc, (bce.NoCredentialsError, bce.PartialCredentialsError)):
        return NoCredentialsFoundError(no_credentials_sentence())
    if isinstance(exc, bce.NoRegionError):
        return RegionError(
            f"No AWS region configured for {action}{purpose}. Set AWS_REGION or AWS_DEFAULT_REGION, "
            f"or run on EC2 so the region is read from instance metadata. Or pass {VOLUME_OPTIONS} "
            "to skip discovery."
        )
    if isinstance(exc, (bce.EndpointConnectionError, bce.ConnectTimeoutError)):
        return AwsError(
            f"Could not reach the AWS endpoint for {action}{purpose}: {exc}. Check network access "
            f"to AWS (or AWS_ENDPOINT_URL), or pass {VOLUME_OPTIONS} to skip discovery."
        )
    if isinstance(exc, bce.ClientError):
        return _client_error(exc, action=action, purpose=purpose)
    return None


def no_credentials_sentence() -> str:
    """The sentence for an empty credential chain."""
    return (
        f"No AWS credentials found (botocore looked at {CREDENTIAL_CHAIN}). Pass {VOLUME_OPTIONS} "
        "to skip discovery, or configure credentials (AWS_PROFILE, instance role)."
    )


def _alternative(action: str) -> str:
    """What to do instead of the failed call: provisioning and discovery differ."""
    if action.split(":")[-1] in PROVISIONING_ACTIONS:
        return "test an existing volume with --device instead of provisioning new ones"
    return f"pass {VOLUME_OPTIONS} to skip discovery"


def _client_error(exc: BaseException, *, action: str, purpose: str) -> AwsError | None:
    response = getattr(exc, "response", {}) or {}
    error = response.get("Error", {})
    code = str(error.get("Code", ""))
    message = str(error.get("Message", ""))
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    # A 403 whose body botocore could not parse still means "not allowed" (seen with moto).
    if code in ACCESS_DENIED_CODES or (status == 403 and "not authorized" in str(exc)):
        message = message if code in ACCESS_DENIED_CODES else str(exc)
        needed = denied_action(message, action)
        return AccessDeniedError(
            f"AWS denied {needed}{purpose}: the credentials in use lack the IAM permission "
            f"'{needed}'. Add it to the role or user (docs/aws-iam-policy.md lists the minimal "
            f"policy), or {_alternative(action)}.",
            action=needed,
        )
    if code in THROTTLING_CODES:
        attempts = response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
        return ThrottledError(
            f"AWS throttled {action}{purpose} ({code}) and kept doing so after {attempts} "
            "retries. The account's API rate is shared with other tools: try again later, "
            f"raise AWS_MAX_ATTEMPTS, or {_alternative(action)}."
        )
    if code in ("AuthFailure", "InvalidClientTokenId", "SignatureDoesNotMatch", "ExpiredToken"):
        return NoCredentialsFoundError(
            f"AWS rejected the credentials for {action}{purpose} ({code}: {message}). Refresh "
            "them (AWS_PROFILE, instance role) or pass the volume facts on the command line."
        )
    return None
