"""Helpers the project's tests share, written once: where things are, the guards of tests that
need root or fio, scratch loop devices' backing files, runs of pytest in a subprocess and what
they leave.

Test modules import from here (``from support.common import ...``); fixtures live in the
conftest files of the test folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: The repository, its built-in suites and the tests' data files.
ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "suites"
DATA = ROOT / "tests" / "data"


#: A test that expects a measured FAIL (a volume made slow) runs alone (``-m alone``, after
#: the others): on a host whose CPUs are busy with other tests the plugin rightly says
#: INCONCLUSIVE "host bound" instead, since the host, not the volume, may have set the pace.
FAILS_ON_A_QUIET_HOST = pytest.mark.alone


def sha256(path: Path) -> str:
    """A file's content as a digest (a device's backing file before and after a test)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Ran:
    """A pytest run in a subprocess: how it ended, what it printed and its results file."""

    done: subprocess.CompletedProcess[str]
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def checks(self) -> list[dict[str, Any]]:
        return list(self.report.get("checks", []))

    @property
    def output(self) -> str:
        return self.done.stdout + self.done.stderr

    def tail(self) -> str:
        """The end of what it printed, for an assertion's message."""
        return self.done.stdout[-3000:] + self.done.stderr[-2000:]


def run_pytest(cwd: Path, *args: str, timeout: float = 600, env: dict[str, str] | None = None,
               prefix: tuple[str, ...] = ()) -> Ran:
    """``python -m pytest ARGS`` in ``cwd`` with a results file (``--ebsperf-report``), no
    cache; its outcome and the results file's content (empty when it wrote none)."""
    report = cwd / "report.json"
    argv = [*prefix, sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
            f"--ebsperf-report={report}", *args]
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          check=False, env=env)
    return Ran(done, json.loads(report.read_text()) if report.exists() else {})


def _numeric_modules() -> None:
    """numpy and scipy.special, imported once for the process. pytester's fixture removes
    from ``sys.modules`` what a test imported, and numpy's compiled core cannot load twice in
    one process: a command run in-process during a pytester test, then again in a later
    test, would fail there. Imported when this module is (before any test), they stay."""
    import numpy  # noqa: F401
    import scipy.special  # noqa: F401


_numeric_modules()


