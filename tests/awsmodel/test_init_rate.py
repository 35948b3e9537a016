"""What a Provisioned Rate for Volume Initialization promises a first read (B-INIT)."""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel.init_rate import first_read_floor_bps, init_rate_expectation
from pytest_ebsperf.awsmodel.types import FLOOR, INFO
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.fio.workload import Workload

MIB = 2**20
READ = Workload("read", bs=MIB, iodepth=32, once=True)


def test_the_floor_is_the_harmonic_sum_of_the_rate_and_the_cap() -> None:
    # every block by size / R, the rest at the cap: V / R + V / c at most
    assert first_read_floor_bps(300, 1000 * MIB) == pytest.approx(MIB / (1 / 300 + 1 / 1000))
    # far above the rate the cap matters little; a cap below the rate binds
    assert first_read_floor_bps(100, 1e12) == pytest.approx(100 * MIB, rel=1e-3)
    assert first_read_floor_bps(300, 125 * MIB) < 125 * MIB


def test_a_gp3_read_gets_a_floor_named_by_the_rate_and_its_cap() -> None:
    volume = awsmodel.validate(Volume("gp3", size_gib=500, iops=6000, throughput_mibps=500))
    found = init_rate_expectation("B-INIT", "first read", volume, READ, 300,
                                  caps=awsmodel.limits(volume, READ))
    assert found.policy == FLOOR and found.unit == "B/s" and found.high is None
    assert found.value == pytest.approx(MIB / (1 / 300 + 1 / 500))
    assert found.threshold == pytest.approx(0.9 * found.value)
    assert found.binding is not None
    assert "provisioned initialization rate 300 MiB/s" in found.binding.name
    assert "500 MiB/s" in found.binding.name


def test_a_write_is_recorded_not_judged_and_a_rate_outside_100_300_is_refused() -> None:
    volume = awsmodel.validate(Volume("gp3", size_gib=500))
    writes = init_rate_expectation("B-INIT", "w", volume, Workload("write", bs=MIB), 200,
                                   caps=())
    assert writes.policy == INFO and math.isnan(writes.value)
    for rate in (50, 301):
        with pytest.raises(ValueError, match="AWS accepts 100-300 MiB/s"):
            init_rate_expectation("B-INIT", "r", volume, READ, rate, caps=())
