"""One load on a device at a time, across pytest-xdist workers and separate runs.

Two fio runs on one volume each see about half of it: with ``pytest -n 2 --device=...``
every check would fail. Each fio run on a real device therefore holds an exclusive ``flock``
on a lock file named after the storage at the bottom of the device's stack
(:func:`pytest_ebsperf.device.identity.family`: the whole disk of a partition, the file of a loop
device by its device and inode), so a disk and its partition, two loop devices over one file
or a loop device over another all share one lock, and waits for it when another worker or run
holds it. The lock file's descriptor is handed to fio as well: the lock is dropped only when
the run's last process is gone, whatever ends it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ebsperf.device.identity import family_of_path
from pytest_ebsperf.errors import ConfigError

if TYPE_CHECKING:
    from typing import Self

#: Where lock files go (the system's lock directory; the temporary one when it is missing).
LOCK_DIRS = (Path("/run/lock"), Path(tempfile.gettempdir()))


def lock_name(root: str) -> str:
    """``device 7:0`` -> ``ebsperf-dev-7-0.lock``; ``file 254:0 inode 12`` ->
    ``ebsperf-file-254-0-12.lock``."""
    words = root.replace(":", " ").split()
    if words[0] == "device":
        return f"ebsperf-dev-{words[1]}-{words[2]}.lock"
    return f"ebsperf-file-{words[1]}-{words[2]}-{words[4]}.lock"


def roots_of(device: str) -> tuple[str, ...]:
    """The storage at the bottom of ``device``'s stack (see :mod:`pytest_ebsperf.device.identity`)."""

    return family_of_path(device).roots


def lock_path_of(root: str) -> Path:
    name = lock_name(root)
    for directory in LOCK_DIRS:
        if directory.is_dir() and os.access(directory, os.W_OK):
            return directory / name
    return Path(tempfile.gettempdir()) / name


