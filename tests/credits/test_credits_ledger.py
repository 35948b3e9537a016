"""The model's credit ledger: scaled buckets, idle earning, charging runs, the balance origin."""

from __future__ import annotations

import pytest

from pytest_ebsperf.awsmodel.burst import gp2_burst_plan
from pytest_ebsperf.awsmodel.volume import DISCOVERED, Volume
from pytest_ebsperf.credits.ledger import (
    CreditLedger,
    balance_origin,
    credit_cost_per_io,
    run_credit_rates,
    scaled_plan,
)
from pytest_ebsperf.fio.workload import Workload

GP2 = Volume("gp2", size_gib=100)


def test_a_scaled_bucket_shrinks_capacity_and_balance_but_not_the_rates() -> None:
    plan = scaled_plan(GP2, 100.0)
    assert plan is not None
    assert (plan.capacity, plan.balance) == (54_000, 54_000)
    assert (plan.earn_rate, plan.burst_rate) == (300, 3_000)
    assert plan.burst_s == pytest.approx(20.0)  # the 2,000 s of S0-11, one hundredth


def test_types_without_a_bucket_have_no_plan() -> None:
    assert scaled_plan(Volume("io1", size_gib=100, iops=4000)) is None


def test_the_balance_origin_says_whether_it_was_assumed_given_or_discovered() -> None:
    assert "assumed a full bucket" in balance_origin(GP2)
    assert "--burst-balance" in balance_origin(GP2.replace(burst_balance_pct=40.0))
    found = GP2.replace(burst_balance_pct=40.0, provenance={"burst_balance_pct": DISCOVERED})
    assert "discovered" in balance_origin(found)


def test_idle_time_earns_at_the_baseline_rate_up_to_capacity() -> None:
    plan = gp2_burst_plan(100, 0.0)
    ledger = CreditLedger.start(plan, now=0.0, origin="test")
    assert ledger.at(900.0) == pytest.approx(900 * 300)  # S0-13: 300 credits a second
    assert ledger.at(10**6) == plan.capacity


def test_a_burst_run_is_charged_window_by_window_and_never_goes_negative() -> None:
    plan = scaled_plan(GP2, 100.0)
    assert plan is not None
    ledger = CreditLedger.start(plan, now=0.0, origin="test")
    ledger.charge(0.0, [3_000.0] * 25, 1.0)  # 25 s at burst: the bucket ran dry at 20 s
    assert ledger.balance == 0.0
    assert ledger.updated_at == 25.0 and ledger.runs == 1
    assert ledger.at(25.0) == 0.0  # no burst left


def test_an_observed_knee_empties_the_ledger_and_starts_the_refill_clock() -> None:
    plan = gp2_burst_plan(100)
    ledger = CreditLedger.start(plan, now=0.0, origin="test")
    ledger.observe_empty(50.0, "knee at 40 s")
    assert ledger.at(50.0) == 0.0 and ledger.empty_at == 50.0
    assert "observed empty" in ledger.origin
    # 900 s idle earn 900 x 300 credits: 100 s of burst at 3,000 (2,700 net)
    assert ledger.at(50.0 + 900) == pytest.approx(270_000.0)


def test_a_volume_at_its_baseline_level_bursts_forever() -> None:
    ledger = CreditLedger.start(gp2_burst_plan(1000), now=0.0, origin="test")
    assert ledger.plan.burst_s == float("inf")


def test_gp2_charges_256_kib_units_and_hdd_a_mib_per_small_random_io() -> None:
    assert credit_cost_per_io(GP2, Workload("randread", bs=16 * 1024)) == 1
    assert credit_cost_per_io(GP2, Workload("randread", bs=1024 * 1024)) == 4
    st1 = Volume("st1", size_gib=2048)
    assert credit_cost_per_io(st1, Workload("randread", bs=16 * 1024)) == 1.0
    assert credit_cost_per_io(st1, Workload("read", bs=1024 * 1024)) == 1.0
    assert credit_cost_per_io(st1, Workload("read", bs=128 * 1024)) == 0.125  # merged


def test_a_run_is_booked_with_its_ramp_and_the_tail_fio_did_not_log() -> None:
    job = Workload("randread", runtime_s=5.0, ramp_s=2.0)
    rates = run_credit_rates(GP2, job, [3_000.0] * 4, total_ios=15_000)
    # 2 ramp windows at the first rate, 4 logged, 1 tail window from fio's own count
    assert rates == [3_000.0] * 6 + [3_000.0]
    assert run_credit_rates(GP2, job, [], total_ios=1_500) == [300.0] * 7


@pytest.mark.parametrize(("runtime", "ramp", "logged", "total", "want"), [
    (3.0, 0.5, [3_000.0] * 2, 9_000, [4_500.0, 3_000.0, 3_000.0]),   # half a window of ramp
    (2.4, 0.0, [3_000.0] * 2, 7_200, [3_000.0, 4_200.0]),            # 0.4 s of tail
    (3.0, 1.5, [3_000.0] * 3, 9_000, [3_000.0, 4_500.0, 3_000.0, 3_000.0]),
    (2.5, 0.5, [], 5_000, [2_000.0] * 3),                            # no log: 6,000 over 3
])
def test_parts_of_a_window_are_booked_not_rounded_away(
        runtime: float, ramp: float, logged: list[float], total: float, want: list[float]
) -> None:
    """A 0.5 s ramp once rounded to no window at all, and the ledger lost half a second of
    burst per run: whatever the times, the values add up to the credits the run spent."""
    job = Workload("randread", runtime_s=runtime, ramp_s=ramp)
    rates = run_credit_rates(GP2, job, logged, total_ios=total)
    assert rates == pytest.approx(want)
    spent = total * (runtime + ramp) / runtime if not logged else total + logged[0] * ramp
    assert sum(rates) == pytest.approx(spent)


def test_the_description_gives_credits_share_runs_and_origin() -> None:
    ledger = CreditLedger.start(gp2_burst_plan(100, 50.0), now=0.0, origin="from a test")
    ledger.charge(0.0, [300.0], 1.0)
    text = ledger.describe(1.0)
    assert "2,700,000 I/O credits (50 % of the bucket) after 1 earlier run" in text
    assert text.endswith("from a test")
