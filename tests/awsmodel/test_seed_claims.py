"""Seed claims checked against the models and the seeds' own figures, not with fio: prices,
the instance tables of retired hardware, and the formulas the suites' expectations come
from. Each test's docstring starts with the claim IDs it checks; docs/claims.md lists them
under "checked by" (scripts/gen_claims_doc.py reads this file)."""

from __future__ import annotations

import pytest

from pytest_ebsperf import awsmodel
from pytest_ebsperf.aws.pricing import builtin_prices, monthly_cost
from pytest_ebsperf.awsmodel import seed_data as seeds
from pytest_ebsperf.awsmodel.stripes import set_expectation
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.errors import VolumeSpecError
from pytest_ebsperf.fio.workload import Workload

MB = 1e6


def test_s0_01_the_2014_types_are_standard_io1_gp2_and_today_has_more():
    """S0-01: in 2014 EBS sold standard, io1 and gp2; today gp3, io2, st1 and sc1 too."""
    sold_2014 = {t for t in ("standard", "io1", "gp2", "gp3", "io2", "st1", "sc1")
                 if awsmodel.era_applies(t, "2014")}
    assert sold_2014 == {"standard", "io1", "gp2"}
    assert all(awsmodel.era_applies(t) for t in ("gp3", "io2", "st1", "sc1"))


@pytest.mark.parametrize(("vtype", "claim_prices"), [
    ("standard", (0.08, 0.0, 0.08)), ("io1", (0.142, 0.074, 0.0)), ("gp2", (0.12, 0.0, 0.0))])
def test_s0_03_s0_05_s2_13_tokyo_prices_in_the_cost_table_match_the_seeds(vtype, claim_prices):
    """S0-03, S0-05, S2-13, B-PRICE: the built-in Tokyo table holds the prices seed 002 quoted
    (standard $0.08/GB-month + $0.08 per million I/O; io1 $0.142/GB-month + $0.074/PIOPS-month;
    gp2 $0.12/GB-month and nothing per IOPS); the estimate's source line says when the live
    Price List differs."""
    assert seeds.SEED_TOKYO_PRICES[vtype] == claim_prices
    prices = builtin_prices("ap-northeast-1").prices[vtype]
    assert (prices.gb_month, prices.iops_month, prices.per_million_io) == claim_prices
    # seed 002's io1 example: 4,000 PIOPS on 100 GB = 14.2 + 296 = $310.20 a month
    if vtype == "io1":
        assert monthly_cost(Volume("io1", size_gib=100, iops=4000), prices) == \
            pytest.approx(310.2)
    if vtype == "gp2":  # S2-13: capacity only; provisioned IOPS do not change the bill
        assert monthly_cost(Volume("gp2", size_gib=1000), prices) == pytest.approx(120.0)


def test_s3_01_node_costs_recompute_and_ebs_can_be_cheaper_than_d2():
    """S3-01, B-PRICE: seed 003's node costs follow from 750 h of the instance, the 2016 Tokyo
    GB-month price x 6,000 GB and ~$1 of root volume (within $1), and sc1 and st1 nodes cost
    less than the d2.xlarge node (gp2 more). With today's built-in prices the volume part
    keeps the order sc1 < st1 < gp2."""
    for instance, disk, capacity, _ec2, _ebs, total in seeds.SEED003_NODE_COST:
        assert seeds.seed003_node_cost(instance, disk, capacity) == pytest.approx(total, abs=1.0)
    totals = {disk: total for _, disk, capacity, _, _, total in seeds.SEED003_NODE_COST
              if capacity == 6000}
    assert totals["sc1"] < totals["st1"] < totals["ephemeral"] < totals["gp2"]
    today = builtin_prices("ap-northeast-1").prices
    volume_cost = {t: monthly_cost(Volume(t, size_gib=6000), today[t]) for t in
                   ("sc1", "st1", "gp2")}
    assert volume_cost["sc1"] < volume_cost["st1"] < volume_cost["gp2"]


