"""Benchmark: the queue-depth planner under emulated latency (needs root, /dev/fuse, gcc,
libfuse3 and fio).

    python3 benchmarks/bench_planner.py        # about 3 minutes

For io1 volumes provisioned from 500 to 25,000 IOPS (the highest rate the latency-bearing
emulator reaches here, docs/benchmarks.md) at 0.5, 1, 2 and 5 ms per I/O, the io1 suite's default
random-read check (16 KiB, the plugin's planned queue depth and jobs) runs once; printed: the
planned queue, the first run's mean / provisioned IOPS (goal: >= 0.95 without a confirmation
run), the verdict, and whether a deeper-queue confirmation ran. Then, on paper, what the
planner asks for 256,000 IOPS (io2 Block Express's most).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = f"{ROOT}/suites/io1/test_io1.py::test_random_read_holds_provisioned_iops_999_percent_of_seconds"
RATES = (500, 4_000, 16_000, 25_000)
LATENCIES_MS = (0.5, 1.0, 2.0, 5.0)


def run(rate: int, latency_ms: float, where: Path, *extra: str) -> dict[str, object]:
    size = max(100, -(-rate // 50))  # io1: 50 IOPS per GiB
    report = where / f"r{rate}-{latency_ms}{''.join(extra)}.json"
    subprocess.run([sys.executable, "-m", "pytest", CHECK, "--emulate", "--volume-type=io1",
                    f"--volume-size={size}", f"--volume-iops={rate}",
                    f"--emulate-latency={latency_ms}", f"--ebsperf-report={report}",
                    "-p", "no:cacheprovider", "-q", *extra], cwd=where, capture_output=True,
                   text=True, timeout=600, check=False)
    if not report.exists():
        return {}
    data = json.loads(report.read_text())
    check = data["checks"][0]
    runs = data["measurements"]
    return {"outcome": check["outcome"], "workload": check["workload"],
            "binding": check.get("binding", ""), "reason": check.get("reason", ""),
            "first": runs[0]["iops"] if runs else 0.0,
            "probed": any(m.get("phase") == "probe" for m in runs)}


def main() -> int:
    print(f"{'IOPS':>7} {'lat':>6} {'planned':>10} {'first/cap':>9} {'verdict':>13} "
          f"{'confirmation':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for latency_ms in LATENCIES_MS:
            for rate in RATES:
                found = run(rate, latency_ms, Path(tmp))
                share = float(found.get("first", 0.0)) / rate  # type: ignore[arg-type]
                planned = str(found.get("workload", "?")).rsplit(" ", 1)[-1]
                print(f"{rate:>7,} {latency_ms:>4g}ms {planned:>10} {share:>9.3f} "
                      f"{found.get('outcome', '-')!s:>13} "
                      f"{'yes' if found.get('probed') else 'no':>12}", flush=True)
        # a queue the user forced too small: INCONCLUSIVE naming the queue depth, not FAIL
        for rate, latency_ms in ((4_000, 1.0), (16_000, 0.5)):
            found = run(rate, latency_ms, Path(tmp), "--ebsperf-iodepth=1")
            print(f"forced QD 1, {rate:,} IOPS at {latency_ms:g} ms: {found.get('outcome')} "
                  f"({found.get('binding')}: {found.get('reason')})", flush=True)
    from pytest_ebsperf.awsmodel import default_queue_depth
    from pytest_ebsperf.awsmodel.volume import Volume
    from pytest_ebsperf.fio.workload import Workload

    volume = Volume(type="io2", size_gib=256, iops=256_000)
    for cpus in (2, 16, 96):
        depth, jobs = default_queue_depth(volume, Workload("randread", bs=16384), 256_000,
                                          cpu_count=cpus)
        print(f"on paper, io2 256,000 IOPS, {cpus} CPUs: QD{depth}x{jobs} = {depth * jobs} "
              f"outstanding; at 0.5 ms that allows {depth * jobs / 0.0005:,.0f} IOPS")
    return 0


if __name__ == "__main__":
    sys.exit(main() if os.geteuid() == 0 else "run as root")
