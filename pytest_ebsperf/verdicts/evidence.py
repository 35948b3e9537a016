"""What a sample of seconds can say about a claim made for a year: the statistics of verdicts.

A check sees seconds of a run; AWS's duty cycles (B-SLA) speak of a year. So a check asks
whether the misses seen are *evidence* that the volume misses more often than claimed:

* **Duty cycles** are a one-sided test. Each window (one second) either reaches the threshold
  or misses it. Under the null hypothesis "the volume meets the claim" a window misses with
  probability ``p = 1 - duty``; the test FAILs when what was seen is rarer than the check's
  false-red level ``alpha`` for a compliant volume over the check's planned windows.
* **Misses in spells.** A compliant volume's misses need not be independent: a bad spell can
  last several seconds. The null model is a two-state Markov chain whose stationary miss
  rate is ``p`` and whose spells last ``spell`` seconds on average (``spell = 1``: independent
  seconds, the binomial test). The statistic is the count of missed windows; its exact tail
  under the chain (:func:`miss_tail`, dynamic programming) makes a long run of misses weaker
  evidence than as many scattered ones.
* **Sequential, without pauses.** The test is planned for the check's whole runtime ``n`` and
  its FAIL event only grows with more seconds, so a check stops the moment the critical count
  is reached (the FAIL is then certain whatever the remaining seconds show) and passes the
  moment it cannot be reached any more (curtailment). Stopping early costs no false-red
  level: it is one test of the planned run, decided early.
* **Means** (FLOOR, a CAP's upper bound and its least mean) are judged on an interval that
  allows for the seconds' correlation (:func:`stats.long_run_summary`), at a few looks.

``alpha`` is a per-check level: the run's false-red budget (``--ebsperf-false-alarm``,
default :data:`DEFAULT_FALSE_ALARM`) divided by the number of checks in the run that can FAIL
(Bonferroni; INFO checks and checks whose suite does not apply are not counted), so a whole
run on compliant volumes is red with probability at most the run's level. A PASS has its own
level, :data:`PASS_ALPHA`: the probability that a volume exactly at the bar is passed.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ebsperf.verdicts import spells, stats
from pytest_ebsperf.verdicts.outcome import Outcome

#: Probability that a whole run on a compliant volume has any false FAIL (all checks together).
DEFAULT_FALSE_ALARM = 0.001
#: One-sided level of a PASS decided on an interval (a volume at the bar passes this rarely).
PASS_ALPHA = 0.001
#: Confidence of the bounds printed with a pass ("the miss rate is below 4.9 % with 95 %...").
REPORT_CONFIDENCE = 0.95
#: Checks assumed in a run when the plugin could not count them.
DEFAULT_CHECKS_PER_RUN = 40


#: How a CAP's level is shared among its tests (they add up to the check's ``alpha``): the
#: count of missed seconds, the mean below what a compliant volume averages, the mean above
#: the cap's upper tolerance. A FLOOR's mean test has the whole level.
COUNT_SHARE = 0.8
MEAN_BELOW_SHARE = 0.1
#: Under a spell model (spells longer than 1 s) the mean test gives half its share to the
#: count of spells begun (:func:`critical_starts`): scattered misses, which the count of
#: missed seconds weighs as if each began a long spell.
STARTS_SHARE = 0.05
MEAN_ABOVE_SHARE = 0.1
#: A mean is judged while fio runs at these fractions of the planned seconds (and at the end),
#: each look at ``1 / MEAN_LOOKS`` of the test's level: Bonferroni over the looks, the
#: simplest alpha-spending function (equal spending; Jennison & Turnbull, "Group Sequential
#: Methods", 2000, ch. 7). PASS and FAIL alike; the final verdict is the last look.
MEAN_LOOKS = 4
#: No early look before MEAN_MIN_S (fewer cannot bound the correlation); a FLOOR is planned
#: for at least MEAN_PLANNED_S unless its runtime was given.
MEAN_MIN_S = 15
MEAN_PLANNED_S = 30


def mean_looks(planned: int) -> tuple[int, ...]:
    """The seconds at which a mean is judged in a run planned for ``planned`` seconds: the
    quarters from :data:`MEAN_MIN_S` on, and the end."""
    if planned <= 0:
        return ()
    early = {math.ceil(planned * j / MEAN_LOOKS) for j in range(1, MEAN_LOOKS)}
    return tuple(sorted({n for n in early if n >= MEAN_MIN_S} | {planned}))


def look_level(alpha: float) -> float:
    """The level of one look of a mean test whose whole level is ``alpha``."""
    return alpha / MEAN_LOOKS


def per_check_alpha(run_alpha: float, checks: int) -> float:
    """Bonferroni: each of ``checks`` checks gets ``run_alpha / checks``."""
    return run_alpha / max(1, checks)


@dataclass(frozen=True)
class Policy:
    """How a run weighs evidence: the per-check false-red level ``alpha``, the mean length
    ``spell`` (in windows) of a compliant volume's runs of missed seconds, and the level
    ``pass_alpha`` of a PASS decided on an interval."""

    alpha: float = DEFAULT_FALSE_ALARM / DEFAULT_CHECKS_PER_RUN
    spell: float = 1.0
    pass_alpha: float = PASS_ALPHA

    @classmethod
    def for_run(cls, run_alpha: float, checks: int, spell: float = 1.0) -> Policy:
        return cls(per_check_alpha(run_alpha, checks), spell)

    def split(self, parts: int) -> Policy:
        """The policy for one of ``parts`` verdicts judged within one check."""
        return Policy(self.alpha / max(1, parts), self.spell, self.pass_alpha)

    def stages(self) -> tuple[float, float]:
        """The levels of a two-stage FAIL (a first stage, then a fresh stage that confirms):
        their product is the check's ``alpha``."""
        root = math.sqrt(self.alpha)
        return root, root


