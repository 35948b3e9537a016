"""limits, cap_expectation and floor_expectation against the seeds' measurements."""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf.awsmodel import (
    CAP,
    DUTY_GP,
    DUTY_IO,
    FLOOR,
    INFO,
    INSTANCE,
    VOLUME,
    EbsLimits,
    cap_expectation,
    crossover_bs,
    floor_expectation,
    instance_store_rate,
    limits,
    validate,
)
from pytest_ebsperf.awsmodel.volume import DISCOVERED, Volume
from pytest_ebsperf.fio.workload import Workload

KIB, MIB = 1024, 1024 * 1024


def _within(measured: float, volume: Volume, workload: Workload, claim: str = "X") -> bool:
    exp = cap_expectation(claim, "check", volume, workload)
    return exp.low * exp.value <= measured <= (exp.high or math.inf) * exp.value


def test_limits_name_every_ceiling_in_fio_iops_at_the_block_size() -> None:
    volume = validate(Volume("io1", size_gib=200, iops=2_000, instance_type="m5.large"))
    found = limits(volume, Workload("randread", bs=16 * KIB))
    assert [(lim.name, lim.kind, round(lim.iops)) for lim in found] == [
        ("io1 provisioned 2,000 IOPS", VOLUME, 2_000),
        ("io1 throughput 500 MiB/s", VOLUME, 32_000),
        ("m5.large EBS-optimized maximum 18,750 IOPS (16 KiB basis)", INSTANCE, 18_750),
        ("m5.large EBS-optimized maximum 593.75 MB/s", INSTANCE, 36_240),
    ]
    assert {lim.claim for lim in found} == {"B-IO1", "B-EBSOPT"}


def test_a_split_io_costs_several_volume_iops() -> None:
    volume = Volume("gp3", size_gib=100, iops=16_000, throughput_mibps=2_000)
    iops_limit = limits(volume, Workload("randread", bs=1_024 * KIB))[0]
    assert iops_limit.iops == 4_000 and "4 EBS I/Os per 1MiB I/O" in iops_limit.name


def test_sustained_instance_limits_use_the_baseline() -> None:
    volume = Volume("gp3", size_gib=1_000, iops=16_000, instance_type="m5.large")
    found = limits(volume, Workload("randread", bs=16 * KIB), sustained_instance=True)
    assert found[2].iops == 3_600 and "baseline" in found[2].name


def test_gp2_100_gib_on_m3_xlarge_expects_the_3000_burst_and_seed_000_is_inside() -> None:
    # S0-07: 3,064 IOPS random read 16 KiB; m3.xlarge's 62.5 MB/s allows 3,815 at 16 KiB.
    volume = validate(Volume("gp2", size_gib=100, instance_type="m3.xlarge"))
    exp = cap_expectation("S0-07", "gp2 random read", volume, Workload("randread"))
    assert (exp.value, exp.policy, exp.duty) == (3_000, CAP, DUTY_GP)
    assert exp.binding is not None and exp.binding.name == "gp2 burst 3,000 IOPS"
    assert _within(3_064, volume, Workload("randread"))


def test_gp2_without_credits_expects_the_baseline_of_s2_14() -> None:
    for size, baseline in ((100, 300), (500, 1_500)):
        exp = cap_expectation("S2-14", "after burst", Volume("gp2", size_gib=size),
                              Workload("randrw"), credits=False)  # fmt: skip
        assert exp.value == baseline
        assert exp.binding is not None and "no burst credits" in exp.binding.name


def test_io1_expectations_use_the_999_duty_and_seed_004_is_inside() -> None:
    volume = Volume("io1", size_gib=200, iops=2_000, instance_type="c1.xlarge")
    exp = cap_expectation("S4-03", "io1 random read", validate(volume), Workload("randread", bs=4096))
    assert exp.duty == DUTY_IO and exp.value == 2_000
    assert exp.source == "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimization.html"
    assert _within(2_064, validate(volume), Workload("randread", bs=4096))


