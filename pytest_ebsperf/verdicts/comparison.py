"""Comparisons of two measurements, decided in paired alternating blocks.

"gp2 runs this job at least 3 x as fast as Magnetic" (S0-08), "first writes at least 0.9 x
second writes" (S1-03, S1-08), "encryption costs no IOPS" (S2-17): each compares two
measurements made on one host, one after the other. Measured once each, a slow spell of the
host or a neighbour's load that lands on one of them and not the other decides the verdict.
So a comparison is made of **pairs of blocks**: a fresh fio run on A, then one on B, again
and again (A B A B ...; ramp dropped), and each pair ``j`` gives one difference ``d_j``:

* ``log(A_j) - log(B_j)`` for a ratio (the bar ``log(ratio)``),
* ``A_j - (factor x B_j + slack)`` for an affine bound (S2-17's latency: 1.10 x + 50 µs).

The pairs' mean ``d`` is judged with Student's t on ``K - 1`` degrees of freedom, its variance
allowing for the correlation of neighbouring pairs (:func:`paired`). Whatever moves both
halves of a pair alike (the host's drift, a neighbour's slow step) cancels in ``d``.

**Looks.** The mean is judged after 4, 8, 16 and 32 pairs (:data:`LOOKS`):

* **PASS** when the one-sided bound clears the bar at ``pass_alpha / looks`` (Bonferroni over
  the looks: a pair exactly at the bar passes with probability at most ``pass_alpha``).
* **FAIL** in two stages: a *first stage* says the bound lies beyond the bar at
  ``alpha1 / looks``, then a *fresh, equally long* stage (new pairs, judged on their own)
  must say so too at ``alpha2``. The stages' data are independent, so a pair exactly at the
  bar fails with probability at most ``alpha1 x alpha2``: half the check's share of the
  run's false-red budget (the other half a margin for blocks that are not the normal,
  independent ones the t test assumes; simulated at the bar, docs/benchmarks.md). When the second stage does not confirm, its pairs join the first's and
  the next look goes on.
* **INCONCLUSIVE** after the last look with neither.

Equivalence ("the same within 5 %") is two one-sided tests on the same statistic: PASS when
both bounds lie inside the band, FAIL (two stages) when the interval lies wholly outside.

This module is pure: a check feeds it block figures (:class:`Sequential`), the benchmark
feeds it simulated ones, and both get the same decisions.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_ebsperf.verdicts import stats
from pytest_ebsperf.verdicts.outcome import Outcome

#: Pairs after which the statistic is judged.
LOOKS = (4, 8, 16, 32)
#: One-sided level of a PASS over all looks.
PASS_ALPHA = 1e-3
#: The share of a check's false-red level the two stages spend (see
#: :attr:`Design.false_fail_bound`).
FAIL_MARGIN = 0.5

AT_LEAST = "at least"
AT_MOST = "at most"
WITHIN = "within"

#: A design's outcomes are the verdict's words; "more" while it wants more pairs.
PASS, FAIL = Outcome.PASS.value, Outcome.FAIL.value
INCONCLUSIVE, MORE = Outcome.INCONCLUSIVE.value, "more"


@dataclass(frozen=True)
class PairedDifferences:
    """The mean of ``K`` paired differences ``d_j`` with its t interval on ``K - 1``.

    ``inflation`` multiplies the variance of the mean for the correlation of neighbouring
    pairs (:func:`paired`): ``se = sd x sqrt(inflation / K)``."""

    k: int
    mean: float
    sd: float
    inflation: float = 1.0

    @property
    def se(self) -> float:
        return self.sd * math.sqrt(self.inflation / self.k) if self.k >= 2 else math.inf

    @property
    def df(self) -> float:
        return float(self.k - 1)

    def lower(self, alpha: float) -> float:
        """One-sided lower bound at ``1 - alpha``."""
        return self.mean - self._half(alpha)

    def upper(self, alpha: float) -> float:
        """One-sided upper bound at ``1 - alpha``."""
        return self.mean + self._half(alpha)

    def _half(self, alpha: float) -> float:
        if self.k < 2:
            return math.inf
        if self.sd == 0:
            return 0.0
        return stats.t_quantile(1.0 - alpha, self.df) * self.se

    def t_against(self, value: float) -> float:
        """The studentized distance of the mean from ``value``."""
        if self.k < 2:
            return math.nan
        if self.sd == 0:
            return math.copysign(math.inf, self.mean - value) if self.mean != value else 0.0
        return (self.mean - value) / self.se

    def p_below(self, value: float) -> float:
        """One-sided p-value of "the true mean is at least ``value``" (small: below it)."""
        t = self.t_against(value)
        return 1.0 - stats.t_sf(t, self.df) if math.isfinite(t) else (0.0 if t < 0 else 1.0)

    def p_above(self, value: float) -> float:
        """One-sided p-value of "the true mean is at most ``value``" (small: above it)."""
        t = self.t_against(value)
        return stats.t_sf(t, self.df) if math.isfinite(t) else (0.0 if t > 0 else 1.0)


def paired(differences: Sequence[float]) -> PairedDifferences:
    """The paired differences' mean, sd and variance inflation (sd 0 with one pair: no
    interval then).

    In the balanced order (A B, then B A, ...) a pair's last block and the next pair's first
    are the same device, back to back: a device whose seconds are correlated over longer
    than a block makes neighbouring ``d_j`` correlated (lag 1 only; 0.06-0.08 for AR(1)
    seconds at lag-1 correlation 0.8 in 10 s blocks), and a t interval on independent pairs
    too narrow (the TOST's false PASS at 1.6 x its level there, docs/benchmarks.md). The
    variance of the mean is taken as for a moving average of order 1, Newey and West's
    estimator with one lag and the truncated kernel: ``s^2 / K x (1 + 2 r (K - 1) / K)``,
    ``r`` the pairs' lag-1 correlation corrected for its bias on few pairs
    (:func:`stats.lag1_unbiased`: without it the correction fell short at 8-16 pairs) and
    floored at 0 (a negative estimate never narrows the interval)."""
    k = len(differences)
    if k == 0:
        raise ValueError("no pairs")
    mean = math.fsum(differences) / k
    sd = statistics.stdev(differences) if k > 1 else 0.0
    r = max(0.0, stats.lag1_unbiased(differences))
    return PairedDifferences(k, mean, sd, 1.0 + 2.0 * r * (k - 1) / k)


def log_ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """``log(a_j) - log(b_j)`` of paired positive block figures."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} blocks of one side against {len(b)} of the other")
    out = []
    for x, y in zip(a, b):
        if not (x > 0 and y > 0):
            raise ValueError(f"a block measured {x if not x > 0 else y}: no ratio")
        out.append(math.log(x) - math.log(y))
    return out


