"""Fixtures shared by the project's own tests: scratch loop devices, root/fio guards."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT_REASON = "needs root and loop devices (losetup) to create scratch block devices"
#: What pytest-xdist tells its workers; a run a test starts must not think it is one.
XDIST_ENV = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


#: scripts/test.sh's passes: ``shared`` (the tests that share the machine, on xdist workers),
#: ``alone`` (the tests marked ``alone``, one after another, and every test that failed in the
#: shared pass: a failure among neighbours is tried once more with none), ``again`` (the tests
#: that failed alone, once more: a timing test that misses twice in a row is the test's fault,
#: once may be the machine's).
PASS_ENV = "EBSPERF_TESTS_PASS"
#: File a pass writes its failed tests' node IDs to.
FAILED_ENV = "EBSPERF_TESTS_FAILED"
#: File of node IDs a pass runs again (the previous pass's failures).
RETRY_ENV = "EBSPERF_TESTS_RETRY"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    which = os.environ.get(PASS_ENV)
    if which not in ("shared", "alone", "again"):
        return
    retry: set[str] = set()
    listed = _env_path(RETRY_ENV)
    if listed is not None and listed.exists():
        retry = set(listed.read_text().split("\n")) - {""}
    keep, drop = [], []
    for item in items:
        alone = item.get_closest_marker("alone") is not None
        if which == "shared":
            wanted = not alone
        elif which == "alone":
            wanted = alone or item.nodeid in retry
        else:
            wanted = item.nodeid in retry
        (keep if wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


_on_a_worker = False


def pytest_configure(config: pytest.Config) -> None:
    global _on_a_worker
    _on_a_worker = hasattr(config, "workerinput")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """In scripts/test.sh's passes, each failed test's node ID goes to the file the next pass
    reads (written by xdist's controller, which sees every worker's reports)."""
    failed = _env_path(FAILED_ENV)
    if os.environ.get(PASS_ENV) is None or failed is None or not report.failed or _on_a_worker:
        return
    with open(failed, "a") as out:
        out.write(report.nodeid + "\n")
    with open(f"{failed}.why", "a") as out:
        out.write(_why(report) + "\n")


#: Lines of a failed test's captured output that say what a run it started concluded.
_VERDICT_LINE = re.compile(r"^\s*(FAIL|INCONCLUSIVE|INFO|ERROR)\b|\bS\d-\d\d\b.*\b(FAIL|INCONCLUSIVE)\b"
                           r"|^=+ .*(passed|failed|inconclusive|error).* in [\d.]+s")


def _why(report: pytest.TestReport) -> str:
    """One line for scripts/test.sh's closing summary: the test, how long it took, the
    assertion that failed and what the runs it started concluded (a CI log shows its end)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = " ".join(str(getattr(crash, "message", report.longrepr)).split())[:300]
    said = []
    for _, text in report.sections:
        said += [" ".join(line.strip(" =").split())[:240] for line in text.splitlines()
                 if _VERDICT_LINE.search(line)]
    tail = " | ".join(said[-3:])
    return (f"{report.nodeid} ({report.when}, {report.duration:.0f} s): {message}"
            + (f" || said: {tail}" if tail else ""))


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs a test starts print their summary for a terminal wide enough that no note wraps
    (paths under xdist's temporary directories are long): the tests read what the tables and
    notes say. How they fit 80, 120 and 200 columns is tests/test_output.py's business (its
    tests set COLUMNS themselves)."""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.fixture(autouse=True)
def _share_the_machine(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tests run side by side under pytest-xdist (``scripts/test.sh``). A test marked
    ``alone`` (it times rates or latencies to a few percent, or counts what the whole machine
    holds) waits until no other test runs and holds the machine while it runs; every other
    test shares it. A shared/exclusive file lock with a turnstile, so a waiting ``alone`` test
    is not starved. Without xdist there is nothing to share. (scripts/test.sh runs the two
    kinds in two passes, so nothing waits: see :func:`pytest_collection_modifyitems`.)

    The runs a test starts (pytester, subprocesses) are not xdist workers themselves."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    for name in XDIST_ENV:
        monkeypatch.delenv(name, raising=False)
    if not run:
        yield
        return
    import fcntl

    # the workers' basetemps share a parent: pytest removes it with the run's others
    shared = request.getfixturevalue("tmp_path_factory").getbasetemp().parent
    base = shared / f"ebsperf-tests-{run}"
    alone = request.node.get_closest_marker("alone") is not None
    with open(f"{base}.turnstile", "a") as turnstile, open(f"{base}.lock", "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def can_make_loop_devices() -> bool:
    return os.geteuid() == 0 and shutil.which("losetup") is not None and \
        os.path.exists("/dev/loop-control")


needs_root = pytest.mark.skipif(not can_make_loop_devices(), reason=ROOT_REASON)
needs_fio = pytest.mark.skipif(shutil.which("fio") is None,
                               reason="needs fio (apt-get install fio)")


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Factory: ``loop_device(size_mib=64)`` -> ``/dev/loopN`` on a sparse file in tmp_path.

    Every device made is detached when the test ends, whatever happened.
    """
    if not can_make_loop_devices():
        pytest.skip(ROOT_REASON)
    made: list[tuple[str, str | None]] = []

    def make(size_mib: int = 64, name: str = "disk") -> str:
        backing = tmp_path / f"{name}-{len(made)}.img"
        with open(backing, "wb") as handle:
            handle.truncate(size_mib * 1024 * 1024)
        device = subprocess.run(["losetup", "--find", "--show", str(backing)], check=True,
                                capture_output=True, text=True).stdout.strip()
        made.append((device, backing_seen(device)))
        return device

    try:
        yield make
    finally:
        for device, backing in made:
            if backing_seen(device) == backing:
                subprocess.run(["umount", device], capture_output=True, check=False)
            detach_own(device, backing)