# -- distributions -----------------------------------------------------------------------
def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    return stats.binomial_tail(k, n, p)


#: Above this many steps (windows x misses tracked) the Markov tail is approximated.
_EXACT_STEPS = 2_000_000


def _independent(p: float, spell: float) -> bool:
    """Spells of 1 / (1 - p) windows are what independent windows have."""
    return spell <= 1.0 / (1.0 - p)


@functools.lru_cache(maxsize=512)
def miss_tail(k: int, n: int, p: float, spell: float = 1.0) -> float:
    """P(M >= k): ``M`` the misses in ``n`` windows of a stationary two-state Markov chain
    whose stationary miss probability is ``p`` and whose spells of consecutive misses last
    ``spell`` windows on average (``spell <= 1``: independent windows, the binomial tail).

    Exact by dynamic programming (O(n k)); for very long checks (soaks of many hours) the
    chain's miss count is approximated as a Poisson sum of geometric spells.
    """
    if k <= 0 or k > n or not 0.0 < p < 1.0 or _independent(p, spell):
        return binomial_tail(k, n, p)  # (its edge cases are the chain's: 1, 0, 0, 1)
    if n * k > _EXACT_STEPS:
        return _markov_compound_tail(k, n, p, spell)
    return _markov_distribution(n, p, spell, k)[-1]


def _chain(p: float, spell: float) -> tuple[float, float]:
    """(P(miss | last missed), P(miss | last met)) for rate ``p`` and mean spell ``spell``."""
    if _independent(p, spell):
        return p, p
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
    if p > 0.0 and not _independent(p, spell):
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
    return _bisect(lambda k: miss_tail(k, n, p, spell), n, alpha)


def _bisect(tail: object, n: int, alpha: float) -> int:
    """The smallest k in 0..n+1 with tail(k) <= alpha (tail falls with k)."""
    assert callable(tail)
    low, high = 0, n + 1  # tail(low) > alpha, tail(high) = 0 <= alpha
    while high - low > 1:
        mid = (low + high) // 2
        if tail(mid) <= alpha:
            high = mid
        else:
            low = mid
    return high


def miss_rate_upper(misses: int, n: int, confidence: float = REPORT_CONFIDENCE) -> float:
    """Clopper-Pearson upper bound on the miss rate after ``misses`` in ``n`` windows
    (0 misses in 60: 1 - 0.05^(1/60) = 4.9 %, the exact form of the 'rule of three')."""
    return stats.clopper_pearson_upper(misses, n, confidence)