class DeviceLock:
    """The locks of every root under some devices, held while the ``with`` block runs; ``fds``
    are to be inherited by fio so the locks outlive this process until fio is gone."""

    def __init__(self, devices: list[str]) -> None:
        roots: set[str] = set()
        for device in devices:
            roots.update(roots_of(device))
        self.roots = sorted(roots)  # one order for everyone: no deadlock
        self.fds: list[int] = []
        self.waited = False

    def __enter__(self) -> Self:
        try:
            for root in self.roots:
                fd = os.open(lock_path_of(root), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                self.fds.append(fd)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    self.waited = True
                    fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds:
            os.close(fd)  # releases the lock (once fio, which inherited it, is gone too)
        self.fds = []


@contextlib.contextmanager
def device_lock(device: str) -> Iterator[bool]:
    """Hold ``device``'s locks for the ``with`` block; yields True when it had to wait."""
    with DeviceLock([device]) as lock:
        yield lock.waited


# -- one measuring host: exclusive holds ---------------------------------------------------
#: The host-wide measuring lock and the turnstile that keeps a waiting exclusive hold from
#: being overtaken by new measurements.
MEASURING_LOCK = "ebsperf-measuring.lock"
TURNSTILE_LOCK = "ebsperf-measuring-turnstile.lock"
#: This process's holds on the measuring lock, innermost last ("shared" or "alone"), and the
#: one descriptor they share (flock locks belong to an open file: two descriptors of one
#: process would block each other, so an upgrade converts this one).
_held: list[str] = []
_fd: list[int] = []
#: Open lazy holds (:func:`held_from_first_measurement`), innermost last.
_lazy: list[bool] = []


#: Names the folder of the host-wide measuring lock when set: runs that name different folders
#: measure without waiting for each other's holds (the project's own tests give a test whose
#: runs' verdicts it does not read a folder of its own). Device locks stay in LOCK_DIRS.
MEASURING_DIR_ENV = "EBSPERF_MEASURING_LOCK_DIR"


def _measuring_path(name: str) -> Path:
    given = os.environ.get(MEASURING_DIR_ENV)
    if given:
        if not (os.path.isdir(given) and os.access(given, os.W_OK)):
            raise ConfigError(f"{MEASURING_DIR_ENV}={given} is not a folder this run can write "
                              "to: name an existing, writable folder, or unset it (the "
                              f"measuring lock then lives in {LOCK_DIRS[0]})")
        return Path(given) / name
    for directory in LOCK_DIRS:
        if directory.is_dir() and os.access(directory, os.W_OK):
            return directory / name
    return Path(tempfile.gettempdir()) / name


def _take(mode: int) -> bool:
    """Queue at the turnstile, then take the measuring lock in ``mode`` on this process's
    descriptor; True when either had to wait."""
    waited = False
    turnstile = os.open(_measuring_path(TURNSTILE_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                        0o600)
    try:
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = True
            fcntl.flock(turnstile, fcntl.LOCK_EX)
        if not _fd:
            _fd.append(os.open(_measuring_path(MEASURING_LOCK),
                               os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        try:
            fcntl.flock(_fd[0], mode | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = True
            fcntl.flock(_fd[0], mode)
    finally:
        os.close(turnstile)  # in (or failed): let the next one queue
    return waited


@contextlib.contextmanager
def measuring(*, alone: bool = False, whole_check: bool = True) -> Iterator[bool]:
    """Hold the host-wide measuring lock for the ``with`` block: shared by ordinary checks
    (any number of pytest-xdist workers and runs measure side by side), exclusive for a
    comparison of two measurements on real devices (S0-08, S1-03, S1-08, S2-17:
    :func:`pytest_ebsperf.checks.paired.held`), a run measured again because the host spoiled
    it, a latency claim on an emulated volume and a volume whose emulation needs the host's
    CPUs, which then never share the host with another measuring worker. A waiting exclusive
    hold holds the turnstile, so checks that start after it wait for it (no starvation). A
    shared hold that asks to be alone lets go first and queues (two workers upgrading at
    once would otherwise wait for each other). Inside :func:`held_from_first_measurement`
    the first shared hold is kept to the end of that block; ``whole_check`` False holds it
    for this block only (a check whose figures do not depend on when it measures: an
    exclusive hold may come between its runs). Yields True when it had to wait."""
    want = "alone" if alone else "shared"
    if _lazy and not _held and not alone and whole_check:
        # a lazy hold's first measurement: the shared hold is taken now and kept until the
        # lazy block ends (its entry at the bottom of the stack is that block's)
        _take(fcntl.LOCK_SH)
        _held.append("shared")
    current = _held[-1] if _held else None
    if current == "alone" or current == want:
        _held.append(current)
        try:
            yield False
        finally:
            _held.pop()
        return
    if current == "shared":
        fcntl.flock(_fd[0], fcntl.LOCK_UN)  # upgrade: out, then queue like everyone else
    try:
        waited = _take(fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
    except BaseException:
        _release_to(current)
        raise
    _held.append(want)
    try:
        yield waited
    finally:
        _held.pop()
        _release_to(_held[-1] if _held else None)


@contextlib.contextmanager
def held_from_first_measurement() -> Iterator[None]:
    """A whole check's shared measuring hold, taken by its first measurement rather than at
    its start, and kept to the end of the ``with`` block: a check that begins by idling (a
    burst bucket refilling) waits for no comparison before it has anything to measure, yet
    once it measures, no comparison cuts into it. No-op inside another hold."""
    if _held or _lazy:
        yield
        return
    _lazy.append(False)
    try:
        yield
    finally:
        _lazy.pop()
        if _held == ["shared"]:  # taken by the block's first measurement
            _held.pop()
            _release_to(None)


def hold_now() -> None:
    """Take an open lazy hold (:func:`held_from_first_measurement`) now rather than at the
    next fio run: what a check computes from the clock (a burst bucket's balance) must come
    after any wait for a comparison, which the bucket spends earning. No-op otherwise."""
    if _lazy and not _held:
        with measuring():
            pass


def _release_to(mode: str | None) -> None:
    """Back to the outer hold (``None``: let go and close the descriptor)."""
    if not _fd:
        return
    if mode is None:
        os.close(_fd.pop())
    elif mode == "shared":
        fcntl.flock(_fd[0], fcntl.LOCK_SH)


@contextlib.contextmanager
def set_aside() -> Iterator[None]:
    """Let go of this process's shared measuring hold for the ``with`` block (a check that
    idles, such as a burst bucket refilling, lets a waiting comparison measure meanwhile),
    then queue for it again. No-op when nothing or an exclusive hold is held."""
    if not _held or _held[-1] != "shared" or not _fd:
        yield
        if _lazy and not _held:  # a lazy hold not taken yet: taken now, before the next plan
            hold_now()
        return
    fcntl.flock(_fd[0], fcntl.LOCK_UN)
    try:
        yield
    finally:
        _take(fcntl.LOCK_SH)
