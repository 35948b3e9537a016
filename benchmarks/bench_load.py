"""What installing the plugin costs every pytest run (figures for docs/benchmarks.md).

    python3 benchmarks/bench_load.py [ROUNDS]
    python3 benchmarks/bench_load.py imports [ROUNDS]


Wall time of ``pytest --collect-only`` with the plugin and without it (``-p no:ebsperf``),
alternating, ROUNDS times each (default 21) after two warm-up runs, with Python's bytecode
cache on, in an empty directory (a project that has the plugin installed but runs no check)
and on the suites (collection of every built-in claim). The figure is the ratio of the
medians; the goal is at most 1.1.

``imports``: CPU seconds (user + system) of a Python process that loads only what a run's
verdicts or its end may load: scipy.stats, scipy.special (what the verdicts load), matplotlib's
figure (what a run's end loaded to say whether it could draw), and nothing, medians of ROUNDS.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


#: Python's bytecode cache on (pytest's rewritten modules too): what a user's machine does,
#: whatever this shell sets (PYTHONDONTWRITEBYTECODE would make every start compile).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=ENV)
    return time.perf_counter() - start


def measure(rounds: int = 21) -> dict[str, object]:
    base = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    out: dict[str, object] = {"rounds": rounds}
    with tempfile.TemporaryDirectory() as empty:
        cases = {"empty directory": (base, Path(empty)),
                 "suites": (base + [str(ROOT / "suites")], ROOT)}
        for name, (argv, cwd) in cases.items():
            for _ in range(2):  # warm: bytecode written, files in the page cache
                _time(argv, cwd)
                _time(argv + ["-p", "no:ebsperf"], cwd)
            with_plugin, without = [], []
            for _ in range(rounds):
                with_plugin.append(_time(argv, cwd))
                without.append(_time(argv + ["-p", "no:ebsperf"], cwd))
            a, b = statistics.median(with_plugin), statistics.median(without)
            out[name] = {"with_s": round(a, 3), "without_s": round(b, 3),
                         "ratio": round(a / b, 3)}
    return out


def _cpu(code: str) -> float:
    before = os.times()
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=ENV)
    after = os.times()
    return (after.children_user - before.children_user
            + after.children_system - before.children_system)


def measure_imports(rounds: int = 21) -> dict[str, float]:
    codes = {"nothing": "pass", "scipy.stats": "import scipy.stats",
             "scipy.special": "import scipy.special",
             "matplotlib.figure": "import matplotlib.figure"}
    for code in codes.values():  # warm: bytecode written, files in the page cache
        _cpu(code)
    seen: dict[str, list[float]] = {name: [] for name in codes}
    for _ in range(rounds):
        for name, code in codes.items():
            seen[name].append(_cpu(code))
    return {f"{name} (CPU s)": round(statistics.median(v), 3) for name, v in seen.items()}


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "imports":
        print(json.dumps(measure_imports(int(args[1]) if len(args) > 1 else 21), indent=1))
    else:
        print(json.dumps(measure(int(args[0]) if args else 21), indent=1))
