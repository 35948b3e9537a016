"""The outcome of judging one measurement against one expectation."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Outcome(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    INCONCLUSIVE = "inconclusive"
    INFO = "info"


@dataclass(frozen=True)
class Verdict:
    """A judged claim.

    ``reason`` is one short sentence ("held 2,000 IOPS in 100 % of seconds", "inconclusive:
    load-generator bound"); ``message`` is the full finding used as the assertion message:
    claim, expected, measured, tolerance, binding limit, source. ``binding`` names the limit
    that explains the number (volume cap, instance cap, queue depth, load generator, burst
    credits). ``details`` holds numbers for the report (fraction of seconds, QD, latency...).
    """

    outcome: Outcome
    claim: str
    what: str
    expected: float | None
    measured: float | None
    unit: str
    binding: str
    reason: str
    message: str
    policy: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.outcome in (Outcome.PASS, Outcome.INFO)
