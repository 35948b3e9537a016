"""Claims judged over several passes: first vs second write, after TRIM vs full (S1-03,
S1-08: paired blocks, :mod:`pytest_ebsperf.verdicts.comparison`) and run-to-run stability (S1-09)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pytest_ebsperf.checks import paired
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.emulate import witness
from pytest_ebsperf.fio import jobs
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import format_seconds
from pytest_ebsperf.verdicts import comparison, paired_verdicts, stability, stats
from pytest_ebsperf.verdicts.outcome import Outcome


def test_emulated_twins_read_in_turn_ramp_a_quarter_second_unless_a_ramp_is_given():
    # S2-17, S0-08: the blocks of a comparison hold the host alone, and on an emulated volume
    # the kernel paces the first I/O as the last
    job = Workload("randread", bs=16384, iodepth=10, runtime_s=5, ramp_s=0.5)
    emulated = paired.twin_block(job, Settings(emulate=True))
    assert (emulated.runtime_s, emulated.ramp_s) == (1.0, 0.25)
    # S1-03's and S1-08's rounds of writes keep the run's ramp
    assert paired.block_workload(job, Settings(emulate=True)).ramp_s == 0.5
    assert paired.twin_block(job, Settings(emulate=True, ramp=0.75)).ramp_s == 0.75
    real = paired.twin_block(job, Settings())
    assert (real.runtime_s, real.ramp_s) == (10.0, 2.0)


def test_a_block_s_quarter_second_ramp_is_said_as_it_is():
    # "its 0.25 s ramp dropped", not one decimal's "0.2 s"
    assert [format_seconds(s) for s in (0.25, 0.5, 8.5, 2, 2000)] == \
        ["0.25 s", "0.5 s", "8.5 s", "2 s", "2,000 s (33 min)"]


def _seconds(mean: float, spread: float, n: int = 10, seed: int = 1) -> list[float]:
    rng = random.Random(seed)
    return [mean * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


@pytest.mark.parametrize(("q", "df", "expected"), [
    (0.05, 2, 0.1026), (0.95, 2, 5.9915), (0.05, 10, 3.9403), (0.975, 30, 46.9792),
    (0.0002, 2, 0.0004), (0.5, 1, 0.4549)])
def test_chi2_quantiles_match_the_tables(q, df, expected):
    assert stats.chi2_quantile(q, df) == pytest.approx(expected, rel=1e-3)


def _pairs(claim: str, a_label: str, a: list[float], b_label: str, b: list[float], *,
           bar: float = stability.MIN_PASS_RATIO, fail_alpha: float = 1e-3 / 40):
    """The paired verdict on pre-measured blocks (as the checks make it)."""
    design = comparison.ratio_design(comparison.AT_LEAST, bar, fail_alpha=fail_alpha)
    seq = comparison.run(design, comparison.log_ratios(a, b))
    k = len(seq.all_pairs)
    blocks = comparison.Blocks(tuple(a[:k]), tuple(b[:k]), 2.0, 0.5)
    return paired.ratio_verdict(seq, blocks, claim=claim, what=f"{a_label} vs {b_label}",
                                a_label=a_label, b_label=b_label)


def test_first_write_as_fast_as_the_second_passes():
    found = _pairs("S1-03", "first write", _seconds(27_500, 0.01, n=64), "second write",
                   _seconds(27_500, 0.01, n=64, seed=2))
    assert found.outcome is Outcome.PASS
    assert found.details["ratio_low"] >= 0.9
    assert "Claim S1-03" in found.message


def test_first_write_a_third_slower_fails_and_says_by_how_much():
    found = _pairs("S1-03", "first write", _seconds(18_000, 0.02, n=64), "second write",
                   _seconds(27_500, 0.02, n=64, seed=2))
    assert found.outcome is Outcome.FAIL
    assert "first write is 35 % below second write" in found.reason
    assert found.details["ratio_high"] < 0.9
    looks = found.details["paired"]["looks"]
    assert [look["stage"] for look in looks] == ["first", "confirm"]  # two stages agreed


def test_a_device_slower_than_a_twin_it_must_beat_threefold_names_the_ratio_required():
    # S0-08: gp2 at least 3 x Magnetic; a gp2 made as slow as its twin (ratio 0.99)
    found = _pairs("S0-08", "gp2", _seconds(197, 0.02, n=64), "standard",
                   _seconds(200, 0.02, n=64, seed=2), bar=3.0)
    assert found.outcome is Outcome.FAIL
    assert "gp2 / standard = 0.9" in found.reason and "below the 3.00x required" in found.reason


def test_a_ratio_near_the_line_with_noisy_blocks_is_inconclusive():
    found = _pairs("S1-08", "after TRIM", _seconds(25_000, 0.3, n=64), "full device",
                   _seconds(27_500, 0.3, n=64, seed=3))
    assert found.outcome is Outcome.INCONCLUSIVE
    assert found.details["paired"]["pairs"] >= 32  # every look was taken first


def test_a_pair_that_measured_nothing_cannot_be_judged():
    design = comparison.ratio_design(comparison.AT_LEAST, 0.9, fail_alpha=1e-3)
    seq = comparison.Sequential(design)
    blocks = comparison.Blocks((), (), 2.0, 0.5, stopped="pair 1 measured nothing")
    found = paired.ratio_verdict(seq, blocks, claim="S1-03", what="x", a_label="first write",
                                 b_label="second write")
    assert found.outcome is Outcome.INCONCLUSIVE and "measured nothing" in found.reason


def test_seed_001_stability_passes():
    # Seed 001's m3 runs vary by about 1 % (CV); four runs, the first dropped.
    found = stability.judge_stability("S1-09", "runs", [15_000, 16_100, 16_300, 15_950])
    assert found.outcome is Outcome.PASS
    assert found.details["cv"] == pytest.approx(0.011, abs=0.002)
    assert "the first 1 dropped" in found.message


def test_the_first_run_is_dropped_before_the_cv():
    # A slow first run (a cold device) does not count against stability.
    found = stability.judge_stability("S1-09", "runs", [5_000, 16_100, 16_300, 15_950])
    assert found.outcome is Outcome.PASS


def test_runs_that_vary_widely_fail_only_with_evidence():
    wide = [10_000, 30_000, 12_000, 28_000, 9_000, 31_000, 11_000, 29_000]
    found = stability.judge_stability("S1-09", "runs", [0, *wide])
    assert found.outcome is Outcome.FAIL
    assert found.details["cv_low"] > 0.10
    few = stability.judge_stability("S1-09", "runs", [0, 10_000, 13_000, 11_000])
    assert few.outcome is Outcome.INCONCLUSIVE  # CV 13 % on 3 runs is no evidence


def test_too_few_runs_are_inconclusive():
    found = stability.judge_stability("S1-09", "runs", [1.0, 2.0, 3.0])
    assert found.outcome is Outcome.INCONCLUSIVE
    assert "at least 3" in found.reason


def _argv(workload: Workload) -> list[str]:
    return jobs.fio_argv(workload, "/dev/x", output_path="o", log_prefix="p", readonly=False,
                         engine="libaio")


def test_a_pass_uses_a_random_map_and_the_same_sequence_every_run():
    argv = _argv(Workload("randwrite", bs=4096, size=1 << 30, random_map=True))
    assert "--randrepeat=1" in argv and "--norandommap" not in argv
    plain = _argv(Workload("randwrite", bs=4096))
    assert "--randrepeat=0" in plain and "--norandommap" in plain


def test_a_once_job_goes_over_its_size_once():
    argv = _argv(Workload("trim", bs=8 << 20, size=1 << 30, once=True, runtime_s=10))
    assert "--time_based" not in argv and "--rw=trim" in argv and "--runtime=10000ms" in argv
    assert "--time_based" in _argv(Workload("read"))
    assert Workload("trim").writes  # TRIM destroys data: it is guarded like a write


def _simulated(runs: int, cv: float, alpha: float, trials: int = 4000) -> tuple[float, float]:
    """P(PASS), P(FAIL) of judge_stability on runs whose means are normal with this CV."""
    import random

    rng = random.Random(7)
    outcomes = {"pass": 0, "fail": 0}
    for _ in range(trials):
        means = [max(1.0, rng.gauss(10_000, 10_000 * cv)) for _ in range(runs)]
        found = stability.judge_stability("S1-09", "sim", means, alpha=alpha)
        if found.outcome.value in outcomes:
            outcomes[found.outcome.value] += 1
    return outcomes["pass"] / trials, outcomes["fail"] / trials


@pytest.mark.parametrize(("runs", "cv"), [(4, 0.02), (10, 0.05), (10, 0.20), (16, 0.15)])
def test_the_stability_checks_power_matches_its_simulation(runs: int, cv: float) -> None:
    """docs/claims.md prints stability_power; the judge itself, run on simulated runs,
    passes and fails as often (within sampling error of 4,000 trials)."""
    alpha = 0.001 / 6
    p_pass, p_fail = stability.stability_power(runs, cv, alpha)
    s_pass, s_fail = _simulated(runs, cv, alpha)
    assert abs(p_pass - s_pass) < 0.035, (p_pass, s_pass)
    assert abs(p_fail - s_fail) < 0.035, (p_fail, s_fail)


def test_with_the_default_runs_both_pass_and_fail_are_reachable_for_seed_001s_volumes() -> None:
    """S1-09: seed 001's volumes (CV 1-2 %) pass almost surely; runs varying by 30 % fail
    almost surely; the old default of 4 runs did neither reliably."""
    from pytest_ebsperf.config.options import OPTIONS_BY_DEST

    runs = int(OPTIONS_BY_DEST["runs"].default)
    alpha = 0.001 / 6
    for cv in (0.01, 0.02):
        assert stability.stability_power(runs, cv, alpha)[0] >= 0.99
    assert stability.stability_power(runs, 0.30, alpha)[1] >= 0.85
    assert stability.stability_power(4, 0.02, alpha)[0] < 0.8
    assert stability.stability_power(4, 0.30, alpha)[1] < 0.5


def test_s1_08_says_what_it_can_show_and_whether_trim_helped() -> None:
    from pytest_ebsperf.checks.passes import trim_help

    same = _pairs("S1-08", "after TRIM", [1000.0, 1010.0, 990.0, 1000.0], "full device",
                  [1000.0, 995.0, 1005.0, 1000.0])
    said = trim_help(same)
    assert "not more than 10 % slower than on the full device" in said
    assert "That TRIM helps is not shown" in said
    faster = _pairs("S1-08", "after TRIM", [1500.0, 1510.0, 1490.0, 1500.0], "full device",
                    [1000.0, 995.0, 1005.0, 1000.0])
    assert "TRIM helped: at least +39 %" in trim_help(faster)  # paired: tighter than +4 %


def _twins(a: list[float], b: list[float], shares: tuple[float, float]):
    """S2-17's IOPS term on pre-measured blocks of emulated twins, each side having
    delivered ``shares`` of what its emulator was set to."""
    design = comparison.ratio_design(comparison.WITHIN, 0.05, fail_alpha=1e-3 / 80,
                                     pass_alpha=1e-3 / 80)
    seq = comparison.run(design, comparison.log_ratios(a, b))
    k = len(seq.all_pairs)
    blocks = comparison.Blocks(tuple(a[:k]), tuple(b[:k]), 1.0, 0.5,
                               shares=tuple((shares[0], shares[1]) for _ in range(k)))
    found = paired.ratio_verdict(seq, blocks, claim="S2-17", what="encrypted vs plain, IOPS",
                                 a_label="encrypted", b_label="plain")
    return found, paired.emulator_spoiled(found, blocks, "encrypted", "plain")


def test_twins_apart_because_one_emulator_fell_behind_are_inconclusive_naming_the_host():
    # S2-17 beside a memory-streaming neighbour: both twins set to 4,000 IOPS, the encrypted
    # one's emulator delivered 3,830 (95.7 %), the plain one 3,993
    found, spoiled = _twins(_seconds(3_830, 0.01, n=64), _seconds(3_993, 0.01, n=64, seed=2),
                            (0.957, 0.998))
    assert found.outcome is not Outcome.PASS  # the pairs alone would not decide for the twins
    assert spoiled.outcome is Outcome.INCONCLUSIVE
    assert spoiled.reason == "inconclusive: this host could not emulate the twins evenly"
    assert "encrypted delivered 95.7 %" in spoiled.message and "plain 99.8 %" in spoiled.message
    assert found.message in spoiled.message  # what the pairs showed is kept
    assert spoiled.details["emulator_share"] == pytest.approx({"a": 0.957, "b": 0.998})


def test_a_twin_set_ten_percent_slower_that_delivers_its_setting_still_fails():
    found, spoiled = _twins(_seconds(3_600, 0.01, n=64), _seconds(4_000, 0.01, n=64, seed=2),
                            (0.995, 0.998))
    assert found.outcome is Outcome.FAIL
    assert spoiled.outcome is Outcome.FAIL and spoiled.message == found.message


#: S2-17's IOPS term as a test run recorded it (the encrypted twin set to 0.9 of its rates,
#: blocks of 1 s): each side's IOPS, and its emulator share where fio's log held a second
RECORDED_A = [3582, 3597, 3762, 3593, 3607, 3598, 3590, 3590]
RECORDED_B = [3996, 4012, 4183, 3988, 4144, 3997, 3998, 3996]
RECORDED_SHARES = [(1.0022, None), (None, None), (None, 1.0468), (1.0053, None), (None, None),
                   (None, None), (None, None), (1.0003, None)]


def _recorded(shares: list[tuple[float | None, float | None]]):
    design = comparison.ratio_design(comparison.WITHIN, 0.05, fail_alpha=0.025,
                                     pass_alpha=0.001)
    seq = comparison.run(design, comparison.log_ratios(RECORDED_A, RECORDED_B))
    k = len(seq.all_pairs)
    blocks = comparison.Blocks(tuple(RECORDED_A[:k]), tuple(RECORDED_B[:k]), 1.0, 0.25,
                               shares=tuple(shares[:k]))
    found = paired.ratio_verdict(seq, blocks, claim="S2-17", what="encrypted vs plain, IOPS",
                                 a_label="encrypted", b_label="plain")
    return found, paired.emulator_spoiled(found, blocks, "encrypted", "plain")


def test_shares_are_compared_pair_by_pair_and_a_side_over_its_setting_kept_up():
    # the run said "could not emulate the twins evenly: encrypted 100.3 %, plain 104.7 %":
    # the plain twin's share came from 1 block of 8 (one that ran over its setting), the
    # encrypted twin's from 3 others. No pair knows both: nothing says the host held a side
    # back, and the 10 % the twins were set apart FAILs as it did before the shares
    found, said = _recorded(RECORDED_SHARES)
    assert found.outcome is Outcome.FAIL
    assert said.outcome is Outcome.FAIL and said.message == found.message
    assert "emulator_share" not in said.details
    # known on every pair, a side over its setting is one that kept up: the FAIL stands
    assert _recorded([(1.003, 1.047)] * 8)[1].outcome is Outcome.FAIL
    # a side held back below its setting still names the host (its FAIL too close to tell)
    held = _recorded([(0.94, 1.0)] * 8)[1]
    assert held.outcome is Outcome.INCONCLUSIVE
    assert held.reason == "inconclusive: this host could not emulate the twins evenly"


def test_twins_that_pass_keep_their_pass_and_the_shares_go_to_the_results_file():
    found, spoiled = _twins(_seconds(3_990, 0.01, n=64), _seconds(3_993, 0.01, n=64, seed=2),
                            (0.96, 0.998))
    assert found.outcome is Outcome.PASS and spoiled.outcome is Outcome.PASS
    assert spoiled.details["emulator_share"]["a"] == pytest.approx(0.96)


def test_a_device_behind_its_emulator_against_a_twin_it_must_beat_is_not_failed():
    # S0-08's sides: gp2 at least 3 x Magnetic; the gp2's emulator fell 8 % behind its
    # setting while the Magnetic twin's kept up: INCONCLUSIVE naming the host; the other way
    # round (the Magnetic twin held back, as its QD-1 path does on a quiet host) favours gp2
    # and changes nothing; nor does a shortfall its side's 8 % could not explain (2.5x: had
    # it kept up, 2.7x, still below 3x)
    design = comparison.ratio_design(comparison.AT_LEAST, 3.0, fail_alpha=1e-3 / 40)
    for gp2, shares, outcome in ((570, (0.92, 1.0), Outcome.INCONCLUSIVE),
                                 (570, (1.01, 0.93), Outcome.FAIL),
                                 (500, (0.92, 1.0), Outcome.FAIL)):
        a, b = _seconds(gp2, 0.02, n=64), _seconds(200, 0.02, n=64, seed=2)
        seq = comparison.run(design, comparison.log_ratios(a, b))
        k = len(seq.all_pairs)
        blocks = comparison.Blocks(tuple(a[:k]), tuple(b[:k]), 1.0, 0.5,
                                   shares=tuple(shares for _ in range(k)))
        found = paired.ratio_verdict(seq, blocks, claim="S0-08", what="gp2 vs Magnetic",
                                     a_label="gp2", b_label="standard")
        assert found.outcome is Outcome.FAIL
        assert paired.emulator_spoiled(found, blocks, "gp2", "standard").outcome is outcome


def test_judge_of_kept_twins_names_the_host_as_the_check_did(tmp_path):
    # the kept blocks of S2-17 twins (fio's own JSON, each block's IOPS the figure) and the
    # check's design and shares, kept by keep_verdict as a live check keeps them: judge of
    # the folder gives the check's verdict, INCONCLUSIVE naming the host, and with even
    # shares the plain FAIL the pairs show
    import json
    from pathlib import Path

    from pytest_ebsperf.fio.kept import keep_verdict
    from pytest_ebsperf.verdicts.judge_pairs import judge_pairs

    sample = json.loads((Path(__file__).parent.parent / "data/fio/randread.json").read_text())
    a, b = _seconds(3_700, 0.01, n=64), _seconds(3_993, 0.01, n=64, seed=2)

    def block(name: str, iops: float) -> str:
        data = json.loads(json.dumps(sample))
        data["jobs"][0]["read"]["iops"] = iops
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
        return str(tmp_path / name)

    for shares, outcome in (((0.925, 0.998), Outcome.INCONCLUSIVE),
                            ((0.998, 0.998), Outcome.FAIL)):
        live, spoiled = _twins(a, b, shares)
        k = len(live.details["paired"]["differences"])
        kept = tuple((block(f"a{i}", a[i]), block(f"b{i}", b[i])) for i in range(k))
        details = {**spoiled.details, "paired": {
            **spoiled.details["paired"], "blocks": {
                **spoiled.details["paired"]["blocks"], "kept": [list(p) for p in kept]}}}
        stem = Path(kept[-1][0])
        keep_verdict(stem, claim="S2-17", policy="REL", outcome=spoiled.outcome.value,
                     measured=None, expected=None, unit="IOPS", planned_s=0,
                     stop_reason="", details=details, what="encrypted vs plain, IOPS")
        record = json.loads(stem.with_name(stem.name + ".ebsperf.json").read_text())
        assert record["paired"]["emulator_shares"] == [list(shares)] * k
        again = judge_pairs(str(stem) + ".json", record, "S2-17")
        assert spoiled.outcome is outcome and again.outcome is outcome, again.message
        assert again.message == spoiled.message
        del record["paired"]["emulator_shares"][0]
        with pytest.raises(Exception, match="emulator shares do not match its"):
            judge_pairs(str(stem) + ".json", record, "S2-17")


def _replayed(pairs: list[tuple[float, float, float | None, float | None]], *,
              again: bool) -> tuple[object, comparison.Blocks, list[int]]:
    """paired.measure over recorded pairs (A's and B's IOPS, their emulator shares)."""
    from types import SimpleNamespace

    design = comparison.ratio_design(comparison.WITHIN, 0.05, fail_alpha=1e-3 / 80,
                                     pass_alpha=1e-3 / 80)
    asked: list[int] = []

    def run_pair(index: int) -> paired.Pair:
        asked.append(index)
        a, b, a_share, b_share = pairs[len(asked) - 1]
        return (a, b, SimpleNamespace(emulator_share=a_share, kept_as=""),  # type: ignore
                SimpleNamespace(emulator_share=b_share, kept_as=""))
    block = Workload("randread", bs=16384, runtime_s=1.0, ramp_s=0.5)
    seq, blocks, _ = paired.measure(design, run_pair, paired.log_ratio, block=block,
                                    again_when_spoiled=again)
    found = paired.ratio_verdict(seq, blocks, claim="S2-17", what="encrypted vs plain, IOPS",
                                 a_label="encrypted", b_label="plain")
    return paired.measured_again(found, blocks, "encrypted", "plain"), blocks, asked


def test_a_pair_the_host_held_back_on_one_side_is_measured_again():
    # a main job's S2-17 on a quiet host: the plain twin's first two blocks came at 2,758 and
    # 2,612 of 4,000 IOPS, its emulator delivering 70 % and 66 % of its setting (the
    # encrypted side's 99.9 %, then unknown), then every block at 3,990 +- 0.3 %; those two
    # pairs kept, 32 pairs left the ratio undecided (INCONCLUSIVE, naming nothing)
    rng = random.Random(4)
    healthy = [(3_990 * rng.gauss(1, 0.003), 3_990 * rng.gauss(1, 0.003), 1.0, 1.0)
               for _ in range(64)]
    recorded = [(3_972.0, 2_758.0, 0.999, 0.696), (3_988.0, 2_612.0, None, 0.660), *healthy]
    kept, _, _ = _replayed(recorded, again=False)
    assert kept.outcome is not Outcome.PASS
    found, blocks, asked = _replayed(recorded, again=True)
    assert found.outcome is Outcome.PASS, found.message
    assert blocks.again == ((0.999, 0.696), (None, 0.660))
    assert asked[:3] == [0, 0, 0]  # the first pair, measured again twice in the same order
    assert "2 pairs measured again: one side's emulator fell behind its twin's (encrypted " \
           "100 %, plain 70 %; encrypted ?, plain 66 %" in found.message
    assert blocks.as_dict()["measured_again"] == [[0.999, 0.696], [None, 0.66]]


def test_a_twin_set_slower_is_never_measured_again_and_a_host_always_behind_is_capped():
    # a twin set 10 % slower delivers its setting (shares alike): every pair counts, FAIL
    rng = random.Random(5)
    slower = [(3_600 * rng.gauss(1, 0.003), 4_000 * rng.gauss(1, 0.003), 0.99, 1.0)
              for _ in range(64)]
    found, blocks, _ = _replayed(slower, again=True)
    assert found.outcome is Outcome.FAIL and blocks.again == ()
    assert "measured again" not in found.message
    # QD 1's usual 94 % on both sides, or a twin three times as slow per I/O (96.6 % against
    # 106.6 %), is no spoiled pair; a side under 90 % (the one held-back rule, seconds and
    # runs alike) with its twin 10 % above is: a main job's 86 % block beside its twin's
    # 100 % took S2-17 from 4 pairs to 32 under the old 85 %
    assert stability.HELD_BACK_SHARE == witness.BEHIND_SHARE == 0.9
    assert not paired_verdicts.spoiled_pair((0.94, 0.94))
    assert not paired_verdicts.spoiled_pair((0.966, 1.066))
    assert paired_verdicts.spoiled_pair((0.861, 0.99975))
    assert not paired_verdicts.spoiled_pair((0.91, 1.0))
    assert paired_verdicts.spoiled_pair((0.80, 0.99)) and paired_verdicts.spoiled_pair((None, 0.7))
    assert not paired_verdicts.spoiled_pair((0.80, 0.84)) and not paired_verdicts.spoiled_pair(
        (None, None))
    # a host that holds one side back in every pair: measured again at most 4 times
    behind = [(3_990 * rng.gauss(1, 0.003), 2_800 * rng.gauss(1, 0.003), 1.0, 0.7)
              for _ in range(80)]
    found, blocks, asked = _replayed(behind, again=True)
    assert len(blocks.again) == paired_verdicts.MAX_PAIRS_AGAIN
    assert len(asked) == len(blocks.a) + paired_verdicts.MAX_PAIRS_AGAIN


#: A quiet main job's S2-17 QD-1 term (this machine, 2-7 % of its CPU time stolen): the
#: twins' block medians (µs) and each side's emulator share; 4 pairs had been measured again,
#: and 9 more in which one side was held back (or its twin unknown) counted
QD1_A_US = [485.4, 485.4, 510.0, 501.8, 477.2, 452.6, 464.9, 497.7, 493.6, 505.9, 501.8, 505.9,
            497.7, 493.6, 419.8, 464.9, 485.4, 497.7, 505.9, 481.3, 448.5, 1019.9, 440.3, 411.6,
            411.6, 485.4, 514.0, 440.3, 378.9, 847.9, 481.3, 440.3]
QD1_B_US = [419.8, 456.7, 489.5, 489.5, 473.1, 346.1, 749.6, 469.0, 440.3, 432.1, 489.5, 477.2,
            489.5, 481.3, 626.7, 872.4, 489.5, 415.7, 497.7, 436.2, 456.7, 342.0, 407.6, 370.7,
            399.4, 448.5, 469.0, 440.3, 342.0, 432.1, 610.3, 444.4]
QD1_SHARES = [(0.9055, 0.9275), (0.901, 0.9155), (0.8895, 0.9), (0.89, 0.8975), (0.8965, 0.896),
              (0.786, 0.802), (None, None), (0.9005, 0.896), (0.898, 0.9), (0.8995, 0.887),
              (0.9095, 0.8945), (0.9, 0.907), (0.904, 0.894), (0.889, 0.904), (0.7895, 0.5555),
              (0.9265, 0.3525), (0.9015, 0.898), (0.901, 0.9095), (0.894, 0.9015), (0.748, 0.92),
              (0.901, 0.9255), (0.3255, 0.7105), (None, 0.9065), (0.877, None), (None, None),
              (0.906, 0.884), (0.897, None), (0.872, 0.8265), (0.87, 0.882), (0.4235, 0.634),
              (0.909, 0.531), (0.877, 0.6525)]


def _qd1_term(a_us: list[float], b_us: list[float], shares: list) -> tuple:  # type: ignore[type-arg]
    design = comparison.Design(comparison.AT_MOST, high=0.0, fail_alpha=1e-3 / 110)
    differences = [a * 1000 - (1.1 * b * 1000 + 50_000) for a, b in zip(a_us, b_us)]
    seq = comparison.run(design, differences)
    k = len(seq.all_pairs)
    blocks = comparison.Blocks(tuple(a * 1000 for a in a_us[:k]),
                               tuple(b * 1000 for b in b_us[:k]), 1.0, 0.5,
                               shares=tuple(shares[:k]))
    found = paired_verdicts.latency_verdict(seq, blocks, claim="S2-17",
                                            what="encrypted vs plain, median latency at QD 1",
                                            a_label="encrypted", b_label="plain", factor=1.1,
                                            slack_ns=50_000.0)
    return found, paired.emulator_spoiled(found, blocks, "encrypted", "plain")


def test_an_undecided_comparison_that_its_held_back_pairs_left_open_names_the_host():
    found, said = _qd1_term(QD1_A_US, QD1_B_US, QD1_SHARES)
    assert found.outcome is Outcome.INCONCLUSIVE and "not yet decided" in found.message
    assert said.outcome is Outcome.INCONCLUSIVE  # never a PASS made by dropping pairs
    assert said.reason == "inconclusive: this host held back one side of some pairs"
    assert "In 9 of the 32 pairs one side's emulator fell behind its twin's" in said.message
    assert "the 23 other pairs alone would have said PASS" in said.message
    assert said.details["held_back_pairs"] == [14, 15, 19, 21, 23, 26, 29, 30, 31]
    assert found.message in said.message  # what the pairs showed is kept


def test_an_undecided_comparison_with_no_held_back_pairs_says_only_what_its_pairs_showed():
    # the same pairs with every share at QD 1's usual 90 %: nothing is the host's to name
    found, said = _qd1_term(QD1_A_US, QD1_B_US, [(0.9, 0.9)] * 32)
    assert found.outcome is Outcome.INCONCLUSIVE
    assert said.message == found.message and "held_back_pairs" not in said.details


def test_held_back_pairs_are_named_when_no_pair_knows_both_shares():
    # the same pairs with only the held-back side's share known, in the 9 pairs the host
    # held back, and no share elsewhere (fio's log held no whole second): no pair compares
    # the sides, but a pair held back beside an unknown twin is still the host's, and named
    held = [14, 15, 19, 21, 23, 26, 29, 30, 31]

    def lower_only(a: float | None, b: float | None) -> tuple[float | None, float | None]:
        if a is None or b is None:
            return a, b
        return (a, None) if a < b else (None, b)

    shares = [lower_only(*pair) if i in held else (None, None)
              for i, pair in enumerate(QD1_SHARES)]
    found, said = _qd1_term(QD1_A_US, QD1_B_US, shares)
    assert found.outcome is Outcome.INCONCLUSIVE
    assert said.reason == "inconclusive: this host held back one side of some pairs"
    assert said.details["held_back_pairs"] == held
    assert "emulator_share" not in said.details  # no pair to compare the sides on


def test_kept_pairs_without_their_levels_are_judged_as_they_were_not_refused():
    # a results file kept before the levels were written: the held-back pairs cannot be
    # judged again at the design's levels, so the verdict stays what the pairs showed
    found, _ = _qd1_term(QD1_A_US, QD1_B_US, QD1_SHARES)
    paired_details = {k: v for k, v in found.details["paired"].items() if k != "levels"}
    older = replace(found, details={**found.details, "paired": paired_details})
    blocks = comparison.Blocks(tuple(QD1_A_US), tuple(QD1_B_US), 1.0, 0.5,
                               shares=tuple(QD1_SHARES))
    said = paired.emulator_spoiled(older, blocks, "encrypted", "plain")
    assert said.outcome is Outcome.INCONCLUSIVE and said.message == older.message
