"""Knee detection: synthetic series with known knees, and series recorded from real fio runs
on emulated volumes (tests/data/credits, see capture.py there)."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest
from support.common import DATA

from pytest_ebsperf.verdicts.knee import best_split, excess_integral, find_knee, noise_sigma

HERE = DATA / "credits"


def step(knee_s: float, n: int = 30, high: float = 3000.0, low: float = 300.0) -> list[float]:
    """Per-second averages of a rate that steps from ``high`` to ``low`` at ``knee_s``."""
    values = []
    for i in range(n):
        share = min(1.0, max(0.0, knee_s - i))  # of window (i, i+1] spent at ``high``
        values.append(high * share + low * (1.0 - share))
    return values


def noisy(values: list[float], sigma_share: float, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [v * (1.0 + rng.gauss(0.0, sigma_share)) for v in values]


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HERE / f"{name}.json").read_text())
    return data


@pytest.mark.parametrize("knee_s", [3.0, 12.25, 12.5, 12.75, 20.9])
def test_a_clean_step_is_found_to_a_fraction_of_a_window(knee_s: float) -> None:
    knee = find_knee(step(knee_s))
    assert knee.found
    assert knee.t_s == pytest.approx(knee_s, abs=1e-9)
    assert (knee.before, knee.after) == (3000.0, 300.0)


def test_per_second_noise_moves_the_knee_by_less_than_a_window() -> None:
    knee = find_knee(noisy(step(17.4, n=40), 0.03))
    assert knee.found
    assert abs((knee.t_s or 0.0) - 17.4) < 1.0
    assert knee.noise > 0


def test_a_short_dip_in_the_burst_is_not_taken_for_the_knee() -> None:
    values = step(20.3)
    values[6:8] = [150.0, 150.0]  # two seconds of a stalled host, mid-burst
    knee = find_knee(values)
    assert knee.found and abs((knee.t_s or 0.0) - 20.3) < 0.05
    assert knee.before == 3000.0  # medians: the dip moves no level


def test_a_burst_without_a_knee_is_reported_as_no_knee_even_with_a_dip() -> None:
    values = noisy([3000.0] * 30, 0.02)
    values[12:14] = [200.0, 200.0]
    knee = find_knee(values)
    assert not knee.found
    assert knee.t_s is None and knee.after is None
    assert "no knee" in knee.reason


def test_a_dip_in_the_last_seconds_is_not_a_knee() -> None:
    values = [3000.0] * 28 + [300.0, 300.0]  # fewer than MIN_AFTER samples after the cut
    assert not find_knee(values).found


def test_noise_alone_never_makes_a_knee() -> None:
    for seed in range(20):
        assert not find_knee(noisy([300.0] * 25, 0.05, seed=seed)).found


def test_a_rise_is_not_a_knee() -> None:
    knee = find_knee([300.0] * 10 + [3000.0] * 10)
    assert not knee.found and "rises" in knee.reason


def test_a_drop_smaller_than_the_minimum_share_is_not_a_knee() -> None:
    assert not find_knee([3000.0] * 10 + [2940.0] * 10).found  # 2 %: within a CAP tolerance
    assert find_knee([3000.0] * 10 + [2700.0] * 10).found  # gp2 900 GiB: 3,000 -> 2,700


def test_too_few_samples_give_no_knee_with_a_reason() -> None:
    knee = find_knee([3000.0, 300.0])
    assert not knee.found and "too few samples" in knee.reason


def test_times_and_values_of_different_length_are_refused() -> None:
    with pytest.raises(ValueError):
        find_knee([1.0, 2.0, 3.0], [1.0, 2.0])


def test_gaps_in_the_windows_keep_the_knee_on_the_clock() -> None:
    values = step(15.5)
    times = [float(i + 1) for i in range(len(values))]
    del values[4], times[4]  # a window fio did not log
    knee = find_knee(values, times)
    assert knee.t_s == pytest.approx(15.5)


def test_the_split_minimises_the_squared_error() -> None:
    assert best_split([5.0, 5.0, 5.0, 1.0, 1.0]) == 3
    with pytest.raises(ValueError):
        best_split([1.0])


def test_noise_is_estimated_from_differences_so_one_step_does_not_count() -> None:
    assert noise_sigma([3000.0] * 10 + [300.0] * 10) == 0.0
    assert noise_sigma([]) == 0.0


def test_the_excess_integral_is_what_was_delivered_above_a_level() -> None:
    assert excess_integral([3000.0] * 10 + [300.0] * 5, 300.0) == pytest.approx(27_000.0)
    assert excess_integral([3000.0] * 4, 300.0, window_s=0.5) == pytest.approx(5_400.0)


# -- recorded from real fio runs on emulated volumes --------------------------------------
@pytest.mark.parametrize("name", ["gp2_knee", "gp2_small_bucket", "st1_knee"])
def test_recorded_knees_are_found_within_a_window_of_the_bucket_switch(name: str) -> None:
    run = recorded(name)
    knee = find_knee(run["values"], run["t_s"])
    assert knee.found, knee.reason
    assert abs((knee.t_s or 0.0) - run["true_knee_s"]) < run["window_s"]


def test_a_recorded_stall_mid_burst_does_not_hide_or_fake_the_knee() -> None:
    run = recorded("gp2_knee_dip")
    assert min(run["values"][:5]) < 0.5 * max(run["values"])  # the dip is in the data
    knee = find_knee(run["values"], run["t_s"])
    assert knee.found
    assert abs((knee.t_s or 0.0) - run["true_knee_s"]) < run["window_s"]


@pytest.mark.parametrize("name", ["gp2_no_knee_burst", "gp2_empty_start"])
def test_recorded_runs_at_one_level_have_no_knee(name: str) -> None:
    run = recorded(name)
    assert run["true_knee_s"] is None  # the emulated bucket never switched during the run
    knee = find_knee(run["values"], run["t_s"])
    assert not knee.found
    assert knee.before == pytest.approx(sorted(run["values"])[len(run["values"]) // 2])


def test_recorded_credits_consumed_match_the_bucket_the_run_emptied() -> None:
    # A 30 % smaller bucket: the burst spent 0.7 of what a full scaled bucket holds
    # (5.4 M / 200 x 0.7), give or take a second of burst.
    run = recorded("gp2_small_bucket")
    spent = excess_integral(run["values"], 300.0)
    assert spent == pytest.approx(5_400_000 / run["scale"] * run["bucket_factor"], abs=2_700)


def test_a_first_window_above_the_rest_is_a_step_but_not_the_end_of_a_burst() -> None:
    # S0-11: a throttle's start-up allowance (or a first status report after 0.6 s) makes
    # the first live window of a burst run 10 % high; the changepoint sees a step there,
    # but the volume is still bursting after it, so no knee may stop the run or be timed.
    from pytest_ebsperf.verdicts.burst_time import Levels, burst_end

    levels = Levels("IOPS", 3000.0, 300.0, 3000.0, 300.0, "I/O credits")
    values = [3300.0, 3000.0, 3001.0, 3000.0, 2999.0, 3000.0]
    step_only = find_knee(values)
    assert step_only.found and step_only.after is not None and step_only.t_s is not None
    assert step_only.t_s < 2.0 and step_only.after > levels.middle
    knee = burst_end(step_only, values, levels)
    assert not knee.found
    assert "still bursting" in knee.reason and knee.before == pytest.approx(3000.0, abs=1)
    real = step(12.5, n=20)
    found = burst_end(find_knee(real), real, levels)
    assert found.found and found.t_s == pytest.approx(12.5, abs=0.3)


# -- the knee's time at the level the run burst at (B-HDD, S0-11) ----------------------------
def _st1_levels() -> Any:
    from pytest_ebsperf.verdicts.burst_time import Levels
    mib = 1024.0 * 1024.0
    # a 2 TiB st1: 500 MiB/s burst, 80 MiB/s baseline, credits in MiB
    return Levels("B/s", 500 * mib, 80 * mib, 500.0, 80.0, "MiB")


def _judge(found_s: float | None, before_mib: float, observed_s: float = 16.0) -> Any:
    from pytest_ebsperf.verdicts.burst_time import Timing, judge_knee_time
    from pytest_ebsperf.verdicts.knee import Knee
    levels = _st1_levels()
    balance = 4194.0
    knee = Knee(found_s is not None, before_mib * 1024 * 1024,
                60 * 1024 * 1024.0 if found_s is not None else None, found_s,
                found_s and int(found_s), 1.0, "", 1.0)
    timing = Timing(balance / levels.drain, 1.0, observed_s, 500.0)
    return judge_knee_time("B-HDD", "st1 burst duration", knee, levels, timing,
                           consumed=4129.0, modelled=balance, origin="assumed a full bucket")


def test_a_burst_under_the_model_level_is_timed_at_the_level_it_ran_at() -> None:
    """A host that paced the burst at 377 of 500 MiB/s (seen in a busy run): the model's
    4,194 MiB last 4,194 / (377 - 80) = 14.1 s at that level, so a knee at 13 s is on time,
    not 3 s late."""
    from pytest_ebsperf.verdicts.outcome import Outcome
    found = _judge(13.0, 377.0)
    assert found.outcome is Outcome.PASS, found.message
    assert found.expected == pytest.approx(4194.0 / (377.0 - 80.0))
    assert found.details["model_knee_s"] == pytest.approx(4194.0 / 420.0)
    assert "The volume burst at 377 MiB/s, under 90 % of the model's 500 MiB/s" in found.message


def test_at_the_burst_level_the_model_time_stands_and_a_late_knee_fails() -> None:
    from pytest_ebsperf.verdicts.outcome import Outcome
    found = _judge(13.0, 495.0)
    assert found.outcome is Outcome.FAIL, found.message
    assert found.expected == pytest.approx(4194.0 / 420.0)
    assert "the level judged" not in found.message and "under 90 %" not in found.message


def test_a_small_bucket_still_fails_when_the_burst_ran_short() -> None:
    """A bucket 30 % small on a slow burst: 0.7 x 14.1 s = 9.9 s, outside 14.1 ± 1.4 s."""
    from pytest_ebsperf.verdicts.outcome import Outcome
    assert _judge(9.9, 377.0).outcome is Outcome.FAIL


def test_a_knee_not_yet_seen_at_a_short_level_is_not_a_failure() -> None:
    """No knee in 12 s at 377 MiB/s: the bucket lasts 14.1 s at that level, so the run was
    too short to tell (at the model's level, 12 s would be past 10.0 + 1 s)."""
    from pytest_ebsperf.verdicts.outcome import Outcome
    assert _judge(None, 377.0, observed_s=12.0).outcome is Outcome.INCONCLUSIVE
    assert _judge(None, 495.0, observed_s=12.0).outcome is Outcome.FAIL


def test_a_knee_the_host_held_back_is_the_host_s_and_an_early_one_stands() -> None:
    """The emulated bucket charges what was delivered: a burst this host held back (the
    emulator's witness found seconds under its setting) spends its credits later, so a late
    or unseen knee is the host's (INCONCLUSIVE naming it, live and in judge); a knee earlier
    than the model's cannot come from a slow host, and its FAIL stands (B-HDD)."""
    from pytest_ebsperf.fio.result import DirectionStats, FioResult
    from pytest_ebsperf.verdicts.burst_time import knee_held_back
    from pytest_ebsperf.verdicts.outcome import Outcome
    said = ("this host could not emulate st1 at 500 IOPS in 3 of 16 s: the emulated volume "
            "was set to deliver 500 IOPS there")
    behind = FioResult("fio-3.33", DirectionStats(), DirectionStats(),
                       emulator_behind=(2, 3, 4), emulator_said=said)
    kept_up = FioResult("fio-3.33", DirectionStats(), DirectionStats())
    late, unseen = _judge(13.0, 495.0), _judge(None, 495.0, observed_s=10.5)
    assert (late.outcome, unseen.outcome) == (Outcome.FAIL, Outcome.INCONCLUSIVE)
    for found in (late, unseen):
        host = knee_held_back(found, behind)
        assert host.outcome is Outcome.INCONCLUSIVE and host.binding == "emulator"
        assert host.message.startswith(f"st1 burst duration: {said}."), host.message
        assert found.reason in host.message and "Claim B-HDD" in host.message
        assert host.details["knee_verdict"] == found.outcome.value
        assert knee_held_back(found, kept_up) is found  # no witness against it: as judged
    early = _judge(9.9, 377.0)
    assert knee_held_back(early, behind).outcome is Outcome.FAIL
    on_time = _judge(13.0, 377.0)
    assert knee_held_back(on_time, behind).outcome is Outcome.PASS
    # a bucket empty from the start: no burst for the host to have held back
    empty = dataclasses.replace(unseen, reason="no credits at start: burst level 500 MiB/s "
                                "never reached (ran at 38 MiB/s, baseline 40 MiB/s)")
    assert knee_held_back(empty, behind) is empty


def test_after_the_knee_a_shortfall_is_diagnosed_on_that_part_s_own_latency() -> None:
    # st1 at 85 %: 425 MiB/s of 1 MiB reads at 18 ms for 30 s, then 68 MiB/s paced by the
    # throttle at QD 8 (8 / 68 = 118 ms an I/O). fio's whole-run mean (22 ms) with the
    # baseline's rate said fio kept 1.5 of 8 I/Os in flight: "queue-depth bound, raise
    # --ebsperf-iodepth". The part after the knee has its own mean latency: the queue was full
    # and the volume, not the depth, set the pace (B-HDD).
    from pytest_ebsperf.fio.result import DirectionStats, FioResult, Latency, Series
    from pytest_ebsperf.fio.workload import Workload
    from pytest_ebsperf.verdicts import diagnosis
    from pytest_ebsperf.verdicts.burst_time import trim_result

    mib = 1024 * 1024
    t = tuple(float(s) for s in range(1, 41))
    iops = tuple([425.0] * 30 + [68.0] * 10)
    clat = tuple([18.8e6] * 30 + [117.6e6] * 10)
    whole = FioResult("fio-3.33", DirectionStats(
        iops=sum(iops) / 40, bw_bytes=sum(iops) / 40 * mib, total_ios=int(sum(iops)),
        clat=Latency(mean_ns=22.0e6, min_ns=0.36e6, percentiles={5.0: 1.0e6, 50.0: 8.0e6}),
        lat=Latency(mean_ns=22.0e6, min_ns=0.36e6, percentiles={5.0: 1.0e6})),
        DirectionStats(), series={"read_iops": Series(t, iops),
                "read_bw": Series(t, tuple(i * mib for i in iops)),
                "read_clat": Series(t, clat)})
    after = trim_result(whole, 31.0)
    assert after.read.iops == pytest.approx(68.0)
    assert after.read.clat.mean_ns == pytest.approx(117.6e6)
    assert after.read.clat.percentiles == {} and after.read.lat.mean_ns == pytest.approx(117.6e6)
    job = Workload("read", bs=mib, iodepth=8)
    found = diagnosis.diagnose_shortfall(after, job, need=72 * mib, expected=80 * mib,
                                         unit="B/s", cpu_count=2)
    assert found.binding is None, found.reason
    assert any("whole run, not for the part judged" in s for s in found.sentences)
    # the whole run's figures (what the check used before) blamed the queue depth
    mixed = diagnosis.diagnose_shortfall(
        FioResult("fio-3.33", dataclasses.replace(whole.read, iops=68.0, bw_bytes=68.0 * mib),
                  DirectionStats()),
        job, need=72 * mib, expected=80 * mib, unit="B/s", cpu_count=2)
    assert mixed.binding == "queue depth" and "1.50 of QD 8" in mixed.reason
