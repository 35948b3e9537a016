"""Nothing an emulated volume creates may outlive the run.

Live devices sit in the process-wide registry of :mod:`pytest_ebsperf.device.lifetime`, closed at
interpreter exit and on SIGTERM/SIGHUP. Whatever a crashed run (SIGKILL, power loss) left
behind is found again by its names (``<run_root>/<pid>-<n>``, cgroups
``ebsperf[-label]-<pid>-<n>``) and removed by :func:`sweep_stale` once the run is dead: dead
means that nobody holds the lock on its owner file ``<run_root>/<pid>-<n>.owner``, never that
a PID number is unused (in another PID namespace a live run's PID is unknown here).
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import stat
from pathlib import Path

from pytest_ebsperf.device import lifetime
from pytest_ebsperf.emulate import loop
from pytest_ebsperf.emulate.throttle import CgroupRoots, find_cgroup_roots

#: Every name we create starts with this: cgroups ``ebsperf[-label]-<pid>-<n>``, the tmpfs
#: source ``ebsperf[-label]``, run directories ``<RUN_ROOT>/<pid>-<n>``.
PREFIX = "ebsperf"
RUN_ROOT = Path("/run") / PREFIX
# Greedy label, so the last two numbers are always the pid and the counter.
_CGROUP = re.compile(rf"^{PREFIX}(?:-[A-Za-z0-9_-]+)?-(\d+)-(\d+)$")
#: ``ebsperf-remote-<machine>-<pid>-<n>``: made over SSH by the pytest ``pid`` of ``machine``.
_REMOTE_CGROUP = re.compile(rf"^{PREFIX}-remote-([0-9a-f]+)-(\d+)-\d+$")


def valid_name(name: str) -> bool:
    """True for ``ebsperf`` and ``ebsperf-<label>`` (letters, digits, ``-``, ``_``)."""
    return re.fullmatch(rf"{PREFIX}(-[A-Za-z0-9_-]+)?", name) is not None


Closeable = lifetime.Closeable
register = lifetime.register
unregister = lifetime.unregister
live = lifetime.live
close_all = lifetime.close_all


def owner_file(run_dir: Path) -> Path:
    """The owner file of a run directory ``<run_root>/<pid>-<n>``: ``<pid>-<n>.owner``."""
    return run_dir.with_name(run_dir.name + ".owner")


def claim(run_dir: Path) -> lifetime.Owner:
    """Hold ``run_dir``'s owner file (raises FileExistsError when a live run holds it)."""
    return lifetime.Owner(owner_file(run_dir))


def run_alive(run_dir: Path) -> bool:
    """True while the run that made ``run_dir`` lives (its owner file is locked)."""
    return lifetime.owner_alive(owner_file(run_dir), run_dir)

#: This machine in the names of what it makes on other hosts, so that a sweep only ever takes
#: leftovers of runs from here (another controller's pids mean nothing here).
MACHINE = hashlib.sha1(platform.node().encode()).hexdigest()[:8]


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


def image_name(run_dir: Path) -> str:
    """The backing file's name of run directory ``<run_root>/<pid>-<n>``:
    ``ebsperf-run-<pid>-<n>.img``."""
    return f"{PREFIX}-run-{run_dir.name}.img"


_IMAGE = re.compile(rf"/{PREFIX}-run-(\d+)-(\d+)\.img$")
_REMOTE_IMAGE = re.compile(rf"/{PREFIX}-remote-([0-9a-f]+)-(\d+)-(\d+)\.img$")
#: The name earlier versions gave every backing file; seen as ``/volume.img`` from here once
#: its tmpfs is unreachable (lazily unmounted, or in a mount namespace that is gone).
_LEGACY_UNREACHABLE = "/volume.img"


def open_by_anyone(number: str, proc: Path = Path("/proc")) -> bool:
    """True when some process has block device ``MAJ:MIN`` open (a scan of /proc/*/fd)."""

    for fd_dir in proc.glob("[0-9]*/fd"):
        try:
            entries = list(fd_dir.iterdir())
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat()
            except OSError:
                continue
            if stat.S_ISBLK(info.st_mode) and \
                    f"{os.major(info.st_rdev)}:{os.minor(info.st_rdev)}" == number:
                return True
    return False