@dataclass(frozen=True)
class Design:
    """What a comparison decides and at which levels.

    ``kind`` is :data:`AT_LEAST` (``d >= low``), :data:`AT_MOST` (``d <= high``) or
    :data:`WITHIN` (``low <= d <= high``), on the scale of ``d``. ``fail_alpha`` is the
    check's share of the run's false-red budget; ``pass_alpha`` the level of a PASS.
    """

    kind: str
    low: float = -math.inf
    high: float = math.inf
    fail_alpha: float = 1e-3 / 40
    pass_alpha: float = PASS_ALPHA
    looks: tuple[int, ...] = LOOKS
    #: How far beyond the bar (on d's scale) a FAIL's interval must lie: what rare stalls
    #: the pairs may not have caught can move a long-run mean (:data:`STALL_ALLOWANCE`).
    fail_margin: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in (AT_LEAST, AT_MOST, WITHIN):
            raise ValueError(f"unknown comparison {self.kind!r}")
        if not self.looks or any(b <= a for a, b in zip(self.looks, self.looks[1:])):
            raise ValueError(f"looks must grow: {self.looks}")
        if self.looks[0] < 2:
            raise ValueError("the first look needs at least 2 pairs")

    @property
    def pass_level(self) -> float:
        """The PASS level of one look."""
        return self.pass_alpha / len(self.looks)

    @property
    def false_fail_bound(self) -> float:
        """The most often a pair exactly at the bar fails: the stages' levels multiplied,
        half the check's share (the other half is a margin for blocks whose differences are
        not the normal, independent ones the t test assumes)."""
        return self.fail_alpha * FAIL_MARGIN

    @property
    def first_level(self) -> float:
        """The first stage's level at one look (its share of the stages' square root)."""
        return math.sqrt(self.false_fail_bound) / len(self.looks)

    @property
    def confirm_level(self) -> float:
        """The confirming stage's level."""
        return math.sqrt(self.false_fail_bound)

    @property
    def max_pairs(self) -> int:
        """Pairs the longest path takes: every look, the last one's stage confirmed."""
        return 2 * self.looks[-1]

    # -- one sample's verdict at one level -------------------------------------------------
    def passes(self, sample: PairedDifferences) -> bool:
        level = self.pass_level
        if sample.k < 2:
            return False
        if self.kind == AT_LEAST:
            return sample.lower(level) >= self.low
        if self.kind == AT_MOST:
            return sample.upper(level) <= self.high
        return sample.lower(level) >= self.low and sample.upper(level) <= self.high

    @property
    def fail_low(self) -> float:
        """Below this a FAIL's interval must lie (the bar less the FAIL margin)."""
        return self.low - self.fail_margin

    @property
    def fail_high(self) -> float:
        """Above this a FAIL's interval must lie (the bar plus the FAIL margin)."""
        return self.high + self.fail_margin

    def beyond(self, sample: PairedDifferences, level: float) -> bool:
        """The whole interval at ``level`` lies on the wrong side of the bar, by the FAIL
        margin."""
        if sample.k < 2:
            return False
        if self.kind == AT_LEAST:
            return sample.upper(level) < self.fail_low
        if self.kind == AT_MOST:
            return sample.lower(level) > self.fail_high
        return sample.lower(level) > self.fail_high or sample.upper(level) < self.fail_low


