"""Where the main job's time goes, worker by worker (docs/benchmarks.md).

    sudo python3 benchmarks/bench_main_timeline.py            # runs the main job (~8 min)
    python3 benchmarks/bench_main_timeline.py TIMELINE.jsonl  # shows a recorded one

Runs ``scripts/main.sh`` (every suite on emulated volumes, pytest-xdist workers) with
``benchmarks/timeline_plugin.py`` loaded, which records each test's start and end, each fio
run, each wait for the host's measuring lock and each hold of it alone. Prints, per worker,
its wall time and how much of it went to fio, to waiting for the measuring lock (behind a
comparison that holds the host alone, or a comparison waiting for the shared holders) and
to the latency daemon's path calibrations; then the holds alone (the host's serial part) and
the longest waits, with the test that waited.
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def record() -> Path:
    out = Path(f"/tmp/ebsperf-timeline-{int(time.time())}.jsonl")
    env = {**os.environ, "EBSPERF_TIMELINE": str(out),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "benchmarks"),
                                                       os.environ.get("PYTHONPATH")]))}
    started = time.monotonic()
    done = subprocess.run(["bash", "scripts/main.sh", "-q", "-p", "timeline_plugin"],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
    log = out.with_suffix(".log")  # the job's own output: which checks ended how, and why
    log.write_text(done.stdout + done.stderr)
    print(f"main job: exit {done.returncode} after {time.monotonic() - started:.0f} s; "
          f"timeline in {out}, its output in {log}")
    return out


def show(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not rows:
        print(f"{path}: no events")
        return
    t0 = min(r["t0"] for r in rows)
    spent: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    first: dict[str, float] = {}
    last: dict[str, float] = {}
    for r in rows:
        worker = r["worker"]
        first[worker] = min(first.get(worker, r["t0"]), r["t0"])
        last[worker] = max(last.get(worker, 0.0), r["t0"] + r["s"])
        if r["kind"] in ("fio", "calibrate", "alone"):
            spent[worker][r["kind"]] += r["s"]
        elif r["kind"] == "wait":
            spent[worker][f"wait {r['what']}"] += r["s"]
    print(f"\n{'worker':8} {'wall s':>7} {'fio s':>7} {'wait s':>7} {'(alone)':>8} "
          f"{'calib s':>8} {'holds alone s':>14}")
    for worker in sorted(spent):
        c = spent[worker]
        waits = c["wait shared"] + c["wait alone"]
        print(f"{worker:8} {last[worker] - first[worker]:7.0f} {c['fio']:7.0f} {waits:7.0f} "
              f"{c['wait alone']:8.0f} {c['calibrate']:8.0f} {c['alone']:14.0f}")
    alone = sorted((r for r in rows if r["kind"] == "alone"), key=lambda r: r["t0"])
    total = sum(r["s"] for r in alone)
    print(f"\nholds alone (no other worker's fio meanwhile): {len(alone)}, {total:.0f} s in all")
    for r in alone:
        if r["s"] >= 2:
            print(f"  {r['t0'] - t0:6.0f} s  {r['s']:5.0f} s  {r['test'].split('::')[-1][:70]}")
    waits = sorted((r for r in rows if r["kind"] == "wait"), key=lambda r: -r["s"])
    print("\nlongest waits for the measuring lock:")
    for r in waits[:12]:
        print(f"  {r['t0'] - t0:6.0f} s  {r['s']:5.0f} s  {r['what']:6}  "
              f"{r['test'].split('::')[-1][:70]}")


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else record()
    show(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