def ebsperf_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python3 -m pytest_ebsperf ARGS``'s exit status, stdout and stderr, from the console
    script's own code run in this process (:func:`pytest_ebsperf.cli.main`): a module of
    many commands pays for one interpreter, not one each. The console script as a process
    (``-m``, a reader that stops reading) is run as one by tests/verdicts/test_judge_cli.py
    and test_judge_refusals.py."""
    import contextlib
    import io

    from pytest_ebsperf.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd or Path.cwd()), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess([sys.executable, "-m", "pytest_ebsperf", *args], code,
                                       out.getvalue(), err.getvalue())


ROOT_REASON = "needs root and loop devices (losetup) to create scratch block devices"


def can_make_loop_devices() -> bool:
    return os.geteuid() == 0 and shutil.which("losetup") is not None and \
        os.path.exists("/dev/loop-control")


needs_root = pytest.mark.skipif(not can_make_loop_devices(), reason=ROOT_REASON)


needs_fio = pytest.mark.skipif(shutil.which("fio") is None,
                               reason="needs fio (apt-get install fio)")


def backing_seen(device: str) -> str | None:
    """The backing file of loop device ``device`` as the kernel shows it now (None: unbound)."""
    from pytest_ebsperf.emulate.loop import loop_backing_file

    return loop_backing_file(Path(device).name)


def detach_own(device: str, backing: str | None) -> None:
    """Detach ``device`` only while it still has the backing file it had when the test
    attached it (``backing``, from :func:`backing_seen` then). A device the code under test
    detached (a sweep, a close) frees its number, and a test running beside this one may
    have attached its own volume under that number by now: detaching by name alone would
    pull that volume from under its fio ("zero sized block device")."""
    from pytest_ebsperf.emulate.loop import detach

    if backing is not None:
        detach(Path(device).name, backing)  # checked and cleared through one descriptor


def backing_file(device: str) -> Path:
    """The file behind a loop device (to hash it before and after a test)."""
    name = os.path.basename(device)
    return Path(Path(f"/sys/block/{name}/loop/backing_file").read_text().strip())


def fio_descendants(pid: int) -> list[int]:
    """fio processes whose parent chain reaches ``pid``."""
    out = subprocess.run(["pgrep", "-x", "fio"], check=False, capture_output=True,
                         text=True).stdout
    found = []
    for child in map(int, out.split()):
        node = child
        while node > 1:
            if node == pid:
                found.append(child)
                break
            try:
                node = int(Path(f"/proc/{node}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
    return found


def fio_descendants_whose_argv(pid: int, keep: Callable[[list[bytes]], bool]) -> list[int]:
    """The fio processes under ``pid`` whose command line (its arguments) ``keep`` accepts."""
    found = []
    for child in fio_descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if keep(argv):
            found.append(child)
    return found


def _measuring_fio(pid: int) -> list[int]:
    """The fio processes under ``pid`` that measure: not ``fio --version`` nor an engine probe
    (``--name=probe``)."""
    return fio_descendants_whose_argv(
        pid, lambda argv: b"--version" not in argv and b"--name=probe" not in argv)


#: How long a test waits for the fio of a pytest run it started: the run's check may first
#: wait for the host's measuring lock while another test's check holds it alone (a
#: comparison: a minute and more on a busy 2-CPU machine; 90 s once was not enough).
FIO_START_WAIT_S = 300.0


def interrupt_once_fio_runs(argv: list[str], cwd: Path, *, settle_s: float = 0.0
                            ) -> tuple[int, str]:
    """Start ``argv``, wait (:data:`FIO_START_WAIT_S` at most) for a fio under it, wait
    ``settle_s`` more, press
    Ctrl-C (SIGINT) and return the run's pid and output. Fails with the run's output when no
    fio ever started; the run is killed on every path."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + FIO_START_WAIT_S
        # a measuring fio, not the short probes (fio --version, the engine probes) that come
        # and go before it (two of them in a row once looked like one fio 0.5 s long): seen
        # in two looks 0.5 s apart. Not looked for a third time: a check that runs fio
        # several times (a knee check) may be between two runs by then, and Ctrl-C there is
        # Ctrl-C during the check all the same.
        seen = False
        while not seen and time.monotonic() < deadline and proc.poll() is None:
            if _measuring_fio(proc.pid):
                time.sleep(0.5)
                seen = bool(_measuring_fio(proc.pid))
            if not seen:
                time.sleep(0.2)
        if not seen:
            if proc.poll() is None:
                proc.kill()  # its output up to here says where it waited
            output = proc.communicate(timeout=60)[0].decode()
            raise AssertionError(f"fio never started within {FIO_START_WAIT_S:g} s; the run "
                                 "said:\n"
                                 f"{output[-3000:]}")
        time.sleep(settle_s)
        proc.send_signal(signal.SIGINT)
        return proc.pid, proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            proc.kill()


def run_on_a_terminal(argv: list[str], cwd: Path, *, timeout_s: float = 600.0
                      ) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal as its stdin/stdout/stderr; its exit status and
    everything it wrote until it ended. A child may be silent for a long time (its check
    waiting for another test that holds the host's measuring lock alone): the wait ends when
    the child has ended and its terminal is drained, or after ``timeout_s``."""
    import pty
    import select

    main, child = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=child, stdout=child, stderr=child)
    os.close(child)
    output = b""
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([main], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break  # ended, and nothing more to read
                continue
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break  # the child side closed
            if not chunk:
                break
            output += chunk
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, output.decode(errors="replace")


def left_by_dead_runs() -> list[str]:
    """Loop devices and throttle cgroups whose run is gone: local emulated runs
    (``/run/ebsperf/<pid>-<n>/...``), remote ones made from here
    (``ebsperf-remote-<machine>-<pid>-<n>``) and cgroups (``ebsperf-<type>-<pid>-<n>``). Runs
    still alive (other tests' under pytest-xdist) are not leftovers."""

    def dead(pid: str) -> bool:
        return not Path(f"/proc/{pid}").exists()

    left = []
    out = subprocess.run(["losetup", "-a"], check=False, capture_output=True, text=True).stdout
    for line in out.splitlines():
        local = re.search(r"/run/ebsperf/(\d+)-\d+/", line)
        remote = re.search(r"ebsperf-remote-[0-9a-f]+-(\d+)-\d+", line)
        found = local or remote
        if found and dead(found.group(1)):
            left.append(line)
    for root in ("/sys/fs/cgroup/blkio", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
        if os.path.isdir(root):
            for name in os.listdir(root):
                match = re.fullmatch(r"ebsperf-[A-Za-z0-9_-]+-(\d+)-\d+", name)
                if match and dead(match.group(1)):
                    left.append(f"{root}/{name}")
    return left
