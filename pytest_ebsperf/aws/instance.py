"""Instance-type facts from ``DescribeInstanceTypes``: EBS-optimized limits, hypervisor, storage.

The EBS-optimized numbers come straight from the API (claims.md B-EBSOPT,
https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_EbsOptimizedInfo.html), so the
models can use the live figures for this instance type instead of their built-in table.
Units are AWS's: ``*_mbps`` are megabits per second, ``*_mBps`` decimal megabytes per second
(650 Mbps = 81.25 MB/s); the ``*_mibps`` properties convert to MiB/s, the unit of EBS volume
throughput. IOPS figures assume 16 KiB I/O, throughput figures 128 KiB I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.aws.failures import aws_call

_MB_TO_MIB = 1e6 / 2**20


@dataclass(frozen=True)
class EbsLimits:
    """``EbsInfo.EbsOptimizedInfo`` of one instance type."""

    instance_type: str
    baseline_bandwidth_mbps: float
    baseline_throughput_mBps: float
    baseline_iops: int
    maximum_bandwidth_mbps: float
    maximum_throughput_mBps: float
    maximum_iops: int
    ebs_optimized_support: str = "default"

    @property
    def baseline_throughput_mibps(self) -> float:
        return self.baseline_throughput_mBps * _MB_TO_MIB

    @property
    def maximum_throughput_mibps(self) -> float:
        return self.maximum_throughput_mBps * _MB_TO_MIB

    @property
    def burstable(self) -> bool:
        """True when the instance can exceed its baseline for 30 minutes a day (B-EBSOPT)."""
        return (self.baseline_iops, self.baseline_throughput_mBps) != (
            self.maximum_iops,
            self.maximum_throughput_mBps,
        )

    def caps(self, *, sustained: bool) -> tuple[int, float]:
        """``(IOPS, MiB/s)``: baseline for sustained load, maximum inside the burst window."""
        if sustained:
            return self.baseline_iops, self.baseline_throughput_mibps
        return self.maximum_iops, self.maximum_throughput_mibps


@dataclass(frozen=True)
class InstanceTypeFacts:
    """The parts of ``DescribeInstanceTypes`` that matter for storage performance.

    ``nitro`` is True for Nitro instances (hypervisor "nitro", or bare metal whose EBS
    volumes are NVMe), False for Xen, None when the API does not say.
    ``instance_storage_gb`` / ``instance_storage_disks`` describe instance store, if any.
    """

    instance_type: str
    hypervisor: str | None
    nitro: bool | None
    ebs: EbsLimits | None
    ebs_nvme_support: str | None = None
    instance_storage_gb: int | None = None
    instance_storage_disks: tuple[tuple[int, int, str], ...] = ()  # (count, GB each, type)
    instance_storage_nvme_support: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form for reports."""
        data: dict[str, Any] = dict(self.__dict__)
        data["ebs"] = dict(self.ebs.__dict__) if self.ebs else None
        data["instance_storage_disks"] = [list(d) for d in self.instance_storage_disks]
        return data


def parse_instance_type(record: Mapping[str, Any]) -> InstanceTypeFacts:
    """Build :class:`InstanceTypeFacts` from one ``InstanceTypes[]`` entry."""
    name = str(record["InstanceType"])
    ebs_info = record.get("EbsInfo", {})
    hypervisor = record.get("Hypervisor")
    nvme = ebs_info.get("NvmeSupport")
    if hypervisor:
        nitro: bool | None = hypervisor == "nitro"
    elif record.get("BareMetal"):
        # Metal instances report no hypervisor; their EBS volumes are NVMe like Nitro's.
        nitro = nvme == "required"
    else:
        nitro = None
    storage = record.get("InstanceStorageInfo") or {}
    return InstanceTypeFacts(
        instance_type=name,
        hypervisor=hypervisor,
        nitro=nitro,
        ebs=_ebs_limits(name, ebs_info),
        ebs_nvme_support=nvme,
        instance_storage_gb=storage.get("TotalSizeInGB"),
        instance_storage_disks=tuple(
            (int(d["Count"]), int(d["SizeInGB"]), str(d.get("Type", "")))
            for d in storage.get("Disks", [])
        ),
        instance_storage_nvme_support=storage.get("NvmeSupport"),
    )


def _ebs_limits(name: str, ebs_info: Mapping[str, Any]) -> EbsLimits | None:
    info = ebs_info.get("EbsOptimizedInfo")
    if not info:
        return None  # EBS-optimization unsupported: no dedicated EBS bandwidth
    return EbsLimits(
        instance_type=name,
        baseline_bandwidth_mbps=float(info["BaselineBandwidthInMbps"]),
        baseline_throughput_mBps=float(info["BaselineThroughputInMBps"]),
        baseline_iops=int(info["BaselineIops"]),
        maximum_bandwidth_mbps=float(info["MaximumBandwidthInMbps"]),
        maximum_throughput_mBps=float(info["MaximumThroughputInMBps"]),
        maximum_iops=int(info["MaximumIops"]),
        ebs_optimized_support=str(ebs_info.get("EbsOptimizedSupport", "default")),
    )


def describe_instance_type(ec2: Any, instance_type: str) -> InstanceTypeFacts | None:
    """Call ``DescribeInstanceTypes`` for one type; None if AWS does not know the name."""
    # botocore: only for a run that talks to AWS
    from botocore.exceptions import ClientError

    try:
        with aws_call("ec2:DescribeInstanceTypes", what=f"EBS limits of {instance_type}"):
            response = ec2.describe_instance_types(InstanceTypes=[instance_type])
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "InvalidInstanceType":
            return None
        raise
    records = response.get("InstanceTypes", [])
    return parse_instance_type(records[0]) if records else None
