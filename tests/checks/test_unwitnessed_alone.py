"""An emulated volume whose emulation needs more of the host than it can share (an i3.large
instance store's 100,125 IOPS through the kernel's throttle: 4 CPUs' worth at 41 µs an I/O)
holds the host's measuring lock alone: no other worker's fio shares the CPUs its rate depends on. Real fio on emulated
volumes; another process holds the lock shared, as a measuring worker does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.common import SUITES, needs_fio, needs_root

from pytest_ebsperf.config.emulation import SHARED_CALIBRATION_ENV
from pytest_ebsperf.device import lock
from pytest_ebsperf.emulate import service_time

pytestmark = [needs_root, needs_fio]

SHARED = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_SH)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                parent = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _waiting_for_a_lock(pid: int) -> bool:
    """A thread of ``pid`` or of its children sleeps in the kernel's flock wait."""
    for one in (pid, *_descendants(pid)):
        try:
            tasks = os.listdir(f"/proc/{one}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                if "lock" in Path(f"/proc/{one}/task/{task}/wchan").read_text():
                    return True
            except OSError:
                pass
    return False


def _fio_running(pid: int) -> bool:
    for one in _descendants(pid):
        try:
            if Path(f"/proc/{one}/comm").read_text().strip() == "fio":
                return True
        except OSError:
            pass
    return False


def _check_beside_a_measuring_worker(tmp_path: Path, *args: str, env: dict[str, str] | None = None
                                     ) -> tuple[bool, bool, str]:
    """Run one check while another process holds the measuring lock shared; whether it
    waited for the lock with no fio running while the holder held it, whether the check
    then passed, and pytest's output."""
    holder = subprocess.Popen([sys.executable, "-c", SHARED,
                               str(lock._measuring_path(lock.MEASURING_LOCK)), "120"],
                              stdout=subprocess.PIPE, text=True)
    check = None
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        check = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                                  "-q", "--emulate", "--emulate-latency=auto",
                                  "--ebsperf-runtime=2", *args], cwd=tmp_path,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 env=env)
        waited = False
        deadline = time.monotonic() + 60
        while check.poll() is None and time.monotonic() < deadline and not waited:
            waited = _waiting_for_a_lock(check.pid) and not _fio_running(check.pid)
            time.sleep(0.1)
    finally:
        holder.kill()
        holder.wait()
    out, _ = check.communicate(timeout=300)
    return waited, check.returncode == 0, out


def test_a_run_on_a_volume_beyond_the_daemon_s_reach_waits_for_the_host_alone(
        tmp_path: Path) -> None:
    assert service_time.REACH_IOPS < 100_125  # i3.large's published random reads
    waited, passed, out = _check_beside_a_measuring_worker(
        tmp_path, f"{SUITES}/instance_store/test_instance_store.py", "-k", "random_read",
        "--instance-type=i3.large")
    assert waited, out[-3000:]
    assert passed, out[-3000:]


# Alone (conftest): a comparison of another test holding the host would make it wait too
@pytest.mark.alone(machine=True)  # reads every process on the machine
def test_a_volume_the_daemon_carries_measures_beside_other_workers(tmp_path: Path) -> None:
    # an io1 at 4,000 IOPS has its emulated latency and its witness: it shares the host,
    # and its check ends while the other worker still holds the lock. Its path's correction
    # is measured holding the host alone, once per run: here an earlier run of the same
    # folder measured it (as a worker of the run does for the others), so this one reads it
    # without waiting for the host
    folder = tmp_path / "calibration"
    folder.mkdir()
    env = {**os.environ, SHARED_CALIBRATION_ENV: str(folder)}
    first = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                            "--emulate", "--emulate-latency=auto", "--ebsperf-runtime=2",
                            f"{SUITES}/io1/test_io1.py", "-k", "random_write_holds"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                           check=False)
    assert first.returncode == 0 and list(folder.glob("path-*us")), first.stdout[-3000:]
    waited, passed, out = _check_beside_a_measuring_worker(
        tmp_path, f"{SUITES}/io1/test_io1.py", "-k", "random_write_holds", env=env)
    # it did not wait for the host before measuring; a first run whose emulator fell behind
    # is measured again holding the host alone (rates._alone_if_spoiled), and says so
    again = "its first run was the host's: measured again alone" in out
    assert passed and (not waited or again), out[-3000:]
