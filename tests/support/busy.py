"""Neighbours for tests of a busy host: processes at the lowest priority that take every CPU
and stream through memory (priority shares out neither memory bandwidth nor wake-ups)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: Copies a 256 MiB buffer again and again: memory bandwidth and a CPU.
STREAM = "b = bytearray(256 << 20)\nwhile True:\n    c = bytes(b)\n    del c\n"


@contextmanager
def _killed(argvs: list[list[str]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """A process per argv, each in a session of its own, killed (its session) whatever
    happens."""
    procs = [subprocess.Popen(argv, start_new_session=True) for argv in argvs]
    try:
        yield procs
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)


@contextmanager
def neighbours(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` streaming processes at nice 19, killed (their sessions) whatever happens."""
    with _killed([["nice", "-n", "19", sys.executable, "-c", STREAM]] * count) as procs:
        yield procs


#: Takes its CPU whole (SCHED_FIFO, above every normal task) for ``burst`` seconds at random
#: moments, ``share`` of the time on average: what a hypervisor's steal does to a guest's
#: tasks (the kernel's real-time throttling keeps 5 % of each CPU for the rest).
STEAL = """
import os, random, sys, time
cpu, burst, share = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
rnd = random.Random(cpu)
while True:
    time.sleep(rnd.expovariate(share / (burst * (1 - share))))
    end = time.perf_counter() + burst
    while time.perf_counter() < end:
        pass
"""


@contextmanager
def steal(burst_s: float = 0.003, share: float = 0.2) -> Iterator[None]:
    """One burst-taker per CPU (:data:`STEAL`), killed (their sessions) whatever happens."""
    with _killed([[sys.executable, "-c", STEAL, str(cpu), str(burst_s), str(share)]
                  for cpu in sorted(os.sched_getaffinity(0))]):
        yield
