"""The guardian process itself (started by :func:`pytest_ebsperf.device.guardian.start`): it reads
the run's lines until end of file; when the run died without saying ``bye`` it kills the fio
processes it was told of, waits for the run to be gone and runs the sweeps every run runs at
its start (:func:`pytest_ebsperf.emulate.cleanup.sweep_stale`,
:func:`pytest_ebsperf.fio.process.sweep_fio_dirs`), which take only what dead runs left.

    python3 -m pytest_ebsperf.emulate.guardian_process RUN_PID RUN_START  # stdin: the run's pipe

The run names itself on the command line (its pid and the kernel's start time of it): a run
killed while its guardian's interpreter is still starting has already been replaced as the
guardian's parent by whoever adopted it, so ``getppid()`` would name a process that lives on.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from pytest_ebsperf.device.guardian import process_start_time
from pytest_ebsperf.emulate.cleanup import sweep_stale
from pytest_ebsperf.fio.process import sweep_fio_dirs


def _alive(pid: int, start_time: str | None = None) -> bool:
    now = process_start_time(pid)
    if now is None:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and (start_time is None or now == start_time)


def _wait_gone(processes: dict[int, str | None], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while any(_alive(pid, started) for pid, started in processes.items()) and \
            time.monotonic() < deadline:
        time.sleep(0.02)


def guard(run_pid: int, stream: Iterable[bytes] | None = None,
          run_start: str | None = None) -> int:
    """The guardian's body: read the run's lines until end of file, then clean up.
    ``run_start`` is the kernel's start time of ``run_pid`` (a pid reused by then is not it)."""
    watched: dict[int, str] = {}
    source = stream if stream is not None else sys.stdin.buffer
    for raw in source:
        words = raw.decode(errors="replace").split()
        if words == ["bye"]:
            return 0
        if len(words) == 3 and words[0] == "pid" and words[1].isdigit():
            watched[int(words[1])] = words[2]
        elif len(words) == 2 and words[0] == "gone" and words[1].isdigit():
            watched.pop(int(words[1]), None)
    # the run died without saying bye: fio first, then what it made
    left = [pid for pid, started in watched.items() if _alive(pid, started)]
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # its locks are dropped when it is gone
    _wait_gone({run_pid: run_start} | {pid: watched[pid] for pid in left}, 10.0)

    for sweep in (sweep_stale, sweep_fio_dirs):
        try:
            sweep()
        except Exception:  # noqa: BLE001, S110 - one failed sweep must not stop the other
            pass
    return 0


def _ignore_signals() -> None:
    """The guardian outlives what ends its run: Ctrl-C, SIGTERM or SIGHUP to the group. Set
    in the guardian's own process only (dispositions are inherited by children: a test
    process ignoring SIGTERM would hand that to every run it starts)."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(signum, signal.SIG_IGN)


def _main(argv: list[str]) -> int:
    _ignore_signals()
    os.chdir("/")
    if len(argv) == 2 and argv[0].isdigit():
        return guard(int(argv[0]), run_start=argv[1])
    return guard(os.getppid())  # started by hand: its parent is the run


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
