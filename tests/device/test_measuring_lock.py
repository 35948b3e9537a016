"""The host-wide measuring lock as a check holds it: from its first measurement to its end, so
a check that begins by idling (a burst bucket refilling) waits for no comparison before it
measures. Real flock locks, a second process holding the lock alone as a comparison does."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ebsperf.device import lock

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def lock_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(lock, "LOCK_DIRS", (tmp_path,))
    monkeypatch.delenv(lock.MEASURING_DIR_ENV, raising=False)
    assert not lock._held and not lock._lazy  # nothing of this process holds it
    yield tmp_path
    assert not lock._held and not lock._lazy


def comparison_holding(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process holding the measuring lock alone for ``seconds``, as a comparison does."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def free(path: Path) -> bool:
    """True when nobody holds the lock at ``path`` (an exclusive try from a fresh open)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_a_check_that_idles_first_waits_for_no_comparison_until_its_idle_ends(
        lock_dir: Path) -> None:
    path = lock_dir / lock.MEASURING_LOCK
    holder = comparison_holding(path, 1.5)
    try:
        started = time.monotonic()
        with lock.held_from_first_measurement():
            with lock.set_aside():  # the refill's idle begins at once, holding nothing
                assert time.monotonic() - started < 0.5
            # its idle over, it takes the hold before it reads the clock for its plan (the
            # bucket earns while it waits for the comparison)
            assert time.monotonic() - started >= 1.0
            assert lock._held == ["shared"]
            assert not free(path)  # a comparison starting now would wait for this check
            before = time.monotonic()
            with lock.measuring():  # its fio run finds the hold taken
                assert time.monotonic() - before < 0.3
            assert lock._held == ["shared"]  # kept between its runs
        assert free(path)  # let go when the check ends
    finally:
        holder.wait(timeout=10)


def test_a_check_that_measures_first_takes_the_hold_at_its_first_run(lock_dir: Path) -> None:
    path = lock_dir / lock.MEASURING_LOCK
    lock.hold_now()  # outside a check: nothing to take
    assert not lock._held and free(path)
    with lock.held_from_first_measurement():
        assert not lock._held and free(path)
        lock.hold_now()  # a burst check, before it reads its bucket's balance
        assert lock._held == ["shared"] and not free(path)
    assert free(path)


def test_a_comparison_inside_a_lazily_held_check_takes_the_lock_alone_and_gives_it_back(
        lock_dir: Path) -> None:
    path = lock_dir / lock.MEASURING_LOCK
    with lock.held_from_first_measurement():
        with lock.measuring():
            pass
        with lock.measuring(alone=True):
            assert lock._held == ["shared", "alone"]
        assert lock._held == ["shared"]
        with lock.measuring():
            assert lock._held == ["shared", "shared"]
    assert free(path) and not lock._held


def test_a_check_whose_figures_do_not_depend_on_when_it_runs_holds_the_lock_per_run(
        lock_dir: Path) -> None:
    # a rate check on a volume without a burst bucket: a comparison waiting on another
    # worker gets the host between its runs, not only after the whole check
    path = lock_dir / lock.MEASURING_LOCK
    with lock.held_from_first_measurement():
        with lock.measuring(whole_check=False):
            assert lock._held == ["shared"] and not free(path)
        assert not lock._held and free(path)  # between its runs: free for a comparison
        with lock.measuring(alone=True, whole_check=False):  # a run that must be alone
            assert lock._held == ["alone"]
        assert not lock._held and free(path)
        with lock.measuring():  # a burst check's run: kept to the check's end
            pass
        assert lock._held == ["shared"] and not free(path)
    assert free(path) and not lock._held


def test_a_run_that_names_a_measuring_folder_of_its_own_waits_for_no_other_runs_holds(
        lock_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = lock_dir / lock.MEASURING_LOCK
    holder = comparison_holding(host, 60)  # killed below
    try:
        own = tmp_path / "own"
        own.mkdir()
        monkeypatch.setenv(lock.MEASURING_DIR_ENV, str(own))
        started = time.monotonic()
        with lock.measuring(alone=True) as waited:
            assert not waited and time.monotonic() - started < 0.5
            assert not free(own / lock.MEASURING_LOCK)  # held alone there, by this run
        assert free(own / lock.MEASURING_LOCK)
        assert not free(host)  # the host's lock is still the other comparison's
        monkeypatch.delenv(lock.MEASURING_DIR_ENV)
        assert lock._measuring_path(lock.MEASURING_LOCK) == host  # without it: the host's
    finally:
        holder.kill()
        holder.wait()


def test_a_measuring_folder_that_is_not_there_is_a_sentence(
        lock_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ebsperf.errors import ConfigError

    monkeypatch.setenv(lock.MEASURING_DIR_ENV, str(tmp_path / "missing"))
    said = "EBSPERF_MEASURING_LOCK_DIR=.*missing is not a folder"
    with pytest.raises(ConfigError, match=said), lock.measuring():
        pass
    assert not lock._held and not lock._fd
