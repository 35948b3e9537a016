"""volume_caps: the exact ceilings an emulated volume is throttled to."""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf.awsmodel import VolumeCaps, era_applies, validate, volume_caps
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.errors import VolumeSpecError

MIB = 1024 * 1024
SSD, HDD = 256 * 1024, 1024 * 1024

CAPS = [
    (Volume("io1", size_gib=200, iops=2_000), True, VolumeCaps(2_000, 500 * MIB, SSD)),
    (Volume("gp2", size_gib=100), True, VolumeCaps(3_000, 128 * MIB, SSD)),
    (Volume("gp2", size_gib=100), False, VolumeCaps(300, 75 * MIB, SSD)),
    (Volume("gp2", size_gib=1_000), False, VolumeCaps(3_000, 250 * MIB, SSD)),
    (Volume("st1", size_gib=2_048), True, VolumeCaps(500, 500 * MIB, HDD)),
    (Volume("st1", size_gib=2_048), False, VolumeCaps(80, 80 * MIB, HDD)),
    (Volume("sc1", size_gib=6_144), True, VolumeCaps(250, 250 * MIB, HDD)),
    (Volume("gp3", size_gib=8), True, VolumeCaps(3_000, 125 * MIB, SSD)),
    (Volume("gp3", size_gib=200, iops=80_000, throughput_mibps=2_000), True,
     VolumeCaps(80_000, 2_000 * MIB, SSD)),
    (Volume("io1", size_gib=1_280, iops=64_000), True, VolumeCaps(64_000, 1_000 * MIB, SSD)),
    (Volume("io2", size_gib=256, iops=256_000), True, VolumeCaps(256_000, 4_000 * MIB, SSD)),
    (Volume("standard", size_gib=100), True, VolumeCaps(200, 90 * MIB, SSD)),
]  # fmt: skip


@pytest.mark.parametrize(("volume", "credits", "caps"), CAPS, ids=lambda v: getattr(v, "type", ""))
def test_volume_caps_follow_the_formulas_exactly(
    volume: Volume, credits: bool, caps: VolumeCaps
) -> None:
    assert volume_caps(volume, credits=credits) == caps


def test_a_burst_balance_of_zero_gives_gp2_its_baseline_even_when_credits_are_asked_for() -> None:
    empty = Volume("gp2", size_gib=100, burst_balance_pct=0.0)
    assert volume_caps(empty) == VolumeCaps(300, 75 * MIB, SSD)
    assert volume_caps(empty.replace(burst_balance_pct=0.5)).iops == 3_000


def test_io1_above_32000_iops_delivers_32000_off_nitro() -> None:
    xen = validate(Volume("io1", size_gib=1_280, iops=64_000, instance_type="i3.large"))
    assert xen.nitro is False
    assert volume_caps(xen) == VolumeCaps(32_000, 500 * MIB, SSD)


def test_seed_era_caps_reproduce_the_2013_and_2014_limits() -> None:
    io1 = Volume("io1", size_gib=200, iops=4_000)
    assert volume_caps(io1, era="2014") == VolumeCaps(4_000, 128 * MIB, SSD)
    old = Volume("io1", size_gib=200, iops=2_000)
    # 2013: random I/O counted in 16 KiB units; no per-volume throughput ceiling published
    assert volume_caps(old, era="2013") == VolumeCaps(2_000, math.inf, 16 * 1024)
    assert volume_caps(Volume("gp2", size_gib=1_000), era="2014").throughput_mibps == 128


def test_a_type_that_did_not_exist_in_an_era_is_refused() -> None:
    assert not era_applies("gp3", "2014") and not era_applies("gp2", "2013")
    assert era_applies("io1", "2013") and era_applies("st1", "now")
    with pytest.raises(ValueError, match="gp3 did not exist in 2014"):
        volume_caps(Volume("gp3", size_gib=100), era="2014")


def test_instance_store_caps_are_the_published_read_iops_without_a_throughput_limit() -> None:
    caps = volume_caps(Volume("instance-store", instance_type="i4i.xlarge"))
    assert caps.iops == 100_000 and math.isinf(caps.throughput_bps)
    with pytest.raises(VolumeSpecError, match="No published instance-store IOPS for c3.large"):
        volume_caps(Volume("instance-store", instance_type="c3.large"))


def test_missing_size_or_iops_names_the_option_to_pass() -> None:
    with pytest.raises(VolumeSpecError, match="--volume-size=GIB"):
        volume_caps(Volume("gp2"))
    with pytest.raises(VolumeSpecError, match="--volume-iops=N"):
        volume_caps(Volume("io2", size_gib=100))
