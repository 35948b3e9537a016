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
"Healthy PASS" is the share of flat series the gate lets through.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's package

import numpy as np
from bench_oc import CELLS, _cell_text, _noise
from bench_verdicts import _wilson

from pytest_ebsperf.trends.analysis import gate
from pytest_ebsperf.trends.changes import DEFAULT_ALPHA, DEFAULT_DRIFT_ALPHA

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
    alarms = steps = drifts = 0
    for values in _runs(rng, cell, series, length) * 1000.0:
        _, worse, moving = gate([float(v) for v in values])
        alarms += worse is not None or moving is not None
        steps += worse is not None
        drifts += moving is not None
    low, high = _wilson(alarms, series)
    ok_low, ok_high = _wilson(series - alarms, series)
    row = {**cell, "runs_in_series": length, "series": series,
           "false_alarm_over_level": alarms / series / LEVEL,
           "wilson_over_level": [low / LEVEL, high / LEVEL],
           "step_alarms": steps / series, "drift_alarms": drifts / series,
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
              "healthy PASS (Wilson 95 %) |"), "|---|---|---|---|---|"]
    for row in found["rows"]:
        low, high = row["wilson_over_level"]
        ok_low, ok_high = row["healthy_wilson"]
        lines.append(
            f"| {_text(row)} | {row['runs_in_series']} | {row['false_alarm_over_level']:.2f} "
            f"({low:.2f}-{high:.2f}) | {row['step_alarms']:.2%} / {row['drift_alarms']:.2%} "
            f"| {row['healthy_pass']:.3f} ({ok_low:.3f}-{ok_high:.3f}) |")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv and argv[0] == "table":
        print(table(json.loads(Path(argv[1]).read_text())))
        return
    series = int(argv[0]) if argv else 2000
    rows = sorted(cells(series), key=lambda r: ([*CELLS, *RUN_CELLS].index(
        {k: v for k, v in r.items() if k in KEYS}), r["runs_in_series"]))
    print(json.dumps({"series": series, "level": LEVEL, "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
