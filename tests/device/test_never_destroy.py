"""Never destroy, never leave behind: holds, aliases, signals, PID namespaces, sysfs, refusals.

Real loop devices, real fio, real signals. No swap is ever switched on (mkswap alone makes the
signature a safety check must see).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.common import (
    FIO_START_WAIT_S,
    ROOT,
    backing_file,
    backing_seen,
    detach_own,
    fio_descendants,
    fio_descendants_whose_argv,
    needs_fio,
    needs_root,
    sha256,
)

from pytest_ebsperf.device import hold, lifetime
from pytest_ebsperf.emulate import EmulatedDevice, cleanup, loop
from pytest_ebsperf.errors import FioRunError, UnsafeDeviceError
from pytest_ebsperf.fio.process import FIO_DIR_PREFIX, sweep_fio_dirs
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

IO1_WRITE = f"{ROOT}/suites/io1/test_io1.py::test_random_write_holds_provisioned_iops"
IO1_READ = (f"{ROOT}/suites/io1/test_io1.py::"
            "test_random_read_holds_provisioned_iops_999_percent_of_seconds")
pytestmark = [needs_root, needs_fio]


def mkfs(device: str) -> None:
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)


def mount(device: str, where: Path, *options: str) -> subprocess.CompletedProcess[str]:
    where.mkdir(exist_ok=True)
    return subprocess.run(["mount", *options, device, str(where)], capture_output=True,
                          text=True, check=False)


def alias_of(device: str) -> str:
    """A second loop device over the same backing file."""
    return subprocess.run(["losetup", "--find", "--show", str(backing_file(device))],
                          check=True, capture_output=True, text=True).stdout.strip()


def writing_fio(pid: int, device: str) -> list[int]:
    """fio processes under ``pid`` that write to ``device`` (not the engine probe)."""
    target = f"--filename={device}".encode()
    return fio_descendants_whose_argv(
        pid, lambda argv: target in argv and b"--rw=randwrite" in argv)




# -- holding what is written ------------------------------------------------------------
def test_a_held_device_cannot_be_mounted_and_its_bytes_stay_as_they_were(
        loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    mkfs(device)
    before = sha256(backing_file(device))
    held = hold.hold(device)
    try:
        attempt = mount(device, tmp_path / "mnt")
        assert attempt.returncode != 0
        assert "busy" in (attempt.stderr + attempt.stdout).lower()
    finally:
        held.close()
    assert sha256(backing_file(device)) == before
    assert mount(device, tmp_path / "mnt2").returncode == 0  # released: usable again
    subprocess.run(["umount", str(tmp_path / "mnt2")], check=True)


def test_a_second_loop_device_over_a_mounted_image_is_refused_naming_the_alias(
        loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    mkfs(device)
    assert mount(device, tmp_path / "mnt").returncode == 0
    alias = alias_of(device)
    alias_backing = backing_seen(alias)
    try:
        names = dict(hold.aliases(Path(alias).name))
        assert Path(device).name in names
        with pytest.raises(UnsafeDeviceError, match=f"{device} .*another loop device over"):
            hold.hold(alias)
    finally:
        subprocess.run(["umount", str(tmp_path / "mnt")], check=False)
        detach_own(alias, alias_backing)


@pytest.mark.own_measuring_lock  # reads what its runs leave, not their verdicts
def test_a_destructive_run_holds_the_device_so_a_mount_during_fio_fails(
        loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(128)
    mkfs(device)
    argv = [sys.executable, "-m", "pytest", IO1_WRITE, f"--device={device}",
            "--volume-type=io1", "--volume-size=100", "--volume-iops=2000",
            "--ebsperf-destructive", "--ebsperf-runtime=8", "-p", "no:cacheprovider", "-s"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        deadline = time.monotonic() + FIO_START_WAIT_S
        while not writing_fio(proc.pid, device) and proc.poll() is None:
            assert time.monotonic() < deadline, "fio never started writing"
            time.sleep(0.05)
        attempt = mount(device, tmp_path / "mnt")
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert attempt.returncode != 0, "the device was mounted while fio wrote to it"
    assert not loop.is_mountpoint(tmp_path / "mnt")
    # one line said what would be destroyed before the first write
    assert f"ebsperf: overwriting ext4 on {device} (--ebsperf-destructive)" in output


def test_writes_are_refused_with_one_sentence_when_the_device_is_mounted(
        loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    mkfs(device)
    # read-only, so the mount itself writes nothing and the bytes can be compared
    assert mount(device, tmp_path / "mnt", "-o", "ro").returncode == 0
    before = sha256(backing_file(device))
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", IO1_WRITE, f"--device={device}",
             "--volume-type=io1", "--volume-size=100", "--volume-iops=2000",
             "--ebsperf-destructive", "--ebsperf-runtime=2", "-p", "no:cacheprovider"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
        after = sha256(backing_file(device))
    finally:
        subprocess.run(["umount", str(tmp_path / "mnt")], check=False)
    # the opt-in cannot be honoured: one sentence, exit 4, before any fio
    assert result.returncode == 4, result.stdout[-2000:]
    assert result.stderr.count("is mounted on") == 1, result.stderr
    assert "During handling of the above exception" not in result.stdout + result.stderr
    assert after == before


# -- fio's own refusals ---------------------------------------------------------------------
def test_fios_own_refusal_is_its_sentence_not_a_verdict(loop_device: Callable[..., str],
                                                        tmp_path: Path) -> None:
    device = loop_device(64)
    mkfs(device)
    assert mount(device, tmp_path / "mnt").returncode == 0
    try:
        with pytest.raises(FioRunError, match="appears mounted.*Aborting"):
            FioRunner().run(Workload("randwrite", bs=4096, runtime_s=1, ramp_s=0,
                                     engine="libaio"), device, readonly=False)
    finally:
        subprocess.run(["umount", str(tmp_path / "mnt")], check=False)


# -- signals ---------------------------------------------------------------------------------
# Alone (conftest): it counts the fio directories left in /tmp, and a neighbour's can look
# like this run's. Beside the other tests it found directories made since it started that
# held fio's report and logs but no owner file, as a neighbour's run directory does when a
# sweep removes it while that run's fio still writes.
@pytest.mark.alone(machine=True)  # sweeps what dead runs left anywhere on the machine
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL],
                         ids=["SIGTERM", "SIGHUP", "SIGKILL"])
def test_fio_stops_within_two_seconds_of_the_run_ending_by_any_signal(
        signum: int, loop_device: Callable[..., str], tmp_path: Path) -> None:
    device = loop_device(64)
    argv = [sys.executable, "-m", "pytest", IO1_READ, f"--device={device}",
            "--volume-type=io1", "--volume-size=100", "--volume-iops=2000",
            "--ebsperf-runtime=30", "-p", "no:cacheprovider"]
    started = time.time()
    # the run's signals as a shell gives them: under `nohup` this process ignores SIGHUP, its
    # children inherit that, and the plugin rightly leaves an ignored SIGHUP ignored
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=_default_signals)  # noqa: PLW1509
    try:
        deadline = time.monotonic() + FIO_START_WAIT_S
        while not (fios := fio_descendants(proc.pid)) and proc.poll() is None:
            assert time.monotonic() < deadline, "fio never started"
            time.sleep(0.1)
        assert fios
        proc.send_signal(signum)
        proc.wait(timeout=30)
        stopped = time.monotonic()
        while any(Path(f"/proc/{pid}").exists() and _not_zombie(pid) for pid in fios):
            assert time.monotonic() - stopped < 2.0, f"fio still runs after {signum}"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
    # this run's fio directories (the engine probes' too): its pid in the owner file, or no
    # owner file and made since it started; neighbours' runs are killed in other tests
    leftovers = _left_by(proc.pid, started)
    if leftovers:  # or a neighbour's, between its mkdtemp and its owner file, or being removed
        time.sleep(2)
        leftovers = sorted(set(leftovers) & set(_left_by(proc.pid, started)))
    if signum != signal.SIGKILL:  # SIGTERM/SIGHUP: the run removed its own directory
        assert leftovers == [], [(p, sorted(q.name for q in p.iterdir()),
                                  (p / ".owner").read_text() if (p / ".owner").exists() else "")
                                 for p in leftovers]
    sweep_fio_dirs()  # what the next run does first
    assert [p for p in Path("/tmp").glob(FIO_DIR_PREFIX + "*")
            if not lifetime.owner_alive(p / ".owner", p)] == []


def _default_signals() -> None:
    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def _left_by(pid: int, since: float) -> list[Path]:
    return [p for p in Path("/tmp").glob(FIO_DIR_PREFIX + "*")
            if _made_by(p, pid, since) and not lifetime.owner_alive(p / ".owner")]


def _made_by(path: Path, pid: int, since: float) -> bool:
    try:
        return (path / ".owner").read_text().startswith(f"pid {pid} ")
    except FileNotFoundError:
        try:
            return path.stat().st_mtime >= since - 1
        except FileNotFoundError:
            return False
    except OSError:
        return False


def _not_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_sweep_keeps_a_live_runs_fio_directory_and_removes_a_dead_ones(tmp_path: Path) -> None:
    live, dead, old = (tmp_path / f"{FIO_DIR_PREFIX}{n}" for n in ("live", "dead", "old"))
    for path in (live, dead, old):
        path.mkdir()
    owner = lifetime.Owner(live / ".owner")
    lifetime.Owner(dead / ".owner").release(unlink=False)  # its process died: lock gone
    os.utime(old, (time.time() - 3600, time.time() - 3600))  # no owner file, an hour old
    try:
        removed = sweep_fio_dirs(str(tmp_path))
    finally:
        owner.release()
    assert live.is_dir() and not dead.exists() and not old.exists()
    assert sorted(removed) == sorted([f"fio directory {dead}", f"fio directory {old}"])


# -- PID namespaces ------------------------------------------------------------------------
NAMESPACED = textwrap.dedent("""
    import json, os, sys, time
    # The PID number this run carries in its names is dead on the host (as the namespace's
    # own numbers usually are): the sweep must not trust it.
    real_getpid, os.getpid = os.getpid, lambda: int(sys.argv[1])
    from pytest_ebsperf.emulate import EmulatedDevice
    device = EmulatedDevice(size_bytes=8 * 1024 * 1024, iops=1000).start()
    os.getpid = real_getpid
    print(json.dumps([device.path, str(device.run_dir), os.getpid()]), flush=True)
    time.sleep(60)
