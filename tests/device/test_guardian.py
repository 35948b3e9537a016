"""The guardian: what it is told to kill dies when the run ends without a goodbye."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from support.common import ROOT

from pytest_ebsperf.emulate import guardian_process


def _start_time(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def test_a_run_that_says_bye_leaves_its_processes_to_itself() -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        lines = [f"pid {sleeper.pid} {_start_time(sleeper.pid)}\n".encode(), b"bye\n"]
        assert guardian_process.guard(sleeper.pid, lines) == 0
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_run_that_dies_has_its_fio_killed_and_a_reused_pid_spared() -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    spared = subprocess.Popen(["sleep", "30"])
    try:
        lines = [f"pid {sleeper.pid} {_start_time(sleeper.pid)}\n".encode(),
                 f"pid {spared.pid} 1\n".encode()]  # a start time that is not its own
        gone = subprocess.Popen(["true"])
        gone.wait()  # the run: a pid that is no more
        start = time.monotonic()
        assert guardian_process.guard(gone.pid, lines) == 0  # end of file: the run is gone
        assert sleeper.wait(timeout=5) == -9
        assert time.monotonic() - start < 5
        assert spared.poll() is None
    finally:
        for proc in (sleeper, spared):
            proc.kill()
            proc.wait()


def _run_that_kills_itself(body: str) -> int:
    """Run a process that starts its guardian, does ``body`` (which prints a pid), then dies
    of SIGKILL; the pid it printed."""
    script = ("import os, signal, subprocess\n"
              "from pytest_ebsperf.device import guardian\n"
              f"guardian.start()\n{body}"
              "os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=30, check=False, cwd=ROOT)
    assert done.returncode == -9, done.stderr[-2000:]
    return int(done.stdout.split()[0])


def _wait_gone(pid: int, seconds: float, why: str) -> None:
    """Until ``pid`` is gone or a zombie (nobody may reap an adopted process here)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        assert time.monotonic() < deadline, why
        time.sleep(0.05)


def test_a_sigkilled_run_is_followed_by_its_guardian() -> None:
    # the run tells its guardian of a process, then dies
    child = _run_that_kills_itself(
        "child = subprocess.Popen(['sleep', '30'], start_new_session=True)\n"
        "guardian.watch(child.pid)\nprint(child.pid, flush=True)\n")
    _wait_gone(child, 5, "the guardian did not kill the run's process")


def test_a_run_killed_before_its_guardian_started_is_not_waited_for() -> None:
    # The run dies while its guardian's interpreter is still starting: the guardian must know
    # the run's pid from its command line, not from getppid(), which by then names whoever
    # adopted it (pid 1 or a subreaper, alive for good: a 10 s wait before every sweep).
    keeper = _run_that_kills_itself("print(guardian._child.pid, flush=True)\n")
    # its start and sweeps take a second or two on a busy host; the fault waited 10 s
    _wait_gone(keeper, 8, "the guardian waited on a run that was gone")


def test_guarding_in_process_leaves_this_processs_signals_alone() -> None:
    import signal

    before = signal.getsignal(signal.SIGTERM)
    assert guardian_process.guard(1, [b"bye\n"]) == 0
    assert signal.getsignal(signal.SIGTERM) == before  # children inherit dispositions


def test_a_signal_handler_that_stops_the_guardian_inside_say_does_not_wait_for_itself() -> None:
    # SIGTERM's handler closes the run (forget, then stop); it may run while this thread
    # is inside _say, holding the guardian's lock. Here the lock is held the same way.
    from pytest_ebsperf.device import guardian

    def handler_inside_say() -> None:
        with guardian._lock:
            guardian.forget(12345)
            guardian.stop()

    worker = threading.Thread(target=handler_inside_say, daemon=True)
    worker.start()
    worker.join(timeout=5)
    assert not worker.is_alive(), "the handler waited for a lock its own thread held"
