"""Nothing an emulated volume creates may outlive the run.

Live devices sit in a process-wide registry that is closed at interpreter exit (``atexit``)
and on SIGTERM, whose default action would otherwise end the process without running
``atexit``. Whatever a crashed run (SIGKILL, power loss) left behind is found again by its
names, which carry the owner's pid, and removed by :func:`sweep_stale` once that pid is dead.
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import threading
import warnings
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from pytest_ebsperf.emulate import loop
from pytest_ebsperf.emulate.throttle import CgroupRoots, find_cgroup_roots

#: Every name we create starts with this: cgroups ``ebsperf[-label]-<pid>-<n>``, the tmpfs
#: source ``ebsperf[-label]``, run directories ``<RUN_ROOT>/<pid>-<n>``.
PREFIX = "ebsperf"
RUN_ROOT = Path("/run") / PREFIX
# Greedy label, so the last two numbers are always the pid and the counter.
_CGROUP = re.compile(rf"^{PREFIX}(?:-[A-Za-z0-9_-]+)?-(\d+)-(\d+)$")


def valid_name(name: str) -> bool:
    """True for ``ebsperf`` and ``ebsperf-<label>`` (letters, digits, ``-``, ``_``)."""
    return re.fullmatch(rf"{PREFIX}(-[A-Za-z0-9_-]+)?", name) is not None


class Closeable(Protocol):
    """Anything the registry can close (an :class:`EmulatedDevice`)."""

    def close(self) -> None:
        """Release everything; must be idempotent."""


# An RLock because the SIGTERM handler runs on the main thread, possibly while that thread
# is inside register()/unregister().
_lock = threading.RLock()
_live: dict[int, Closeable] = {}
_installed = False
_previous_sigterm: Any = None


def register(resource: Closeable) -> None:
    """Track ``resource`` until :func:`unregister`; installs the exit hooks on first use."""
    with _lock:
        _live[id(resource)] = resource
        _install_hooks()


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


def _install_hooks() -> None:
    global _installed, _previous_sigterm
    if _installed:
        return
    _installed = True
    atexit.register(close_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still runs
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_IGN:
        return  # the process chose to survive SIGTERM; its devices stay until exit
    _previous_sigterm = previous
    signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    close_all()
    previous = _previous_sigterm
    if callable(previous):
        previous(signum, frame)
        return
    # Default action: die of the signal as if we had never been here, so the parent sees
    # "killed by SIGTERM" rather than a normal exit.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def pid_alive(pid: int) -> bool:
    """True when a process ``pid`` exists (EPERM still means it exists)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(*, run_root: Path = RUN_ROOT, roots: CgroupRoots | None = None) -> list[str]:
    """Remove what a crashed earlier run of a now dead process left behind.

    Only loop devices backed by files under ``<run_root>/<pid>-<n>``, ``ebsperf*`` tmpfs
    mounts there, empty such directories and empty ``ebsperf[-label]-<pid>-<n>`` cgroups
    are touched, and only when that pid is dead. Returns one line per removed item.
    """
    run_dir = re.compile(rf"^{re.escape(str(run_root))}/(\d+)-(\d+)(/|$)")
    removed: list[str] = []
    for device, backing in loop.loops_backed_under(run_root).items():
        match = run_dir.match(backing)
        if match and not pid_alive(int(match.group(1))):
            loop.detach(device, backing)
            removed.append(f"loop device /dev/{device} ({backing})")
    for mount in loop.mounts():
        match = run_dir.match(str(mount.mountpoint) + "/")
        dead = match is not None and not pid_alive(int(match.group(1)))
        if dead and mount.fstype == "tmpfs" and valid_name(mount.source):
            loop.unmount(mount.mountpoint)
            removed.append(f"tmpfs mount {mount.mountpoint}")
    removed += _sweep_dirs(run_root, run_dir)
    removed += _sweep_cgroups(roots or find_cgroup_roots())
    return removed


def _sweep_dirs(base: Path, run_dir: re.Pattern[str]) -> list[str]:
    removed = []
    for path in sorted(base.glob("*-*")) if base.is_dir() else []:
        match = run_dir.match(str(path))
        if match and not pid_alive(int(match.group(1))) and not loop.is_mountpoint(path):
            try:
                path.rmdir()  # only when empty: whatever else is there is not ours to delete
            except OSError:
                continue
            removed.append(f"run directory {path}")
    return removed


def _sweep_cgroups(roots: CgroupRoots) -> list[str]:
    removed = []
    for root in (roots.v1_blkio, roots.v2):
        for path in sorted(root.iterdir()) if root is not None else []:
            match = _CGROUP.match(path.name)
            if not match or not path.is_dir() or pid_alive(int(match.group(1))):
                continue
            try:
                if (path / "cgroup.procs").read_text().strip():
                    continue  # processes of a dead run still run there: not ours to kill
                path.rmdir()
            except OSError:
                continue  # gone meanwhile, or busy
            removed.append(f"cgroup {path}")
    return removed