""")


def test_a_run_in_another_pid_namespace_survives_a_host_runs_sweep() -> None:
    probe = subprocess.Popen(["true"])
    probe.wait()
    dead_pid = probe.pid  # a number no process has here
    # sh is the namespace's init; the run is an ordinary process under it
    child = subprocess.Popen(["unshare", "-p", "-f", "-m", "--", "sh", "-c",
                              '"$0" -c "$1" "$2"; true', sys.executable, NAMESPACED,
                              str(dead_pid)],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert child.stdout is not None
        path, run_dir, inner_pid = json.loads(child.stdout.readline())
        assert inner_pid != dead_pid
        assert Path(run_dir).name.startswith(f"{dead_pid}-")
        removed = cleanup.sweep_stale()
        assert not any(path in line or run_dir in line for line in removed), removed
        assert loop.loop_backing_file(Path(path).name) is not None  # still attached
    finally:
        for pid in _descendants(child.pid):  # the run itself, not unshare
            if "python" in Path(f"/proc/{pid}/comm").read_text():
                os.kill(pid, signal.SIGTERM)
        child.wait(timeout=30)
    # the namespaced run closed what it made on SIGTERM; a sweep finds nothing of it
    assert loop.loops_backed_under(Path(run_dir)) == {}


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            kids = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        found += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return found


# -- leave devices as found ----------------------------------------------------------------
def test_an_emulated_volume_restores_the_loop_devices_queue_settings() -> None:
    device = EmulatedDevice(size_bytes=8 * 1024 * 1024, iops=1000, io_unit_bytes=1024 * 1024)
    device.start()
    name = Path(device.path).name
    original = dict(device._restore)["queue/max_sectors_kb"]
    assert loop.read_sysfs(name, "queue/max_sectors_kb") != original
    device.close()
    assert loop.read_sysfs(name, "queue/max_sectors_kb") == original


# -- bad input -------------------------------------------------------------------------------
def test_the_reference_device_must_be_another_device(loop_device: Callable[..., str],
                                                     tmp_path: Path) -> None:
    device = loop_device(64)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", f"{ROOT}/suites/encryption", f"--device={device}",
         f"--reference-device={device}", "--volume-type=io1", "--volume-size=100",
         "--volume-iops=2000", "-p", "no:cacheprovider"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 4
    assert "is the device under test" in result.stderr
    assert "Traceback" not in result.stderr
