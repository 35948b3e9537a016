"""What a sample of seconds can say about a claim made for a year: the statistics of verdicts.

A check sees seconds of a run; AWS's duty cycles ("at least 90 % of provisioned IOPS 99.9 % of
the time", B-SLA) speak of a year. So a check never asks "did any second miss?" but "are the
misses seen *evidence* that this volume misses more often than the claim allows?":

* **Duty cycles** are a one-sided test. Each window (one second) is a trial that either
  reaches the threshold or misses it. Under the null hypothesis "the volume meets the claim",
  a window misses with probability ``p = 1 - duty``; the test FAILs when the misses seen are
  at least the *critical count* ``k``, the smallest count that a compliant volume shows with
  probability at most ``alpha`` in the check's planned number of windows.
* **Runs of bad seconds.** Misses of a real volume need not be independent: a bad spell can
  last several seconds. The null model is therefore a two-state Markov chain whose stationary
  miss rate is ``p`` and whose spells of consecutive misses last ``spell`` seconds on average
  (``spell = 1``: independent seconds, the binomial test). A longer assumed spell makes one
  long run of misses weaker evidence, so a volume has to miss for longer before it fails.
  :func:`miss_tail` computes the exact tail probability of that chain by dynamic programming.
* **Curtailment.** The test is planned for the check's whole runtime ``n``. Once the misses
  seen reach ``k`` the FAIL is certain whatever the remaining seconds show, and once even a
  miss in every remaining second could not reach ``k`` the PASS is certain: a check can stop
  at either point and reach the same verdict as the full run. Stopping early therefore costs
  no false-alarm budget (it is not a sequence of separate tests).
* **Means** (FLOOR, the CAP upper bound, REL ratios) are judged with confidence intervals from
  the per-second samples, their variance inflated for lag-1 autocorrelation
  (:func:`pytest_ebsperf.results.stats.summarize`), never as a bare comparison of numbers.

``alpha`` is a per-check level: the run's false-alarm level (``--ebsperf-false-alarm``,
default :data:`DEFAULT_FALSE_ALARM`) divided by the number of checks in the run (Bonferroni),
so a whole suite run on a compliant volume is red with probability at most the run's level.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ebsperf.results.stats import betainc, lag1_autocorrelation, summarize, t_quantile

#: Probability that a whole run on a compliant volume has any false FAIL (all checks together).
DEFAULT_FALSE_ALARM = 0.001
#: Confidence of the bounds printed with a pass ("the miss rate is below 4.9 % with 95 %...").
REPORT_CONFIDENCE = 0.95
#: Checks assumed in a run when the plugin could not count them.
DEFAULT_CHECKS_PER_RUN = 40


def per_check_alpha(run_alpha: float, checks: int) -> float:
    """Bonferroni: each of ``checks`` checks gets ``run_alpha / checks``."""
    return run_alpha / max(1, checks)


@dataclass(frozen=True)
class Policy:
    """How a run weighs evidence: the per-check false-alarm level ``alpha`` and the mean
    length ``spell`` (in windows) of a compliant volume's runs of missed seconds."""

    alpha: float = DEFAULT_FALSE_ALARM / DEFAULT_CHECKS_PER_RUN
    spell: float = 1.0

    @classmethod
    def for_run(cls, run_alpha: float, checks: int, spell: float = 1.0) -> Policy:
        return cls(per_check_alpha(run_alpha, checks), spell)

    def split(self, parts: int) -> Policy:
        """The policy for one of ``parts`` verdicts judged within one check."""
        return Policy(self.alpha / max(1, parts), self.spell)


# -- distributions -----------------------------------------------------------------------
def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), exactly (regularised incomplete beta)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return min(1.0, max(0.0, betainc(k, n - k + 1, p)))


#: Above this many steps (windows x misses tracked) the Markov tail is approximated.
_EXACT_STEPS = 2_000_000


@functools.lru_cache(maxsize=512)
def miss_tail(k: int, n: int, p: float, spell: float = 1.0) -> float:
    """P(M >= k): ``M`` the misses in ``n`` windows of a stationary two-state Markov chain
    whose stationary miss probability is ``p`` and whose spells of consecutive misses last
    ``spell`` windows on average (``spell <= 1``: independent windows, the binomial tail).

    Exact by dynamic programming (O(n k)); for very long checks (soaks of many hours) the
    normal approximation of the chain's miss count is used instead.
    """
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    if spell <= 1.0 / (1.0 - p):  # independent windows have spells of 1 / (1 - p)
        return binomial_tail(k, n, p)
    if n * k > _EXACT_STEPS:
        return _markov_compound_tail(k, n, p, spell)
    return _markov_distribution(n, p, spell, k)[-1]