# -- the duty-cycle test: its words are the verdict's, and "open" while undecided ----------
FAIL, PASS, OPEN = Outcome.FAIL.value, Outcome.PASS.value, "open"


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
    runs: int = 0  # runs (spells) of consecutive missed windows
    last_missed: bool = False  # the last window seen missed (its spell may go on)
    #: Spells begun that are evidence (:func:`critical_starts`); 0: not tested.
    critical_starts: int = 0
    starts_alpha: float = 0.0

    @property
    def starts_failed(self) -> bool:
        return 0 < self.critical_starts <= self.runs

    @property
    def state(self) -> str:
        if self.misses >= self.critical or self.starts_failed:
            return FAIL
        if self.critical > self.planned:
            # too few windows to ever be evidence: a PASS here could not have been a FAIL
            return OPEN
        if self.misses + max(0, self.planned - self.seen) < self.critical:
            return OPEN if self.short_spells_critical() else PASS
        return OPEN

    def short_spells_critical(self) -> int | None:
        """When this run's own misses show spells shorter than the model assumes (the 95 %
        interval's top below ``spell``) and, at spells that long, the misses seen would
        be evidence: the critical count there (the count's PASS then rests on spells the
        data contradicts, and is no PASS). Otherwise None."""
        seen = self.spells_seen()
        if seen is None or not seen.high < self.spell:
            return None
        shorter = max(1.0, math.ceil(seen.high * 10.0) / 10.0)
        critical = critical_misses(self.planned, self.rate, self.alpha, shorter)
        return critical if self.misses >= critical else None

    @property
    def p_value(self) -> float:
        return miss_tail(self.misses, self.planned, self.rate, self.spell)

    @property
    def rate_upper(self) -> float:
        """Upper 95 % confidence bound on the miss rate, from the windows seen."""
        return miss_rate_upper(self.misses, self.seen)

    def spells_seen(self) -> spells.SpellsSeen | None:
        """The mean length of this run's spells of misses with its 95 % interval (None with
        fewer than 2 misses, or a miss in every window: a level, not a spell)."""
        if self.misses < 2 or self.misses >= self.seen:
            return None
        return spells.seen(self.misses, self.runs, self.last_missed)

    def _spell_text(self) -> str:
        """What the level assumes of spells, and what the run's own misses say of them."""
        seen = self.spells_seen()
        if seen is None:
            return ""
        model = ("independent windows" if self.spell <= 1.0 else
                 f"spells of {self.spell:g} s on average")
        text = (f". The level assumes a compliant volume misses in {model}; this run's "
                f"{self.misses:,} misses came in {self.runs:,} "
                f"{'spell' if self.runs == 1 else 'spells'}, {seen.describe()}")
        longer = round(seen.mean, 1)
        if longer <= max(self.spell, 1.0):
            return text
        p_value = miss_tail(self.misses, self.planned, self.rate, longer)
        needed = critical_misses(self.planned, self.rate, self.alpha, longer)
        judged = ("still below the level" if p_value <= self.alpha else
                  "not below the level: the FAIL holds only if this volume's spells are "
                  "shorter")
        enough = (f"{needed:,} misses in {self.planned:,} would be evidence"
                  if needed <= self.planned else
                  f"no count in {self.planned:,} windows would be evidence")
        return (text + f"; at spells of {longer:g} s (this run's) the count would have "
                f"probability {_probability(p_value)} ({judged}; {enough}): "
                f"--ebsperf-miss-spell={longer:g} weighs them so")

    def explain(self, threshold_text: str, window_s: float = 1.0) -> str:
        """``2 of 60 s below 3,600 IOPS; a volume meeting 99.9 % would show this ...``."""
        unit = "s" if window_s == 1.0 else f"windows of {window_s:g} s"
        seen = (f"{self.misses:,} of {self.seen:,} {unit}" if self.seen == self.planned else
                f"{self.misses:,} of the first {self.seen:,} {unit} (of {self.planned:,} "
                "planned)")
        duty = _percent(1.0 - self.rate)
        spell = "" if self.spell <= 1.0 else f" in spells of {self.spell:g} s on average"
        if self.state == FAIL and self.misses < self.critical:
            tail = binomial_tail(self.runs, self.planned, spells.start_rate(self.rate))
            return (f"{seen} below {threshold_text}, in {self.runs:,} separate spells; a "
                    f"volume meeting {duty} begins a spell of misses in at most "
                    f"{_percent(spells.start_rate(self.rate))} of windows however long its spells "
                    f"last, so {self.runs:,} or more spells in {self.planned:,} windows have "
                    f"probability at most {_probability(tail)}, below the false-red level "
                    f"{_probability(self.starts_alpha)}: FAIL (fewer than the "
                    f"{self.critical:,} missed windows the count needs under spells of "
                    f"{self.spell:g} s: the misses came scattered)")
        if self.state == FAIL:
            text = (f"{seen} below {threshold_text}; a volume meeting {duty} (missing"
                    f"{spell} at {_percent(self.rate)}) would miss {self.misses:,} or more of "
                    f"{self.planned:,} with probability {_probability(self.p_value)}, below "
                    f"the false-red level {_probability(self.alpha)}: FAIL")
            return text + self._spell_text()
        if self.state == PASS:
            bound = _percent(self.rate_upper)
            return (f"{seen} below {threshold_text}: consistent with {duty}; the miss rate is "
                    f"below {bound} with {_percent(REPORT_CONFIDENCE)} confidence")
        shorter = self.short_spells_critical()
        found = self.spells_seen()
        if shorter is not None and found is not None:
            return (f"{seen} below {threshold_text}: fewer than the {self.critical:,} misses "
                    f"that are evidence against {duty} if a compliant volume misses in "
                    f"spells of {self.spell:g} s on average, but this run's misses came in "
                    f"{self.runs:,} spells, {found.describe()}: at spells that short "
                    f"{shorter:,} misses in {self.planned:,} are evidence, so the count is "
                    f"no PASS (--ebsperf-miss-spell={max(1.0, found.high):.1f} weighs "
                    "them so)")
        return (f"{seen} below {threshold_text}: not yet evidence against {duty} "
                f"({self.critical:,} misses in {self.planned:,} would be)")


