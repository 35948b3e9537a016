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
def neighbours(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` streaming processes at nice 19, killed (their sessions) whatever happens."""
    procs = [subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", STREAM],
                              start_new_session=True) for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)