def _orphan(backing: str, name: str, run_root: Path) -> str | None:
    """Why the loop device ``name`` over ``backing`` is a dead run's, or None.

    Found by what the kernel shows, wherever the file lives: a backing file named after a
    local run whose owner is gone, or after a remote run of this machine whose pytest is
    gone (a host in a namespace of this machine), or an earlier version's ``volume.img``
    whose tmpfs can no longer be reached and that nobody has open."""
    local = _IMAGE.search(backing)
    if local and not backing.startswith(str(run_root) + "/"):
        # Its owner file may be where the kernel shows the file (a run under another root:
        # the machine's own, when this sweep was given a root of its own), or under this
        # root (a file seen through a mount namespace or a lazily unmounted tmpfs shows
        # only its name). The run is gone only when neither place has a live owner.
        run = f"{local.group(1)}-{local.group(2)}"
        shown = Path(backing).parent
        places = {run_root / run, RUN_ROOT / run} | ({shown} if shown.name == run else set())
        return None if any(run_alive(place) for place in places) else "its run is gone"
    remote = _REMOTE_IMAGE.search(backing)
    if remote and remote.group(1) == MACHINE:
        pid = int(remote.group(2))
        return None if pid == os.getpid() or pid_alive(pid) else "its run is gone"
    if backing == _LEGACY_UNREACHABLE and not Path(backing).exists():
        number = loop.major_minor(name)
        if not open_by_anyone(number) and not any((loop.SYS_BLOCK / name / "holders")
                                                  .iterdir()):
            return "its file cannot be reached and nobody uses it"
    return None


def sweep_stale(*, run_root: Path = RUN_ROOT, roots: CgroupRoots | None = None) -> list[str]:
    """Remove what a crashed earlier run left behind.

    Only loop devices backed by files under ``<run_root>/<pid>-<n>``, ``ebsperf*`` tmpfs
    mounts there, empty such directories, their owner files and empty
    ``ebsperf[-label]-<pid>-<n>`` cgroups are touched, and only when the run that made them
    is dead (:func:`run_alive`). Returns one line per removed item.
    """
    run_dir = re.compile(rf"^{re.escape(str(run_root))}/(\d+)-(\d+)(/|$)")
    removed: list[str] = []

    def dead(match: re.Match[str] | None) -> bool:
        return match is not None and not run_alive(run_root / f"{match.group(1)}-{match.group(2)}")

    for device, backing in loop.loops_backed_under(run_root).items():
        if dead(run_dir.match(backing)):
            loop.detach(device, backing)
            removed.append(f"loop device /dev/{device} ({backing})")
    for device, backing in loop.all_loops().items():
        why = _orphan(backing, device, run_root)
        if why is not None:
            loop.detach(device, backing)
            removed.append(f"loop device /dev/{device} ({backing}: {why})")
    for mount in loop.mounts():  # an emulated-latency daemon's file system, over the tmpfs
        match = run_dir.match(str(mount.mountpoint) + "/")
        if dead(match) and mount.fstype.startswith("fuse") and mount.source == "ebsperf-latfs":
            loop.unmount(mount.mountpoint)
            removed.append(f"latency mount {mount.mountpoint}")
    for mount in loop.mounts():
        match = run_dir.match(str(mount.mountpoint) + "/")
        if dead(match) and mount.fstype == "tmpfs" and valid_name(mount.source):
            loop.unmount(mount.mountpoint)
            removed.append(f"tmpfs mount {mount.mountpoint}")
    removed += _sweep_dirs(run_root, run_dir)
    removed += _sweep_cgroups(roots or find_cgroup_roots(), run_root)
    return removed


def _sweep_dirs(base: Path, run_dir: re.Pattern[str]) -> list[str]:
    removed = []
    for path in sorted(base.glob("*-*")) if base.is_dir() else []:
        if path.suffix == ".owner" or not path.is_dir():
            continue
        match = run_dir.match(str(path))
        if match and not run_alive(path) and not loop.is_mountpoint(path):
            try:
                path.rmdir()  # only when empty: whatever else is there is not ours to delete
            except OSError:
                continue
            removed.append(f"run directory {path}")
    for owner in sorted(base.glob("*-*.owner")) if base.is_dir() else []:
        directory = owner.with_suffix("")
        if not directory.exists() and not lifetime.owner_alive(owner):
            owner.unlink(missing_ok=True)  # its run directory is gone: so is the run
    return removed


def _sweep_cgroups(roots: CgroupRoots, run_root: Path) -> list[str]:
    removed = []
    for root in (roots.v1_blkio, roots.v2):
        for path in sorted(root.iterdir()) if root is not None else []:
            match = _CGROUP.match(path.name)
            if not match or not path.is_dir():
                continue
            remote = _REMOTE_CGROUP.match(path.name)
            if remote:
                # An emulated volume made over SSH (this machine may be another's remote
                # host): no run directory of it lives under run_root here, so the local
                # rule would call a live one dead - and remove it, still empty, between
                # its making and its fio. Such a cgroup is the remote sweep's, unless it
                # is a dead run of this very machine.
                pid = int(remote.group(2))
                if remote.group(1) != MACHINE or pid == os.getpid() or pid_alive(pid):
                    continue
            else:
                run = run_root / f"{match.group(1)}-{match.group(2)}"
                # The cgroup is made after the owner file: alive while the owner is, and a
                # run whose owner file and directory are both gone is gone too.
                if lifetime.owner_alive(owner_file(run), run):
                    continue
            try:
                if (path / "cgroup.procs").read_text().strip():
                    continue  # processes of a dead run still run there: not ours to kill
                path.rmdir()
            except OSError:
                continue  # gone meanwhile, or busy
            removed.append(f"cgroup {path}")
    return removed