def _chain(p: float, spell: float) -> tuple[float, float]:
    """(P(miss | last missed), P(miss | last met)) for rate ``p`` and mean spell ``spell``."""
    stay = 1.0 - 1.0 / spell
    start = p * (1.0 - stay) / (1.0 - p)  # stationarity: p = start / (1 - stay + start)
    if start > 1.0:
        raise ValueError(f"a miss rate of {p:g} cannot have spells of only {spell:g} windows")
    return stay, start


def _markov_distribution(n: int, p: float, spell: float, cap: int) -> list[float]:
    """P(M = m) for m < ``cap`` and, last, P(M >= cap)."""
    stay, start = _chain(p, spell)
    met, missed = _chain_counts(n, cap, stay, start, p)
    return [min(1.0, max(0.0, x + y)) for x, y in zip(met, missed)]


def _chain_counts(n: int, cap: int, stay: float, start: float, first_miss: float
                  ) -> tuple[list[float], list[float]]:
    """Dynamic programming over ``n`` windows of the chain: ``met[m]`` / ``missed[m]`` is
    P(m misses so far and the last window met / missed); ``m == cap`` absorbs."""
    met = [0.0] * (cap + 1)
    missed = [0.0] * (cap + 1)
    met[0], missed[min(1, cap)] = 1.0 - first_miss, first_miss
    for _ in range(n - 1):
        new_met = [0.0] * (cap + 1)
        new_missed = [0.0] * (cap + 1)
        for m in range(cap + 1):
            a, b = met[m], missed[m]
            if a == 0.0 and b == 0.0:
                continue
            new_met[m] += a * (1.0 - start) + b * (1.0 - stay)
            new_missed[min(m + 1, cap)] += a * start + b * stay
        met, missed = new_met, new_missed
    return met, missed


def _markov_compound_tail(k: int, n: int, p: float, spell: float) -> float:
    """P(M >= k) for long runs: spells start as a Poisson process (``n x start`` of them on
    average) and last a geometric number of windows (mean ``spell``), so ``M`` is a
    Poisson sum of geometric lengths; j spells reach ``k`` windows exactly when fewer than
    j of the first ``k - 1`` windows ended a spell."""
    _, start = _chain(p, spell)
    lam = n * start * (1.0 - p)  # spells begin after a met window
    end = 1.0 / spell
    top = int(lam + 12.0 * math.sqrt(lam) + 30)
    total = 0.0
    log_pj = -lam  # log P(N = 0)
    for j in range(1, top + 1):
        log_pj += math.log(lam) - math.log(j)
        reach = 1.0 - binomial_tail(j, k - 1, end) if k > 1 else 1.0
        total += math.exp(log_pj) * reach
    return min(1.0, total)


@functools.lru_cache(maxsize=512)
def critical_misses(n: int, p: float, alpha: float, spell: float = 1.0) -> int:
    """The smallest miss count ``k`` with ``P(M >= k) <= alpha`` in ``n`` windows of a
    compliant volume; ``n + 1`` when even ``n`` misses are not that rare (the run is too
    short to ever FAIL at this level)."""
    if n <= 0:
        return 1
    if p > 0.0 and spell > 1.0 / (1.0 - p):
        cap = min(n, max(8, int(4 * n * p) + 16))
        while n * cap <= _EXACT_STEPS:
            dist = _markov_distribution(n, p, spell, cap)
            if dist[-1] <= alpha or cap == n:
                tail = 1.0
                for m, mass in enumerate(dist[:-1]):
                    if tail <= alpha:
                        return m
                    tail -= mass
                return cap if dist[-1] <= alpha else n + 1
            cap = min(n, cap * 2)
    # The tail falls with k: bisect on it (binomial, or the long-run approximation).
    low, high = 0, n + 1  # tail(low) > alpha, tail(high) = 0 <= alpha
    while high - low > 1:
        mid = (low + high) // 2
        if miss_tail(mid, n, p, spell) <= alpha:
            high = mid
        else:
            low = mid
    return high