def duty_test(values: Sequence[float], threshold: float, duty: float, *, alpha: float,
              planned: int | None = None, spell: float = 1.0, starts_alpha: float = 0.0
              ) -> DutyTest:
    """The duty-cycle test of ``values`` (one per window) against ``threshold``: the count
    of missed windows under the spell model, curtailed (see the module's text).

    ``planned`` is the number of windows the check was planned for (default: the windows
    given, i.e. the run is complete).
    """
    seen = len(values)
    planned = max(seen, planned or 0)
    rate = 1.0 - duty
    misses, longest, current, runs = 0, 0, 0, 0
    for value in values:
        if value < threshold:
            runs += current == 0
            misses, current = misses + 1, current + 1
            longest = max(longest, current)
        else:
            current = 0
    critical = critical_misses(planned, rate, alpha, spell)
    starts = critical_starts(planned, rate, starts_alpha) if starts_alpha > 0 else 0
    return DutyTest(seen, planned, misses, rate, alpha, spell, critical, longest, runs,
                    current > 0, starts, starts_alpha)


@functools.lru_cache(maxsize=512)
def critical_starts(n: int, p: float, alpha: float) -> int:
    """The fewest spells begun in ``n`` windows that are evidence at ``alpha`` against a
    volume missing at ``p`` in spells of any mean length (``n + 1``: none can be). Each
    window begins a spell with probability at most :func:`_start_rate` whatever came before,
    so the count of spells begun is below Binomial(n, p / (1 - p)) stochastically: its tail
    bounds the test's level for every spell length at once."""
    if n <= 0:
        return 1
    return _bisect(lambda k: binomial_tail(k, n, spells.start_rate(p)), n, alpha)


#: A burst check that missed a second in too few seconds to decide waits this long at most
#: for its bucket to carry a run that can (about what an emptied emulated st1, sc1 or gp2
#: bucket takes to earn the main job's 17-19 s at burst). Idle, with the measuring lock set
#: aside: a decision, not "run longer", for the price of one worker's wait.
MAX_DECIDING_WAIT_S = 180.0


#: fio's once-a-second reports can come a few milliseconds late, and windows are counted at
#: their median interval: a run of exactly the 17 s its test needs made 16 windows at 1.03 s
#: apart, too few to FAIL. A run meant to be decidable is planned 5 % longer (a second at least).
LATE_REPORTS = 1.05


def decidable_runtime_s(windows: int) -> float:
    """The seconds to plan so that fio's reports make at least ``windows`` windows."""
    return float(max(windows + 1, math.ceil(windows * LATE_REPORTS)))


def windows_to_fail(duty: float, policy: Policy) -> int:
    """The windows a duty cycle's count needs before it can FAIL at all at ``policy``'s level
    (its share of it), under the policy's spell model: what a check plans at least."""
    return decidable_windows(1.0 - duty, policy.alpha * COUNT_SHARE, policy.spell)


@functools.lru_cache(maxsize=256)
def decidable_windows(p: float, alpha: float, spell: float, limit: int = 3_600) -> int:
    """The fewest windows in which the duty-cycle test can FAIL at all (its critical count
    is at most the windows): a run planned shorter can only pass or be INCONCLUSIVE.

    A check whose runtime was not given plans at least this many windows. That costs a
    healthy volume nothing (the PASS is settled once the remaining windows cannot reach the
    critical count) and keeps the level: the FAIL event of a run planned for ``n`` windows
    is the fixed-``n`` test's, whatever made ``n`` longer."""
    low, high = 1, limit
    if critical_misses(high, p, alpha, spell) > high:
        return limit
    while low < high:  # critical(n) - n falls as n grows: the first n where it is <= 0
        mid = (low + high) // 2
        if critical_misses(mid, p, alpha, spell) <= mid:
            high = mid
        else:
            low = mid + 1
    return low


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


def confidence_text(alpha: float) -> str:
    """``1 - alpha`` as a confidence that never rounds up to 100 %: ``99.9 %``,
    ``1 - 2.2e-05``."""
    if alpha >= 1e-3:
        return _percent(1.0 - alpha)
    return f"1 - {alpha:.1e}"


def _probability(value: float) -> str:
    """``0.0017`` -> ``0.17 %``; tiny values in scientific notation."""
    if value >= 0.001:
        return _percent(value)
    return f"{value:.1e}"
