"""Loop devices on files of a private tmpfs: attach, tune, detach, find, and the tmpfs mount.

Everything goes through util-linux (``losetup``, ``mount``, ``umount``) and sysfs, but the
detach: it holds the device open, checks its backing file and clears it through that same
descriptor (``LOOP_CLR_FD``). While a descriptor is open the kernel neither tears the device
down nor binds it again, so a number that was freed and reused by someone else between the
check and the detach is never touched (``losetup --detach`` after a check would be).
"""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

SYS_BLOCK = Path("/sys/block")
DEV = Path("/dev")
MOUNTINFO = Path("/proc/self/mountinfo")
#: ``<linux/loop.h>``: detach the backing file (deferred to the last close while others
#: hold the device open: the kernel sets autoclear instead).
LOOP_CLR_FD = 0x4C01


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def _check(argv: list[str]) -> str:
    done = _run(argv)
    if done.returncode != 0:
        raise OSError(f"{' '.join(argv)} failed (exit {done.returncode}): {done.stderr.strip()}")
    return done.stdout


@dataclass(frozen=True)
class Mount:
    """One line of mountinfo: what is mounted where."""

    mountpoint: Path
    fstype: str
    source: str
    major_minor: str
    super_options: tuple[str, ...] = ()


def _unescape(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as octal (\040 ...).
    return field.encode().decode("unicode_escape") if "\\" in field else field


def mounts(mountinfo: Path = MOUNTINFO) -> list[Mount]:
    """Mounts of this process's mount namespace."""
    result = []
    for line in mountinfo.read_text().splitlines():
        head, _, tail = line.partition(" - ")
        parts = head.split(" ")
        fstype, source, options = (tail.split(" ") + ["", "", ""])[:3]
        mountpoint = Path(_unescape(parts[4]))
        source = _unescape(source)
        result.append(Mount(mountpoint, fstype, source, parts[2], tuple(options.split(","))))
    return result


def is_mountpoint(path: Path) -> bool:
    """True when ``path`` is a mount point right now (per mountinfo, not a heuristic)."""
    return any(m.mountpoint == path for m in mounts())


def mount_tmpfs(path: Path, size_bytes: int, source: str) -> bool:
    """Mount a private tmpfs of ``size_bytes`` on ``path``; ``source`` marks it as ours.

    ``noswap`` (Linux 6.4 and later) keeps its pages out of swap: a swapped-out page of a
    loop device's backing file makes its reads wait on swap-in, and the volume stops being
    one. Returns True when the kernel took ``noswap``; older kernels mount without it.
    """
    options = f"size={size_bytes},mode=0700"
    done = _run(["mount", "-t", "tmpfs", "-o", f"{options},noswap", source, str(path)])
    if done.returncode == 0:
        return True
    _check(["mount", "-t", "tmpfs", "-o", options, source, str(path)])
    return False


def unmount(path: Path, timeout: float = 5.0) -> None:
    """Unmount ``path``, waiting out EBUSY from a loop device that is still being released.

    A detach of a loop device that is still open only sets autoclear; the file stays busy
    until the last opener is gone. After ``timeout`` the mount is detached lazily so the name
    disappears and the kernel frees it once the last user lets go.
    """
    deadline = time.monotonic() + timeout
    while is_mountpoint(path):
        if _run(["umount", str(path)]).returncode == 0:
            return
        if time.monotonic() > deadline:
            _check(["umount", "--lazy", str(path)])
            return
        time.sleep(0.05)


def loop_backing_file(name: str, sys_block: Path = SYS_BLOCK) -> str | None:
    """The backing file of loop device ``name`` (e.g. ``loop3``), ``None`` when unbound."""
    try:
        text = (sys_block / name / "loop" / "backing_file").read_text().rstrip("\n")
    except OSError:
        return None
    # The kernel appends " (deleted)" once the file was unlinked.
    return text.removesuffix(" (deleted)")


def all_loops(sys_block: Path = SYS_BLOCK) -> dict[str, str]:
    """Every bound loop device (name -> backing file as the kernel shows it)."""
    found = {}
    for entry in sorted(sys_block.glob("loop*")):
        backing = loop_backing_file(entry.name, sys_block)
        if backing is not None:
            found[entry.name] = backing
    return found


def loops_backed_under(directory: Path, sys_block: Path = SYS_BLOCK) -> dict[str, str]:
    """Loop devices (name -> backing file) whose backing file lies under ``directory``."""
    found = {}
    prefix = str(directory).rstrip("/") + "/"
    for entry in sorted(sys_block.glob("loop*")):
        backing = loop_backing_file(entry.name, sys_block)
        if backing is not None and backing.startswith(prefix):
            found[entry.name] = backing
    return found


def attach(backing_file: Path) -> tuple[str, bool]:
    """Attach a free loop device to ``backing_file``; returns (name, direct I/O on).

    Direct I/O keeps the page cache of the loop device out of the timing; a kernel or file
    system that refuses it still gets a working device, just without it.
    """
    done = _run(["losetup", "--find", "--show", "--direct-io=on", str(backing_file)])
    if done.returncode != 0:
        for name in loops_backed_under(backing_file.parent):
            detach(name, backing_file)
        done = _run(["losetup", "--find", "--show", str(backing_file)])
        if done.returncode != 0:
            raise OSError(f"losetup could not attach {backing_file}: {done.stderr.strip()}")
    name = Path(done.stdout.strip()).name
    return name, read_sysfs(name, "loop/dio") == "1"


def read_sysfs(name: str, attribute: str, sys_block: Path = SYS_BLOCK) -> str:
    """One sysfs attribute of block device ``name``, stripped."""
    return (sys_block / name / attribute).read_text().strip()


def write_sysfs(name: str, attribute: str, value: str, sys_block: Path = SYS_BLOCK) -> None:
    """Write ``value`` to ``/sys/block/<name>/<attribute>``."""
    (sys_block / name / attribute).write_text(f"{value.strip()}\n")


def set_max_sectors_kb(name: str, kib: int, sys_block: Path = SYS_BLOCK) -> int:
    """Make the block layer split I/O larger than ``kib`` KiB; returns the value set.

    blk-throttle counts the split pieces, so this is what makes a 1 MiB I/O cost four
    operations on a 256 KiB I/O unit, the way EBS counts them.
    """
    hardware = int(read_sysfs(name, "queue/max_hw_sectors_kb", sys_block))
    value = max(4, min(kib, hardware))
    (sys_block / name / "queue" / "max_sectors_kb").write_text(f"{value}\n")
    return value


def exact_io_bytes(name: str, sys_block: Path = SYS_BLOCK) -> int:
    """Largest I/O the block layer never splits beyond ``max_sectors_kb``.

    A request holds at most ``max_segments`` segments; with a buffer of scattered 4 KiB
    pages that caps it at ``max_segments`` pages, whatever ``max_sectors_kb`` says.
    """
    by_size = int(read_sysfs(name, "queue/max_sectors_kb", sys_block)) * 1024
    by_segments = int(read_sysfs(name, "queue/max_segments", sys_block)) * os.sysconf(
        "SC_PAGE_SIZE"
    )
    return min(by_size, by_segments)


def major_minor(name: str, sys_block: Path = SYS_BLOCK) -> str:
    """``MAJ:MIN`` of block device ``name``."""
    return read_sysfs(name, "dev", sys_block)


def detach(name: str, backing_file: Path | str, timeout: float = 5.0) -> None:
    """Detach loop device ``name`` if (and only if) it is still backed by ``backing_file``.

    Each try opens the device, reads its backing file and clears it through the same
    descriptor: the binding the check saw is the one cleared. While another process holds
    the device the kernel only sets autoclear; this waits (``timeout``) until the kernel
    really released it, trying again, and returns with autoclear set when it did not.
    """
    deadline = time.monotonic() + timeout
    backing = str(backing_file)
    while True:
        try:
            fd = os.open(DEV / name, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return  # gone, or being torn down (ENXIO): not bound to anything to detach
        refused: OSError | None = None
        try:
            if loop_backing_file(name) != backing:
                return  # unbound, or another's volume under this number now
            try:
                fcntl.ioctl(fd, LOOP_CLR_FD)
            except OSError as error:
                refused = error
        finally:
            os.close(fd)
        if loop_backing_file(name) != backing:
            return
        if time.monotonic() > deadline:
            if refused is not None:
                raise OSError(errno.EBUSY, f"could not detach /dev/{name}: {refused.strerror}")
            return  # autoclear is set: the kernel detaches it at its last close
        time.sleep(0.05)


def create_sparse_file(path: Path, size_bytes: int) -> None:
    """Create ``path`` of ``size_bytes`` without allocating memory for it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, size_bytes)
    finally:
        os.close(fd)


def swap_risk() -> str | None:
    """A sentence when swap is on and a tmpfs without ``noswap`` may be swapped out: reads of
    swapped-out pages wait on swap-in, so an emulated volume's rates are at risk."""
    try:
        swaps = Path("/proc/swaps").read_text().splitlines()[1:]
    except OSError:
        swaps = []
    if not any(line.strip() for line in swaps):
        return None
    return ("swap is on and this kernel cannot keep the emulated volume's tmpfs out of it "
            "(noswap needs Linux 6.4): reads of swapped-out pages wait on swap-in, so "
            "the emulated volume's rates are at risk")