def miss_rate_upper(misses: int, n: int, confidence: float = REPORT_CONFIDENCE) -> float:
    """Clopper-Pearson upper bound on the miss rate after ``misses`` in ``n`` windows
    (0 misses in 60: 1 - 0.05^(1/60) = 4.9 %, the exact form of the 'rule of three')."""
    if n <= 0:
        return 1.0
    if misses >= n:
        return 1.0
    tail = 1.0 - confidence
    if misses == 0:
        return 1.0 - float(tail ** (1.0 / n))
    low, high = misses / n, 1.0
    for _ in range(100):  # P(X <= misses; p) falls with p: find where it equals ``tail``
        mid = (low + high) / 2.0
        if 1.0 - binomial_tail(misses + 1, n, mid) > tail:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


# -- the duty-cycle test -----------------------------------------------------------------
FAIL = "fail"
PASS = "pass"
OPEN = "open"
#: The first look's test failed, the robust one did not: a second look after a pause decides.
SUSPECT = "suspect"


@dataclass(frozen=True)
class DutyTest:
    """The duty-cycle test on the windows seen so far of a check planned for ``planned``.

    ``state`` is :data:`FAIL` (misses >= ``critical``), :data:`PASS` (even a miss in every
    remaining window could not reach it) or :data:`OPEN`. ``p_value`` is the probability that
    a compliant volume shows at least the misses seen in ``planned`` windows.
    """

    seen: int
    planned: int
    misses: int
    rate: float  # the miss rate the claim allows: 1 - duty
    alpha: float
    spell: float
    critical: int
    longest_run: int = 0  # the longest run of consecutive missed windows

    @property
    def state(self) -> str:
        if self.misses >= self.critical:
            return FAIL
        if self.critical > self.planned and self.misses:
            return OPEN  # too few windows to ever be evidence: misses prove nothing either way
        if self.misses + max(0, self.planned - self.seen) < self.critical:
            return PASS
        return OPEN

    @property
    def p_value(self) -> float:
        return miss_tail(self.misses, self.planned, self.rate, self.spell)

    @property
    def rate_upper(self) -> float:
        """Upper 95 % confidence bound on the miss rate, from the windows seen."""
        return miss_rate_upper(self.misses, self.seen)

    def _spell_hint(self) -> str:
        """When the misses came as runs: what assuming such spells would change."""
        run = self.longest_run
        if run < 2 or run <= self.spell or self.misses >= self.seen:
            return ""  # no run, or every second missed: a level, not a spell
        needed = critical_misses(self.planned, self.rate, self.alpha, float(run))
        return (f". The misses came in runs (the longest {run:,} windows); if this volume's "
                f"bad spells can last that long while it meets the claim, "
                f"--ebsperf-miss-spell={run} weighs them so ({needed:,} misses in "
                f"{self.planned:,} would then be evidence)")

    def explain(self, threshold_text: str, window_s: float = 1.0) -> str:
        """``2 of 60 s below 3,600 IOPS; a volume meeting 99.9 % would show this ...``."""
        unit = "s" if window_s == 1.0 else f"windows of {window_s:g} s"
        seen = (f"{self.misses:,} of {self.seen:,} {unit}" if self.seen == self.planned else
                f"{self.misses:,} of the first {self.seen:,} {unit} (of {self.planned:,} "
                "planned)")
        duty = _percent(1.0 - self.rate)
        spell = "" if self.spell <= 1.0 else f" in spells of {self.spell:g} s on average"
        if self.state == FAIL:
            text = (f"{seen} below {threshold_text}; a volume meeting {duty} (missing"
                    f"{spell} at {_percent(self.rate)}) would miss {self.misses:,} or more of "
                    f"{self.planned:,} with probability {_probability(self.p_value)}, below "
                    f"the false-alarm level {_probability(self.alpha)}: FAIL")
            return text + self._spell_hint()
        if self.state == PASS:
            bound = _percent(self.rate_upper)
            return (f"{seen} below {threshold_text}: consistent with {duty}; the miss rate is "
                    f"below {bound} with {_percent(REPORT_CONFIDENCE)} confidence")
        return (f"{seen} below {threshold_text}: not yet evidence against {duty} "
                f"({self.critical:,} misses in {self.planned:,} would be)")


