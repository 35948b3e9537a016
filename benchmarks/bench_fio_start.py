"""What a fio process costs beyond the seconds it measures (docs/benchmarks.md).

    sudo python3 benchmarks/bench_fio_start.py [ROUNDS]

Runs the checks' own fio command line (``pytest_ebsperf.fio.jobs.fio_argv``: random 16 KiB
reads at QD 20, 100 ms, no ramp, read-only) on a loop device over a temporary file, ROUNDS
times (default 20) with the clock the checks name (``--clocksource=clock_gettime``) and as
many times with none named (fio then tests the CPUs' time stamp counters first), alternating;
prints the median wall and CPU time (user + system, fio's own) of each.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_ebsperf.fio.jobs import fio_argv
from pytest_ebsperf.fio.workload import Workload


def _one(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        image = Path(folder) / "image"
        with image.open("wb") as out:
            out.truncate(256 << 20)
        device = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(image)],
                                check=True, capture_output=True, text=True).stdout.strip()
        try:
            workload = Workload("randread", bs=16384, iodepth=20, runtime_s=0.1, ramp_s=0)
            named = fio_argv(workload, device, output_path=f"{folder}/out.json",
                             log_prefix=f"{folder}/log", readonly=True, engine="libaio")
            unnamed = [arg for arg in named if not arg.startswith("--clocksource=")]
            assert len(unnamed) == len(named) - 1, named
            seen: dict[str, list[tuple[float, float]]] = {"named": [], "none named": []}
            for _ in range(rounds):
                seen["named"].append(_one(named))
                seen["none named"].append(_one(unnamed))
        finally:
            subprocess.run(["losetup", "-d", device], check=False)
    version = subprocess.run(["fio", "--version"], check=True, capture_output=True,
                             text=True).stdout.strip()
    print(f"fio {version}, {os.cpu_count()} CPUs, {rounds} runs each of 100 ms")
    for name, runs in seen.items():
        print(f"  clock {name:10}  wall {statistics.median(w for w, _ in runs) * 1000:6.1f} ms"
              f"  CPU {statistics.median(c for _, c in runs) * 1000:6.1f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
