"""Nothing a run creates may outlive it, and nothing a live run owns may be taken from it.

**Closing.** Live resources (fio processes, emulated volumes, temporary directories, bucket
controllers) sit in a process-wide registry, closed newest first at interpreter exit
(``atexit``) and on SIGTERM and SIGHUP, whose default action would otherwise end the process
without running ``atexit`` (a CI runner cancelling a job sends SIGTERM, a closed terminal
SIGHUP). After closing, the process dies of the signal as it would have. SIGKILL cannot be
caught: fio dies with its parent through the kernel's parent-death signal
(:mod:`pytest_ebsperf.fio.process`) and what else is left is found by the next run's sweep.

**Owning.** A sweep must tell a dead run's leftovers from a live run's resources, also when
that run lives in another PID namespace (where its PID number means nothing here). A bare PID
number proves nothing, so every run directory comes with an *owner file* that its run holds an
exclusive ``flock`` on for as long as it lives: the kernel drops the lock when the process
dies, however it dies, and a lock on one file is seen from every PID namespace. The sweep
removes only what comes with an owner file it can lock itself.
"""

from __future__ import annotations

import atexit
import ctypes
import fcntl
import itertools
import os
import signal
import threading
import time
import warnings
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from pytest_ebsperf.deferred import later

if TYPE_CHECKING:  # loaded when first used (pytest_ebsperf/deferred.py)
    from pytest_ebsperf.device import guardian as device_guardian
else:
    device_guardian = later("pytest_ebsperf.device.guardian")

#: A directory without an owner file younger than this may be a run still setting itself up.
GRACE_S = 60.0
#: Signals whose default action ends the process without ``atexit``: close first, then die.
CLOSING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Closeable(Protocol):
    """Anything the registry can close."""

    def close(self) -> None:
        """Release everything; must be idempotent."""


# An RLock because the signal handler runs on the main thread, possibly while that thread
# is inside register()/unregister().
_lock = threading.RLock()
_live: dict[int, Closeable] = {}
_installed = False
_previous: dict[int, Any] = {}


def register(resource: Closeable) -> None:
    """Track ``resource`` until :func:`unregister`; installs the exit hooks on first use."""
    with _lock:
        _live[id(resource)] = resource
    install()
    _guard()


_guarded: int | None = None


def _guard() -> None:
    """Start the run's guardian with its first resource (see :mod:`pytest_ebsperf.device.guardian`):
    what a SIGKILL leaves behind is removed as soon as the run is gone."""
    global _guarded
    if _guarded == os.getpid():
        return

    if device_guardian.start():
        _guarded = os.getpid()
        atexit.register(device_guardian.stop)  # registered after close_all: runs after it


def unregister(resource: Closeable) -> None:
    """Stop tracking ``resource`` (it closed itself)."""
    with _lock:
        _live.pop(id(resource), None)


def live() -> list[Closeable]:
    """The resources still registered, oldest first."""
    with _lock:
        return list(_live.values())


def close_all() -> None:
    """Close every registered resource, newest first; a failure never stops the others."""
    for resource in reversed(live()):
        try:
            resource.close()
        except Exception as exc:  # noqa: BLE001 - keep closing the rest
            warnings.warn(f"Could not close {resource!r}: {exc}", RuntimeWarning, stacklevel=2)
        unregister(resource)


def install() -> None:
    """Close everything at exit and on SIGTERM/SIGHUP (from the main thread; idempotent)."""
    global _installed
    with _lock:
        if _installed:
            return
        _installed = True
    atexit.register(close_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still runs
    for signum in CLOSING_SIGNALS:
        previous = signal.getsignal(signum)
        if previous is signal.SIG_IGN:
            continue  # the process chose to survive it; its resources stay until exit
        _previous[signum] = previous
        signal.signal(signum, _on_signal)


def die_with_parent(signum: int = signal.SIGTERM) -> None:
    """Have the kernel send this process ``signum`` when its parent dies (an xdist worker
    whose controller was killed: SIGTERM closes what the worker made, as it does for pytest).
    Exits at once when the parent is already gone."""
    parent = os.getppid()
    try:

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signum, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent or parent == 1:
        close_all()
        os._exit(1)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    close_all()

    device_guardian.stop()
    previous = _previous.get(signum)
    if callable(previous):
        previous(signum, frame)
        return
    # Default action: die of the signal as if we had never been here, so the parent sees
    # "killed by SIGTERM" rather than a normal exit.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


# -- owner files -------------------------------------------------------------------------
#: Numbers for the private names owner files are made under (:class:`Owner`).
_CLAIMS = itertools.count()


class Owner:
    """An exclusive ``flock`` on ``path``, held until :meth:`release` or the process dies.

    The file says who holds it (pid, start time, PID namespace) for people reading it; the
    sweep trusts only the lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        # made and locked under a name of its own, then linked into place already held: a
        # sweep that opens ``path`` never finds it unlocked while its run lives (created,
        # then locked, a sweep in between took a new run's fio directory under CI's tests)
        claim = path.with_name(f".{path.name}.{os.getpid()}.{next(_CLAIMS)}")
        fd = os.open(claim, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.write(fd, _whoami().encode())
            os.link(claim, path)
        except FileExistsError:
            os.close(fd)
            raise FileExistsError(f"{path} exists: another run's, alive or left behind "
                                  "(a sweep removes it once its run is gone)") from None
        except BaseException:
            os.close(fd)
            raise
        finally:
            claim.unlink(missing_ok=True)
        self._fd: int | None = fd

    def release(self, *, unlink: bool = True) -> None:
        """Remove the owner file (while still holding it) and drop the lock; idempotent."""
        if self._fd is None:
            return
        if unlink:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
        os.close(self._fd)
        self._fd = None


def _whoami() -> str:
    try:
        pidns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pidns = "?"
    try:
        start = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        start = "?"
    return f"pid {os.getpid()} start {start} {pidns}\n"


def owner_alive(owner_file: Path, directory: Path | None = None) -> bool:
    """True while a live process holds ``owner_file``'s lock.

    Without an owner file, ``directory`` counts as live only while younger than
    :data:`GRACE_S` (a run creates its owner file before anything else, so an older one
    without it was left by a run that died, or by a version that kept none).
    """
    try:
        fd = os.open(owner_file, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        if directory is None:
            return False
        try:
            return time.time() - directory.stat().st_mtime < GRACE_S
        except FileNotFoundError:
            return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # a lock we got is dropped again: the caller decides what to remove
    return False
