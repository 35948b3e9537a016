"""What an emulated volume costs the host in CPU, per I/O and per MiB (needs root and fio;
the latency rows need /dev/fuse, gcc and libfuse3).

    python3 benchmarks/bench_emulation_cost.py        # about a minute

Each row runs fio for 4 s (after 0.5 s of ramp) on a fresh emulated volume held at a rate by
the kernel's throttle, and counts the whole host's busy CPU time over those seconds
(/proc/stat: user, nice, system, irq, softirq of every CPU), less what the host spent in the
same time before the run (measured for 2 s, nothing running). It splits it into fio's own
(its JSON's usr_cpu and sys_cpu), the latency daemon's (its /proc/PID/stat) and the rest:
the kernel's loop-device workers, the throttle, FUSE's request queue, interrupts.
The figures are for docs/emulation.md ("What an emulated volume costs").
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from pytest_ebsperf.emulate import EmulatedDevice
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

MIB = 1024 * 1024
TICK = os.sysconf("SC_CLK_TCK")
RUNTIME_S, RAMP_S = 4.0, 0.5

#: (label, workload, IOPS limit, bytes/s limit, service time in µs or None)
ROWS = (
    ("4 KiB random read, QD 16, 4,000 IOPS (io1)", ("randread", 4096, 16), 4000, None, None),
    ("  the same through the latency daemon, 0.5 ms", ("randread", 4096, 16), 4000, None, 500),
    ("4 KiB random read, QD 32, 25,000 IOPS", ("randread", 4096, 32), 25000, None, None),
    ("  the same through the latency daemon, 0.1 ms", ("randread", 4096, 32), 25000, None, 100),
    ("4 KiB random read, QD 32, 50,000 IOPS (i4i.large)", ("randread", 4096, 32), 50000, None,
     None),
    ("1 MiB sequential read, QD 8, 500 MiB/s (st1)", ("read", MIB, 8), None, 500 * MIB, None),
    ("  the same through the latency daemon, 5 ms", ("read", MIB, 8), None, 500 * MIB, 5000),
)


def busy_ticks() -> int:
    """The host's busy CPU ticks so far (every CPU): user, nice, system, irq, softirq."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[:7])
    return user + nice + system + irq + softirq


def daemon_ticks() -> int:
    """CPU ticks of every running latency daemon (utime + stime)."""
    found = subprocess.run(["pgrep", "-f", "ebsperf-latfs"], capture_output=True, text=True,
                           check=False).stdout.split()
    total = 0
    for pid in found:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                parts = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(parts[11]) + int(parts[12])
    return total


def idle_rate() -> float:
    """The host's busy CPU-s per second with nothing of ours running (2 s)."""
    start, then = busy_ticks(), time.monotonic()
    time.sleep(2.0)
    return (busy_ticks() - start) / TICK / (time.monotonic() - then)


def row(label: str, shape: tuple[str, int, int], iops: float | None, bps: float | None,
        latency_us: float | None, background: float, runner: FioRunner) -> None:
    pattern, bs, depth = shape
    with EmulatedDevice(size_bytes=256 * MIB, iops=iops, bps=bps, io_unit_bytes=max(bs, 4096),
                        latency_us=latency_us) as device:
        job = Workload(pattern, bs=bs, iodepth=depth, runtime_s=RUNTIME_S, ramp_s=RAMP_S,
                       engine="libaio")
        host0, daemon0, t0 = busy_ticks(), daemon_ticks(), time.monotonic()
        result = runner.run(job, device.path, readonly=True, prefix=device.argv_prefix())
        wall = time.monotonic() - t0
        host = (busy_ticks() - host0) / TICK - background * wall
        daemon = (daemon_ticks() - daemon0) / TICK
    # fio's own share: its usr+sys percentages (of one CPU) over its whole run, ramp included
    fio_s = (result.usr_cpu + result.sys_cpu) / 100.0 * result.jobs * (RUNTIME_S + RAMP_S)
    ios = result.read.iops * (RUNTIME_S + RAMP_S)
    mib = result.read.bw_bytes * (RUNTIME_S + RAMP_S) / MIB
    rest = max(0.0, host - fio_s - daemon)
    per = (f"{host / ios * 1e6:6.1f} µs/IO" if bs < MIB else f"{host / mib * 1e3:6.2f} ms/MiB")
    print(f"{label:<52} {result.read.iops:>8,.0f} IOPS {result.read.bw_bytes / MIB:>7,.1f} MiB/s"
          f"  host {host / wall:4.2f} CPU  {per}  fio {fio_s / wall:4.2f}"
          f"  daemon {daemon / wall:4.2f}  kernel+rest {rest / wall:4.2f}", flush=True)


def main() -> int:
    runner = FioRunner()
    background = idle_rate()
    print(f"host: {os.cpu_count()} CPUs, {background:.2f} CPU busy with nothing of ours running")
    for label, shape, iops, bps, latency_us in ROWS:
        row(label, shape, iops, bps, latency_us, background, runner)
    return 0


if __name__ == "__main__":
    sys.exit(main())