def test_s3_10_per_dollar_tables_recompute_and_rank_d2_and_i2_first():
    """S3-10: seed 003's "per $" figures are the measured figure over the node's monthly cost
    (to their two printed digits), sequential MB/s per $ is best on d2 (0.79) and random
    IOPS per $ on i2 (76.6)."""
    cost = {(i, d): total for i, d, _, _, _, total in seeds.SEED003_NODE_COST}
    for table in (seeds.SEED003_SEQ_PER_USD, seeds.SEED003_IOPS_PER_USD):
        for instance, disk, measured, printed in table:
            assert measured / cost[(instance, disk)] == pytest.approx(printed, abs=0.006)
    best_seq = max(seeds.SEED003_SEQ_PER_USD, key=lambda r: r[2] / cost[(r[0], r[1])])
    best_iops = max(seeds.SEED003_IOPS_PER_USD, key=lambda r: r[2] / cost[(r[0], r[1])])
    assert best_seq[0] == "d2.xlarge" and best_iops[0] == "i2.xlarge"


def test_s3_02_instance_store_outruns_instance_bound_ebs_several_times():
    """S3-02, B-EBSOPT: on d2.xlarge EBS cannot pass the instance's 93.75 MB/s, which the
    three striped HDDs beat 5x (500 MB/s); i2's SSD gave ~10x a 2 TB gp2's 6,000 IOPS. The
    models give the same bounds the seed ran into."""
    d2 = awsmodel.ebs_limits("d2.xlarge")
    assert d2 is not None and d2.max_mbps == pytest.approx(93.75)
    striped = seeds.SEED003_INSTANCE_STORE[1]
    assert striped.seq_read_mbps / d2.max_mbps >= 3
    gp2 = awsmodel.volume_caps(Volume("gp2", size_gib=2000), credits=False)
    i2 = seeds.SEED003_INSTANCE_STORE[2]
    assert i2.rand_read_iops / gp2.iops >= 3
    assert all(row.seq_read_mbps <= d2.max_mbps * 1.01 for row in seeds.SEED003_EBS
               if row.instance == "d2.xlarge")


def test_s3_04_a_larger_instance_raises_ebs_throughput_by_its_cap_ratio():
    """S3-04, S2-19: xlarge -> 2xlarge raised sequential EBS throughput 94 -> 125 MB/s: the
    measured ratio matches the caps' ratio (125 / 93.75) within 10 %."""
    small, big = awsmodel.ebs_limits("d2.xlarge"), awsmodel.ebs_limits("c4.2xlarge")
    assert small is not None and big is not None
    caps = big.max_mbps / small.max_mbps
    for disk in ("st1 2TB", "sc1 6TB", "gp2 2TB"):
        on_small = next(r for r in seeds.SEED003_EBS
                        if r.instance == "d2.xlarge" and r.disk == disk)
        on_big = next(r for r in seeds.SEED003_EBS
                      if r.instance == "c4.2xlarge" and r.disk == disk)
        assert on_big.seq_read_mbps / on_small.seq_read_mbps == pytest.approx(caps, rel=0.10)


def test_s3_05_s3_09_striped_hdd_instance_store_scales_nearly_linearly():
    """S3-05, S3-09: one d2.xlarge HDD read 171 MB/s, three striped 500 MB/s: at least
    0.8 x N x one disk (the REL the set checks use for alike members)."""
    one, three = seeds.SEED003_INSTANCE_STORE[0], seeds.SEED003_INSTANCE_STORE[1]
    assert three.seq_read_mbps >= 0.8 * 3 * one.seq_read_mbps
    assert three.rand_read_iops >= 0.8 * 3 * one.rand_read_iops


def test_s3_07_s0_09_s2_03_s2_11_gp2_baselines_are_three_iops_per_gib():
    """S3-07, S0-09, S2-03, S2-11: gp2's baseline is 3 IOPS per GiB: 100 -> 300, 500 ->
    1,500, 1,000 -> 3,000, 2,000 -> 6,000; seed 003's 5,968 IOPS on 2 TB lie within the
    CAP band of the 6,000 model."""
    for size, baseline in ((100, 300), (500, 1500), (1000, 3000), (2000, 6000)):
        caps = awsmodel.volume_caps(Volume("gp2", size_gib=size), credits=False)
        assert caps.iops == baseline
    for row in seeds.SEED003_EBS:
        if row.disk == "gp2 2TB":
            assert 0.90 * 6000 <= row.rand_read_iops <= 1.10 * 6000


