"""fio's threads' wait for a CPU, read from the kernel (``/proc/PID/task/*/schedstat``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from pytest_ebsperf.fio.process import RunQueueWait

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"),
                                reason="this kernel keeps no schedstat")


def test_the_wait_of_a_process_and_its_child_s_threads_is_counted_from_the_kernel() -> None:
    # a shell whose child (not exec'd) spins with nice 19 beside a spinner on every CPU:
    # the child waits for a CPU, and its figure is found through the shell's children
    spin = "import time\nt = time.time()\nwhile time.time() - t < 1.5: pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(os.cpu_count() or 1)]
    child = subprocess.Popen(["sh", "-c", f"nice -n 19 {sys.executable} -c '{spin}'; true"])
    try:
        waits = RunQueueWait(child.pid)
        while child.poll() is None:
            waits.sample()
            time.sleep(0.05)
    finally:
        for hog in hogs:
            hog.wait()
    assert waits.seconds is not None and waits.seconds > 0.2


def test_a_process_gone_before_its_first_look_gives_none() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    waits = RunQueueWait(gone.pid)
    waits.sample()
    assert waits.seconds is None