@dataclass(frozen=True)
class Look:
    """One judgement: which stage, how many pairs, the mean, its bounds at the level used."""

    stage: str  # "first" or "confirm"
    pairs: int
    mean: float
    low: float
    high: float
    level: float
    said: str  # PASS, FAIL (a first stage beyond the bar, or a confirmed FAIL) or MORE

    def as_dict(self) -> dict[str, object]:
        return {"stage": self.stage, "pairs": self.pairs, "mean": _finite(self.mean),
                "low": _finite(self.low), "high": _finite(self.high), "level": self.level,
                "said": self.said}


@dataclass
class Sequential:
    """The state of one comparison: feed it pairs until :attr:`outcome` is set.

    ``wanted()`` says how many more pairs to measure before the next judgement; ``add()``
    takes one pair's difference; ``judge()`` is called when ``wanted()`` is 0.
    """

    design: Design
    pairs: list[float] = field(default_factory=list)
    confirming: list[float] | None = None
    look_index: int = 0
    looks: list[Look] = field(default_factory=list)
    outcome: str | None = None

    def wanted(self) -> int:
        if self.outcome is not None:
            return 0
        if self.confirming is not None:
            return max(0, self.design.looks[self.look_index] - len(self.confirming))
        return max(0, self.design.looks[self.look_index] - len(self.pairs))

    def add(self, difference: float) -> None:
        if self.outcome is not None:
            raise RuntimeError("the comparison is decided")
        (self.confirming if self.confirming is not None else self.pairs).append(difference)

    def judge(self) -> str:
        """Judge the sample once it holds the pairs wanted; returns the outcome or MORE."""
        if self.wanted():
            return MORE
        d = self.design
        if self.confirming is not None:
            sample = paired(self.confirming)
            beyond = d.beyond(sample, d.confirm_level)
            self._record("confirm", sample, d.confirm_level, FAIL if beyond else MORE)
            if beyond:
                self.outcome = FAIL
                return FAIL
            # not confirmed: the fresh pairs join the sample, the next look goes on
            self.pairs += self.confirming
            self.confirming = None
            self.look_index += 1
            while self.look_index < len(d.looks) and d.looks[self.look_index] < len(self.pairs):
                self.look_index += 1
            if self.look_index >= len(d.looks):
                self.outcome = INCONCLUSIVE
                return INCONCLUSIVE
            return self.judge() if not self.wanted() else MORE
        sample = paired(self.pairs)
        if d.passes(sample):
            self._record("first", sample, d.pass_level, PASS)
            self.outcome = PASS
            return PASS
        if d.beyond(sample, d.first_level):
            self._record("first", sample, d.first_level, FAIL)
            self.confirming = []
            return MORE
        self._record("first", sample, d.pass_level, MORE)
        self.look_index += 1
        if self.look_index >= len(d.looks):
            self.outcome = INCONCLUSIVE
            return INCONCLUSIVE
        return MORE

    def _record(self, stage: str, sample: PairedDifferences, level: float,
                said: str) -> None:
        self.looks.append(Look(stage, sample.k, sample.mean, sample.lower(level),
                               sample.upper(level), level, said))

    @property
    def all_pairs(self) -> list[float]:
        return [*self.pairs, *(self.confirming or [])]

    def summary(self) -> PairedDifferences | None:
        """The statistic over every pair measured (what the verdict reports)."""
        pairs = self.all_pairs
        return paired(pairs) if pairs else None

    def last_bounds(self) -> tuple[float, float, float] | None:
        """(low, high, level) of the judgement that decided (or the last one)."""
        if not self.looks:
            return None
        last = self.looks[-1]
        return last.low, last.high, last.level


