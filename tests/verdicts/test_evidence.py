"""The statistics behind verdicts: duty-cycle tests, their Markov null, intervals."""

from __future__ import annotations

import itertools
import random

import pytest

from pytest_ebsperf.verdicts import evidence, intervals, lower


def brute_force_tail(k: int, n: int, p: float, spell: float) -> float:
    """P(M >= k) by enumerating every sequence of the two-state chain."""
    stay = 1.0 - 1.0 / spell
    start = p * (1.0 - stay) / (1.0 - p)
    total = 0.0
    for seq in itertools.product((0, 1), repeat=n):
        prob = p if seq[0] else 1.0 - p
        for prev, cur in zip(seq, seq[1:]):
            q = stay if prev else start
            prob *= q if cur else 1.0 - q
        if sum(seq) >= k:
            total += prob
    return total


def test_binomial_tail_matches_the_hand_computed_value() -> None:
    # P(X >= 2), X ~ Bin(60, 0.001) = 1 - 0.999^60 - 60 x 0.001 x 0.999^59
    hand = 1 - 0.999 ** 60 - 60 * 0.001 * 0.999 ** 59
    assert evidence.binomial_tail(2, 60, 0.001) == pytest.approx(hand, rel=1e-9)
    assert evidence.binomial_tail(0, 60, 0.001) == 1.0
    assert evidence.binomial_tail(61, 60, 0.5) == 0.0


@pytest.mark.parametrize("k, n, p, spell", [(2, 6, 0.1, 2.0), (4, 8, 0.05, 3.0),
                                            (1, 5, 0.2, 1.5), (6, 8, 0.1, 4.0)])
def test_the_markov_tail_equals_brute_force_enumeration(k: int, n: int, p: float,
                                                       spell: float) -> None:
    assert evidence.miss_tail(k, n, p, spell) == pytest.approx(
        brute_force_tail(k, n, p, spell), rel=1e-9, abs=1e-15)


def test_independent_seconds_are_the_binomial_case() -> None:
    assert evidence.miss_tail(3, 60, 0.01, 1.0) == evidence.binomial_tail(3, 60, 0.01)
    # independent windows are the chain whose spells last 1 / (1 - p) on average
    assert evidence.miss_tail(3, 8, 0.01, 1.0) == pytest.approx(
        brute_force_tail(3, 8, 0.01, 1 / 0.99), rel=1e-9)


def test_longer_assumed_spells_make_a_long_run_of_misses_weaker_evidence() -> None:
    tails = [evidence.miss_tail(5, 60, 0.001, spell) for spell in (1.0, 2.0, 4.0)]
    assert tails[0] < tails[1] < tails[2]
    ks = [evidence.critical_misses(60, 0.001, 2.5e-5, spell) for spell in (1.0, 2.0, 3.0)]
    assert ks == [4, 12, 17]


def test_critical_counts_for_the_sla_duty_cycles() -> None:
    # io1/io2 (0.1 % allowed), gp (1 %), at 0.001 over 40 checks
    alpha = evidence.per_check_alpha(0.001, 40)
    assert alpha == 2.5e-5
    assert evidence.critical_misses(60, 0.001, alpha) == 4
    assert evidence.critical_misses(60, 0.01, alpha) == 7
    assert evidence.critical_misses(5, 0.01, alpha) == 3
    assert evidence.critical_misses(2, 0.01, alpha) == 3  # > n: two seconds never fail


@pytest.mark.parametrize("k, n, p, spell", [(80, 2000, 0.01, 2.0), (45, 2000, 0.01, 2.0),
                                            (20, 3000, 0.001, 3.0), (60, 3000, 0.01, 3.0)])
def test_the_long_run_approximation_agrees_with_the_exact_chain(k: int, n: int, p: float,
                                                                 spell: float) -> None:
    exact = evidence._markov_distribution(n, p, spell, k)[-1]
    approx = evidence._markov_compound_tail(k, n, p, spell)
    # conservative (never smaller: no extra false alarms) and close where tests decide
    assert exact <= approx <= 1.7 * exact


def test_clopper_pearson_and_the_rule_of_three() -> None:
    assert evidence.miss_rate_upper(0, 60) == pytest.approx(1 - 0.05 ** (1 / 60))
    assert evidence.miss_rate_upper(0, 60) == pytest.approx(3 / 60, abs=0.002)
    upper = evidence.miss_rate_upper(2, 60)
    # at the bound, P(X <= 2) = 5 %
    assert 1 - evidence.binomial_tail(3, 60, upper) == pytest.approx(0.05, abs=1e-6)


