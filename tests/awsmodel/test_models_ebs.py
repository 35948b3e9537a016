"""SSD volume formulas against the numbers published in claims.md (B-GP2, B-GP3, B-IO1, B-IO2)
and the seed documents' then-limits."""

from __future__ import annotations

import math

import pytest

from pytest_ebsperf.awsmodel import ebs
from pytest_ebsperf.awsmodel.burst import gp2_burst_plan
from pytest_ebsperf.awsmodel.ebs import KIB, MIB
from pytest_ebsperf.awsmodel.volume_types import volume_type

# AWS's gp2 table (B-GP2): size -> (baseline IOPS, burst seconds from full, refill seconds from
# empty). 1 GiB: 5.4e6 / 2,900 = 1,862 s (the newer doc's 1,802 looks like a typo).
GP2_TABLE = [
    (1, 100, 1_862, 54_000),
    (100, 300, 2_000, 18_000),
    (250, 750, 2_400, 7_200),
    (334, 1_002, 2_703, 5_389),
    (500, 1_500, 3_600, 3_600),
    (750, 2_250, 7_200, 2_400),
]


@pytest.mark.parametrize(("size", "baseline", "burst_s", "refill_s"), GP2_TABLE)
def test_gp2_baseline_burst_and_refill_match_the_aws_table(
    size: int, baseline: int, burst_s: int, refill_s: int
) -> None:
    # the one bucket the plugin plans, books and emulates bursts with (spec.burst)
    assert ebs.gp2_baseline_iops(size) == baseline
    assert round(gp2_burst_plan(size).burst_s) == burst_s
    assert round(gp2_burst_plan(size, 0.0).refill_s) == refill_s


@pytest.mark.parametrize("size", [1_000, 2_000, 5_334, 16_384])
def test_gp2_of_1000_gib_or_more_never_runs_out_of_burst(size: int) -> None:
    assert math.isinf(gp2_burst_plan(size).burst_s)
    assert ebs.gp2_max_iops(size, credits=False) == ebs.gp2_max_iops(size, credits=True)


@pytest.mark.parametrize(
    ("size", "baseline"), [(33, 100), (34, 102), (2_000, 6_000), (5_333, 15_999), (5_334, 16_000)]
)
def test_gp2_baseline_is_three_per_gib_between_100_and_16000(size: int, baseline: int) -> None:
    assert ebs.gp2_baseline_iops(size) == baseline


def test_gp2_bursts_to_3000_iops_with_credits_and_falls_to_baseline_without() -> None:
    assert ebs.gp2_max_iops(100) == 3_000
    assert ebs.gp2_max_iops(100, credits=False) == 300
    assert ebs.gp2_max_iops(500, credits=False) == 1_500  # S2-14


# (size, with credits, without credits) in MiB/s (B-GP2 throughput rules).
GP2_THROUGHPUT = [
    (100, 128.0, 75.0),  # <= 170 GiB: 128; empty bucket: 300 x 256 KiB
    (170, 128.0, 127.5),
    (171, 250.0, 128.25),  # 170 < size < 334: 250 only while credits last
    (200, 250.0, 150.0),
    (333, 250.0, 249.75),
    (334, 250.0, 250.0),  # >= 334 GiB: 250 regardless
    (1_000, 250.0, 250.0),
]


@pytest.mark.parametrize(("size", "with_credits", "without"), GP2_THROUGHPUT)
def test_gp2_throughput_follows_the_128_and_250_mib_rules(
    size: int, with_credits: float, without: float
) -> None:
    assert ebs.gp2_max_throughput_mibps(size) == with_credits
    assert ebs.gp2_max_throughput_mibps(size, credits=False) == without


def test_gp2_in_2014_was_capped_at_128_mib_and_3000_baseline_iops() -> None:
    assert ebs.gp2_max_throughput_mibps(1_000, era="2014") == 128.0  # S2-09: ~130 MB/s seen
    assert ebs.gp2_baseline_iops(1_024, era="2014") == 3_000
    assert ebs.gp2_baseline_iops(1_024) == 3_072


def test_the_ledger_spends_credits_above_baseline_and_earns_them_below() -> None:
    from pytest_ebsperf.credits.ledger import CreditLedger

    ledger = CreditLedger.start(gp2_burst_plan(100), 0.0, "full")
    ledger.charge(0.0, [3_000.0], 1.0)  # a burst second: 3,000 spent, 300 earned
    assert ledger.balance == ebs.GP2_CREDITS_MAX - 2_700
    empty = CreditLedger.start(gp2_burst_plan(100, 0.0), 0.0, "empty")
    empty.charge(0.0, [300.0], 1.0)  # at the baseline the bucket stays empty
    assert empty.balance == 0.0
    some = CreditLedger.start(gp2_burst_plan(100, 1_000.0 / ebs.GP2_CREDITS_MAX * 100), 0.0,
                              "given")
    some.charge(0.0, [0.0], 1.0)  # idle: earns the baseline
    assert some.balance == pytest.approx(1_300.0)