def run(design: Design, pairs: Sequence[float]) -> Sequential:
    """Decide on pre-measured pairs (tests, simulation): feed ``pairs`` in order until the
    comparison is decided or they run out (then the state is returned undecided)."""
    seq = Sequential(design)
    it = iter(pairs)
    while seq.outcome is None:
        for _ in range(seq.wanted()):
            try:
                seq.add(next(it))
            except StopIteration:
                return seq
        seq.judge()
    return seq


#: Rare stalls a FAIL of a ratio allows for: 2 s at a tenth of the rate beginning in 1 % of
#: one side's seconds lower that side's long-run mean by 1.8 %, yet most samples of 4-16
#: pairs catch none and show the ratio without them. A ratio's FAIL therefore needs its
#: interval beyond the bar by ``log(1 + STALL_ALLOWANCE)``: without it such stalls made
#: S2-17 FAIL twins at the band's edge 3.8 x as often as its level allows (docs/benchmarks.md,
#: "Every comparison over the same cells").
STALL_ALLOWANCE = 0.018


def ratio_design(kind: str, ratio: float, *, fail_alpha: float,
                 pass_alpha: float = PASS_ALPHA, looks: tuple[int, ...] = LOOKS) -> Design:
    """A ratio claim on ``d = log(A) - log(B)``: ``AT_LEAST`` ratio, or ``WITHIN`` a
    relative deviation ``ratio`` (0.05: 1 +- 5 %); a FAIL allows for rare stalls
    (:data:`STALL_ALLOWANCE`)."""
    margin = math.log1p(STALL_ALLOWANCE)
    if kind == AT_LEAST:
        return Design(AT_LEAST, low=math.log(ratio), fail_alpha=fail_alpha,
                      pass_alpha=pass_alpha, looks=looks, fail_margin=margin)
    if kind == WITHIN:
        return Design(WITHIN, low=math.log(1.0 - ratio), high=math.log(1.0 + ratio),
                      fail_alpha=fail_alpha, pass_alpha=pass_alpha, looks=looks,
                      fail_margin=margin)
    raise ValueError(f"a ratio claim is {AT_LEAST!r} or {WITHIN!r}, not {kind!r}")


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


# -- the verdict ------------------------------------------------------------------------------
def ratio_text(value: float) -> str:
    """``4.712`` -> ``4.71x``; ``0.9966`` -> ``0.997x``; ``1.0`` -> ``1.00x``."""
    if not math.isfinite(value):
        return "-"
    return f"{value:#.3g}x" if value < 100 else f"{value:,.0f}x"


def level_text(level: float) -> str:
    """A one-sided level as people read it: ``2.5e-04``, ``0.45 %``."""
    return f"{level * 100:.2g} %" if level >= 1e-3 else f"{level:.1e}"


