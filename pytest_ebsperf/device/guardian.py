"""A guardian that outlives the run: what a SIGKILLed pytest leaves is removed at once.

SIGKILL cannot be caught, so a run killed that way closes nothing itself. Its fio dies with it
(the kernel's parent-death signal, :mod:`pytest_ebsperf.fio.process`), but its emulated
volumes (loop device, tmpfs, cgroup, run directory) and fio's temporary directory would stay
until the next run's sweep. So the first time a run registers something to close, it starts a
small guardian process:

* in a session of its own, ignoring SIGINT, SIGTERM and SIGHUP, so a Ctrl-C at the terminal or
  a signal to the whole process group does not take it before its work is done;
* holding the read end of a pipe whose write end only the run holds: the kernel closes that end
  when the run dies, however it dies, and the guardian reads end-of-file;
* told the fio processes the run starts (pid and start time, so a reused pid is never hit).

When the run ends normally it says ``bye`` and the guardian exits. When the pipe closes
without it, the guardian kills the fio processes it was told of that still live, waits for the
run to be gone (its file locks dropped), and runs the sweeps every run runs at its start
(:mod:`pytest_ebsperf.emulate.guardian_process`).

This module is the run's side (start, watch, forget, stop); it imports nothing of the
package, so every module that makes something to clean up can use it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

#: Re-entrant: a signal handler that closes the run (:func:`stop`, :func:`forget`) may run
#: while this thread is inside :func:`_say`; a plain lock would wait for itself for ever.
_lock = threading.RLock()
_pipe: int | None = None
_child: subprocess.Popen[bytes] | None = None


def process_start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (field 22 of /proc/PID/stat), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _forget_in_child() -> None:
    """A forked child has a copy of the pipe: closing it keeps the guardian's end of file
    tied to the run alone."""
    global _pipe, _child
    if _pipe is not None:
        try:
            os.close(_pipe)
        except OSError:
            pass
    _pipe, _child = None, None


os.register_at_fork(after_in_child=_forget_in_child)


def start() -> bool:
    """Start this process's guardian (once; Linux only). True when one is running."""
    global _pipe, _child
    with _lock:
        if _pipe is not None:
            return True
        if not Path("/proc/self/stat").exists():
            return False
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "pytest_ebsperf.emulate.guardian_process",
                 str(os.getpid()), process_start_time(os.getpid()) or "0"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        except OSError:
            return False
        assert child.stdin is not None
        _pipe, _child = os.dup(child.stdin.fileno()), child
        os.set_inheritable(_pipe, False)
        child.stdin.close()
        return True


def _say(line: str) -> None:
    with _lock:
        if _pipe is None:
            return
        try:
            os.write(_pipe, (line + "\n").encode())
        except OSError:
            pass


def watch(pid: int) -> None:
    """Tell the guardian of a process to kill if the run dies."""
    start_time = process_start_time(pid)
    if start_time is not None:
        _say(f"pid {pid} {start_time}")


def forget(pid: int) -> None:
    _say(f"gone {pid}")


def stop() -> None:
    """The run ends normally: the guardian leaves without doing anything."""
    global _pipe, _child
    _say("bye")
    with _lock:
        if _pipe is not None:
            os.close(_pipe)
            _pipe = None
        child, _child = _child, None
    if child is not None:
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
