"""The outcome of judging one measurement against one expectation."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
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


def measured_alone(again: Verdict, first: Verdict, behind: int, *, why: str = "",
                   host_bound: bool = False) -> Verdict:
    """``again``, a fresh run made holding the host alone because the first (``first``) was
    left undecided by the host (its emulator fell behind in ``behind`` s, or ``why``): says
    so, and keeps what the first run was in ``details["first_run"]``."""
    why = why or f"emulator fell behind in {behind} s"
    note = (f"The first run's {why} (this host's seconds, not the volume's): this verdict is "
            "a fresh run made holding the host's measuring lock alone.")
    return replace(again, message=f"{again.message} {note}", details={
        **again.details, "first_run": {"emulator_behind_s": behind, "host_bound": host_bound,
                                       "measured": first.measured}})
