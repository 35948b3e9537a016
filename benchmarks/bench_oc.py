"""Operating characteristics of the one-volume rules, second by second, over noise cells
(figures for docs/benchmarks.md, "Every rule over every cell").

    python3 benchmarks/bench_oc.py [RUNS] [ALPHA] [RULE]  # default 2000 runs a cell, alpha 0.05;
                                                      # RULE: floor, cap or duty (default all)
    python3 benchmarks/bench_oc.py pairs [RUNS] [ALPHA]  # comparisons (100000, 0.01)
    python3 benchmarks/bench_oc.py table RESULT.json  # the Markdown table of a result
    python3 benchmarks/bench_oc.py bar RUNS ALPHA RULE CELL  # one row's false FAILs (CELL:
                                                      # an index into CELLS; RULE floor, or cap:
                                                      # its upper tolerance)
    python3 benchmarks/bench_oc.py longer [RUNS] [ALPHA]  # seconds for a 99 % healthy PASS
    python3 benchmarks/bench_oc.py longer-table RESULT.json...  # one pair of columns each

Each simulated check is a 60 s per-second series judged the way a live check judges it: the
project's own live stop (:func:`pytest_ebsperf.verdicts.stop_rule.settled`) is asked after
every second and, once it stops fio or the planned seconds are in, the verdict is the final
rule's (:func:`pytest_ebsperf.verdicts.verdict.lower_check` for the floor and the duty cycle,
:func:`~pytest_ebsperf.verdicts.verdict.above_cap` for the cap's upper tolerance) on the
seconds seen. Nothing is re-implemented here: the bench only makes the seconds.

Rules, each at the bar (a volume exactly at what the claim allows, where a FAIL is false):

* ``floor``: FLOOR, the mean at exactly 90 % of the figure (its threshold);
* ``cap upper``: CAP "at most 110 % on average", the mean at exactly 110 %;
* ``duty count``: CAP's duty cycle (99 % of seconds at 90 % or more), a volume whose seconds
  fall below 90 % exactly 1 % of the time (the seconds' level is set so they do).

Cells: AR(1) seconds with lag-1 correlation 0, 0.5, 0.8 and CV 2, 5, 10 % (stationary); at
phi 0.5 and CV 5 %: a neighbour whose load steps every 20 s on average (the level alternates
between 1.075 and 0.925, mean kept), 2 s stalls to 10 % of the rate beginning in 0.2 % and 1 %
of seconds (the rest raised so the mean stays at the bar), a common linear drift of +20 % and
-20 % over the check (mean kept); for the duty count also misses in spells of 3 and 5 s on
average (a two-state chain, the seconds otherwise 1 % noise). The false-FAIL rate is given
over the check's level with a Wilson 95 % interval, and the healthy PASS rate (the same
cell with the mean 10 % better than the bar, and for the duty count a volume whose seconds
miss 0.1 % of the time) with its interval.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

import numpy as np
from bench_verdicts import _wilson  # one Wilson interval for the benches
from scipy.stats import norm

from pytest_ebsperf.awsmodel.types import CAP, FLOOR, Expectation
from pytest_ebsperf.verdicts import evidence, stop_rule
from pytest_ebsperf.verdicts.verdict import above_cap, lower_check

PLANNED = 60
DUTY = 0.99
CELLS: list[dict[str, Any]] = [
    *({"phi": phi, "cv": cv} for phi in (0.0, 0.5, 0.8) for cv in (0.02, 0.05, 0.10)),
    {"phi": 0.5, "cv": 0.05, "neighbour": True},
    {"phi": 0.5, "cv": 0.05, "stalls": 0.002},
    {"phi": 0.5, "cv": 0.05, "stalls": 0.01},
    {"phi": 0.5, "cv": 0.05, "drift": 0.20},
    {"phi": 0.5, "cv": 0.05, "drift": -0.20},
]
SPELL_CELLS = [{"spell": 3.0}, {"spell": 5.0}]


def _noise(rng: Any, runs: int, phi: float, cv: float, neighbour: bool = False,
           stalls: float = 0.0, drift: float = 0.0, planned: int = PLANNED) -> Any:
    """Relative seconds (mean 1): AR(1) of stationary CV ``cv``, times the cell's extras
    (``planned`` of them a run)."""
    x = np.empty((runs, planned))
    x[:, 0] = rng.normal(0.0, cv, runs)
    innovation = cv * math.sqrt(1.0 - phi * phi)
    for t in range(1, planned):
        x[:, t] = phi * x[:, t - 1] + rng.normal(0.0, innovation, runs)
    v = 1.0 + x
    if neighbour:
        state = rng.random(runs) < 0.5
        level = np.empty((runs, planned))
        for t in range(planned):
            state = np.where(rng.random(runs) < 1 / 20, ~state, state)
            level[:, t] = np.where(state, 1.075, 0.925)
        v *= level
    if stalls:
        begins = rng.random((runs, planned)) < stalls
        stalled = begins | np.roll(begins, 1, axis=1) & (np.arange(planned) > 0)
        # the mean kept at the bar: the other seconds make up for the stalls
        v = np.where(stalled, 0.10 * v, v) / (1.0 - 0.9 * 2 * stalls)
    if drift:
        v *= 1.0 + drift * (np.arange(planned) / (planned - 1) - 0.5)
    return v


def _chain(rng: Any, runs: int, share: float, spell: float, planned: int = PLANNED) -> Any:
    """Seconds of a volume missing ``share`` of its seconds in spells of ``spell`` s on
    average (missed seconds at 50-89 %, the others at 100 % with 1 % noise)."""
    stay = 1.0 - 1.0 / spell
    enter = share * (1.0 - stay) / (1.0 - share)
    missing = rng.random(runs) < share
    v = np.empty((runs, planned))
    for t in range(planned):
        if t:
            u = rng.random(runs)
            missing = np.where(missing, u < stay, u < enter)
        v[:, t] = np.where(missing, rng.uniform(0.50, 0.89, runs),
                           rng.normal(1.0, 0.01, runs))
    return v


def _duty_level(cell: dict[str, Any], share: float, rng: Any) -> float:
    """The mean level at which a cell's seconds fall below 0.9 in ``share`` of them."""
    if not any(cell.get(k) for k in ("neighbour", "stalls", "drift")):
        return 0.9 / (1.0 + cell["cv"] * norm.ppf(share))
    v = _noise(rng, 20_000, cell["phi"], cell["cv"], cell.get("neighbour", False),
               cell.get("stalls", 0.0), cell.get("drift", 0.0)).ravel()
    return float(0.9 / np.quantile(v, share))