def backing_seen(device: str) -> str | None:
    """The backing file of loop device ``device`` as the kernel shows it now (None: unbound)."""
    from pytest_ebsperf.emulate.loop import loop_backing_file

    return loop_backing_file(Path(device).name)


def detach_own(device: str, backing: str | None) -> None:
    """``losetup -d device`` only while it still has the backing file it had when the test
    attached it (``backing``, from :func:`backing_seen` then). A device the code under test
    detached (a sweep, a close) frees its number, and a test running beside this one may
    have attached its own volume under that number by now: detaching by name alone would
    pull that volume from under its fio ("zero sized block device")."""
    if backing is None or backing_seen(device) != backing:
        return
    subprocess.run(["losetup", "-d", device], capture_output=True, check=False)


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


def interrupt_once_fio_runs(argv: list[str], cwd: Path, *, settle_s: float = 0.0
                            ) -> tuple[int, str]:
    """Start ``argv``, wait (60 s at most) for a fio under it, wait ``settle_s`` more, press
    Ctrl-C (SIGINT) and return the run's pid and output. Fails with the run's output when no
    fio ever started; the run is killed on every path."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        # a measuring fio, not the short probes (fio --version, the engine probe) that come
        # and go before it: seen in two looks 0.5 s apart
        while time.monotonic() < deadline and proc.poll() is None:
            if fio_descendants(proc.pid):
                time.sleep(0.5)
                if fio_descendants(proc.pid):
                    break
            time.sleep(0.2)
        if not fio_descendants(proc.pid):
            output = proc.communicate(timeout=60)[0].decode() if proc.poll() is not None else ""
            raise AssertionError(f"fio never started; the run said:\n{output[-3000:]}")
        time.sleep(settle_s)
        proc.send_signal(signal.SIGINT)
        return proc.pid, proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            proc.kill()


def run_on_a_terminal(argv: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``argv`` with a pseudo-terminal as its stdin/stdout/stderr; its exit status and
    everything it wrote (60 s of silence ends the wait)."""
    import pty
    import select

    main, child = pty.openpty()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=child, stdout=child, stderr=child)
    os.close(child)
    output = b""
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(main, 4096)
            except OSError:
                break  # the child side closed
            if not chunk:
                break
            output += chunk
        proc.wait(timeout=60)
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, output.decode(errors="replace")


def left_by_dead_runs() -> list[str]:
    """Loop devices and throttle cgroups whose run is gone: local emulated runs
    (``/run/ebsperf/<pid>-<n>/...``), remote ones made from here
    (``ebsperf-remote-<machine>-<pid>-<n>``) and cgroups (``ebsperf-<type>-<pid>-<n>``). Runs
    still alive (other tests' under pytest-xdist) are not leftovers."""
    import re

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
