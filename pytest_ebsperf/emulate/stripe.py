"""Several emulated volumes measured together: one throttle cgroup, one limit per device.

A RAID0 stripe spreads random I/O evenly over its members; on a machine without the md
driver the set is driven as several devices in one fio job, which does the same (fio's
``filename=a:b:c`` with round-robin file service). Each member keeps its own kernel limits,
so a slow member holds the set back exactly as it would in a stripe.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from pytest_ebsperf.emulate.device import EmulatedDevice

if TYPE_CHECKING:
    from typing import Self

    from pytest_ebsperf.fio.workload import Workload

#: (IOPS, bytes/s, I/O unit) of one member, as :class:`EmulatedDevice` takes them.
MemberRates = tuple[float | None, float | None, int]


class EmulatedSet:
    """``len(rates)`` emulated volumes whose limits live in the first one's cgroup."""

    def __init__(self, rates: Sequence[MemberRates], *, size_bytes: int,
                 name: str = "ebsperf-set", latency_us: float | None = None) -> None:
        if not rates:
            raise ValueError("a set needs at least one member.")
        self.rates = list(rates)
        self.size_bytes, self.name = size_bytes, name
        self.latency_us = latency_us
        #: Why the set has no emulated latency though one was asked for ("": it has).
        self.beyond_reach = ""
        self.members: list[EmulatedDevice] = []

    def __repr__(self) -> str:
        return f"EmulatedSet({', '.join(m.path for m in self.members) or 'not started'})"

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(member.path for member in self.members)

    def start(self) -> Self:
        """Create every member; on any failure remove the ones made so far."""
        try:
            for iops, bps, unit in self.rates:
                owner = self.members[0] if self.members else None
                device = EmulatedDevice(size_bytes=self.size_bytes, iops=iops, bps=bps,
                                        io_unit_bytes=unit, name=self.name,
                                        share_cgroup_of=owner, latency_us=self.latency_us)
                self.members.append(device)
                device.start()
        except BaseException:
            self.close()
            raise
        return self

    def argv_prefix(self) -> list[str]:
        """argv that puts a command in the set's cgroup (every member's limits apply)."""
        return self.members[0].argv_prefix()

    def prepare(self, workload: Workload, count: int | None = None) -> Workload:
        """Ready the first ``count`` members (default all) for ``workload``."""
        for member in self.members[:count]:
            workload = member.prepare(workload)
        return workload

    def swap_risk(self) -> str | None:
        return self.members[0].swap_risk() if self.members else None

    def close(self) -> None:
        """Remove every member; the cgroup's owner last (it kills what still runs inside)."""
        for member in reversed(self.members):
            member.close()

    def __enter__(self) -> Self:
        return self.start() if not self.members else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