@dataclass(frozen=True)
class Blocks:
    """The block figures of both sides and what one block was (for the verdict)."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    block_s: float
    ramp_s: float
    #: Why the pairs stopped before a decision (a bucket that cannot carry another block,
    #: a block that measured nothing); "" when the design ran its course.
    stopped: str = ""
    #: Where each pair's A and B runs were kept (``--ebsperf-keep-fio``; "" when not kept).
    kept: tuple[tuple[str, str], ...] = ()
    #: Each pair's A and B emulator shares (what fio saw over what an emulated volume was
    #: set to deliver; None: not emulated with a service time).
    shares: tuple[tuple[float | None, float | None], ...] = ()
    #: The shares of the pairs measured again because the host held one side back.
    again: tuple[tuple[float | None, float | None], ...] = ()

    def as_dict(self) -> dict[str, object]:
        found: dict[str, object] = {"a": list(self.a), "b": list(self.b),
                                    "block_s": self.block_s, "ramp_s": self.ramp_s,
                                    "stopped": self.stopped}
        if any(a or b for a, b in self.kept):
            found["kept"] = [list(pair) for pair in self.kept]
        if any(a is not None or b is not None for a, b in self.shares):
            found["emulator_shares"] = [list(pair) for pair in self.shares]
        if self.again:
            found["measured_again"] = [list(pair) for pair in self.again]
        return found

    def emulator_shares(self) -> tuple[float | None, float | None]:
        """Each side's mean emulator share over the pairs whose two shares are known (None:
        no such pair). Paired, as the blocks are: a block whose fio log held no whole second
        has no share, and one side's mean over other blocks than the other's compared
        different seconds of the host (S2-17's plain twin known in 1 block of 8, one that
        ran 4.7 % over its setting, against its encrypted twin's 3 others)."""
        both = [(a, b) for a, b in self.shares if a is not None and b is not None]
        if not both:
            return None, None
        return (sum(a for a, _ in both) / len(both), sum(b for _, b in both) / len(both))


def evidence_details(seq: Sequential, blocks: Blocks) -> dict[str, object]:
    """What the results file keeps of a paired comparison: every block, every look and the
    levels used."""
    d = seq.design
    summary = seq.summary()
    return {
        "paired": {
            "kind": d.kind, "low": _finite(d.low), "high": _finite(d.high),
            "fail_margin": d.fail_margin, "pairs": len(seq.all_pairs), "looks_planned": list(d.looks),
            "differences": seq.all_pairs, "blocks": blocks.as_dict(),
            "looks": [look.as_dict() for look in seq.looks],
            "levels": {"pass_per_look": d.pass_level, "pass": d.pass_alpha,
                       "first_stage_per_look": d.first_level,
                       "confirming_stage": d.confirm_level,
                       "false_fail_bound": d.false_fail_bound, "fail_share": d.fail_alpha},
            "mean": summary.mean if summary else None,
            "sd": summary.sd if summary else None,
            "variance_inflation": summary.inflation if summary else None,
        }
    }


def describe_looks(seq: Sequential, to_text: object) -> str:
    """What the looks said, in one sentence; ``to_text`` turns a bound on d's scale into
    the claim's words."""
    assert callable(to_text)
    d = seq.design
    parts = []
    for look in seq.looks:
        if look.stage == "confirm":
            parts.append(f"a fresh stage of {look.pairs} pairs confirmed "
                         f"{'it' if look.said == FAIL else 'nothing'} "
                         f"({_bounds_text(d, look, to_text)})")
        elif look.said == FAIL:
            parts.append(f"after {look.pairs} pairs the first stage put it beyond the bar "
                         f"({_bounds_text(d, look, to_text)})")
        elif look.said == PASS:
            parts.append(f"after {look.pairs} pairs {_bounds_text(d, look, to_text)}")
        else:
            parts.append(f"after {look.pairs} pairs {_bounds_text(d, look, to_text)}, "
                         "not yet decided")
    return "; ".join(parts)


def _bounds_text(d: Design, look: Look, to_text: object) -> str:
    assert callable(to_text)
    level = level_text(look.level)
    if d.kind == AT_LEAST:
        side = "at most" if look.said == FAIL else "at least"
        value = look.high if look.said == FAIL else look.low
        return f"{side} {to_text(value)} at level {level}"
    if d.kind == AT_MOST:
        side = "at least" if look.said == FAIL else "at most"
        value = look.low if look.said == FAIL else look.high
        return f"{side} {to_text(value)} at level {level}"
    return f"between {to_text(look.low)} and {to_text(look.high)} at level {level} each way"
