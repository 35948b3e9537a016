"""One load on a device at a time, across pytest-xdist workers and separate runs.

Two fio runs on one volume each see about half of it: with ``pytest -n 2 --device=...``
every check would fail. Each fio run on a real device therefore holds an exclusive ``flock``
on a lock file named after the device's number (``MAJ:MIN``, so every path that reaches the
same device shares it), and waits for it when another worker or run holds it. The lock dies
with the process that holds it, whatever ends that process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

#: Where lock files go (the system's lock directory; the temporary one when it is missing).
LOCK_DIRS = (Path("/run/lock"), Path(tempfile.gettempdir()))


def lock_path(device: str) -> Path:
    """The lock file for ``device`` (by device number, so aliases share it)."""
    rdev = os.stat(device).st_rdev
    name = f"ebsperf-dev-{os.major(rdev)}-{os.minor(rdev)}.lock"
    for directory in LOCK_DIRS:
        if directory.is_dir() and os.access(directory, os.W_OK):
            return directory / name
    return Path(tempfile.gettempdir()) / name


@contextlib.contextmanager
def device_lock(device: str) -> Iterator[bool]:
    """Hold ``device``'s lock for the ``with`` block; yields True when it had to wait."""
    path = lock_path(device)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        waited = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            waited = True
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield waited
    finally:
        os.close(fd)  # releases the lock
