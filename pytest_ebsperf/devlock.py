"""One load on a device at a time, across pytest-xdist workers and separate runs.

Two fio runs on one volume each see about half of it: with ``pytest -n 2 --device=...``
every check would fail. Each fio run on a real device therefore holds an exclusive ``flock``
on a lock file named after the storage at the bottom of the device's stack
(:func:`pytest_ebsperf.identity.family`: the whole disk of a partition, the file of a loop
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
    """The storage at the bottom of ``device``'s stack (see :mod:`pytest_ebsperf.identity`)."""
    from pytest_ebsperf.identity import family_of_path

    return family_of_path(device).roots


def lock_path(device: str) -> Path:
    """The lock file for ``device`` (by the first root of its stack, so aliases share it)."""
    return lock_path_of(roots_of(device)[0])


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
