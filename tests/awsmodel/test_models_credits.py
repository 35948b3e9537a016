"""Burst plans: the seeds' time claims (S0-11, S0-13, S0-15, S2-14) and the TIME tolerance."""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf.awsmodel import (
    TIME,
    burst_plan,
    burst_shortfall,
    burst_time_expectation,
    drain_seconds,
    gp2_burst_plan,
    has_burst,
    hdd_burst_plan,
)
from pytest_ebsperf.awsmodel.burst import time_tolerance
from pytest_ebsperf.awsmodel.volume import Volume


def test_a_full_100_gib_gp2_bursts_for_2000_seconds_and_refills_in_18000() -> None:
    plan = gp2_burst_plan(100)
    assert plan.burst_s == 2_000  # S0-11: ~33 minutes
    assert gp2_burst_plan(100, 0.0).refill_s == 18_000  # S0-13: 5 hours from empty


def test_600_seconds_cannot_drain_a_full_100_gib_gp2_contrary_to_s0_15() -> None:
    plan = gp2_burst_plan(100)
    assert plan.credits_needed(600) == 1_620_000
    assert plan.fits(600)
    assert not plan.fits(2_001)


def test_a_60_second_burst_check_fits_only_while_enough_credits_are_left() -> None:
    assert gp2_burst_plan(100, balance_pct=3.0).fits(60)  # 162,000 credits vs 162,000 needed
    assert not gp2_burst_plan(100, balance_pct=2.9).fits(60)


def test_idle_time_buys_burst_at_baseline_over_burst_minus_baseline() -> None:
    # S0-13: after N idle seconds a drained 100 GiB volume bursts N x 300 / 2,700 seconds.
    idle = 900
    plan = gp2_burst_plan(100, balance_pct=100.0 * idle * 300 / 5_400_000)
    assert plan.burst_s == pytest.approx(idle * 300 / 2_700)


@pytest.mark.parametrize(("size", "seconds"), [(100, 2_000), (500, 3_600)])
def test_gp2_depletion_times_of_s2_14(size: int, seconds: float) -> None:
    assert gp2_burst_plan(size).burst_s == seconds


def test_gp2_of_1000_gib_fits_any_check() -> None:
    plan = gp2_burst_plan(1_000)
    assert math.isinf(plan.burst_s) and plan.fits(86_400) and plan.credits_needed(60) == 0


def test_st1_bucket_is_spent_at_burst_minus_baseline() -> None:
    plan = hdd_burst_plan("st1", 2_048)
    assert plan.unit == "MiB of throughput credit"
    assert plan.burst_s == pytest.approx(2_048 * 1_024 / 420)
    assert not hdd_burst_plan("st1", 2_048, balance_pct=0.0).fits(1)


def test_burst_plan_exists_only_for_bursting_types_and_reads_burst_balance() -> None:
    assert burst_plan(Volume("gp3", size_gib=100)) is None
    assert burst_plan(Volume("io1", size_gib=100, iops=1_000)) is None
    half = burst_plan(Volume("gp2", size_gib=100, burst_balance_pct=50.0))
    assert half is not None and half.burst_s == 1_000
    assert burst_plan(Volume("sc1", size_gib=1_024)) is not None


def test_time_tolerance_is_the_larger_of_10_percent_and_120_seconds() -> None:
    assert time_tolerance(1_000) == pytest.approx((0.88, 1.12))  # 120 s beats 100 s
    assert time_tolerance(3_600) == pytest.approx((0.9, 1.1))  # 360 s beats 120 s


def test_burst_time_expectation_states_the_model_time_and_none_when_it_never_drains() -> None:
    exp = burst_time_expectation("S0-11", "gp2 burst", Volume("gp2", size_gib=100))
    assert exp is not None
    assert (exp.policy, exp.value, exp.unit) == (TIME, 2_000, "s")
    assert exp.source == "https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html"
    assert burst_time_expectation("X", "x", Volume("gp2", size_gib=1_000)) is None


def test_has_burst_is_true_only_where_burst_exceeds_the_baseline() -> None:
    assert has_burst(Volume("gp2", size_gib=100)) and has_burst(Volume("st1", size_gib=2_048))
    assert not has_burst(Volume("gp2", size_gib=1_000))
    assert not has_burst(Volume("st1", size_gib=12_800))  # baseline already 500 MiB/s
    assert not has_burst(Volume("gp3", size_gib=100))


def test_drain_seconds_start_from_the_known_balance_or_a_full_bucket() -> None:
    assert drain_seconds(Volume("gp2", size_gib=100)) == 2_000
    assert drain_seconds(Volume("gp2", size_gib=100, burst_balance_pct=25.0)) == 500
    assert math.isinf(drain_seconds(Volume("io1", size_gib=100, iops=1_000)))


def test_burst_shortfall_says_how_many_credits_are_missing_and_how_long_to_wait() -> None:
    low = Volume("gp2", size_gib=100, burst_balance_pct=1.0)
    assert burst_shortfall(low, 60) == (
        "a 60 s check at burst level needs 162,000 I/O credits but this gp2 100 GiB has "
        "54,000 left (BurstBalance 1 %); leave it idle for about 360 s to earn the rest, then "
        "pass the new --burst-balance."
    )
    assert burst_shortfall(Volume("gp2", size_gib=100), 60) is None
    unknown = burst_shortfall(Volume("gp2", size_gib=100), 2_400)
    assert unknown is not None and "BurstBalance unknown, taken as full" in unknown
    assert burst_shortfall(Volume("gp3", size_gib=100), 10_000) is None
