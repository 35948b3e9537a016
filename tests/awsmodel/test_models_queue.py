"""default_queue_depth: Little's law with headroom, clamped and spread over jobs."""

from __future__ import annotations

import pytest

from pytest_ebsperf.awsmodel import default_latency_s, default_queue_depth, little_iops
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.fio.workload import Workload

MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("volume", "workload", "iops", "cpus", "expected"),
    [
        # single-digit milliseconds: planned for up to 5 ms (2.5 ms x 2)
        (Volume("gp3", size_gib=8), Workload("randread"), 3_000, 8, (15, 1)),
        (Volume("gp2", size_gib=100), Workload("randread"), 300, 8, (4, 1)),  # clamped up to 4
        # 320 outstanding: 16 jobs of 20 (16 KiB I/O: up to 2 jobs per CPU)
        (Volume("io1", size_gib=1_280, iops=64_000), Workload("randread"), 64_000, 8, (20, 16)),
        (Volume("io2", size_gib=256, iops=256_000), Workload("randread"), 256_000, 8, (16, 16)),
        # one CPU: at most 64 outstanding; 16 KiB I/O: 2 jobs of 32 (2 per CPU from 16 KiB)
        (Volume("io2", size_gib=256, iops=256_000), Workload("randread"), 256_000, 1, (32, 2)),
        (Volume("gp3", size_gib=500, iops=80_000), Workload("randread"), 80_000, 2, (32, 4)),
        # 4 KiB I/O: up to 4 jobs per CPU at about 16 each
        (Volume("io2", size_gib=256, iops=256_000), Workload("randread", bs=4096), 256_000, 1,
         (16, 4)),
        (Volume("gp3", size_gib=500, iops=80_000), Workload("randread", bs=4096), 80_000, 2,
         (16, 8)),
    ],
)
def test_outstanding_ios_are_twice_littles_law_spread_over_shallow_jobs(
    volume: Volume, workload: Workload, iops: float, cpus: int, expected: tuple[int, int]
) -> None:
    assert default_queue_depth(volume, workload, iops, cpu_count=cpus) == expected


def test_st1_sequential_1_mib_gets_awss_own_recipe_of_qd8_and_one_job() -> None:
    volume = Volume("st1", size_gib=2_048)
    assert default_queue_depth(volume, Workload("read", bs=MIB), 500, cpu_count=64) == (8, 1)


def test_hdd_never_spreads_over_jobs_even_when_the_total_is_large() -> None:
    volume = Volume("st1", size_gib=2_048)
    assert default_queue_depth(volume, Workload("randread"), 10_000, cpu_count=64) == (160, 1)


def test_the_total_is_clamped_to_512() -> None:
    store = Volume("instance-store", instance_type="i3.16xlarge")
    iodepth, numjobs = default_queue_depth(store, Workload("randread", bs=4096), 3_300_000,
                                           cpu_count=64)  # fmt: skip
    assert (iodepth, numjobs) == (16, 32)


def test_a_given_latency_overrides_the_type_default() -> None:
    volume = Volume("gp3", size_gib=100)
    assert default_queue_depth(volume, Workload("randread"), 3_000, latency_s=0.01) == (60, 1)


def test_split_ios_are_assumed_to_take_longer() -> None:
    volume = Volume("gp3", size_gib=100)
    assert default_latency_s(volume, Workload("randread", bs=MIB)) == pytest.approx(0.01)  # four 256 KiB operations
    assert default_latency_s(Volume("io2", size_gib=8, iops=8_000), Workload("randread")) == 0.0005


def test_littles_law_gives_the_iops_a_queue_depth_can_reach() -> None:
    assert little_iops(32, 0.0009) == pytest.approx(35_555.6, rel=1e-4)
