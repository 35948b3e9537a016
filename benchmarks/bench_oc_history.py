"""The history gate over the noise cells of the one-volume rules (figures for
docs/benchmarks.md, "The history gate over the cells").

    python3 benchmarks/bench_oc_history.py [SERIES]   # default 2000 series a cell and length
    python3 benchmarks/bench_oc_history.py table RESULT.json

``ebsperf history`` fails a check on a change for the worse within its last 10 runs or on a
drift for the worse (:func:`pytest_ebsperf.trends.analysis.gate`, the same function the
command calls: nothing is re-implemented here). Its sample is a series of runs, each run one
check's mean, so a cell of the one-volume table reaches it through the run's mean:

* **second cells** (bench_oc.py's): each run is the mean of a 60 s check whose seconds follow
  the cell (AR(1) at lag-1 correlation 0, 0.5, 0.8 and CV 2, 5, 10 %; a neighbour stepping
  every 20 s; 2 s stalls to 10 % in 0.2 % and 1 % of seconds; a linear drift of +-20 % within
  each check), the runs independent of each other;
* **run cells**: what the second cells cannot show, runs that are not independent: AR(1)
  between runs at lag-1 correlation 0.3, 0.5 and 0.8 (CV 2 % a run), and a host whose load
  steps between two levels 3 % apart every 5 runs on average.

Every series is flat (no change, no drift), so each alarm is false; the level it is measured
against is the gate's own, ``alpha + drift_alpha`` (0.015), with a Wilson 95 % interval.
"Healthy PASS" is the share of flat series the gate lets through; "said correlated" the share
of the alarms that ``ebsperf history`` printed with "these runs are correlated" (the runs'
lag-1 correlation around the fit, :func:`pytest_ebsperf.trends.changes.run_correlation`).

    python3 benchmarks/bench_oc_history.py corrections [SERIES]

measures two corrections for runs correlated with each other that were tried and not
adopted (an AR(1) bootstrap confirming each step at the runs' own estimated correlation, and
a block permutation test), on flat series whose runs are AR(1) and on independent runs with
a real step: what each does to false alarms and to the power to see the step.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import numpy as np
from bench_oc import CELLS, _cell_text, _noise
from bench_verdicts import _wilson

from pytest_ebsperf.trends.analysis import gate
from pytest_ebsperf.trends.changes import (
    DEFAULT_ALPHA,
    DEFAULT_DRIFT_ALPHA,
    MIN_SIZE,
    run_correlation,
    split_statistic,
)

LEVEL = DEFAULT_ALPHA + DEFAULT_DRIFT_ALPHA
LENGTHS = (8, 20, 50)
KEYS = ("phi", "cv", "neighbour", "stalls", "drift", "run_phi", "run_steps")
RUN_CELLS: list[dict[str, Any]] = [
    {"run_phi": 0.3}, {"run_phi": 0.5}, {"run_phi": 0.8}, {"run_steps": 5},
]


def _runs(rng: Any, cell: dict[str, Any], series: int, length: int) -> Any:
    """``series`` flat series of ``length`` runs (relative run means, mean 1) in ``cell``."""
    if "run_phi" in cell:
        phi, cv = cell["run_phi"], 0.02
        x = np.empty((series, length))
        x[:, 0] = rng.normal(0.0, cv, series)
        for t in range(1, length):
            x[:, t] = phi * x[:, t - 1] + rng.normal(0.0, cv * np.sqrt(1 - phi * phi), series)
        return 1.0 + x
    if "run_steps" in cell:
        state = rng.random(series) < 0.5
        level = np.empty((series, length))
        for t in range(length):
            state = np.where(rng.random(series) < 1 / cell["run_steps"], ~state, state)
            level[:, t] = np.where(state, 1.015, 0.985)
        return level * rng.normal(1.0, 0.01, (series, length))
    extras = {k: cell.get(k, d) for k, d in (("neighbour", False), ("stalls", 0.0),
                                             ("drift", 0.0))}
    seconds = _noise(rng, series * length, cell["phi"], cell["cv"], **extras)
    return seconds.mean(axis=1).reshape(series, length)


def _row(job: tuple[int, dict[str, Any], int, int]) -> dict[str, Any]:
    index, cell, length, series = job
    rng = np.random.default_rng(31 + index)
    alarms = steps = drifts = flagged = 0
    for runs in _runs(rng, cell, series, length) * 1000.0:
        values = [float(v) for v in runs]
        changes, worse, moving = gate(values)
        alarms += worse is not None or moving is not None
        steps += worse is not None
        drifts += moving is not None
        if worse is not None or moving is not None:
            said = run_correlation(values, changes, moving)
            flagged += said is not None and said.correlated
    low, high = _wilson(alarms, series)
    ok_low, ok_high = _wilson(series - alarms, series)
    row = {**cell, "runs_in_series": length, "series": series,
           "false_alarm_over_level": alarms / series / LEVEL,
           "wilson_over_level": [low / LEVEL, high / LEVEL],
           "step_alarms": steps / series, "drift_alarms": drifts / series,
           "alarms_said_correlated": flagged / alarms if alarms else None,
           "healthy_pass": 1 - alarms / series, "healthy_wilson": [ok_low, ok_high]}
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def cells(series: int, processes: int = 2) -> list[dict[str, Any]]:
    from multiprocessing import Pool

    jobs = [(i, cell, length, series) for i, (cell, length) in enumerate(
        (c, n) for c in [*CELLS, *RUN_CELLS] for n in LENGTHS)]
    with Pool(processes) as pool:
        return pool.map(_row, jobs, chunksize=1)


def _text(row: dict[str, Any]) -> str:
    if "run_phi" in row:
        return f"runs AR(1), phi {row['run_phi']:g}, CV 2 % a run"
    if "run_steps" in row:
        return f"host load steps 3 % every {row['run_steps']} runs"
    return _cell_text(row) + " (seconds of 60 s runs)"


def table(found: dict[str, Any]) -> str:
    lines = [("| cell | runs | false alarm / level (Wilson 95 %) | steps / drifts | "
              "healthy PASS (Wilson 95 %) | alarms said correlated |"), "|---|---|---|---|---|---|"]
    for row in found["rows"]:
        low, high = row["wilson_over_level"]
        ok_low, ok_high = row["healthy_wilson"]
        share = row.get("alarms_said_correlated")
        said = "-" if share is None else f"{share:.0%}"
        lines.append(
            f"| {_text(row)} | {row['runs_in_series']} | {row['false_alarm_over_level']:.2f} "
            f"({low:.2f}-{high:.2f}) | {row['step_alarms']:.2%} / {row['drift_alarms']:.2%} "
            f"| {row['healthy_pass']:.3f} ({ok_low:.3f}-{ok_high:.3f}) | {said} |")
    return "\n".join(lines)


# -- corrections tried and not adopted -------------------------------------------------------
def _max_q(x: Any) -> Any:
    """The gate's split statistic (its best split's Q) of each row of ``x``, at once."""
    n = x.shape[1]
    sums = np.cumsum(x, axis=1)
    t = np.arange(MIN_SIZE, n - MIN_SIZE + 1)
    left = sums[:, t - 1]
    diff = left / t - (sums[:, -1:] - left) / (n - t)
    return (t * (n - t) / n * diff ** 2).max(axis=1)


def _ar1(rng: Any, rows: int, n: int, phi: float, innovation: float) -> Any:
    x = np.empty((rows, n))
    x[:, 0] = rng.normal(0.0, innovation / math.sqrt(max(1e-9, 1 - phi * phi)), rows)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + rng.normal(0.0, innovation, rows)
    return x


def _ar1_confirms(x: Any, rng: Any, shuffles: int = 999) -> bool:
    """A step confirmed by a parametric AR(1) bootstrap at the runs' own lag-1 correlation
    around the best split (plus its bias, (1 + 3 phi) / (n / 2)), at the gate's alpha."""
    n = len(x)
    t, observed = split_statistic(list(x))
    r = np.concatenate([x[:t] - x[:t].mean(), x[t:] - x[t:].mean()])
    phi = float((np.sum(r[1:t] * r[:t - 1]) + np.sum(r[t + 1:] * r[t:-1])) / np.sum(r * r))
    phi = min(0.95, phi + (1 + 3 * phi) / (n / 2))
    if phi <= 0:
        return True
    innovation = math.sqrt(float(np.sum(r * r)) / (n - 2) * (1 - phi * phi))
    simulated = _max_q(_ar1(rng, shuffles, n, phi, innovation))
    return bool((np.sum(simulated >= observed) + 1) / (shuffles + 1) <= DEFAULT_ALPHA)