def test_a_duty_test_settles_early_either_way_and_never_contradicts_the_full_run() -> None:
    failed = evidence.duty_test([0.0] * 4, 0.9, 0.999, alpha=2.5e-5, planned=60)
    assert failed.state == evidence.FAIL
    open_ = evidence.duty_test([0.0] * 3, 0.9, 0.999, alpha=2.5e-5, planned=60)
    assert open_.state == evidence.OPEN
    passed = evidence.duty_test([1.0] * 57, 0.9, 0.999, alpha=2.5e-5, planned=60)
    assert passed.state == evidence.PASS  # 3 misses in the last 3 s could not reach 4
    early = evidence.duty_test([1.0] * 56, 0.9, 0.999, alpha=2.5e-5, planned=60)
    assert early.state == evidence.OPEN


def test_a_run_too_short_to_fail_is_open_whatever_it_saw() -> None:
    """A PASS is evidence: a run whose count could not have FAILed is no PASS either, even
    without a miss (B-SLA)."""
    test = evidence.duty_test([0.0, 0.0], 0.9, 0.99, alpha=2.5e-5)
    assert test.critical == 3 and test.state == evidence.OPEN
    assert evidence.duty_test([1.0, 1.0], 0.9, 0.99, alpha=2.5e-5).state == evidence.OPEN
    assert evidence.duty_test([1.0] * 3, 0.9, 0.99, alpha=2.5e-5).state == evidence.PASS


def test_the_mean_interval_widens_with_noise_and_narrows_with_samples() -> None:
    tight = intervals.mean_interval([100.0, 101.0, 99.0, 100.0, 100.5], 0.001)
    loose = intervals.mean_interval([100.0, 130.0, 70.0, 100.0, 110.0], 0.001)
    assert tight is not None and loose is not None
    assert tight.high - tight.low < loose.high - loose.low
    assert tight.low < 100.1 < tight.high
    assert intervals.mean_interval([100.0], 0.001) is None


def test_equivalence_needs_the_whole_interval_inside_the_band() -> None:
    same = intervals.ratio_interval([100.0, 101.0, 99.0] * 10, [100.0, 99.5, 100.5] * 10, 0.001)
    assert same is not None and same.equivalence(0.05) == evidence.PASS
    apart = intervals.ratio_interval([80.0, 81.0, 79.0] * 10, [100.0, 99.5, 100.5] * 10, 0.001)
    assert apart is not None and apart.equivalence(0.05) == evidence.FAIL
    noisy = intervals.ratio_interval([100.0, 60.0, 140.0] * 3, [100.0, 99.5, 100.5] * 3, 0.001)
    assert noisy is not None and noisy.equivalence(0.05) == evidence.OPEN


def test_a_ratio_interval_holds_its_confidence_when_the_short_twin_carries_the_error() -> None:
    # a: 30 steady seconds at 10,000 IOPS; b: 4 noisy seconds at 100. In IOPS b's error looks
    # tiny, yet it is nearly all of the ratio's; the degrees of freedom must come from b's
    # seconds, or a 95 % interval covers the true ratio (100) far less often than that.
    rng = random.Random(7)
    trials, covered = 2000, 0
    for _ in range(trials):
        a = [rng.gauss(10_000.0, 500.0) for _ in range(30)]
        b = [rng.gauss(100.0, 20.0) for _ in range(4)]
        found = intervals.ratio_interval(a, b, 0.025)
        assert found is not None
        covered += found.low <= 100.0 <= found.high
    assert covered / trials >= 0.93


def test_a_run_level_split_over_checks() -> None:
    policy = evidence.Policy.for_run(0.001, 4)
    assert policy.alpha == 0.00025
    assert policy.split(2).alpha == 0.000125


def test_a_failure_made_of_runs_of_misses_says_what_assuming_spells_would_change() -> None:
    spell = evidence.duty_test([1.0] * 10 + [0.0] * 4 + [1.0] * 46, 0.9, 0.999, alpha=2.5e-5)
    assert spell.state == evidence.FAIL and spell.longest_run == 4
    assert "--ebsperf-miss-spell=4" in spell.explain("3,600 IOPS")
    level = evidence.duty_test([0.0] * 4, 0.9, 0.999, alpha=2.5e-5, planned=60)
    assert "--ebsperf-miss-spell" not in level.explain("3,600 IOPS")  # a level, not a spell


