"""What installing the plugin costs every pytest run (figures for docs/benchmarks.md).

    python3 benchmarks/bench_load.py [ROUNDS]

Wall time of ``pytest --collect-only`` with the plugin and without it (``-p no:ebsperf``),
alternating, ROUNDS times each (default 21) after two warm-up runs, with Python's bytecode
cache on, in an empty directory (a project that has the plugin installed but runs no check)
and on the suites (collection of every built-in claim). The figure is the ratio of the
medians; the goal is at most 1.1.
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


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 21), indent=1))