def test_io1_at_128_kib_is_bound_by_500_mib_today_and_128_mib_in_2014() -> None:
    volume = Volume("io1", size_gib=200, iops=4_000)
    wl = Workload("randread", bs=128 * KIB)
    now = cap_expectation("S2-07", "io1 128 KiB", volume, wl, metric="throughput")
    then = cap_expectation("S2-07", "io1 128 KiB", volume, wl, metric="throughput", era="2014")
    assert now.value == 500 * MIB and now.unit == "B/s"
    assert then.value == 128 * MIB and "Seed-era (2014)" in then.notes[-1]


def test_crossover_block_size_of_a_4000_iops_io1_is_128_kib() -> None:
    assert crossover_bs(Volume("io1", size_gib=200, iops=4_000)) == 128 * KIB


def test_st1_sequential_on_d2_xlarge_is_bound_by_the_instance_as_seed_003_saw() -> None:
    # S3-03: 6 TB st1 can burst 500 MiB/s; d2.xlarge's 93.75 MB/s held it to ~94 MB/s.
    volume = validate(Volume("st1", size_gib=6_000, instance_type="d2.xlarge"))
    wl = Workload("read", bs=MIB)
    exp = cap_expectation("S3-03", "st1 sequential", volume, wl, metric="throughput")
    assert exp.value == 93.75e6 and exp.policy == CAP
    assert exp.binding is not None and exp.binding.kind == INSTANCE
    assert 0.9 * exp.value <= 94.208e6 <= 1.1 * exp.value


def test_a_larger_instance_raises_the_st1_ceiling_as_in_s3_04() -> None:
    volume = Volume("st1", size_gib=6_000)
    wl = Workload("read", bs=MIB)
    small = cap_expectation("S3-04", "x", volume.replace(instance_type="d2.xlarge"), wl,
                            metric="throughput")  # fmt: skip
    big = cap_expectation("S3-04", "x", volume.replace(instance_type="c4.2xlarge"), wl,
                          metric="throughput")  # fmt: skip
    assert big.value / small.value == pytest.approx(125 / 93.75)


def test_a_bursting_instance_limit_says_it_lasts_30_minutes() -> None:
    volume = Volume("gp3", size_gib=500, iops=20_000, throughput_mibps=1_000,
                    instance_type="m5.large")  # fmt: skip
    exp = cap_expectation("B-EBSOPT", "x", volume, Workload("randread"))
    assert exp.binding is not None and exp.binding.kind == INSTANCE
    assert any("30 minutes in 24 hours" in note for note in exp.notes)


def test_c3_8xlarge_has_no_instance_limit_and_the_slide_row_is_explained() -> None:
    volume = Volume("gp2", size_gib=100, instance_type="c3.8xlarge")
    exp = cap_expectation("S2-21", "x", volume, Workload("randread"))
    assert all(lim.kind == VOLUME for lim in exp.limits)
    assert "no dedicated EBS bandwidth" in exp.notes[0] and "10 Gbps" in exp.notes[0]


def test_discovered_limits_replace_the_table_and_an_unknown_discovered_type_does_not_stop() -> None:
    volume = Volume("gp3", size_gib=100, instance_type="x9.large",
                    provenance={"instance_type": DISCOVERED})  # fmt: skip
    assert len(limits(volume, Workload("randread"))) == 2
    given = EbsLimits(1_000, 50.0, 1_000, 50.0)
    exp = cap_expectation("X", "x", volume, Workload("randread"), instance_limits=given)
    assert exp.value == 1_000 and exp.binding is not None and exp.binding.kind == INSTANCE


def test_sequential_small_blocks_and_magnetic_get_info_not_cap() -> None:
    seq = cap_expectation("S4-05", "x", Volume("io1", size_gib=200, iops=2_000),
                          Workload("read", bs=4096))  # fmt: skip
    assert seq.policy == INFO and "merges" in seq.notes[0]
    mag = cap_expectation("S0-02", "x", Volume("standard", size_gib=100), Workload("randread"))
    assert mag.policy == INFO and "40-200 IOPS" in mag.notes[0]