def duty_test(values: Sequence[float], threshold: float, duty: float, *, alpha: float,
              planned: int | None = None, spell: float = 1.0) -> DutyTest:
    """The duty-cycle test of ``values`` (one per window) against ``threshold``.

    ``planned`` is the number of windows the check was planned for (default: the windows
    given, i.e. the run is complete).
    """
    seen = len(values)
    planned = max(seen, planned or 0)
    rate = 1.0 - duty
    misses, longest, current = 0, 0, 0
    for value in values:
        if value < threshold:
            misses, current = misses + 1, current + 1
            longest = max(longest, current)
        else:
            current = 0
    critical = critical_misses(planned, rate, alpha, spell)
    return DutyTest(seen, planned, misses, rate, alpha, spell, critical, longest)


# -- misses in spells: a second look after a pause -----------------------------------------
#: A pause this many mean spells long separates two looks at a volume: a compliant volume's
#: spell that was going on when the first look stopped is over by then (probability
#: ``stay ** gap``: 2e-4 for spells of 3 s after 15 s).
GAP_SPELLS = 5.0
#: At most this many confirming looks after the first.
MAX_LOOKS = 3


@dataclass(frozen=True)
class LookPlan:
    """How a check tolerates misses in spells without waiting for a spell to end.

    The check's seconds are judged by two tests, each at half the check's level:

    * the **robust** test: the duty-cycle test under the spell model (:func:`miss_tail`),
      over all the seconds the check runs; its FAIL is final;
    * the **first look**: the same test for independent seconds, fast against a slow volume,
      but a compliant volume's single spell of a few seconds can trip it
      (``p_first``). Its FAIL stops fio and is only a suspicion: after a pause of ``gap_s``
      seconds (longer than a spell) fio runs ``looks`` more times for ``windows`` seconds each,
      each pause as long, and the volume fails only when every look misses at least
      ``critical`` of its ``windows`` seconds too. A compliant volume does that with
      probability at most ``p_confirm`` per look whatever it showed before (the chain's state
      after the pause is at worst "in a spell since the pause began"), so the FAIL's
      false-alarm probability is at most ``p_first * p_confirm ** looks <= alpha / 2``. When a
      look does not confirm, the check goes on with the robust test alone.

    A slow volume misses every second, so it fails after ``first critical + looks x critical``
    seconds of fio, not after the robust test's much larger count.
    """

    rate: float
    spell: float
    alpha: float
    planned: int
    first_critical: int
    robust_critical: int
    p_first: float
    gap_s: int
    looks: int
    windows: int
    critical: int
    p_confirm: float

    @property
    def false_alarm(self) -> float:
        """The looks' share of the check's false-alarm probability (bound)."""
        return self.p_first * self.p_confirm ** self.looks

    def describe(self) -> str:
        return (f"{self.looks} look(s) of {self.windows} s after pauses of {self.gap_s} s, "
                f"each needing {self.critical} missed second(s)")


def chain_tail_from(k: int, n: int, p: float, spell: float, first_miss: float) -> float:
    """P(M >= k) for ``n`` windows of the spell chain whose first window misses with
    probability ``first_miss`` (instead of the stationary ``p``)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    stay, start = _chain(p, spell) if spell > 1.0 / (1.0 - p) else (p, p)
    met, missed = _chain_counts(n, k, stay, start, first_miss)
    return min(1.0, max(0.0, met[k] + missed[k]))


def miss_after_gap(p: float, spell: float, gap: int) -> float:
    """P(a window misses | the window ``gap + 1`` windows earlier missed): ``p`` plus what is
    left of the spell's memory, ``(1 - p) x (stay - start) ** (gap + 1)``."""
    stay, start = _chain(p, spell)
    return p + (1.0 - p) * (stay - start) ** (gap + 1)