def _block_alarm(x: Any, rng: Any, shuffles: int = 499) -> bool:
    """A step for the worse within the last 10 runs by a block permutation test (blocks of
    n^(1/3) runs shuffled whole, Kirch 2007), at the gate's alpha."""
    n = len(x)
    t, observed = split_statistic(list(x))
    size = max(1, round(n ** (1 / 3)))
    blocks = [np.arange(n)[i:i + size] for i in range(0, n, size)]
    shuffled = np.array([x[np.concatenate([blocks[k] for k in rng.permutation(len(blocks))])]
                         for _ in range(shuffles)])
    p = (np.sum(_max_q(shuffled) >= observed) + 1) / (shuffles + 1)
    return bool(p <= DEFAULT_ALPHA and x[t:].mean() < x[:t].mean() and t >= n - 10)


def corrections(series: int) -> list[dict[str, Any]]:
    """Step alarms of the gate, of the gate confirmed by the AR(1) bootstrap, and of the
    block permutation test, per cell and length."""
    rows = []
    cells = [("flat, runs AR(1) phi", phi) for phi in (0.0, 0.5, 0.8)] + [
        ("independent runs, a step of -5 % over the last 5 runs", 0.05),
        ("independent runs, a step of -10 % over the last 3 runs", 0.10)]
    for index, (name, value) in enumerate(cells):
        for n in LENGTHS:
            rng = np.random.default_rng(71 + index)
            if name.startswith("flat"):
                x = 1000 * (1 + _ar1(rng, series, n, value, 0.02 * math.sqrt(1 - value ** 2)))
            else:
                x = 1000 * rng.normal(1.0, 0.02, (series, n))
                x[:, n - (5 if value == 0.05 else 3):] *= 1 - value
            gate_alarms = confirmed = block = 0
            for runs in x:
                _, worse, _ = gate([float(v) for v in runs])
                gate_alarms += worse is not None
                confirmed += worse is not None and _ar1_confirms(runs, rng)
                block += _block_alarm(runs, rng)
            rows.append({"cell": name, "value": value, "runs": n, "series": series,
                         "gate": gate_alarms / series, "ar1_confirmed": confirmed / series,
                         "block_permutation": block / series})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def main(argv: list[str]) -> None:
    if argv and argv[0] == "corrections":
        print(json.dumps(corrections(int(argv[1]) if len(argv) > 1 else 1000), indent=1))
        return
    if argv and argv[0] == "table":
        print(table(json.loads(Path(argv[1]).read_text())))
        return
    series = int(argv[0]) if argv else 2000
    rows = sorted(cells(series), key=lambda r: ([*CELLS, *RUN_CELLS].index(
        {k: v for k, v in r.items() if k in KEYS}), r["runs_in_series"]))
    print(json.dumps({"series": series, "level": LEVEL, "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
