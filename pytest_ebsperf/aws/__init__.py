"""AWS: discover the volume behind a device, provision test volumes, price a run.

Importing this package does not import boto3 or botocore; they are loaded on the first AWS
call, so a run with every volume fact given needs neither them nor credentials.

Entry points:

* :func:`discover` -> :class:`Discovery` (merged :class:`~pytest_ebsperf.awsmodel.volume.Volume`,
  EBS-optimized limits, initialization state, BurstBalance, notes);
* :class:`Provisioner`, :func:`parse_provision_spec`, :func:`sweep_leftovers`;
* :func:`estimate_cost`, :class:`PriceListClient`, :func:`builtin_prices`;
* :func:`initialization_read_argv` for the opt-in read of every block of a restored volume.
"""

from __future__ import annotations

from pytest_ebsperf.aws.clients import AwsClients
from pytest_ebsperf.aws.devices import DeviceInfo, find_nvme_device, identify_device
from pytest_ebsperf.aws.discover import Discovery, discover
from pytest_ebsperf.aws.failures import (
    AccessDeniedError,
    CleanupError,
    CostLimitError,
    NoCredentialsFoundError,
    NotEbsVolumeError,
    NotOnEc2Error,
    ProvisioningError,
    ProvisionSpecError,
    RegionError,
    ThrottledError,
    VolumeAttachedElsewhereError,
)
from pytest_ebsperf.aws.imds import ImdsClient, InstanceIdentity
from pytest_ebsperf.aws.initialization import (
    InitializationState,
    initialization_read_argv,
    initialization_read_estimate_s,
)
from pytest_ebsperf.aws.instance import EbsLimits, InstanceTypeFacts
from pytest_ebsperf.aws.metrics import BurstReading
from pytest_ebsperf.aws.pricelist import PriceListClient
from pytest_ebsperf.aws.pricing import (
    CostEstimate,
    PriceTable,
    builtin_prices,
    estimate_cost,
)
from pytest_ebsperf.aws.provision import Provisioner
from pytest_ebsperf.aws.spec import parse_provision_spec
from pytest_ebsperf.aws.sweep import SweepReport, sweep_leftovers

__all__ = [
    "AccessDeniedError",
    "AwsClients",
    "BurstReading",
    "CleanupError",
    "CostEstimate",
    "CostLimitError",
    "DeviceInfo",
    "Discovery",
    "EbsLimits",
    "ImdsClient",
    "InitializationState",
    "InstanceIdentity",
    "InstanceTypeFacts",
    "NoCredentialsFoundError",
    "NotEbsVolumeError",
    "NotOnEc2Error",
    "PriceListClient",
    "PriceTable",
    "ProvisionSpecError",
    "Provisioner",
    "ProvisioningError",
    "RegionError",
    "SweepReport",
    "ThrottledError",
    "VolumeAttachedElsewhereError",
    "builtin_prices",
    "discover",
    "estimate_cost",
    "find_nvme_device",
    "identify_device",
    "initialization_read_argv",
    "initialization_read_estimate_s",
    "parse_provision_spec",
    "sweep_leftovers",
]