@functools.lru_cache(maxsize=256)
def plan_looks(planned: int, p: float, alpha: float, spell: float) -> LookPlan | None:
    """The second-look plan of a duty-cycle check (see :class:`LookPlan`), or None when the
    misses are taken as independent (``spell`` <= 1, or too small to matter) or the run is
    too short to ever show enough misses."""
    if p <= 0.0 or p >= 1.0 or planned <= 0 or spell <= 1.0 / (1.0 - p):
        return None
    half = alpha / 2.0
    first = critical_misses(planned, p, half, 1.0)
    robust = critical_misses(planned, p, half, spell)
    if first > planned:
        return None
    p_first = miss_tail(first, planned, p, spell)
    gap = math.ceil(GAP_SPELLS * spell)
    first_miss = miss_after_gap(p, spell, gap)
    best: LookPlan | None = None
    for looks in range(1, MAX_LOOKS + 1):
        if p_first <= half:  # the first look alone is safe: no pause needed
            looks = 0
        target = (half / p_first) ** (1.0 / looks) if looks else 1.0
        for critical in range(1, planned + 1):
            windows = critical + 1  # one window may be a start-up's
            tail = chain_tail_from(critical, windows, p, spell, first_miss) if looks else 0.0
            if tail <= target:
                found = LookPlan(p, spell, alpha, planned, first, robust, p_first, gap, looks,
                                 windows, critical, tail)
                cost = looks * (critical + 1)
                if best is None or cost < best.looks * (best.critical + 1):
                    best = found
                break
        if looks == 0:
            break
    return best


@dataclass(frozen=True)
class SpellTests:
    """The duty-cycle tests of one check under :class:`LookPlan` (or the single test when the
    misses are taken as independent): ``state`` is FAIL (the robust test, or a first look
    that needs no pause), SUSPECT (the first look failed: look again after a pause), PASS
    (neither can fail any more) or OPEN; ``test`` is the test that decided (for the wording)."""

    state: str
    test: DutyTest
    robust: DutyTest
    plan: LookPlan | None


def spell_tests(values: Sequence[float], threshold: float, duty: float, *, alpha: float,
                planned: int | None = None, spell: float = 1.0,
                first_spent: bool = False) -> SpellTests:
    """The tests of a check's windows under the policy's spell: with ``spell`` <= 1 the one
    test of :func:`duty_test`; otherwise the robust and first-look tests of
    :class:`LookPlan`. ``first_spent``: the first look already failed once and its looks did
    not confirm it, so only the robust test remains."""
    planned = max(len(values), planned or 0)
    plan = plan_looks(planned, 1.0 - duty, alpha, spell)
    if plan is None:
        test = duty_test(values, threshold, duty, alpha=alpha, planned=planned, spell=spell)
        return SpellTests(test.state, test, test, None)
    robust = duty_test(values, threshold, duty, alpha=alpha / 2.0, planned=planned,
                       spell=spell)
    if robust.state == FAIL or first_spent:
        return SpellTests(robust.state, robust, robust, plan)
    first = duty_test(values, threshold, duty, alpha=alpha / 2.0, planned=planned, spell=1.0)
    if first.state == FAIL:
        return SpellTests(FAIL if plan.looks == 0 else SUSPECT, first, robust, plan)
    if first.state == PASS:
        return SpellTests(PASS, robust, robust, plan)
    return SpellTests(OPEN, first, robust, plan)


# -- means -------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeanInterval:
    """A one-sided-at-``alpha`` interval for the mean of per-window samples."""

    n: int
    mean: float
    low: float
    high: float
    alpha: float


#: The fewest degrees of freedom an interval's t quantile takes when autocorrelation, not
#: the number of samples, is what shrinks them. The lag-1 autocorrelation of 8-20 seconds is
#: estimated coarsely; a step in the series reads as r near 0.9, n_eff near n / 19, and a df
#: of 1 puts t(0.999) at 318: a volume whose every second read in 45-84 µs got an upper
#: bound of 3 ms on its mean. Simulated AR(1) series (phi 0-0.9, 8-20 samples, alpha 0.001)
#: missed the true mean or ratio exactly as often with a floor of 3 as with 1 (the misses
#: come from r estimated too low, which no floor touches), with intervals 3-10 x narrower.
MIN_AUTOCORRELATED_DF = 3.0


def interval_df(df: float, nominal: float) -> float:
    """``df`` with the autocorrelation floor, never above the samples' own ``nominal``
    degrees of freedom (two samples keep their 1)."""
    return max(df, min(MIN_AUTOCORRELATED_DF, nominal), 1.0)


def mean_interval(values: Sequence[float], alpha: float) -> MeanInterval | None:
    """``low``/``high``: one-sided bounds at level ``1 - alpha`` each, from the samples'
    autocorrelation-corrected standard error; None with fewer than two samples."""
    if len(values) < 2:
        return None
    summary = summarize(values)
    if summary.se == 0 or not math.isfinite(summary.se):
        return MeanInterval(summary.n, summary.mean, summary.mean, summary.mean, alpha)
    t = t_quantile(1.0 - alpha, interval_df(summary.n_eff - 1.0, summary.n - 1))
    half = t * summary.se
    return MeanInterval(summary.n, summary.mean, summary.mean - half, summary.mean + half, alpha)


