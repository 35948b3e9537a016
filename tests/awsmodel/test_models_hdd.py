"""st1, sc1 and standard against B-HDD, B-STD and seed 003's measurements (S3-06)."""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf.awsmodel import cap_expectation, hdd, validate
from pytest_ebsperf.awsmodel.burst import hdd_burst_plan
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import hdd_rates
from pytest_ebsperf.fio.workload import Workload

# (type, GiB, baseline MiB/s, burst MiB/s, small-I/O IOPS cap) from the B-HDD rates.
HDD_TABLE = [
    ("st1", 125, 4.8828125, 30.517578125, 30.517578125),
    ("st1", 1_024, 40.0, 250.0, 250.0),
    ("st1", 2_048, 80.0, 500.0, 500.0),  # burst cap reached at 2 TiB
    ("st1", 6_144, 240.0, 500.0, 500.0),
    ("st1", 12_800, 500.0, 500.0, 500.0),  # baseline cap reached at 12.5 TiB
    ("sc1", 1_024, 12.0, 80.0, 80.0),
    ("sc1", 2_048, 24.0, 160.0, 160.0),
    ("sc1", 3_200, 37.5, 250.0, 250.0),  # burst cap reached at 3.125 TiB
    ("sc1", 16_384, 192.0, 250.0, 250.0),
]


@pytest.mark.parametrize(("vtype", "size", "baseline", "burst", "small_io"), HDD_TABLE)
def test_hdd_baseline_burst_and_small_io_cap_follow_the_per_tib_rates(
    vtype: str, size: int, baseline: float, burst: float, small_io: float
) -> None:
    rates = hdd_rates(vtype)
    assert rates.baseline_mibps(size) == pytest.approx(baseline)
    assert rates.burst_mibps(size) == pytest.approx(burst)
    assert rates.small_io_iops_cap(size) == pytest.approx(small_io)


def test_hdd_small_io_cap_without_credits_is_the_baseline_rate() -> None:
    assert hdd_rates("st1").small_io_iops_cap(2_048, credits=False) == 80.0
    assert hdd_rates("sc1").small_io_iops_cap(6_144, credits=False) == 72.0


# Seed 003, random 4 KiB IOPS on d2.xlarge ("2TB" read as 2,000 GiB, "6TB" as 6,000 GiB --
# claims.md B-OPEN 4) with the model's expectation for the same volume and instance.
SEED_003 = [
    ("st1", 2_000, 525.9, 488.28125),
    ("st1", 6_000, 535.9, 500.0),
    ("sc1", 2_000, 168.2, 156.25),
    ("sc1", 6_000, 268.3, 250.0),
]


@pytest.mark.parametrize(("vtype", "size", "measured", "expected"), SEED_003)
def test_seed_003_random_4k_iops_on_st1_and_sc1_fall_inside_the_cap_tolerance(
    vtype: str, size: int, measured: float, expected: float
) -> None:
    volume = validate(Volume(vtype, size_gib=size, instance_type="d2.xlarge"))
    exp = cap_expectation("S3-06", "random read 4 KiB", volume, Workload("randread", bs=4096))
    assert exp.value == pytest.approx(expected)
    assert exp.binding is not None and "1 MiB credit" in exp.binding.name
    assert exp.low * exp.value <= measured <= (exp.high or 0) * exp.value


def test_st1_and_sc1_2_tib_and_6_tib_small_io_caps_are_500_500_160_250() -> None:
    # S3-06 as claims.md states it, sizes in TiB.
    caps = [hdd_rates(t).small_io_iops_cap(s) for t, s in
            [("st1", 2_048), ("st1", 6_144), ("sc1", 2_048), ("sc1", 6_144)]]  # fmt: skip
    assert caps == [500.0, 500.0, 160.0, 250.0]


def test_hdd_bucket_holds_one_tib_of_credit_per_tib_and_drains_at_burst_minus_baseline() -> None:
    assert hdd.hdd_bucket_mib(2_048) == 2_048 * 1_024
    # the one bucket the plugin plans, books and emulates bursts with (awsmodel.burst)
    assert hdd_burst_plan("st1", 2_048).burst_s == pytest.approx(2_048 * 1_024 / (500 - 80))
    assert math.isinf(hdd_burst_plan("st1", 12_800).burst_s)


def test_a_5_tib_st1_scan_takes_2_91_hours_at_500_mib_per_s() -> None:
    assert hdd.hdd_scan_time_h(5 * 1_024, 500) == pytest.approx(2.91, abs=0.01)


def test_an_ssd_type_is_not_an_hdd_type() -> None:
    with pytest.raises(ValueError, match=r"not an HDD volume type \(sc1, st1\)"):
        hdd_rates("gp2")


def test_standard_notes_state_the_documented_magnetic_ranges() -> None:
    notes = " ".join(hdd.standard_notes())
    assert "40-200 IOPS" in notes and "40-90 MiB/s" in notes and "B-STD" in notes