def test_a_failure_says_the_spells_its_misses_came_in_and_the_level_at_them() -> None:
    """B-SLA (issue: spell length from the data): six 5 s spells against a 3 s model."""
    series = ([1.0] * 5 + [0.0] * 5) * 6
    test = evidence.duty_test(series, 0.9, 0.999, alpha=1.9e-5, spell=3.0)
    said = test.explain("3,600 IOPS")
    assert test.state == evidence.FAIL and test.runs == 6
    assert "assumes a compliant volume misses in spells of 3 s on average" in said
    assert "30 misses came in 6 spells, a mean spell of 5.8 s (95 % interval" in said
    assert "at spells of 5.8 s (this run's) the count would have probability" in said
    seen = test.spells_seen()
    assert seen is not None and seen.low < 5.0 < seen.high


def test_scattered_misses_are_no_pass_when_the_model_s_spells_are_contradicted() -> None:
    """B-SLA: 15 single missed seconds of 60 are under the 3 s model's count (18), but
    spells of at most 1.3 s (the data's 95 % bound) make 8 evidence: no PASS."""
    series = ([1.0] * 3 + [0.0]) * 15
    test = evidence.duty_test(series, 0.9, 0.999, alpha=1.9e-5, spell=3.0)
    assert test.misses < test.critical and test.state == evidence.OPEN
    said = test.explain("3,600 IOPS")
    assert "came in 15 spells, a mean spell of 1.0 s" in said and "no PASS" in said
    check = lower.duty_cycle_check(series, 0.9, 0.999,
                                   policy=evidence.Policy(1.9e-5 / evidence.COUNT_SHARE, 3.0))
    assert check.state != evidence.PASS
    # one long spell says nothing against the model: the count decides as before
    one = evidence.duty_test([1.0] * 20 + [0.0] * 15 + [1.0] * 25, 0.9, 0.999, alpha=1.9e-5,
                             spell=3.0)
    assert one.state == evidence.PASS and one.short_spells_critical() is None


def test_the_spell_interval_covers_a_chain_s_mean_spell() -> None:
    """The 95 % interval of the mean spell, on 400 two-state chains of 600 windows
    (miss rate 5 %, spells of 3 s): it covers 3 s at least 93 % of the time."""
    rng = random.Random(5)
    stay, covered, trials = 1.0 - 1.0 / 3.0, 0, 400
    start = 0.05 * (1.0 - stay) / 0.95
    for _ in range(trials):
        missed, series = rng.random() < 0.05, []
        for _ in range(600):
            series.append(0.0 if missed else 1.0)
            missed = rng.random() < (stay if missed else start)
        seen = evidence.duty_test(series, 0.5, 0.95, alpha=1e-3).spells_seen()
        assert seen is not None
        covered += seen.low <= 3.0 <= seen.high
    assert covered / trials >= 0.93


def test_scattered_misses_fail_on_the_spells_they_began() -> None:
    """B-SLA: 10 single missed seconds of 60 are 10 spells begun; a volume meeting 99.9 %
    begins one in at most 0.1 % of seconds whatever its spells, so they are evidence (the
    count of missed seconds needs 19 under 3 s spells)."""
    series = ([1.0] * 5 + [0.5]) * 10
    check = lower.duty_cycle_check(series, 0.9, 0.999, policy=evidence.Policy(1e-3 / 53, 3.0))
    assert check.state == evidence.FAIL and check.test is not None
    assert check.test.misses < check.test.critical and check.test.starts_failed
    said = check.explain(lambda x: f"{x:.2f}")
    assert "in 10 separate spells" in said and "however long its spells last" in said
    # independent seconds (spell 1): the count itself is the binomial test, no second test
    plain = lower.duty_cycle_check(series, 0.9, 0.999, policy=evidence.Policy(1e-3 / 53, 1.0))
    assert plain.state == evidence.FAIL and plain.test is not None
    assert plain.test.critical_starts == 0


@pytest.mark.parametrize("spell", [1.0, 3.0, 5.0])
def test_the_count_of_spells_begun_holds_its_level_for_any_spell_length(spell: float) -> None:
    """20,000 two-state chains of 60 s at a 1 % miss rate (a gp volume at its SLA budget) in
    spells of 1, 3 and 5 s: the spells begun reach the critical count at a relaxed level of
    1 % no more often than 1 % (+ 3 standard errors)."""
    rng = random.Random(int(spell * 10))
    p, alpha, trials = 0.01, 0.01, 20_000
    critical = evidence.critical_starts(60, p, alpha)
    stay = max(p, 1.0 - 1.0 / spell)
    start = p * (1.0 - stay) / (1.0 - p)
    failed = 0
    for _ in range(trials):
        missed, runs = rng.random() < p, 0
        runs += missed
        for _ in range(59):
            was = missed
            missed = rng.random() < (stay if missed else start)
            runs += missed and not was
        failed += runs >= critical
    assert failed / trials <= alpha + 3 * (alpha * (1 - alpha) / trials) ** 0.5
