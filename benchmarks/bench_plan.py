"""How close the dry run's estimates are to what the checks really take (docs/benchmarks.md).

    sudo python3 benchmarks/bench_plan.py [ROUNDS]

Runs the main job's pytest command (every suite on emulated volumes, on as many pytest-xdist
workers as ``scripts/main.sh`` gives it) ROUNDS times
(default 1) with ``--junitxml``, and the same selection once with ``--ebsperf-plan`` (no fio).
For each check it sets the plan's "about" (typical) and "at most" (longest) seconds beside the
check's real duration from the JUnit report (set-up, call and tear-down: the measuring, fio's
starts, credit waits and any wait for the host's measuring lock). Reports: the share of checks
within 20 % of the estimate, the share that took longer than "at most", and the totals.
"""

from __future__ import annotations

import ast
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAIN_ARGS = ["suites", "--emulate", "--volume-count=4", "--emulate-latency=auto"]


def _main_job_workers() -> str:
    """The main job's ``-n``, as ``scripts/main.sh`` passes it."""
    found = re.findall(r" -n (\d+) ", (ROOT / "scripts" / "main.sh").read_text())
    return found[-1] if found else "2"


def _cases(path: Path) -> dict[str, dict[str, Any]]:
    """nodeid -> {time, skipped, plan} from a JUnit report."""
    found: dict[str, dict[str, Any]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        name = case.get("name", "")
        key = f"{classname}::{name}"
        plan = None
        for prop in case.iter("property"):
            if prop.get("name") == "ebsperf_plan":
                plan = ast.literal_eval(prop.get("value", "{}"))
        skipped = case.find("skipped")
        kind = (skipped.get("type") or "") if skipped is not None else ""
        outcome = ("failed" if case.find("failure") is not None or case.find("error") is not None
                   else kind.replace("ebsperf.", "") if kind.startswith("ebsperf.")
                   else "skipped" if skipped is not None else "passed")
        found[key] = {"time": float(case.get("time", "0")), "plan": plan,
                      "outcome": outcome,
                      "skipped": skipped is not None and not kind.startswith("ebsperf.")}
    return found


def _pytest(args: list[str], junit: Path) -> float:
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "pytest", *args, f"--junitxml={junit}", "-q",
                    "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True,
                   check=False, timeout=3600)
    return time.monotonic() - start


def main(rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        plan_xml = Path(tmp) / "plan.xml"
        plan_wall = _pytest([*MAIN_ARGS, "--ebsperf-plan"], plan_xml)
        plans = {k: v["plan"] for k, v in _cases(plan_xml).items() if v["plan"]}
        rows: list[dict[str, Any]] = []
        walls = []
        outcomes = []
        for index in range(rounds):
            junit = Path(tmp) / f"main{index}.xml"
            walls.append(_pytest([*MAIN_ARGS, "-n", _main_job_workers()], junit))
            cases = _cases(junit)
            counts: dict[str, int] = {}
            for case in cases.values():
                counts[case["outcome"]] = counts.get(case["outcome"], 0) + 1
            outcomes.append(counts)
            print(json.dumps({"round": index + 1, "wall_s": round(walls[-1], 1), **counts}),
                  file=sys.stderr, flush=True)
            for key, case in cases.items():
                plan = plans.get(key)
                if plan is None or case["skipped"]:
                    continue
                rows.append({"check": key.rsplit(".", 1)[-1], "claim": plan["claim"],
                             "real_s": round(case["time"], 1), "typical_s": plan["typical_s"],
                             "longest_s": plan["longest_s"]})
    within = [r for r in rows if abs(r["real_s"] - r["typical_s"]) <= 0.2 * r["typical_s"]]
    over = [r for r in rows if r["real_s"] > r["longest_s"]]
    real = sum(r["real_s"] for r in rows) / rounds
    typical = sum(r["typical_s"] for r in rows) / rounds
    longest = sum(r["longest_s"] for r in rows) / rounds
    ratios = sorted(r["real_s"] / r["typical_s"] for r in rows if r["typical_s"] > 0)
    return {
        "rounds": rounds, "plan_wall_s": round(plan_wall, 1),
        "main_wall_s": [round(w, 1) for w in walls], "outcomes": outcomes,
        "checks_compared": len(rows) // max(rounds, 1),
        "within_20pct_of_typical": round(len(within) / max(len(rows), 1), 3),
        "over_longest": [(r["check"], r["real_s"], r["longest_s"]) for r in over],
        "total_real_s": round(real, 1), "total_typical_s": round(typical, 1),
        "total_longest_s": round(longest, 1),
        "total_real_over_typical": round(real / typical, 3) if typical else None,
        "median_real_over_typical": round(statistics.median(ratios), 3) if ratios else None,
        "worst": sorted(rows, key=lambda r: -abs(r["real_s"] / max(r["typical_s"], 0.1) - 1))[:8],
    }


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1), indent=1))