def weighted_mean_interval(values: Sequence[float], weights: Sequence[float], alpha: float
                           ) -> MeanInterval | None:
    """The mean of ``values`` weighted by ``weights`` (per-second mean latencies and each
    second's I/Os: the average over every I/O, which is what fio's final report says), with
    one-sided bounds at ``1 - alpha`` each. A ratio estimator: its standard error comes from
    the seconds' residual totals ``w * (v - mean)``, widened for their lag-1 autocorrelation.
    A second in which one slow I/O held the queue has few I/Os and weighs accordingly; an
    unweighted mean of seconds would count it as much as a second of thousands. None with
    fewer than two weighted samples."""
    pairs = [(v, w) for v, w in zip(values, weights, strict=False) if w > 0]
    k = len(pairs)
    if k < 2:
        return None
    total = math.fsum(w for _, w in pairs)
    mean = math.fsum(v * w for v, w in pairs) / total
    residuals = [w * (v - mean) for v, w in pairs]
    r = lag1_autocorrelation(residuals)
    n_eff = k * (1 - r) / (1 + r)
    variance = (k / (k - 1)) * math.fsum(e * e for e in residuals) / total ** 2 * (k / n_eff)
    se = math.sqrt(variance)
    if se == 0:
        return MeanInterval(k, mean, mean, mean, alpha)
    half = t_quantile(1.0 - alpha, interval_df(n_eff - 1.0, k - 1)) * se
    return MeanInterval(k, mean, mean - half, mean + half, alpha)


@dataclass(frozen=True)
class RatioInterval:
    """``a / b`` with a two-sided ``1 - 2 alpha`` interval (each side at ``alpha``)."""

    ratio: float
    low: float
    high: float
    alpha: float

    def equivalence(self, max_dev: float) -> str:
        """TOST: PASS when the interval lies within 1 +- max_dev, FAIL when it lies wholly
        outside, OPEN when the samples cannot tell."""
        if 1.0 - max_dev <= self.low and self.high <= 1.0 + max_dev:
            return PASS
        if self.low > 1.0 + max_dev or self.high < 1.0 - max_dev:
            return FAIL
        return OPEN


def ratio_interval(a: Sequence[float], b: Sequence[float], alpha: float
                   ) -> RatioInterval | None:
    """The ratio of two runs' means with an interval (delta method, Welch degrees of
    freedom); None when either run has fewer than two samples or ``b`` has a zero mean."""
    if len(a) < 2 or len(b) < 2:
        return None
    sa, sb = summarize(a), summarize(b)
    if sb.mean <= 0:
        return None
    ratio = sa.mean / sb.mean
    # the ratio's variance in its two parts (delta method), each on the ratio's own scale,
    # so that Welch-Satterthwaite weighs the twins by what each adds to the ratio's error
    part_a = sa.se ** 2 / sb.mean ** 2
    part_b = sa.mean ** 2 * sb.se ** 2 / sb.mean ** 4
    se = math.sqrt(part_a + part_b)
    if se == 0:
        return RatioInterval(ratio, ratio, ratio, alpha)
    denom = part_a ** 2 / max(sa.n_eff - 1, 1e-9) + part_b ** 2 / max(sb.n_eff - 1, 1e-9)
    df = (part_a + part_b) ** 2 / denom if denom else math.inf
    half = t_quantile(1.0 - alpha, interval_df(df, min(len(a), len(b)) - 1)) * se
    return RatioInterval(ratio, ratio - half, ratio + half, alpha)


# -- wording -----------------------------------------------------------------------------
def _percent(fraction: float) -> str:
    pct = fraction * 100.0
    if pct >= 10:
        text = f"{pct:.1f}"
    elif pct >= 0.1:
        text = f"{pct:.2f}"
    else:
        text = f"{pct:.2g}"
    if "e" not in text and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text == "100" and fraction < 1.0:
        text = "99.99"
    return f"{text} %"


def _probability(value: float) -> str:
    """``0.0017`` -> ``0.17 %``; tiny values in scientific notation."""
    if value >= 0.001:
        return _percent(value)
    return f"{value:.1e}"
