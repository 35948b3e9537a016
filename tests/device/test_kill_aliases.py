"""Never destroy, for real: kills aimed at pytest alone during writes, stacked aliases, one
identity per piece of storage.

Every test here runs real fio through real pytest on loop devices over files on a disk
filesystem, throttled by the kernel (cgroup v1 blkio) so that a write check is still writing
when the signal comes. The signal goes to **pytest's PID only** (as a CI runner, a supervisor
or ``kill -TERM $pid`` sends it), to the whole process group, or to an xdist controller. Then:
within 1 s of pytest's exit no process has the device open (a scan of ``/proc/*/fd``), the
device's write counter (``/sys/block/X/stat``) does not move for 2 s, and a filesystem made on
the device right after passes ``e2fsck`` when the run would have ended.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.common import (
    FIO_START_WAIT_S,
    ROOT,
    backing_seen,
    detach_own,
    needs_fio,
    needs_root,
)

from pytest_ebsperf.device import hold, identity, lock
from pytest_ebsperf.emulate import cleanup, loop
from pytest_ebsperf.errors import UnsafeDeviceError

IO1 = f"{ROOT}/suites/io1/test_io1.py"
IO1_WRITE = f"{IO1}::test_random_write_holds_provisioned_iops"
VOLUME = ["--volume-type=io1", "--volume-size=100", "--volume-iops=2000"]
BLKIO = Path("/sys/fs/cgroup/blkio")
pytestmark = [needs_root, needs_fio]


def _blkio() -> Path:
    if not (BLKIO / "blkio.throttle.write_iops_device").exists():
        pytest.skip("cgroup v1 blkio throttling is not mounted at /sys/fs/cgroup/blkio")
    return BLKIO


@pytest.fixture
def throttled() -> Iterator[Callable[[str, int], list[str]]]:
    """``throttled(device, iops)`` -> an argv prefix that runs a command in a blkio cgroup
    limiting ``device`` to ``iops`` reads and writes a second; the cgroup goes at the end."""
    made: list[Path] = []

    def make(device: str, iops: int) -> list[str]:
        # (not named like a run's cgroup, ebsperf[-label]-PID-N: another run's sweep would take
        # it for a dead run's while it is still empty)
        group = _blkio() / f"test-kill-throttle-{os.getpid()}-{len(made)}"
        group.mkdir()
        made.append(group)
        number = Path(f"/sys/class/block/{Path(device).name}/dev").read_text().strip()
        for name in ("blkio.throttle.write_iops_device", "blkio.throttle.read_iops_device"):
            (group / name).write_text(f"{number} {iops}\n")
        return ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh"]

    yield make
    for group in made:
        for pid in (group / "cgroup.procs").read_text().split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while group.exists():
            try:
                group.rmdir()
            except OSError:
                assert time.monotonic() < deadline, f"{group} stays busy"
                time.sleep(0.05)


def _number(device: str) -> str:
    return Path(f"/sys/class/block/{Path(device).name}/dev").read_text().strip()


def openers(device: str) -> list[int]:
    """PIDs that have ``device`` open (any name of it), from /proc/*/fd."""
    return sorted({int(fd.parts[2]) for fd in Path("/proc").glob("[0-9]*/fd/*")
                   if _is(fd, _number(device))})


def _is(fd: Path, number: str) -> bool:
    try:
        info = fd.stat()
    except OSError:
        return False
    return (os.major(info.st_rdev), os.minor(info.st_rdev)) == tuple(map(int, number.split(":"))) \
        and (info.st_mode & 0o170000) == 0o060000


def sectors_written(device: str) -> int:
    return int(Path(f"/sys/class/block/{Path(device).name}/stat").read_text().split()[6])


def writing(device: str) -> bool:
    """A fio process writes to ``device`` (its command line says so)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"fio") and f"--filename={device}".encode() in argv \
                and b"--rw=randwrite" in argv:
            return True
    return False


def start_write_check(device: str, prefix: list[str], cwd: Path, *extra: str
                      ) -> subprocess.Popen[bytes]:
    argv = [*prefix, sys.executable, "-m", "pytest", IO1_WRITE, f"--device={device}", *VOLUME,
            "--ebsperf-destructive", f"--ebsperf-runtime={RUNTIME_S}", "-p", "no:cacheprovider",
            *extra]
    return subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


#: The write check's fio run time: after a kill, the test waits until it would have ended.
RUNTIME_S = 8
_started: dict[str, float] = {}


def wait_until_writing(device: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + FIO_START_WAIT_S
    while not writing(device):
        assert proc.poll() is None, "the run ended before fio wrote"
        assert time.monotonic() < deadline, "fio never started writing"
        time.sleep(0.05)
    _started[device] = time.monotonic()
    time.sleep(2)  # two seconds into the write check


def assert_nothing_writes_after(device: str, ended: float) -> None:
    """No write completes more than 1 s after ``ended`` and no opener is left 2 s after it;
    after I/O submitted before the kill completed (it sits in the throttle's queue for tens of
    milliseconds: 14-46 ms measured here), the write counter stays still for 2 s; a
    filesystem made now survives what would have been the rest of the run.

    The claim on the device outlives the writes by design (it is let go once the device's
    queue is empty, :mod:`pytest_ebsperf.device.hold`), and an xdist worker lets it go from its
    SIGTERM handler, which a busy machine runs late: 1.04 s after its controller was killed
    beside the shared pass's five other workers. A late claim keeps a mount out longer; it
    writes nothing, which the counter below holds to the second.

    Each look at the openers is timed from its start: a scan of every process's descriptors
    takes tens of milliseconds on a busy machine, and what it saw was true when it began."""
    # the write counter is watched from the end on, while the claim is let go: a write it
    # shows must have completed within 1 s of the end, and it stays still for 0.2 s after
    last, still_since = sectors_written(device), time.monotonic()
    released = False
    while not released or time.monotonic() - still_since < 0.2:
        looked = time.monotonic()
        now = sectors_written(device)
        if now != last:
            last, still_since = now, looked
            assert looked - ended < 1.0, \
                f"writes went on {looked - ended:.2f} s after the run ended"
        if not released:
            holding = openers(device)
            released = not holding
            assert released or looked - ended < 2.0, (
                f"still open {looked - ended:.2f} s after the run ended by "
                f"{'; '.join(map(_named, holding))}")
        time.sleep(0.005 if released else 0.02)
    time.sleep(2)
    assert sectors_written(device) == last, "the device was written after the run ended"
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)
    # through what would have been the rest of the run (ramp, run time, the report)
    rest = _started.get(device, time.monotonic()) + RUNTIME_S + 3 - time.monotonic()
    time.sleep(max(3.0, rest))
    check = subprocess.run(["e2fsck", "-fn", device], capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT,
                                    signal.SIGKILL],
                         ids=["SIGTERM", "SIGHUP", "SIGINT", "SIGKILL"])
@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_a_signal_to_pytests_pid_alone_during_a_write_stops_every_write(
        signum: int, loop_device: Callable[..., str], throttled: Callable[[str, int], list[str]],
        tmp_path: Path) -> None:
    device = loop_device(256)
    proc = start_write_check(device, throttled(device, 2000), tmp_path)
    try:
        wait_until_writing(device, proc)
        os.kill(proc.pid, signum)  # pytest's PID only: the shell exec'd into it
        proc.wait(timeout=30)
        assert_nothing_writes_after(device, time.monotonic())
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_a_signal_to_the_whole_group_during_a_write_stops_every_write(
        loop_device: Callable[..., str], throttled: Callable[[str, int], list[str]],
        tmp_path: Path) -> None:
    device = loop_device(256)
    proc = start_write_check(device, throttled(device, 2000), tmp_path)
    try:
        wait_until_writing(device, proc)
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        assert_nothing_writes_after(device, time.monotonic())
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_the_xdist_controller_takes_its_workers_and_their_writes(
        signum: int, loop_device: Callable[..., str], throttled: Callable[[str, int], list[str]],
        tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    device = loop_device(256)
    proc = start_write_check(device, throttled(device, 2000), tmp_path, "-n", "2")
    try:
        wait_until_writing(device, proc)
        children = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
                    .read_text().split()]
        guardians = [c for c in children if b"pytest_ebsperf.device.guardian" in _cmdline(c)]
        workers = [c for c in children if c not in guardians]
        assert workers, "no xdist worker under the controller"
        os.kill(proc.pid, signum)
        proc.wait(timeout=30)
        ended = time.monotonic()
        # the writes stop at once (nothing holds the device a second later) ...
        assert_nothing_writes_after(device, ended)
        # ... and the workers end: their clean-up waits for fio, for the device queue to
        # drain and for the guardian's sweep (5 s bounds each). Beside other tests' fio
        # they took 10 s, and once over 20 s, with the device already let go; what a late
        # worker was doing at 20 s is kept for the message.
        late = ""
        while any(_alive(w) for w in workers):
            waited = time.monotonic() - ended
            if waited > 20.0 and not late:
                late = "; ".join(_doing(w) for w in workers if _alive(w))
            assert waited < 45.0, f"xdist workers outlived their controller (at 20 s: {late})"
            time.sleep(0.02)
        # a guardian sweeps after its run and leaves too
        assert not any(_alive(g) for g in guardians)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _doing(pid: int) -> str:
    """What process ``pid`` is doing: its state, where the kernel has it wait, its
    children."""
    def read(path: str) -> str:
        try:
            return Path(path).read_text().strip()
        except OSError:
            return "?"
    state = read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()[:1]
    kids = [_cmdline(int(k)).replace(b"\0", b" ")[:80].decode(errors="replace")
            for k in read(f"/proc/{pid}/task/{pid}/children").split() if k.isdigit()]
    stack = read(f"/proc/{pid}/stack").splitlines()[:4]
    return (f"pid {pid} state {state} wchan {read(f'/proc/{pid}/wchan')} children {kids} "
            f"stack {stack}")


def _named(pid: int) -> str:
    """``pid`` and its command line, for a message."""
    return f"{pid} ({_cmdline(pid).replace(bytes(1), b' ')[:80].decode(errors='replace')})"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.alone(machine=True)  # beside four workers' fio, detaching a throttled loop
# device whose queue still holds writes took over 20 s once (it was gone a little later)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_emulated_run_leaves_nothing_behind(signum: int, tmp_path: Path) -> None:
    """The guardian (SIGKILL) or the run itself (SIGTERM) removes the emulated volume, its
    cgroup and its run directory. How fast is a benchmark's business (about a second on an
    idle machine); here the bound is generous, for a machine busy with other tests."""
    before_loops = set(loop.all_loops())
    argv = [sys.executable, "-m", "pytest", f"{IO1}::test_random_write_holds_provisioned_iops",
            "--emulate", "--ebsperf-destructive", "--ebsperf-runtime=30",
            "-p", "no:cacheprovider"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not (made := set(loop.all_loops()) - before_loops) or not _fio_in(made):
            assert proc.poll() is None and time.monotonic() < deadline, "no emulated write"
            time.sleep(0.05)
        time.sleep(2)
        run_dirs = sorted(cleanup.RUN_ROOT.glob(f"{proc.pid}-*"))
        assert run_dirs
        # this run's own loop devices (other tests may make theirs meanwhile)
        made = {name for name, backing in loop.all_loops().items()
                if any(backing.startswith(f"{d}/") for d in run_dirs)}
        assert made
        os.kill(proc.pid, signum)
        proc.wait(timeout=30)
        ended = time.monotonic()
        while (set(loop.all_loops()) & made or any(p.exists() for p in run_dirs)
               or _cgroups_of(proc.pid)):
            assert time.monotonic() - ended < 20.0, (
                f"left: {set(loop.all_loops()) & made}, {run_dirs}, {_cgroups_of(proc.pid)}")
            time.sleep(0.05)
        assert not any(f"/run/ebsperf/{proc.pid}-" in line
                       for line in Path("/proc/mounts").read_text().splitlines())
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _fio_in(loops: set[str]) -> bool:
    return any(openers(f"/dev/{name}") for name in loops)


def _cgroups_of(pid: int) -> list[Path]:
    return [p for p in BLKIO.glob(f"ebsperf*-{pid}-*") if p.is_dir()]


# -- one identity per piece of storage -------------------------------------------------------
def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def losetup(target: str | Path, *options: str) -> str:
    return subprocess.run(["losetup", "--find", "--show", *options, str(target)], check=True,
                          capture_output=True, text=True).stdout.strip()


def sparse_image(folder: Path, name: str, mib: int = 128) -> Path:
    image = folder / name
    image.write_bytes(b"")
    os.truncate(image, mib * 1024 * 1024)
    return image


def two_loops(image: Path, stack: list[str]) -> tuple[str, str]:
    """Two loop devices over ``image``, detached with ``stack``."""
    first, second = losetup(image), losetup(image)
    stack += [first, second]
    return first, second


def mkfs_and_mount_ro(device: str, where: Path) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)
    where.mkdir(exist_ok=True)
    subprocess.run(["mount", "-o", "ro", device, str(where)], check=True, capture_output=True)


def write_check(device: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", IO1_WRITE, f"--device={device}", *VOLUME,
         "--ebsperf-destructive", "--ebsperf-runtime=2", "-p", "no:cacheprovider", "-rA"],
        cwd=cwd, capture_output=True, text=True, timeout=180, check=False)


class Stack(list[str]):
    """Loop devices a test made, each with the backing file it had when it was added."""

    def __init__(self) -> None:
        super().__init__()
        self.backing: dict[str, str | None] = {}

    def append(self, device: str) -> None:
        self.backing[device] = backing_seen(device)
        super().append(device)

    def __iadd__(self, devices):  # type: ignore[misc,no-untyped-def,override]
        for device in devices:
            self.append(device)
        return self


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[list[str]]:
    """Loop devices made by a test (``stack.append``), detached newest first at the end
    (each only while it is still the device the test made)."""
    made = Stack()
    yield made
    subprocess.run(["umount", "-q", str(tmp_path / "mnt")], capture_output=True, check=False)
    for device in reversed(made):
        detach_own(device, made.backing[device])


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
@pytest.mark.parametrize("mounted_side", ["upper", "lower"])
def test_a_loop_over_a_loop_is_never_written_while_either_is_mounted(
        mounted_side: str, stack: list[str], tmp_path: Path) -> None:
    image = sparse_image(tmp_path, "disk.img")
    lower = losetup(image)
    stack.append(lower)
    upper = losetup(lower)
    stack.append(upper)
    mounted, given = (upper, lower) if mounted_side == "upper" else (lower, upper)
    mkfs_and_mount_ro(mounted, tmp_path / "mnt")
    before = sha256(image)
    done = write_check(given, tmp_path)
    assert sha256(image) == before, "the mounted filesystem's bytes changed"
    assert f"/dev/{Path(mounted).name}" in done.stdout and "is mounted on" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    relation = "a loop device over" if mounted_side == "upper" else "storage under"
    assert relation in done.stdout


def test_two_loops_over_a_deleted_file_are_one_piece_of_storage(stack: list[str],
                                                                tmp_path: Path) -> None:
    image = sparse_image(tmp_path, "gone.img")
    first, second = two_loops(image, stack)
    image.unlink()
    assert Path(f"/sys/block/{Path(first).name}/loop/backing_file").read_text() \
        .strip().endswith("(deleted)")
    mkfs_and_mount_ro(second, tmp_path / "mnt")
    before = hashlib.sha256(Path(second).read_bytes()).hexdigest()
    done = write_check(first, tmp_path)
    after = hashlib.sha256(Path(second).read_bytes()).hexdigest()
    assert after == before
    assert "another loop device over the same file" in done.stdout
    assert identity.family(Path(first).name).roots == identity.family(Path(second).name).roots


@pytest.fixture
def partitioned(tmp_path: Path, stack: list[str]) -> tuple[str, str]:
    """A loop device with an MBR and one partition (``/dev/loopN``, ``/dev/loopNp1``)."""
    image = sparse_image(tmp_path, "parted.img")
    disk = losetup(image, "--partscan")
    stack.append(disk)
    subprocess.run(["sfdisk", "-q", disk], input=",64M,L\n", text=True, check=True,
                   capture_output=True)
    subprocess.run(["partx", "-u", disk], capture_output=True, check=False)
    part = f"{disk}p1"
    deadline = time.monotonic() + 10
    while not Path(part).exists():
        assert time.monotonic() < deadline, f"{part} never appeared"
        time.sleep(0.05)
    return disk, part


def test_a_disk_is_not_written_while_its_partition_is_mounted(
        partitioned: tuple[str, str], tmp_path: Path) -> None:
    disk, part = partitioned
    mkfs_and_mount_ro(part, tmp_path / "mnt")
    before = hashlib.sha256(Path(part).read_bytes()).hexdigest()
    done = write_check(disk, tmp_path)
    assert hashlib.sha256(Path(part).read_bytes()).hexdigest() == before
    # the partition's mount, named; the opt-in cannot be honoured: exit 4 before any fio
    assert done.returncode == 4, done.stdout[-2000:]
    assert f"is mounted on {tmp_path / 'mnt'}" in done.stderr


def test_a_partitioned_disk_given_with_the_opt_in_is_written_after_one_line(
        partitioned: tuple[str, str], tmp_path: Path) -> None:
    disk, _ = partitioned
    written = sectors_written(disk)
    done = write_check(disk, tmp_path)
    said = done.stdout + done.stderr
    assert f"ebsperf: overwriting dos on {disk} (--ebsperf-destructive)" in said
    assert "is in use" not in said and "refused" not in said
    assert sectors_written(disk) > written


HOLD_LOCK = """
import sys, time
from pytest_ebsperf.device.lock import device_lock
with device_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(1.5)
"""


def test_a_disk_and_its_partition_share_one_lock_and_never_run_at_once(
        partitioned: tuple[str, str]) -> None:
    disk, part = partitioned
    assert lock.roots_of(disk) == lock.roots_of(part)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, disk], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        start = time.monotonic()
        with lock.device_lock(part) as waited:
            assert waited
            assert time.monotonic() - start > 0.5
    finally:
        holder.wait(timeout=10)


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_two_destructive_workers_take_the_device_in_turn(loop_device: Callable[..., str],
                                                         tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    device = loop_device(128)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", IO1, f"--device={device}", *VOLUME,
         "--ebsperf-destructive", "--ebsperf-runtime=2", "-p", "no:cacheprovider", "-n", "2",
         "-rA"], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    said = done.stdout + done.stderr
    assert "is in use" not in said and "opened exclusively" not in said, said[-3000:]
    assert "INTERNALERROR" not in said


def test_a_hold_is_refused_while_an_alias_is_claimed_elsewhere(stack: list[str],
                                                              tmp_path: Path) -> None:
    image = sparse_image(tmp_path, "held.img", 32)
    first, second = two_loops(image, stack)
    claim = os.open(second, os.O_RDONLY | os.O_EXCL)  # another program's exclusive claim
    try:
        with pytest.raises(UnsafeDeviceError, match="another loop device over the same file"):
            hold.hold(first)
    finally:
        os.close(claim)
    hold.hold(first).close()  # released: claimable again


def _loop_in_a_gone_namespace(tmp_path: Path, name: str) -> str:
    """A loop device over a file ``name`` made in a mount namespace of its own, gone when
    the command ends: from here the file's path cannot be reached, only its name is seen."""
    script = (f"mount -t tmpfs -o size=16m ebsperf {tmp_path} && truncate -s 8M "
              f"{tmp_path}/{name} && losetup --find --show {tmp_path}/{name}")
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, check=True).stdout.strip()


# -- what a killed run left, found by what the kernel shows ----------------------------------
@pytest.mark.alone(machine=True)  # its dead run's loop device is the machine's: any other
# run's start-up sweep may detach it first, and then this sweep finds nothing to say
def test_a_dead_runs_loop_device_is_swept_wherever_its_file_lives(tmp_path: Path) -> None:
    probe = subprocess.Popen(["true"])
    probe.wait()
    dead = probe.pid
    name = f"ebsperf-run-{dead}-0.img"
    made = _loop_in_a_gone_namespace(tmp_path, name)
    shown = backing_seen(made)
    try:
        assert shown is not None and shown.endswith(name)
        assert not Path(shown).exists()
        removed = cleanup.sweep_stale()
        assert any(made in line and "its run is gone" in line for line in removed), removed
        assert loop.loop_backing_file(Path(made).name) != shown
    finally:
        detach_own(made, shown)  # the sweep detached it: its number may be another's now


def test_a_live_runs_loop_device_in_another_namespace_is_left_alone(tmp_path: Path) -> None:
    from pytest_ebsperf.device import lifetime

    run = cleanup.RUN_ROOT / f"{os.getpid()}-{10**6}"
    cleanup.RUN_ROOT.mkdir(parents=True, exist_ok=True)
    owner = lifetime.Owner(cleanup.owner_file(run))  # alive: this process holds it
    name = cleanup.image_name(run)
    made = _loop_in_a_gone_namespace(tmp_path, name)
    shown = backing_seen(made)
    try:
        removed = cleanup.sweep_stale()
        assert not any(made in line for line in removed)
        assert loop.loop_backing_file(Path(made).name) is not None
    finally:
        detach_own(made, shown)
        owner.release()
