"""--ebsperf-era: the seed documents' numbers come back from the models of their year."""

from __future__ import annotations

import pytest

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel import ebs
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.errors import VolumeSpecError
from pytest_ebsperf.fio.workload import Workload

KIB, MIB = 1024, 1024 * 1024


def iops(volume: Volume, pattern: str, bs: int, era: str) -> float:
    return awsmodel.cap_expectation("S4-03", "x", volume, Workload(pattern, bs=bs), era=era).value


def test_seed_004_2013_io1_2000_iops_on_c1_xlarge() -> None:
    """S4-01..S4-06: 2,000 random IOPS per volume; one volume's sequential bandwidth is not
    bounded by 2,000 x 16 KiB (seed 004 moved 41.9 MB/s) and no per-volume ceiling was
    published, so it is recorded between that floor and the instance's 125 MB/s."""
    volume = awsmodel.validate(Volume("io1", size_gib=200, iops=2000, instance_type="c1.xlarge"),
                             era="2013")
    assert iops(volume, "randread", 4 * KIB, "2013") == 2000
    assert iops(volume, "randwrite", 64 * KIB, "2013") == 500  # four 16 KiB units each
    seq = awsmodel.cap_expectation("S4-06", "x", volume, Workload("read", bs=MIB), era="2013",
                                 metric="throughput")
    assert seq.policy == awsmodel.INFO and seq.value == pytest.approx(125e6)
    assert seq.binding.kind == awsmodel.INSTANCE
    assert "32.77 MB/s" in seq.notes[0] and "41.9 MB/s" in seq.notes[0]
    assert 41.86e6 > 2000 * 16 * KIB  # why the 2013 model has no 16 KiB throughput bound


def test_seed_002_2014_io1_4000_iops_and_128_mib_gp2_3000_at_1_tib() -> None:
    """S2-06, S2-07, S2-09, S2-11: the 2014 limits of seed 002."""
    io1 = awsmodel.validate(Volume("io1", size_gib=400, iops=4000), era="2014")
    assert iops(io1, "randread", 16 * KIB, "2014") == 4000
    assert iops(io1, "randread", 128 * KIB, "2014") == pytest.approx(1024)  # 128 MiB/s
    gp2 = awsmodel.validate(Volume("gp2", size_gib=1000), era="2014")
    assert ebs.gp2_baseline_iops(1000, era="2014") == 3000
    assert iops(gp2, "randread", 256 * KIB, "2014") == pytest.approx(512)  # 128 MiB/s


def test_seed_003_2016_gp2_2tb_6000_iops_st1_6tb_500_on_d2_xlarge_93_75() -> None:
    """S3-07, S3-03: gp2 2 TB baseline 6,000; st1 6 TB bursts to 500 MiB/s but d2.xlarge's
    93.75 MB/s binds."""
    gp2 = awsmodel.validate(Volume("gp2", size_gib=2000), era="2016")
    assert iops(gp2, "randread", 4 * KIB, "2016") == 6000
    assert ebs.gp2_baseline_iops(5000, era="2016") == 10_000  # the 2016 ceiling
    st1 = awsmodel.validate(Volume("st1", size_gib=6144, instance_type="d2.xlarge"), era="2016")
    seq = awsmodel.cap_expectation("S3-03", "x", st1, Workload("read", bs=MIB), era="2016",
                                 metric="throughput")
    assert seq.value == pytest.approx(93.75e6) and seq.binding.kind == awsmodel.INSTANCE


@pytest.mark.parametrize(("volume", "era", "words"), [
    (Volume("gp2", size_gib=2000), "2014", "topped out at 1 TiB"),
    (Volume("io1", size_gib=200, iops=4000), "2013", "at most 2,000 IOPS"),
    (Volume("io1", size_gib=1000, iops=30000), "2016", "at most 20,000 IOPS"),
    (Volume("st1", size_gib=250), "2016", "started at 500 GiB"),
    (Volume("gp3", size_gib=100), "2016", "did not exist in 2016"),
    (Volume("gp2", size_gib=100), "2013", "did not exist in 2013"),
])
def test_a_volume_that_era_did_not_sell_is_refused_with_a_sentence(
        volume: Volume, era: str, words: str) -> None:
    with pytest.raises(VolumeSpecError, match=words) as caught:
        awsmodel.validate(volume, era=era)
    assert "--ebsperf-era" in str(caught.value)


def test_io2_above_64000_iops_is_refused_off_nitro_and_delivers_32000_below() -> None:
    """B-IO2: AWS provisions at most 64,000 IOPS for an instance not built on Nitro."""
    with pytest.raises(VolumeSpecError, match="at most 64,000 IOPS and delivers at most 32,000"):
        awsmodel.validate(Volume("io2", size_gib=200, iops=100_000, instance_type="c4.2xlarge"))
    ok = awsmodel.validate(Volume("io2", size_gib=200, iops=64_000, instance_type="c4.2xlarge"))
    assert awsmodel.volume_caps(ok).iops == 32_000
    assert awsmodel.validate(Volume("io2", size_gib=200, iops=100_000,
                                  instance_type="c7g.2xlarge")).iops == 100_000


def test_graviton_and_older_families_are_in_the_instance_table() -> None:
    """B-EBSOPT: c7g.2xlarge 2,500/10,000 Mbps = 312.5/1,250 MB/s, 12,000/40,000 IOPS."""
    c7g = awsmodel.ebs_limits("c7g.2xlarge")
    assert (c7g.baseline_iops, c7g.baseline_mbps, c7g.max_iops, c7g.max_mbps) == \
        (12_000, 312.5, 40_000, 1250)
    assert awsmodel.nitro("c7g.2xlarge") is True
    assert awsmodel.nitro("m4.xlarge") is False and awsmodel.nitro("r4.large") is False
    for itype in ("m4.2xlarge", "r4.xlarge", "c5d.large", "m5a.large"):
        assert awsmodel.ebs_limits(itype) is not None, itype
    assert awsmodel.instance_store_iops("i4i.metal") == (3_200_000, 1_760_000)
