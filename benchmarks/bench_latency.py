"""Benchmark of emulated latency (needs root, /dev/fuse, gcc, libfuse3 and fio).

    python3 benchmarks/bench_latency.py        # about 2 minutes
    python3 benchmarks/bench_latency.py path   # about 3 minutes
    python3 benchmarks/bench_latency.py looks [ROUNDS]  # about 4 minutes for 4 rounds

For each mean service time (0.5, 1, 2 and 5 ms) on an emulated volume whose kernel limit is
far above what latency allows (100,000 IOPS):
- QD 1: fio's mean completion latency against the set mean (goal: within 5 %);
- QD 4, 16, 32, 64: IOPS against queue depth / latency (goal: >= 90 % up to 30,000 IOPS) and
  fio's mean completion latency, to show where the daemon tops out on this machine.
4 KiB random reads, libaio, one job, 3 s after 0.5 s of ramp.

``path``: a correction measured in a slow spell, then a quiet host. For each mean (0.5, 1
and 3 ms) the path is measured (as every emulated volume does) beside three busy loops,
which are then stopped; three 2-s runs at QD 1 with the daemon following the path, then
three with that correction taken off as a fixed figure (as before the daemon followed it).

``looks``: how long the path's calibration looks last. For each mean (0.5, 1 and 3 ms),
ROUNDS (default 4) calibrations with 1-s looks and as many with half-second ones
(``service_time.LOOK_S``), alternating: the seconds each calibration held the host, what it
took off (least, median, most), and fio's mean completion latency at QD 1 in a 2-s run after
each, against the set mean.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from pytest_ebsperf.emulate import EmulatedDevice, service_time
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

MEANS_MS = (0.5, 1.0, 2.0, 5.0)
DEPTHS = (1, 4, 16, 32, 64)


def path() -> int:
    runner = FioRunner()

    def qd1(device: EmulatedDevice) -> float:
        result = runner.run(Workload("randread", bs=4096, iodepth=1, runtime_s=2, ramp_s=0.5,
                                     engine="libaio"), device.path, readonly=True,
                            prefix=device.argv_prefix())
        return result.read.clat.mean_ns / 1000

    print(f"{'mean':>6} {'taken off (spell)':>18} {'followed, QD 1 clat us':>28} "
          f"{'fixed, QD 1 clat us':>26}")
    for mean_ms in (0.5, 1.0, 3.0):
        with EmulatedDevice(size_bytes=64 * 1024 * 1024, iops=100_000,
                            latency_us=mean_ms * 1000) as device:
            busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(3)]
            try:
                time.sleep(0.5)
                taken = device.calibrate_path()
            finally:
                for loop in busy:
                    loop.kill()
                    loop.wait()
            time.sleep(0.5)
            followed = [qd1(device) for _ in range(3)]
            device.latency_server.follow(None)
            fixed = [qd1(device) for _ in range(3)]
        print(f"{mean_ms:>5g}ms {taken:>18,.0f} "
              f"{', '.join(f'{v:,.0f}' for v in followed):>28} "
              f"{', '.join(f'{v:,.0f}' for v in fixed):>26}", flush=True)
    return 0


def looks(rounds: int) -> int:
    runner = FioRunner()
    print(f"{'mean':>6} {'look':>5} {'s per calibration':>18} {'taken off us (min/med/max)':>28} "
          f"{'QD 1 clat vs mean (min/med/max)':>33}")
    for mean_ms in (0.5, 1.0, 3.0):
        seen: dict[float, tuple[list[float], list[float], list[float]]] = {
            1.0: ([], [], []), 0.5: ([], [], [])}
        with EmulatedDevice(size_bytes=64 * 1024 * 1024, iops=100_000,
                            latency_us=mean_ms * 1000) as device:
            for _ in range(rounds):
                for look_s, (seconds, taken, clats) in seen.items():
                    service_time.LOOK_S = look_s
                    started = time.monotonic()
                    taken.append(device.calibrate_path())
                    seconds.append(time.monotonic() - started)
                    result = runner.run(Workload("randread", bs=4096, iodepth=1, runtime_s=2,
                                                 ramp_s=0.5, engine="libaio"), device.path,
                                        readonly=True, prefix=device.argv_prefix())
                    clats.append(result.read.clat.mean_ns / 1000 / (mean_ms * 1000) - 1)
        for look_s, (seconds, taken, clats) in seen.items():
            spread = "/".join(f"{v:,.0f}" for v in (min(taken), statistics.median(taken),
                                                     max(taken)))
            off = "/".join(f"{v:+.1%}" for v in (min(clats), statistics.median(clats),
                                                  max(clats)))
            print(f"{mean_ms:>5g}ms {look_s:>4g}s {statistics.median(seconds):>18.2f} "
                  f"{spread:>28} {off:>33}", flush=True)
    return 0


def main() -> int:
    if sys.argv[1:] == ["path"]:
        return path()
    if sys.argv[1:2] == ["looks"]:
        return looks(int(sys.argv[2]) if len(sys.argv) > 2 else 4)
    runner = FioRunner()
    print(f"{'mean':>6} {'QD':>4} {'IOPS':>8} {'QD/lat':>8} {'share':>6} {'clat us':>8} "
          f"{'vs mean':>8}")
    for mean_ms in MEANS_MS:
        with EmulatedDevice(size_bytes=256 * 1024 * 1024, iops=100_000,
                            latency_us=mean_ms * 1000) as device:
            for depth in DEPTHS:
                result = runner.run(Workload("randread", bs=4096, iodepth=depth, runtime_s=3,
                                             ramp_s=0.5, engine="libaio"), device.path,
                                    readonly=True, prefix=device.argv_prefix())
                ideal = depth / (mean_ms / 1000)
                clat = result.read.clat.mean_ns / 1000
                print(f"{mean_ms:>5g}ms {depth:>4} {result.read.iops:>8,.0f} {ideal:>8,.0f} "
                      f"{result.read.iops / ideal:>6.2f} {clat:>8,.0f} "
                      f"{clat / (mean_ms * 1000) - 1:>+8.1%}", flush=True)
            print(f"   (path overhead taken off: {device.overhead_us:.0f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