def test_instance_store_floor_is_the_published_figure_or_its_device_share() -> None:
    volume = validate(Volume("instance-store", instance_type="i3.8xlarge"))
    read = floor_expectation("S3-08", "x", volume, Workload("randread", bs=4096), devices=4)
    one = floor_expectation("S3-08", "x", volume, Workload("randwrite", bs=4096))
    assert (read.value, read.policy, read.low, read.high) == (1_650_000, FLOOR, 0.90, None)
    assert one.value == 720_000 / 4 and "4 devices; 1 tested" in one.notes[0]


def test_a_mixed_floor_is_the_harmonic_mix_of_read_and_write() -> None:
    volume = Volume("instance-store", instance_type="i4i.xlarge")
    exp = floor_expectation("X", "x", volume, Workload("randrw", bs=4096, rwmixread=50))
    assert exp.value == pytest.approx(1 / (0.5 / 100_000 + 0.5 / 55_000))


def test_i2_xlarge_measured_by_seed_003_clears_the_published_floor() -> None:
    volume = Volume("instance-store", instance_type="i2.xlarge")
    exp = floor_expectation("S3-08", "x", volume, Workload("randread", bs=4096))
    assert 58_758.1 >= exp.low * exp.value == 31_500


def test_instance_store_floor_is_info_without_a_published_4k_figure() -> None:
    unpublished = Volume("instance-store", instance_type="c3.large")
    assert floor_expectation("X", "x", unpublished, Workload("randread", bs=4096)).policy == INFO
    i3 = Volume("instance-store", instance_type="i3.large")
    assert floor_expectation("X", "x", i3, Workload("randread", bs=16 * KIB)).policy == INFO


def test_cap_expectation_refuses_instance_store() -> None:
    with pytest.raises(ValueError, match="floor_expectation"):
        cap_expectation("X", "x", Volume("instance-store", instance_type="i3.large"),
                        Workload("randread"))  # fmt: skip


def test_instance_store_rate_is_the_device_share_of_the_published_mix() -> None:
    volume = Volume("instance-store", instance_type="i3.8xlarge")
    assert instance_store_rate(volume) == 1_650_000 / 4
    assert instance_store_rate(volume, Workload("randwrite", bs=4096), devices=4) == 720_000
    stand_in = Volume("instance-store", instance_type="c3.large")
    assert instance_store_rate(stand_in) == 50_000


def test_a_clamped_io1_names_why_it_is_clamped() -> None:
    big = Volume("io1", size_gib=1_280, iops=64_000, nitro=False)
    assert limits(big, Workload("randread"))[0].name == (
        "io1 32,000 IOPS (the most a non-Nitro instance delivers)"
    )
    seed = Volume("io1", size_gib=200, iops=10_000)
    assert limits(seed, Workload("randread"), era="2014")[0].name == (
        "io1 4,000 IOPS (the 2014 per-volume maximum)"
    )


def test_instance_store_figures_come_for_every_type_aws_publishes_them_for() -> None:
    """AWS's EC2 guide lists m5d.4xlarge at 234,000 read / 114,000 write and m5d.8xlarge at
    466,666 / 233,333 (scripts/gen_instance_store.py; its tables, 2023-06-15)."""
    from pytest_ebsperf.awsmodel import instances

    assert instances.instance_store_iops("m5d.4xlarge") == (234_000, 114_000)
    assert instances.instance_store_iops("m5d.8xlarge") == (466_666, 233_333)
    assert instances.instance_store_devices("m5d.8xlarge") == 2
    assert instances.instance_store_iops("r6id.metal") == (2_146_664, 1_073_336)
    assert instances.instance_store_iops("i3.metal") == (3_300_000, 1_400_000)
    volume = Volume("instance-store", instance_type="m5d.8xlarge")
    exp = floor_expectation("B-IS", "x", volume, Workload("randread", bs=4096), devices=2)
    assert exp.policy != INFO and exp.value == 466_666
