"""The plugin's running estimate of a volume's credit balance: the model's side of the story.

A :class:`CreditLedger` starts from the balance the user gave (``--burst-balance``), one
discovery found (CloudWatch BurstBalance), or a full bucket (assumed, and said so); it earns
at the baseline rate while the volume is idle and is charged, window by window, with what
every fio run delivered. A check asks it how many credits are left *before* it starts, so
it can predict how long the burst will last and how long the check will take.

On an emulated volume the bucket is shrunk by the time scale (rates unchanged), so every
ledger works in the scaled bucket; :func:`scaled_plan` builds it. Pure: the clock is passed in.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_ebsperf.awsmodel import accounting
from pytest_ebsperf.awsmodel.burst import BurstPlan, burst_plan
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import is_hdd
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import MIB

_MIB = float(MIB)


def scaled_plan(volume: Volume, timescale: float = 1.0, *, balance_pct: float | None = None
                ) -> BurstPlan | None:
    """The volume's bucket shrunk by ``timescale`` (rates unchanged), or None without one.

    ``balance_pct`` overrides the volume's BurstBalance; an unknown balance is a full bucket.
    """
    if balance_pct is not None:
        volume = volume.replace(burst_balance_pct=balance_pct)
    plan = burst_plan(volume)
    if plan is None:
        return None
    return dataclasses.replace(plan, balance=plan.balance / timescale,
                               capacity=plan.capacity / timescale)


def balance_origin(volume: Volume) -> str:
    """Where the starting balance came from, as the report row says it."""
    pct = volume.burst_balance_pct
    if pct is None:
        return "assumed a full bucket: BurstBalance unknown (pass --burst-balance=PERCENT)"
    how = volume.provenance.get("burst_balance_pct", "given")
    word = "discovered (CloudWatch)" if how == "discovered" else "--burst-balance"
    return f"starting balance {pct:g} % from {word}"


def credit_cost_per_io(volume: Volume, workload: Workload) -> float:
    """Credits one fio I/O of ``workload`` spends: gp2 I/O credits (256 KiB units, B-IOACCT),
    st1/sc1 MiB of throughput credit (an I/O of 1 MiB or less costs 1 MiB, B-HDD)."""
    sequential = not workload.is_random
    if is_hdd(volume.type):
        return accounting.accounted_bytes_per_io(volume.type, workload.bs,
                                                 sequential=sequential) / _MIB
    return accounting.ebs_ops_per_io(volume.type, workload.bs, sequential=sequential)


@dataclass
class CreditLedger:
    """Balance estimate of one volume, in the plan's credit unit, at time ``updated_at``.

    ``plan`` is the (scaled) bucket: ``capacity`` and ``earn_rate`` are what the ledger uses.
    ``empty_at`` is when a check last saw the bucket run dry (the start of a refill).
    """

    plan: BurstPlan
    balance: float
    updated_at: float
    origin: str
    runs: int = 0
    empty_at: float | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, plan: BurstPlan, now: float, origin: str) -> CreditLedger:
        """A ledger holding ``plan.balance`` at ``now``."""
        return cls(plan, plan.balance, now, origin)

    def at(self, now: float) -> float:
        """The balance at ``now``, counting what idle time since the last update earned."""
        idle = max(0.0, now - self.updated_at)
        return min(self.plan.capacity, self.balance + self.plan.earn_rate * idle)

    def advance(self, now: float) -> None:
        """Bring the balance forward to ``now`` (idle earning)."""
        self.balance = self.at(now)
        self.updated_at = max(self.updated_at, now)

    def charge(self, start: float, rates: Sequence[float], window_s: float) -> None:
        """Book a run that began at ``start`` and spent ``rates`` credits per second, one
        value per window; the bucket earns at the baseline rate meanwhile and stays within
        0..capacity, as AWS's own accounting does (B-GP2)."""
        self.advance(start)
        balance = self.balance
        for rate in rates:
            balance += (self.plan.earn_rate - rate) * window_s
            balance = min(self.plan.capacity, max(0.0, balance))
        self.balance = balance
        self.updated_at = start + window_s * len(rates)
        self.runs += 1

    def observe_empty(self, now: float, why: str) -> None:
        """A check saw the volume at its baseline under load: the bucket is empty now."""
        self.balance, self.updated_at, self.empty_at = 0.0, now, now
        self.origin = f"observed empty ({why})"

    def describe(self, now: float) -> str:
        """``21,600 I/O credits (40 % of the bucket), starting balance ...``."""
        left = self.at(now)
        share = left / self.plan.capacity if self.plan.capacity else 0.0
        runs = f" after {self.runs} earlier run{'s' * (self.runs != 1)}" if self.runs else ""
        return (f"{left:,.0f} {self.plan.unit} ({100 * share:.0f} % of the bucket){runs}; "
                f"{self.origin}")


def run_credit_rates(volume: Volume, workload: Workload, series_iops: Sequence[float],
                     total_ios: float, window_s: float = 1.0) -> list[float]:
    """Credits per second a finished run spent, one value per window, ramp and tail included.

    fio logs no windows during ``ramp_time`` and often not the last window of a run, but the
    volume was charged for both. The ramp is booked at the first window's rate; the tail with
    the I/Os that make the windows add up to fio's own count for the measured period
    (``total_ios``), or at the last window's rate when that count is missing. Parts of a
    window (a 0.5 s ramp, a 0.4 s tail) are folded into the neighbouring window, so the
    values add up to what the run spent however its times divide into windows.
    """
    cost = credit_cost_per_io(volume, workload)
    ramp_s = max(workload.ramp_s, 0.0)
    iops = list(series_iops)
    if not iops:
        span = workload.runtime_s + ramp_s
        windows = max(1, math.ceil(span / window_s - 1e-9))
        rate = total_ios / max(workload.runtime_s, 1e-9) * span / (windows * window_s)
        return [rate * cost] * windows
    whole_ramp, part_ramp = divmod(ramp_s / window_s, 1.0)
    values = [iops[0]] * int(whole_ramp) + iops
    values[int(whole_ramp)] += iops[0] * part_ramp
    tail_s = workload.runtime_s - window_s * len(iops)
    if tail_s > 1e-9:
        logged = math.fsum(iops) * window_s
        ios = total_ios - logged if total_ios > logged else iops[-1] * tail_s
        whole_tail, part_tail = divmod(tail_s / window_s, 1.0)
        rate = ios / tail_s
        values += [rate] * int(whole_tail)
        values[-1] += rate * part_tail
    return [value * cost for value in values]
