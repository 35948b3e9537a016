"""Instance-level limits: EBS-optimized bandwidth and IOPS, Nitro or not, instance-store IOPS.

The figures live in :mod:`pytest_ebsperf.awsmodel.instance_data`; this module answers questions
about them and turns a live ``EbsOptimizedInfo`` record (DescribeInstanceTypes) into the same
shape, so discovered and built-in limits are used the same way.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.awsmodel import instance_data as data
from pytest_ebsperf.errors import VolumeSpecError


@dataclass(frozen=True)
class EbsLimits:
    """An instance type's EBS-optimized limits (B-EBSOPT).

    Throughputs are in MB/s (10^6 bytes per second), as AWS publishes them. AWS measures the
    IOPS figures with 16 KiB I/O and the throughput figures with 128 KiB I/O. ``max_*`` can be
    held for 30 minutes once every 24 hours where it exceeds ``baseline_*``; after that the
    instance falls back to its baseline.
    """

    baseline_iops: int
    baseline_mbps: float
    max_iops: int
    max_mbps: float

    @property
    def bursts(self) -> bool:
        """True when the maximum is a 30-minute burst above a lower baseline."""
        return self.max_iops > self.baseline_iops or self.max_mbps > self.baseline_mbps

    def iops(self, sustained: bool = False) -> int:
        """The IOPS limit: baseline when ``sustained``, else the maximum."""
        return self.baseline_iops if sustained else self.max_iops

    def bytes_per_s(self, sustained: bool = False) -> float:
        """The throughput limit in bytes per second."""
        return (self.baseline_mbps if sustained else self.max_mbps) * 1e6


def _family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


def known_instance_types() -> tuple[str, ...]:
    """Every instance type the built-in tables describe, sorted."""
    return tuple(sorted(set(data.EBS_OPTIMIZED) | set(data.INSTANCE_STORE_4K)))


def _unknown(instance_type: str) -> VolumeSpecError:
    families = sorted({_family(t) for t in known_instance_types()})
    close = difflib.get_close_matches(instance_type, known_instance_types(), n=3)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    return VolumeSpecError(
        f"{instance_type!r} is not an instance type the built-in table knows.{hint} "
        f"Known families: {', '.join(families)} (all sizes are listed by "
        "pytest_ebsperf.awsmodel.known_instance_types()). On EC2 the instance type and its EBS "
        "limits are discovered from DescribeInstanceTypes; elsewhere pass a listed "
        "--instance-type, or look one up with `aws ec2 describe-instance-types "
        "--instance-types TYPE --query 'InstanceTypes[].EbsInfo'`."
    )


def is_known(instance_type: str) -> bool:
    """True when the built-in tables describe ``instance_type``."""
    return instance_type in data.EBS_OPTIMIZED or instance_type in data.INSTANCE_STORE_4K


def ebs_limits(instance_type: str) -> EbsLimits | None:
    """The EBS-optimized limits of ``instance_type``; ``None`` if it has no dedicated EBS
    bandwidth (c3.8xlarge, m3.large, r3.large ...: EBS shares the network, S2-21).

    Raises :class:`VolumeSpecError` for a type the table does not know.
    """
    if instance_type not in data.EBS_OPTIMIZED:
        raise _unknown(instance_type)
    row = data.EBS_OPTIMIZED[instance_type]
    return None if row is None else EbsLimits(*row)


def ebs_note(instance_type: str) -> str | None:
    """A sentence for reports about this type's EBS limits, or ``None`` if nothing to say."""
    note = data.SEED_NOTES.get(instance_type)
    if data.EBS_OPTIMIZED.get(instance_type, ()) is None:
        base = data.NO_DEDICATED_EBS_NOTE.format(itype=instance_type)
        return f"{base} {note}" if note else base
    return note


def nitro(instance_type: str) -> bool | None:
    """True for Nitro-system types, False for Xen ones (the seed era), None if unknown.

    It matters for io1 and io2: above 32,000 IOPS they deliver only on Nitro (B-IO1, B-IO2).
    """
    if not is_known(instance_type):
        return None
    if instance_type in data.NITRO_EXCEPTIONS:
        return True
    hypervisor = data.HYPERVISOR.get(instance_type)
    if hypervisor in ("nitro", "xen"):
        return hypervisor == "nitro"
    return _family(instance_type) not in data.XEN_FAMILIES


def instance_store_iops(instance_type: str) -> tuple[int, int] | None:
    """Published random 4 KiB ``(read, write)`` IOPS using all instance-store volumes (B-IS),
    or ``None`` when AWS publishes none for this type."""
    row = data.INSTANCE_STORE_4K.get(instance_type)
    return None if row is None else (row[0], row[1])


def store_types() -> dict[str, tuple[int, int]]:
    """Every instance type with published instance-store IOPS: ``(read, write)``."""
    return {name: (row[0], row[1]) for name, row in data.INSTANCE_STORE_4K.items()}


def instance_store_devices(instance_type: str) -> int | None:
    """How many instance-store devices the published IOPS are spread over, if known."""
    row = data.INSTANCE_STORE_4K.get(instance_type)
    return None if row is None else row[2]


def ebs_limits_from_api(info: Mapping[str, Any]) -> EbsLimits:
    """Build :class:`EbsLimits` from a DescribeInstanceTypes ``EbsOptimizedInfo`` mapping.

    Accepts the record itself or a whole instance-type record (``EbsInfo`` is looked into).
    Types that publish only maximum figures get them as their baseline too.
    """
    record = info.get("EbsInfo", {}).get("EbsOptimizedInfo", info)
    try:
        max_iops = int(record["MaximumIops"])
        max_mbps = float(record["MaximumThroughputInMBps"])
    except (KeyError, TypeError, ValueError):
        raise VolumeSpecError(
            "The instance record has no EbsOptimizedInfo with MaximumIops and "
            "MaximumThroughputInMBps, so its EBS limits are unknown; pass a listed "
            "--instance-type to use the built-in table."
        ) from None
    return EbsLimits(
        baseline_iops=int(record.get("BaselineIops", max_iops)),
        baseline_mbps=float(record.get("BaselineThroughputInMBps", max_mbps)),
        max_iops=max_iops,
        max_mbps=max_mbps,
    )


def as_ebs_limits(source: Any) -> EbsLimits:
    """:class:`EbsLimits` from what discovery found: an :class:`EbsLimits`, an
    ``EbsOptimizedInfo`` mapping, or an object with ``baseline_iops``,
    ``baseline_throughput_mBps``, ``maximum_iops`` and ``maximum_throughput_mBps`` attributes
    (MB/s being 10^6 bytes per second)."""
    if isinstance(source, EbsLimits):
        return source
    if isinstance(source, Mapping):
        return ebs_limits_from_api(source)
    return EbsLimits(
        baseline_iops=int(source.baseline_iops),
        baseline_mbps=float(source.baseline_throughput_mBps),
        max_iops=int(source.maximum_iops),
        max_mbps=float(source.maximum_throughput_mBps),
    )


def check_instance_type(instance_type: str) -> str:
    """Return ``instance_type`` if the table knows it, else raise :class:`VolumeSpecError`."""
    if not is_known(instance_type):
        raise _unknown(instance_type)
    return instance_type
