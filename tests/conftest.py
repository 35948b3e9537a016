"""Fixtures shared by the project's own tests: scratch loop devices, root/fio guards."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.common import ROOT_REASON, backing_seen, can_make_loop_devices, detach_own

from pytest_ebsperf.config.emulation import SHARED_CALIBRATION_ENV
from pytest_ebsperf.device.lock import MEASURING_DIR_ENV

#: Fixtures any test may ask for by name: moto, the fake IMDS and sysfs, the inner pytest runs
#: of the AWS plugin (the guard is on every test of ``tests/aws``: its conftest).
pytest_plugins = ["support.aws", "support.aws_plugin"]

#: What pytest-xdist tells its workers; a run a test starts must not think it is one.
XDIST_ENV = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


#: File scripts/test.sh's passes have each failed test's node ID written to (and, beside it in
#: ``.why``, one line saying why: the log's closing summary).
FAILED_ENV = "EBSPERF_TESTS_FAILED"


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value) if value else None


_on_a_worker = False

# Started in the background of a non-interactive shell (``scripts/test.sh &``, as CI runners
# and wrappers start commands), this process has SIGINT ignored and every child would
# inherit it: the Ctrl-C tests' runs and sleepers would ignore the SIGINT they are sent.
# Python's own handler instead (a handled signal is reset to its default across exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    global _on_a_worker
    _on_a_worker = hasattr(config, "workerinput")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``early`` (the shared pass's longest whose time is fio's planned
    seconds, 45-75 s each) go first, in file order. pytest-xdist's ``worksteal`` gives each
    worker a contiguous share of the collection and lets idle workers take the back half of
    another's queue, never the test it runs: one such test started last kept its worker busy
    47 s after the other five had ended (docs/benchmarks.md). First, they run one after
    another on the first worker while the others take the rest of its share. The order is
    the same on every worker, as xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("early") is None)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """In scripts/test.sh's passes, each failed test's node ID and why go to the pass's file
    (written by xdist's controller, which sees every worker's reports)."""
    failed = _env_path(FAILED_ENV)
    if failed is None or not report.failed or _on_a_worker:
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
    notes say. How they fit 80, 120 and 200 columns is tests/results/test_output.py's business (its
    tests set COLUMNS themselves)."""
    monkeypatch.setenv("COLUMNS", "1000")


#: What the runs a test starts leave out: Hypothesis's pytest plugin imports the whole of
#: Hypothesis (1.4-1.7 s of CPU) at the end of every run, and no run a test starts has a
#: Hypothesis test (the tests that do run in this process).
CHILD_ADDOPTS = "-p no:hypothesispytest"


@pytest.fixture(autouse=True)
def _lighter_children(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs a test starts (pytester's, which clears PYTEST_ADDOPTS when it is made, and plain
    subprocesses) go without :data:`CHILD_ADDOPTS`'s plugins."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")
    given = os.environ.get("PYTEST_ADDOPTS", "")
    if CHILD_ADDOPTS not in given:
        monkeypatch.setenv("PYTEST_ADDOPTS", f"{given} {CHILD_ADDOPTS}".strip())


#: Set by ``scripts/test.sh`` for its last pass: ``alone`` tests share the machine in three
#: lanes (its ``alone(machine=True)`` ones run in a pass of their own, and hold the machine
#: whenever they run beside others).
LANES = "EBSPERF_TEST_LANES"


@pytest.fixture(autouse=True)
def _share_the_machine(request: pytest.FixtureRequest,
                       monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tests run side by side under pytest-xdist (``scripts/test.sh``). A test marked
    ``alone`` (it times rates or latencies to a few percent, or expects a FAIL that a busy CPU
    would make INCONCLUSIVE) never runs beside the other tests; ``alone(machine=True)`` (it
    counts or sweeps what the whole machine holds, loads every CPU itself, or judges emulated
    twins to a few percent) never runs beside any test. A shared/exclusive file lock with a
    turnstile, so a waiting test is not starved.

    ``scripts/test.sh`` runs the kinds in three passes: the ``machine`` tests one at a time,
    ``-m "not alone"`` on six workers, then the other ``alone`` tests in three lanes
    (:data:`LANES` set): three ``alone`` tests side by side, which leave the CPUs about half
    idle (their time is fio's planned seconds and a latency claim holds the host's measuring
    lock alone while it measures),
    while a ``machine`` test run among them would still hold the machine.
    Without xdist there is no lock to take; the latency daemon's path corrections are shared
    all the same.

    The runs a test starts (pytester, subprocesses) are not xdist workers themselves."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    for name in XDIST_ENV:
        monkeypatch.delenv(name, raising=False)
    basetemp = request.getfixturevalue("tmp_path_factory").getbasetemp()
    # the workers' basetemps share a parent: pytest removes it with the run's others
    base = basetemp.parent / f"ebsperf-tests-{run}" if run else basetemp / "ebsperf-tests"
    # the runs tests start measure the latency daemon's path once per service time for the
    # whole pass, as one run's xdist workers do (emulate/service_time.py: the daemon follows
    # the path from there), the machine tests' pass (no xdist) too: its comparisons of
    # emulated twins measured the same 1 and 3 ms paths again, 5 s each; a test of the
    # calibration itself names a folder of its own
    calibration = Path(f"{base}.calibration")
    calibration.mkdir(exist_ok=True)
    monkeypatch.setenv(SHARED_CALIBRATION_ENV, str(calibration))
    if request.node.get_closest_marker("own_measuring_lock") is not None:
        # its runs' verdicts are not what it reads: they neither wait behind other tests'
        # holds of the host alone (up to 55 s a test in pass 2) nor hold it from them, and
        # measure their own paths (none of theirs goes to the pass's shared corrections)
        apart = request.getfixturevalue("tmp_path") / "measuring-apart"
        apart.mkdir()
        monkeypatch.setenv(MEASURING_DIR_ENV, str(apart))
        monkeypatch.setenv(SHARED_CALIBRATION_ENV, str(apart))
    if not run:
        yield
        return
    import fcntl

    marker = request.node.get_closest_marker("alone")
    alone = marker is not None and (marker.kwargs.get("machine", False)
                                    or not os.environ.get(LANES))
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


