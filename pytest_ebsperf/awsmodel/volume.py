"""The volume under test: what it is, as far as the user told us or discovery found out.

A :class:`Volume` is a plain fact sheet. It does not know its limits; the models
(:mod:`pytest_ebsperf.awsmodel`) compute those from it, and its type's record
(:mod:`pytest_ebsperf.awsmodel.volume_types`) says what kind of volume it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: How a fact about the volume became known.
GIVEN = "given"  # command line, ini or environment
DISCOVERED = "discovered"  # EC2 metadata / API
DEFAULT = "default"  # the plugin's default (e.g. the emulated volume of a suite)
EMULATED = "emulated"  # describes an emulated volume


@dataclass(frozen=True)
class Volume:
    """Facts about one volume (or instance-store device).

    ``iops`` is the *provisioned* IOPS (gp3, io1, io2); ``throughput_mibps`` the provisioned
    throughput (gp3). ``burst_balance_pct`` is CloudWatch's BurstBalance (0-100) for gp2, st1
    and sc1 when known. ``provenance`` maps a field name to GIVEN, DISCOVERED, DEFAULT or
    EMULATED so reports can say where each fact came from.
    """

    type: str
    size_gib: int | None = None
    iops: int | None = None
    throughput_mibps: float | None = None
    instance_type: str | None = None
    encrypted: bool | None = None
    burst_balance_pct: float | None = None
    nitro: bool = True
    volume_id: str | None = None
    provenance: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def credits_assumed(self) -> bool:
        """Whether the burst bucket is taken to hold credits: a BurstBalance not known
        (None) is assumed full, and the report says so; only a known 0 is an empty bucket."""
        return self.burst_balance_pct is None or self.burst_balance_pct > 0

    @property
    def balance_pct(self) -> float:
        """The burst balance a check starts from, in percent: BurstBalance, else a full
        bucket (see :attr:`credits_assumed`)."""
        return 100.0 if self.burst_balance_pct is None else self.burst_balance_pct

    def replace(self, **changes: Any) -> Volume:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def label(self) -> str:
        """Short human label: ``io1 200 GiB 2,000 IOPS``."""
        parts = [self.type]
        if self.size_gib is not None:
            parts.append(f"{self.size_gib:,} GiB")
        if self.iops is not None:
            parts.append(f"{self.iops:,} IOPS")
        if self.throughput_mibps is not None:
            parts.append(f"{self.throughput_mibps:g} MiB/s")
        if self.instance_type:
            parts.append(f"on {self.instance_type}")
        return " ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (for reports and pytest-benchmark machine info)."""
        data = dataclasses.asdict(self)
        data["provenance"] = dict(self.provenance)
        return data
