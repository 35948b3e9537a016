"""Burst credits over time: how long a burst lasts, what a check costs, how long a refill takes.

gp2 spends I/O credits (B-GP2: 5.4 M, earned at the baseline rate); st1 and sc1 spend
throughput credits (B-HDD: 1 TiB per TiB of size, earned at the baseline MiB/s). Both buckets
drain at *demand minus baseline* while bursting, so one :class:`BurstPlan` serves both. The
plugin asks, before a burst-level check: does it fit in the credits the volume has left?
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_ebsperf.awsmodel import claims, ebs, hdd, sources
from pytest_ebsperf.awsmodel.types import TIME, Expectation
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import (
    IO_CREDITS,
    hdd_rates,
    is_hdd,
    spends_mib,
    volume_type,
)

#: TIME policy (claims.md): |t - t_model| <= max(10 % of t_model, 120 s).
TIME_REL_TOLERANCE = 0.10
TIME_ABS_TOLERANCE_S = 120.0


@dataclass(frozen=True)
class BurstPlan:
    """A credit bucket and the rate a burst spends it at.

    ``unit`` names the credit ("I/O credits" or "MiB of throughput credit"); ``earn_rate`` is
    the baseline (credits per second); ``burst_rate`` what a burst-level check consumes.
    """

    unit: str
    balance: float
    capacity: float
    earn_rate: float
    burst_rate: float

    @property
    def drain_rate(self) -> float:
        """Net credits lost per second while bursting (0 when the baseline covers it)."""
        return max(0.0, self.burst_rate - self.earn_rate)

    @property
    def burst_s(self) -> float:
        """Seconds of burst left from the current balance (inf if it never drains)."""
        return math.inf if self.drain_rate == 0 else self.balance / self.drain_rate

    @property
    def refill_s(self) -> float:
        """Seconds for an idle volume to refill from the current balance to full."""
        return (self.capacity - self.balance) / self.earn_rate

    def credits_needed(self, seconds: float) -> float:
        """Credits a burst-level check of ``seconds`` consumes."""
        return self.drain_rate * seconds

    def fits(self, seconds: float) -> bool:
        """True when a burst-level check of ``seconds`` ends before the bucket is empty."""
        return self.credits_needed(seconds) <= self.balance


def gp2_burst_plan(
    size_gib: int, balance_pct: float = 100.0, *, drive_iops: float = ebs.GP2_BURST_IOPS
) -> BurstPlan:
    """gp2 bucket from CloudWatch's BurstBalance percentage (S0-10, S0-11, S0-15).

    100 GiB full: 2,000 s of 3,000 IOPS, 18,000 s to refill from empty; a 600 s run spends
    1.62 M of 5.4 M credits, so it cannot drain the bucket (S0-15).
    """
    return BurstPlan(
        unit="I/O credits",
        balance=ebs.GP2_CREDITS_MAX * balance_pct / 100.0,
        capacity=float(ebs.GP2_CREDITS_MAX),
        earn_rate=float(ebs.gp2_baseline_iops(size_gib)),
        burst_rate=float(drive_iops),
    )


def hdd_burst_plan(volume_type: str, size_gib: int, balance_pct: float = 100.0) -> BurstPlan:
    """st1/sc1 throughput bucket; a burst spends the burst MiB/s. B-HDD."""
    rates, capacity = hdd_rates(volume_type), hdd.hdd_bucket_mib(size_gib)
    return BurstPlan(
        unit="MiB of throughput credit",
        balance=capacity * balance_pct / 100.0,
        capacity=capacity,
        earn_rate=rates.baseline_mibps(size_gib),
        burst_rate=rates.burst_mibps(size_gib),
    )


def burst_plan(volume: Volume) -> BurstPlan | None:
    """The volume's bucket, or ``None`` for types that do not burst (gp3, io1, io2, standard,
    instance store). An unknown BurstBalance is taken as full, as for a new volume."""
    if volume.size_gib is None:
        return None
    pct = volume.balance_pct
    if volume_type(volume.type).credits == IO_CREDITS:
        return gp2_burst_plan(volume.size_gib, pct)
    if is_hdd(volume.type):
        return hdd_burst_plan(volume.type, volume.size_gib, pct)
    return None


def has_burst(volume: Volume) -> bool:
    """True when the volume can run above its baseline on credits (gp2 under 1,000 GiB,
    st1/sc1 below their baseline caps); False for every other type."""
    plan = burst_plan(volume)
    return plan is not None and plan.drain_rate > 0


def drain_seconds(volume: Volume) -> float:
    """Seconds of burst-level load that empty the bucket from the volume's BurstBalance
    (full when unknown); inf when the volume does not burst."""
    plan = burst_plan(volume)
    return math.inf if plan is None else plan.burst_s


def burst_shortfall(volume: Volume, seconds: float) -> str | None:
    """``None`` when a burst-level check of ``seconds`` fits in the credits left, else the
    sentence that says why not and what to do (a skip reason)."""
    plan = burst_plan(volume)
    if plan is None or plan.fits(seconds):
        return None
    need, left = plan.credits_needed(seconds), plan.balance
    wait = (need - left) / plan.earn_rate
    pct = volume.burst_balance_pct
    balance = "unknown, taken as full" if pct is None else f"{pct:g} %"
    return (
        f"a {seconds:,.0f} s check at burst level needs {need:,.0f} {plan.unit} but this "
        f"{volume.label()} has {left:,.0f} left (BurstBalance {balance}); "
        f"leave it idle for about {wait:,.0f} s to earn the rest, then pass the new "
        "--burst-balance."
    )


def time_tolerance(t_model_s: float) -> tuple[float, float]:
    """(low, high) factors of the TIME policy for a modelled time."""
    margin = max(TIME_REL_TOLERANCE, TIME_ABS_TOLERANCE_S / t_model_s)
    return max(0.0, 1.0 - margin), 1.0 + margin


def burst_time_expectation(claim: str, what: str, volume: Volume) -> Expectation | None:
    """TIME expectation for the burst duration from the volume's balance (S0-11, S2-14).

    ``None`` when the volume has no bucket or never drains (gp2 >= 1,000 GiB).
    """
    plan = burst_plan(volume)
    if plan is None or math.isinf(plan.burst_s):
        return None
    low, high = time_tolerance(plan.burst_s)
    spec = sources.HDD_VOLUMES if spends_mib(volume.type) else sources.GENERAL_PURPOSE
    return Expectation(
        claim=claim,
        what=what,
        policy=TIME,
        value=plan.burst_s,
        unit="s",
        binding=None,
        low=low,
        high=high,
        source=claims.source_url(claim, spec),
        notes=(
            (
                f"{plan.balance:,.0f} {plan.unit} drain at {plan.burst_rate:,.4g} - "
                f"{plan.earn_rate:,.4g} per second."
            ),
        ),
    )