def test_s2_09_gp2_1000_gib_tops_out_at_3000_iops_and_its_era_throughput():
    """S2-09, B-GP2: a 1,000 GiB gp2 gives 3,000 IOPS (baseline = burst) and stops at the
    throughput ceiling: 128 MiB/s in 2014, 250 MiB/s today."""
    volume = Volume("gp2", size_gib=1000)
    then, now = awsmodel.volume_caps(volume, era="2014"), awsmodel.volume_caps(volume)
    assert then.iops == now.iops == 3000
    assert then.throughput_bps == 128 * 2**20 and now.throughput_bps == 250 * 2**20


def test_s2_20_s2_21_c3_ebs_optimized_limits_as_the_slides_said():
    """S2-20, S2-21, B-EBSOPT: c3.xlarge/2xlarge/4xlarge carried 4,000/8,000/16,000 IOPS at
    16 KiB (62.5/125/250 MB/s); c3.8xlarge had no dedicated EBS bandwidth (the table has no
    EBS-optimized entry for it)."""
    for itype, iops, mbps in (("c3.xlarge", 4000, 62.5), ("c3.2xlarge", 8000, 125),
                              ("c3.4xlarge", 16000, 250)):
        limits = awsmodel.ebs_limits(itype)
        assert limits is not None and (limits.max_iops, limits.max_mbps) == (iops, mbps)
        assert iops * 16 * 1024 / MB == pytest.approx(mbps, rel=0.05)
    assert awsmodel.ebs_limits("c3.8xlarge") is None


def test_s4_01_io1_took_at_most_2000_iops_per_volume_in_2013():
    """S4-01, B-IO1: in 2013 io1 volumes took at most 2,000 provisioned IOPS; 4,000 is
    refused with the era named, and accepted today."""
    with pytest.raises(VolumeSpecError, match="2013"):
        awsmodel.validate(Volume("io1", size_gib=200, iops=4000), era="2013")
    assert awsmodel.validate(Volume("io1", size_gib=200, iops=4000)).iops == 4000


def test_s4_04_s2_22_seed_004_scaling_follows_the_set_model():
    """S4-04, S4-06, S2-22, B-MODEL: the set model (N x one volume, bounded by c1.xlarge's
    125 MB/s) puts seed 004's own random IOPS and bandwidth inside the CAP band."""
    member = Volume("io1", size_gib=200, iops=2000, instance_type="c1.xlarge")
    for index, count in enumerate(seeds.SEED004_VOLUMES):
        expectation = set_expectation("S4-04", "rand read", (member,) * count,
                                      Workload("randread", bs=4096), era="2013")
        measured = seeds.SEED004_IOPS["Rand Read"][index]
        assert 0.90 * expectation.value <= measured <= 1.10 * expectation.value
    four = set_expectation("S4-06", "bandwidth", (member,) * 4,
                           Workload("randread", bs=16384), metric="throughput", era="2013")
    assert four.binding is not None and four.binding.kind == "instance"
    assert 0.90 * four.value <= seeds.SEED004_MBPS["read"][2] * MB <= 1.10 * four.value


def test_s1_01_today_instance_types_publish_different_instance_store_iops():
    """S1-01, B-IS: instance-store performance differs by type (seed 001: m3 16,110, c3
    22,769, r3 2,611 IOPS); today's published figures differ as well, per device and type."""
    published = {t: awsmodel.instance_store_iops(t) for t in ("i3.large", "i4i.large",
                                                            "i3.xlarge")}
    assert all(published.values())
    assert len({v for v in published.values()}) == len(published)
    means = [sum(r) / len(r) for r in seeds.SEED001_RUNS.values()]
    assert max(means) / min(means) > 6  # seed 001: 6-9x between types