def test_gp3_reaches_80000_iops_at_160_gib_and_500_per_gib_below() -> None:
    iops = volume_type("gp3").iops  # the type's record holds the rule (B-GP3)
    assert iops is not None
    assert iops.most(160) == 80_000
    assert iops.most(159) == 79_500
    assert iops.most(1) == 3_000  # the included 3,000 need no size
    assert iops.most(65_536) == 80_000


def test_gp3_reaches_2000_mib_per_s_at_8000_iops() -> None:
    throughput = volume_type("gp3").throughput_mibps
    assert throughput is not None
    assert throughput.most(8_000) == 2_000.0
    assert throughput.most(4_000) == 1_000.0
    assert throughput.most(3_000) == 750.0
    assert throughput.most(80_000) == 2_000.0


def test_io1_reaches_64000_iops_at_1280_gib_on_nitro_and_32000_elsewhere() -> None:
    assert ebs.io1_max_iops(1_280) == 64_000
    assert ebs.io1_max_iops(1_279) == 63_950
    assert ebs.io1_max_iops(100) == 5_000
    assert ebs.io1_max_iops(1_280, nitro=False) == 32_000


@pytest.mark.parametrize(
    ("iops", "nitro", "mibps"),
    [
        (100, True, 25.0),  # 256 KiB per IOPS
        (2_000, True, 500.0),  # 500 MiB/s reached at 2,000 IOPS
        (32_000, True, 500.0),
        (32_001, True, 32_001 * 16 / 1024),  # above 32,000: 16 KiB per IOPS
        (64_000, True, 1_000.0),
        (64_000, False, 500.0),  # off Nitro the 500 MiB/s rule stays
    ],
)
def test_io1_throughput_follows_the_500_and_1000_mib_rules(
    iops: int, nitro: bool, mibps: float
) -> None:
    assert ebs.io1_max_throughput_mibps(iops, nitro) == pytest.approx(mibps)


def test_io1_seed_eras_allowed_2000_then_4000_iops_and_128_mib() -> None:
    assert ebs.io1_max_iops(200, era="2013") == 2_000  # S4-01
    assert ebs.io1_max_iops(200, era="2014") == 4_000  # S2-06
    assert ebs.io1_max_throughput_mibps(4_000, era="2014") == 128.0  # S2-07
    # 2013: one IOPS was a random I/O of up to 16 KB, but no per-volume throughput ceiling
    # was published, and seed 004 moved 41.9 MB/s with one 2,000-IOPS volume (> 31.25 MiB/s)
    assert ebs.io1_max_throughput_mibps(2_000, era="2013") == math.inf


def test_io2_block_express_reaches_256000_iops_at_256_gib_and_4000_mib() -> None:
    assert ebs.io2_max_iops(256) == 256_000
    assert ebs.io2_max_iops(100) == 100_000
    assert ebs.io2_max_iops(256, nitro=False) == 32_000
    assert ebs.io2_max_throughput_mibps(15_625) == 4_000.0
    assert ebs.io2_max_throughput_mibps(10_000) == 2_560.0


def test_io1_crossover_block_size_moved_from_32_kib_in_2014_to_128_kib() -> None:
    # S2-08: 4,000 IOPS flat up to ~32 KB in 2014; today the throughput cap takes over at 128 KiB.
    then = ebs.crossover_block_size(4_000, ebs.io1_max_throughput_mibps(4_000, era="2014"))
    now = ebs.crossover_block_size(4_000, ebs.io1_max_throughput_mibps(4_000))
    assert then == pytest.approx(32 * KIB, rel=0.03)
    assert now == 128 * KIB
    assert 4_000 * now == 500 * MIB


def test_an_unknown_era_is_refused_with_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="Valid eras: now, 2016, 2014, 2013"):
        ebs.gp2_baseline_iops(100, era="2019")


def test_every_ssd_constant_cites_a_claim_and_an_address() -> None:
    helpers = {"NOW", "ERAS", "KIB", "MIB", "CITATIONS"}
    names = [n for n in vars(ebs) if n.isupper() and n[0] != "_" and n not in helpers]
    uncited = [n for n in names if not n.startswith("ERA_") and n not in ebs.CITATIONS]
    assert uncited == []
    for claim_id, url in ebs.CITATIONS.values():
        assert claim_id.startswith(("B-", "S")) and url
