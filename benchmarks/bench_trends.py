"""Speed of the history: 1,000 runs x 40 checks read, analysed and drawn (goal: < 10 s).

    python3 benchmarks/bench_trends.py [RUNS] [CHECKS]

Builds a history store of RUNS runs (default 1,000) of CHECKS checks each (default 40) from a
real results file (tests/data/results/baseline.json, an emulated io1 read), each check's
figures scaled run by run with 2 % noise: most checks steady, one in five with a 5 % step at
a random run, one in ten drifting 3 % a week over its last 100 runs. Times, each the median of
3 rounds:

- import: appending every run to the store (not part of the goal: runs append one at a time);
- read: every check's series out of the store;
- analyse: change points of every series (permutation tests at the default alpha);
- draw: the HTML page with one chart per check;
- command: ``python3 -m pytest_ebsperf history --db ... --html ...`` end to end (a fresh
  interpreter: read, analyse, table and page).
"""

from __future__ import annotations

import copy
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_ebsperf.trends.analysis import analyse
from pytest_ebsperf.trends.page import render
from pytest_ebsperf.trends.store import HistoryStore


def _levels(checks: int, runs: int, rng: random.Random) -> list[list[float]]:
    """Each check's level run by run (1.0 = as the baseline file measured)."""
    out = []
    for k in range(checks):
        level = [1.0] * runs
        if k % 5 == 1:  # a 5 % step
            at = rng.randrange(runs // 10, runs)
            level = [1.0 if i < at else 0.95 for i in range(runs)]
        elif k % 10 == 3:  # 3 % a week (7 nightly runs) over the last 100
            level = [1.0 if i < runs - 100 else 1.0 - 0.03 * (i - runs + 100) / 7
                     for i in range(runs)]
        out.append([v * rng.gauss(1.0, 0.02) for v in level])
    return out


def documents(runs: int, checks: int) -> list[dict[str, Any]]:
    base = json.loads((ROOT / "tests" / "data" / "results" / "baseline.json").read_text())
    check0, measurement0 = base["checks"][0], base["measurements"][0]
    rng = random.Random(24)
    levels = _levels(checks, runs, rng)
    docs = []
    for run in range(runs):
        doc = copy.deepcopy({k: v for k, v in base.items()
                             if k not in ("checks", "measurements")})
        doc["created"] = f"2024-01-01T02:00:00+00:00#{run:04d}"
        doc["environment"]["kernel"] = "6.1" if run < runs // 2 else "6.18"
        doc["checks"], doc["measurements"] = [], []
        for k in range(checks):
            level = levels[k][run]
            check = copy.deepcopy(check0)
            check["what"] = f"{check0['what']} #{k}"
            check["measured"]["value"] *= level
            check["measurement_ids"] = [k]
            measurement = copy.deepcopy(measurement0)
            measurement["id"] = k
            series = measurement["series"]["total_iops"]
            series["values"] = [v * level for v in series["values"]]
            doc["checks"].append(check)
            doc["measurements"].append(measurement)
        docs.append(doc)
    return docs


def _median(times: list[float]) -> float:
    return round(statistics.median(times), 3)


def measure(runs: int = 1000, checks: int = 40, rounds: int = 3) -> dict[str, Any]:
    out: dict[str, Any] = {"runs": runs, "checks": checks}
    docs = documents(runs, checks)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "history.sqlite"
        started = time.perf_counter()
        with HistoryStore(db) as store:
            for doc in docs:
                store.append(doc, source="bench")
        out["import_s"] = round(time.perf_counter() - started, 3)
        out["db_mib"] = round(db.stat().st_size / 2**20, 1)
        read, analysed, drawn, command = [], [], [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            with HistoryStore(db) as store:
                series = store.series()
            t1 = time.perf_counter()
            trends = analyse(series)
            t2 = time.perf_counter()
            page = render(trends, title="bench", since=10, alpha=0.01)
            t3 = time.perf_counter()
            read.append(t1 - t0)
            analysed.append(t2 - t1)
            drawn.append(t3 - t2)
            t4 = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "pytest_ebsperf", "history", "--db", str(db),
                 "--html", str(Path(tmp) / "t.html")], capture_output=True, text=True,
                cwd=ROOT, check=False)
            command.append(time.perf_counter() - t4)
            if done.returncode not in (0, 1):
                raise SystemExit(done.stderr)
        out.update(read_s=_median(read), analyse_s=_median(analysed), draw_s=_median(drawn),
                   total_s=round(_median(read) + _median(analysed) + _median(drawn), 3),
                   command_s=_median(command), page_mib=round(len(page) / 2**20, 2),
                   series=len(trends), changes=sum(len(t.changes) for t in trends),
                   worse_recently=sum(t.worsening is not None for t in trends))
    return out


if __name__ == "__main__":
    print(json.dumps(measure(*(int(a) for a in sys.argv[1:3])), indent=1))
