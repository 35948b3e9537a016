"""Benchmark of emulated latency (needs root, /dev/fuse, gcc, libfuse3 and fio).

    python3 benchmarks/bench_latency.py        # about 2 minutes

For each mean service time (0.5, 1, 2 and 5 ms) on an emulated volume whose kernel limit is
far above what latency allows (100,000 IOPS):
- QD 1: fio's mean completion latency against the set mean (goal: within 5 %);
- QD 4, 16, 32, 64: IOPS against queue depth / latency (goal: >= 90 % up to 30,000 IOPS) and
  fio's mean completion latency, to show where the daemon tops out on this machine.
4 KiB random reads, libaio, one job, 3 s after 0.5 s of ramp.
"""

from __future__ import annotations

import sys

from pytest_ebsperf.emulate import EmulatedDevice
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

MEANS_MS = (0.5, 1.0, 2.0, 5.0)
DEPTHS = (1, 4, 16, 32, 64)


def main() -> int:
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