def _judge(values: Any, expectation: Expectation, policy: evidence.Policy, rule: str
           ) -> tuple[str, float | None]:
    """The live procedure on one run's seconds: (FAIL, PASS or OPEN; for an OPEN mean, the
    seconds its interval says would decide)."""
    seen: list[float] = []
    for value in values:
        seen.append(float(value))
        if stop_rule.settled(seen, expectation, policy, planned=PLANNED):
            break
    if rule == "cap upper":
        state, _, interval = above_cap(seen, expectation.ceiling or 0.0, expectation.duty,
                                       policy, planned=PLANNED)
    else:
        check = lower_check(seen, expectation, policy, planned=PLANNED)
        state, interval = check.state, check.interval
    needed = getattr(interval, "needed_s", None) if state == evidence.OPEN else None
    return str(state), needed


def _rates(judged: list[tuple[str, float | None]], want: str, level: float | None
           ) -> dict[str, Any]:
    outcomes = [o for o, _ in judged]
    hits = sum(o == want for o in outcomes)
    low, high = _wilson(hits, len(outcomes))
    if level is None:
        needed = sorted(n for o, n in judged if o == evidence.OPEN and n)
        return {"rate": hits / len(outcomes), "wilson": [low, high],
                "undecided": outcomes.count(evidence.OPEN) / len(outcomes),
                "median_needed_s": needed[len(needed) // 2] if needed else None}
    return {"rate_over_level": hits / len(outcomes) / level,
            "wilson_over_level": [low / level, high / level], "hits": hits}


def _cell_rows(job: tuple[int, dict[str, Any], int, float, str | None]
               ) -> list[dict[str, Any]]:
    """Every rule's rows of one cell (a worker process's share); ``only``: one rule's."""
    index, cell, runs, alpha, only = job
    rng = np.random.default_rng(17 + index)
    policy = evidence.Policy(alpha, 3.0)
    floor = Expectation("X", "floor", FLOOR, 1.0, "IOPS", None, low=0.9, high=None)
    cap = Expectation("X", "cap", CAP, 1.0, "IOPS", None, low=0.9, high=1.1, duty=DUTY)
    rows: list[dict[str, Any]] = []

    def row(rule: str, at_bar: Any, fine: Any, how: str) -> None:
        if only is not None and not rule.startswith(only):
            return
        expectation = floor if rule == "floor" else cap
        rows.append({"rule": rule, **cell, "runs": runs,
                     "false_fail": _rates([_judge(v, expectation, policy, how) for v in at_bar],
                                          evidence.FAIL, alpha),
                     "healthy_pass": _rates([_judge(v, expectation, policy, how) for v in fine],
                                            evidence.PASS, None)})
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)

    if "spell" in cell:
        row("duty count", _chain(rng, runs, 1.0 - DUTY, cell["spell"]),
            _chain(rng, runs, 0.001, cell["spell"]), "duty")
        return rows
    extras = {k: cell.get(k, d) for k, d in (("neighbour", False), ("stalls", 0.0),
                                             ("drift", 0.0))}
    base = _noise(rng, runs, cell["phi"], cell["cv"], **extras)
    healthy = _noise(rng, runs, cell["phi"], cell["cv"], **extras)
    row("floor", base * 0.9, healthy * 0.99, "floor")
    row("cap upper", base * 1.1, healthy * 1.0, "cap upper")
    row("duty count", base * _duty_level(cell, 1.0 - DUTY, rng),
        healthy * _duty_level(cell, 0.001, rng), "duty")
    return rows


def rule_cells(runs: int, alpha: float, processes: int = 2, only: str | None = None
               ) -> list[dict[str, Any]]:
    """Every rule (or ``only`` the one named) over every cell, the cells shared out over
    ``processes`` processes."""
    from multiprocessing import Pool

    cells = [*CELLS, *SPELL_CELLS] if only in (None, "duty") else CELLS
    jobs = [(i, cell, runs, alpha, only) for i, cell in enumerate(cells)]
    with Pool(processes) as pool:
        return [r for rows in pool.map(_cell_rows, jobs, chunksize=1) for r in rows]


# -- comparisons: the whole paired procedure over the same cells --------------------------
#: A real volume's block: 10 s measured after a 2 s ramp, about 1 s to start fio.
BLOCK_S, RAMP_S, START_S = 10, 2, 1
PAIR_CELLS = CELLS  # the one-volume rules' cells, so both tables read alike
PAIR_S = BLOCK_S + RAMP_S + START_S  # one block's seconds in the pairs' simulated time


def pair_differences(rng: Any, runs: int, pairs: int, ratio: float, cell: dict[str, Any]
                     ) -> Any:
    """``log(A_j) - log(B_j)`` of simulated pairs in the plugin's balanced order (A B, then
    B A): each side's seconds are AR(1) noise running in wall time; a neighbour steps the
    host's level between 1.075 and 0.925 (every 20 s on average) for both sides; stalls (2 s
    at 10 % of the rate) begin on A's seconds only; a drift changes both sides' level
    linearly over the whole comparison."""
    phi, cv = cell["phi"], cell["cv"]
    per = RAMP_S + BLOCK_S + START_S
    total_s = 2 * pairs * per
    innovation = cv * math.sqrt(1 - phi * phi)
    xa, xb = rng.normal(0.0, cv, runs), rng.normal(0.0, cv, runs)
    host = rng.random(runs) < 0.5
    stall_left = np.zeros(runs, dtype=int)
    out = np.empty((runs, pairs))
    clock = 0
    for j in range(pairs):
        means = {}
        for side in ((0, 1) if j % 2 == 0 else (1, 0)):
            total = np.zeros(runs)
            for second in range(per):
                xa = phi * xa + rng.normal(0.0, innovation, runs)
                xb = phi * xb + rng.normal(0.0, innovation, runs)
                if cell.get("neighbour"):
                    host = np.where(rng.random(runs) < 1 / 20, ~host, host)
                clock += 1
                if not RAMP_S <= second < RAMP_S + BLOCK_S:
                    continue
                level = np.where(host, 1.075, 0.925) if cell.get("neighbour") else 1.0
                if cell.get("drift"):
                    level = level * (1.0 + cell["drift"] * (clock / total_s - 0.5))
                value = level * (1.0 + (xa if side == 0 else xb))
                if side == 0 and cell.get("stalls"):
                    begin = (stall_left == 0) & (rng.random(runs) < cell["stalls"])
                    stall_left = np.where(begin, 2, stall_left)
                    value = np.where(stall_left > 0, 0.10 * value, value)
                    stall_left = np.maximum(stall_left - 1, 0)
                total += value
            means[side] = total / BLOCK_S
        # stalls on A: its other seconds make up for them, the long-run ratio at ``ratio``
        kept_up = 1.0 - 0.9 * 2 * cell.get("stalls", 0.0)
        out[:, j] = np.log(ratio * means[0] / kept_up) - np.log(means[1])
    return out


def _designs(fail_alpha: float) -> list[tuple[str, Any, float, float]]:
    from pytest_ebsperf.verdicts import comparison

    return [
        ("S0-08, at least 3x", comparison.ratio_design(comparison.AT_LEAST, 3.0,
                                                        fail_alpha=fail_alpha), 3.0, 4.7),
        ("S1-03, at least 0.9x", comparison.ratio_design(comparison.AT_LEAST, 0.9,
                                                          fail_alpha=fail_alpha), 0.9, 1.0),
        ("S2-17, within 5 %", comparison.ratio_design(comparison.WITHIN, 0.05,
                                                       fail_alpha=fail_alpha), 1.05, 1.0),
    ]


def _pair_row(job: tuple[int, int, dict[str, Any], int, float]) -> dict[str, Any]:
    """One design over one cell (a worker process's share)."""
    from bench_verdicts import decide_vectorized

    from pytest_ebsperf.verdicts import comparison

    index, which, cell, runs, fail_alpha = job
    name, design, bar, healthy = _designs(fail_alpha)[which]
    rng = np.random.default_rng(23 + index)
    pairs = 2 * design.looks[-1]
    at_bar, _ = decide_vectorized(np, design, pair_differences(rng, runs, pairs, bar, cell))
    fine, used = decide_vectorized(np, design, pair_differences(rng, runs, pairs, healthy,
                                                                cell))
    fails = int((at_bar == -1).sum())
    low, high = _wilson(fails, runs)
    level = design.fail_alpha  # the check's stated level (the design aims at half of it)
    row: dict[str, Any] = {"rule": name, **cell, "runs": runs, "false_fail": {
        "rate_over_level": fails / runs / level, "hits": fails,
        "wilson_over_level": [low / level, high / level]}}
    passes = int((fine == 1).sum())
    plow, phigh = _wilson(passes, runs)
    row["healthy_pass"] = {"rate": passes / runs, "wilson": [plow, phigh],
                           "undecided": float((fine == 0).mean()), "median_needed_s": None,
                           "median_pairs": float(np.median(used[fine == 1])) if passes
                           else None}
    if passes / runs < 0.99:  # how many pairs a check would need to pass 99 % of the time
        row["healthy_pass"]["pairs_for_99"] = _pairs_for_99(rng, design, healthy, cell)
    if design.kind == comparison.WITHIN:  # TOST's own error: a PASS at the band's edge
        wrong = int((at_bar == 1).sum())
        wlow, whigh = _wilson(wrong, runs)
        row["false_pass"] = {"rate_over_level": wrong / runs / design.pass_alpha,
                             "wilson_over_level": [wlow / design.pass_alpha,
                                                   whigh / design.pass_alpha]}
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


#: The longest check :func:`_pairs_for_99` tries: looks doubling up to this many pairs.
LONGEST_LOOK = 512


def _pairs_for_99(rng: Any, design: Any, healthy: float, cell: dict[str, Any],
                  runs: int = 3000) -> int | None:
    """The fewest pairs at which the same design with more looks (4, 8, ... up to
    :data:`LONGEST_LOOK`, its PASS level spread over all of them) passes healthy pairs 99 %
    of the time; None when even the longest does not."""
    from dataclasses import replace

    from bench_verdicts import decide_vectorized

    looks = tuple(2 ** i for i in range(2, LONGEST_LOOK.bit_length()))
    longer = replace(design, looks=looks)
    outcome, used = decide_vectorized(np, longer, pair_differences(
        rng, runs, 2 * looks[-1], healthy, cell))
    for look in looks:
        if ((outcome == 1) & (used <= look)).mean() >= 0.99:
            return look
    return None


def pair_cells(runs: int, fail_alpha: float, processes: int = 2) -> list[dict[str, Any]]:
    """Each comparison design at its bar (false FAIL; for S2-17 also a false PASS at the
    band's edge) and on healthy pairs, over the cells, decided by the plugin's sequential
    design (vectorized as in ``bench_verdicts.decide_vectorized``, which checks itself
    against :class:`~pytest_ebsperf.verdicts.comparison.Sequential`)."""
    from multiprocessing import Pool

    jobs = [(i, which, cell, runs, fail_alpha)
            for i, (which, cell) in enumerate((w, c) for w in range(3) for c in PAIR_CELLS)]
    with Pool(processes) as pool:
        return pool.map(_pair_row, jobs, chunksize=1)


def _cell_text(row: dict[str, Any]) -> str:
    if "spell" in row:
        return f"misses in {row['spell']:g} s spells"
    text = f"phi {row['phi']:g}, CV {row['cv'] * 100:g} %"
    if row.get("neighbour"):
        text += ", neighbour every 20 s"
    if row.get("stalls"):
        text += f", 2 s stalls in {row['stalls'] * 100:g} % of seconds"
    if row.get("drift"):
        text += f", drift {row['drift'] * 100:+g} %"
    return text


def table(found: dict[str, Any]) -> str:
    """The rows as the Markdown table docs/benchmarks.md shows."""
    pairs = any("false_pass" in row or "median_pairs" in row["healthy_pass"]
                for row in found["rows"])
    last = ("| TOST false PASS / level | healthy: median pairs |" if pairs else
            "| undecided healthy: median s to decide |")
    lines = [("| rule | cell | false FAIL / level (Wilson 95 %) | healthy PASS (Wilson 95 %) "
              + last), "|---|---|---|---|---|" + ("---|" if pairs else "")]
    for row in found["rows"]:
        ff, ok = row["false_fail"], row["healthy_pass"]
        low, high = ff["wilson_over_level"]
        if pairs:
            fp = row.get("false_pass")
            end = (f"{fp['rate_over_level']:.2f} ({fp['wilson_over_level'][0]:.2f}-"
                   f"{fp['wilson_over_level'][1]:.2f})" if fp else "-")
            end += f" | {ok['median_pairs']:g}" if ok.get("median_pairs") else " | -"
            if "pairs_for_99" in ok:
                need = ok["pairs_for_99"]
                end += (f"; 99 % at {need} pairs ({need * 2 * PAIR_S:,} s)" if need else
                        f"; not 99 % within {LONGEST_LOOK} pairs")
        else:
            need = ok.get("median_needed_s")
            end = f"{need:,} s" if need else "-"
        lines.append(
            f"| {row['rule']} | {_cell_text(row)} | {ff['rate_over_level']:.2f} "
            f"({low:.2f}-{high:.2f}) | {ok['rate']:.3f} ({ok['wilson'][0]:.3f}-"
            f"{ok['wilson'][1]:.3f}) | {end} |")
    return "\n".join(lines)


# -- healthy power of longer checks: the seconds a check needs to PASS 99 % of the time --
#: The planned lengths tried, doubling from the suites' 60 s.
LONGER = tuple(60 * 2 ** i for i in range(8))  # 60 ... 7,680 s


def _judge_planned(values: Any, expectation: Expectation, policy: evidence.Policy, rule: str,
                   planned: int) -> str:
    """:func:`_judge` for a check planned for ``planned`` seconds, asking the live stop only
    at its mean's looks: a FLOOR's and a cap's mean stop only there, and a count's stop is
    its fixed-length test curtailed (the verdict at the end is the one it stopped on), so
    the outcome is the per-second procedure's."""
    seen = values
    for n in evidence.mean_looks(planned):
        if n < planned and stop_rule.settled([float(v) for v in values[:n]], expectation,
                                             policy, planned=planned):
            seen = values[:n]
            break
    seen = [float(v) for v in seen]
    if rule == "cap upper":
        return str(above_cap(seen, expectation.ceiling or 0.0, expectation.duty, policy,
                             planned=planned)[0])
    return str(lower_check(seen, expectation, policy, planned=planned).state)


def _longer_row(job: tuple[int, dict[str, Any], str, int, float]) -> dict[str, Any]:
    """One rule's healthy PASS rate in one cell at each planned length until it reaches
    0.99 (``runs`` simulated checks a length)."""
    index, cell, rule, runs, alpha = job
    rng = np.random.default_rng(1_000 + index)
    policy = evidence.Policy(alpha, 3.0)
    floor = Expectation("X", "floor", FLOOR, 1.0, "IOPS", None, low=0.9, high=None)
    cap = Expectation("X", "cap", CAP, 1.0, "IOPS", None, low=0.9, high=1.1, duty=DUTY)
    expectation = floor if rule == "floor" else cap
    found: list[dict[str, Any]] = []
    # the healthy volume's mean level (for the duty count: where its seconds miss 0.1 % of
    # the time; above the cap's 110 % no capped volume can be that healthy)
    healthy = {"floor": 0.99, "cap upper": 1.0}.get(rule) or (
        1.0 if "spell" in cell else _duty_level(cell, 0.001, rng))
    for planned in LONGER:
        if "spell" in cell:
            seconds = _chain(rng, runs, 0.001, cell["spell"], planned=planned)
        else:
            extras = {k: cell.get(k, d) for k, d in (("neighbour", False), ("stalls", 0.0),
                                                     ("drift", 0.0))}
            seconds = _noise(rng, runs, cell["phi"], cell["cv"], planned=planned, **extras)
            seconds = seconds * healthy
        passed = sum(_judge_planned(v, expectation, policy, rule, planned) == evidence.PASS
                     for v in seconds)
        low, high = _wilson(passed, runs)
        found.append({"planned_s": planned, "pass": passed / runs, "wilson": [low, high]})
        print(json.dumps({"rule": rule, **cell, **found[-1]}), file=sys.stderr, flush=True)
        if passed / runs >= 0.99 or healthy > 1.1:
            break
    return {"rule": rule, **cell, "runs": runs, "alpha": alpha, "lengths": found,
            "healthy_level": healthy,
            "seconds_for_99": found[-1]["planned_s"] if found[-1]["pass"] >= 0.99 else None}


def longer_cells(runs: int, alpha: float, processes: int = 2) -> list[dict[str, Any]]:
    """Every rule over every cell (the duty count also under spells), each at planned
    lengths doubling from 60 s until its healthy PASS rate reaches 0.99."""
    from multiprocessing import Pool

    jobs = [(i, cell, rule, runs, alpha) for i, (cell, rule) in enumerate(
        [(c, r) for c in CELLS for r in ("floor", "cap upper", "duty count")]
        + [(c, "duty count") for c in SPELL_CELLS])]
    with Pool(processes) as pool:
        return pool.map(_longer_row, jobs, chunksize=1)


def longer_table(results: list[dict[str, Any]]) -> str:
    """The Markdown table of :func:`longer_cells`: one pair of columns per result (level)."""
    head = "".join(f" healthy PASS at 60 s, level {r['alpha']:g} | seconds for 99 % |"
                   for r in results)
    lines = ["| rule | cell |" + head, "|---|---|" + "---|---|" * len(results)]
    for rows in zip(*(r["rows"] for r in results)):
        text = f"| {rows[0]['rule']} | {_cell_text(rows[0])} |"
        for row in rows:
            first, last = row["lengths"][0], row["lengths"][-1]
            if row["healthy_level"] > 1.1:
                need = (f"- (a volume missing 0.1 % of seconds here averages "
                        f"{row['healthy_level'] * 100:.0f} % of its figure, above the cap)")
            elif row["seconds_for_99"]:
                need = f"{row['seconds_for_99']:,} s ({last['pass']:.3f})"
            else:
                need = f"over {LONGER[-1]:,} s ({last['pass']:.3f} at {LONGER[-1]:,} s)"
            text += f" {first['pass']:.3f} | {need} |"
        lines.append(text)
    return "\n".join(lines)


def _bar_hits(job: tuple[int, int, float, str, int]) -> int:
    """False FAILs of ``runs`` checks of one rule at its bar in one cell (a process's share)."""
    seed, runs, alpha, rule, index = job
    rng = np.random.default_rng(seed)
    cell = CELLS[index]
    expectation = (Expectation("X", "floor", FLOOR, 1.0, "IOPS", None, low=0.9, high=None)
                   if rule == "floor" else
                   Expectation("X", "cap", CAP, 1.0, "IOPS", None, low=0.9, high=1.1, duty=DUTY))
    extras = {k: cell.get(k, d) for k, d in (("neighbour", False), ("stalls", 0.0),
                                             ("drift", 0.0))}
    values = _noise(rng, runs, cell["phi"], cell["cv"], **extras) * (
        0.9 if rule == "floor" else 1.1)
    policy = evidence.Policy(alpha, 3.0)
    how = "floor" if rule == "floor" else "cap upper"  # the cap's upper tolerance
    return sum(_judge(v, expectation, policy, how)[0] == evidence.FAIL for v in values)


def bar_cell(runs: int, alpha: float, rule: str, index: int, processes: int = 2
             ) -> dict[str, Any]:
    """One rule's false-FAIL rate in one cell (``index`` into CELLS) from ``runs`` checks,
    for a row the full table measured too coarsely."""
    from multiprocessing import Pool

    share = runs // processes
    with Pool(processes) as pool:
        hits = sum(pool.map(_bar_hits, [(1000 + index * 10 + k, share, alpha, rule, index)
                                        for k in range(processes)]))
    low, high = _wilson(hits, share * processes)
    return {"rule": rule, **CELLS[index], "runs": share * processes, "alpha": alpha,
            "hits": hits, "rate_over_level": hits / (share * processes) / alpha,
            "wilson_over_level": [low / alpha, high / alpha]}


def _count_and_level(argv: list[str], runs: int, alpha: float) -> tuple[int, float]:
    """A mode's ``[RUNS] [ALPHA]`` arguments, or its defaults."""
    return (int(argv[0]) if argv else runs, float(argv[1]) if len(argv) > 1 else alpha)


def main(argv: list[str]) -> None:
    from pathlib import Path

    mode, rest = (argv[0], argv[1:]) if argv else ("", [])
    if mode == "longer":
        runs, alpha = _count_and_level(rest, 500, 0.05)
        print(json.dumps({"runs": runs, "alpha": alpha,
                          "rows": longer_cells(runs, alpha)}, indent=1))
    elif mode == "pairs":
        runs, alpha = _count_and_level(rest, 100_000, 0.01)
        print(json.dumps({"runs": runs, "fail_alpha": alpha,
                          "rows": pair_cells(runs, alpha)}, indent=1))
    elif mode == "bar":  # bar RUNS ALPHA RULE CELL: one row's false FAILs, more runs
        runs, alpha = _count_and_level(rest, 20_000, 0.05)
        print(json.dumps(bar_cell(runs, alpha, rest[2], int(rest[3])), indent=1))
    elif mode == "longer-table":
        print(longer_table([json.loads(Path(name).read_text()) for name in rest]))
    elif mode == "table":
        print(table(json.loads(Path(rest[0]).read_text())))
    else:
        runs, alpha = _count_and_level(argv, 2000, 0.05)
        only = argv[2] if len(argv) > 2 else None
        print(json.dumps({"runs": runs, "alpha": alpha, "spell": 3.0,
                          "rows": rule_cells(runs, alpha, only=only)}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
