"""Value types the models return: limits and expectations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Tolerance policies (claims.md, "Tolerance policy" conventions).
CAP = "CAP"  # documented ceiling: >= 90 % of it in the duty cycle's share of seconds, <= 110 %
FLOOR = "FLOOR"  # published "up to / at least": measured >= 90 % of it
REL = "REL"  # relative claim between two measurements
TIME = "TIME"  # time to an event: |t - t_model| <= max(10 %, 120 s)
INFO = "INFO"  # best effort: recorded, never failed
POLICIES = (CAP, FLOOR, REL, TIME, INFO)

#: Duty cycles (B-SLA): share of seconds that must reach 90 % of the expectation.
DUTY_IO = 0.999  # io1, io2
DUTY_GP = 0.99  # gp2, gp3, st1, sc1

#: Kinds of limit.
VOLUME = "volume"
INSTANCE = "instance"


@dataclass(frozen=True)
class Limit:
    """One ceiling on what fio can measure, expressed in fio IOPS at the workload's block size.

    ``name`` says what it is in words ("volume provisioned IOPS", "volume throughput cap
    500 MiB/s", "instance EBS-optimized maximum IOPS"); ``kind`` is VOLUME or INSTANCE;
    ``claim``/``source`` cite claims.md (e.g. ``B-IO1`` and the AWS URL).
    """

    name: str
    kind: str
    iops: float
    claim: str
    source: str

    def bytes_per_s(self, bs: int) -> float:
        return self.iops * bs


@dataclass(frozen=True)
class Expectation:
    """What a claim says fio should measure for this volume and workload.

    ``value`` is in ``unit`` ("IOPS", "B/s", "ns" or "s"). ``binding`` is the lowest limit,
    the one that sets ``value``; ``limits`` are all limits considered. ``low``/``high`` are the
    tolerance factors (CAP: 0.90/1.10; FLOOR: 0.90/None). ``duty`` is the share of seconds that
    must reach ``low * value`` (CAP only).
    """

    claim: str
    what: str
    policy: str
    value: float
    unit: str
    binding: Limit | None
    limits: tuple[Limit, ...] = ()
    low: float = 0.90
    high: float | None = 1.10
    duty: float = DUTY_GP
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def threshold(self) -> float:
        """The least a second (CAP) or the mean (FLOOR) must reach: ``low x value``."""
        return self.low * self.value

    def record(self) -> dict[str, Any]:
        """The expectation as a kept verdict records it (judge reads it back:
        :func:`pytest_ebsperf.verdicts.judge_facts.kept_expectation`)."""
        return {"what": self.what, "value": self.value, "unit": self.unit,
                "policy": self.policy, "low": self.low, "high": self.high, "duty": self.duty,
                "binding": self.binding.name if self.binding else "", "source": self.source,
                "limits": [{"name": lim.name, "kind": lim.kind, "iops": lim.iops,
                            "claim": lim.claim, "source": lim.source} for lim in self.limits]}

    @property
    def ceiling(self) -> float | None:
        """The most the mean may be (``high x value``); None without an upper tolerance."""
        return self.high * self.value if self.high else None


@dataclass(frozen=True)
class VolumePrices:
    """Monthly USD prices of one volume type in one region."""

    gb_month: float
    iops_month: float = 0.0  # per provisioned IOPS above ``included_iops``
    included_iops: int = 0
    iops_tiers: tuple[tuple[float, float], ...] = ()  # io2: (upper IOPS bound, rate)
    mibps_month: float = 0.0  # per MiB/s above ``included_mibps``
    included_mibps: float = 0.0
    per_million_io: float = 0.0
    per_second: bool = False  # per-second billing with a 60 s minimum
