"""The cleanup registry: atexit, SIGTERM chaining and the stale-run sweep of directories."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.common import needs_root

from pytest_ebsperf.device import lifetime
from pytest_ebsperf.emulate import EmulatedDevice, cleanup, loop
from pytest_ebsperf.emulate.throttle import CgroupRoots

# A child process registers an object whose close() leaves a marker file, then waits.
CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from pathlib import Path
    from pytest_ebsperf.emulate import cleanup

    marker = Path(sys.argv[1])
    mode = sys.argv[2]

    class Resource:
        def close(self):
            with marker.open("a") as out:
                out.write("closed\\n")

    def previous(signum, frame):
        with marker.open("a") as out:
            out.write("previous handler\\n")
        sys.exit(3)

    if mode == "chained":
        signal.signal(signal.SIGTERM, previous)
    cleanup.register(Resource())
    print("ready", flush=True)
    if mode == "exit":
        sys.exit(0)
    time.sleep(30)
    """
)


def _child(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], Path]:
    marker = tmp_path / "marker"
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), mode], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process, marker


#: How long a child may take to close and end. Quiet, 0.3 s; in a CI run's first pass (four
#: workers on 2 CPUs beside latency daemons at real-time priority, and the handler waiting up
#: to 5 s for the run's guardian, itself still starting) once more than 10 s. What is asserted
#: is how it ends, not how fast.
ENDS_WITHIN_S = 60


def test_sigterm_closes_registered_devices_and_still_ends_the_process(tmp_path: Path) -> None:
    process, marker = _child(tmp_path, "default")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=ENDS_WITHIN_S) == -signal.SIGTERM
    assert marker.read_text() == "closed\n"


def test_sigterm_chains_to_the_handler_that_was_there_before(tmp_path: Path) -> None:
    process, marker = _child(tmp_path, "chained")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=ENDS_WITHIN_S) == 3
    assert marker.read_text() == "closed\nprevious handler\n"


def test_a_normal_exit_closes_registered_devices(tmp_path: Path) -> None:
    process, marker = _child(tmp_path, "exit")
    assert process.wait(timeout=ENDS_WITHIN_S) == 0
    assert marker.read_text() == "closed\n"


def test_close_all_keeps_closing_after_one_close_fails() -> None:
    closed: list[str] = []

    class Broken:
        def close(self) -> None:
            raise OSError("device busy")

    class Fine:
        def close(self) -> None:
            closed.append("fine")

    fine, broken = Fine(), Broken()
    cleanup.register(fine)
    cleanup.register(broken)
    with pytest.warns(RuntimeWarning, match="device busy"):
        cleanup.close_all()
    assert closed == ["fine"]
    assert fine not in cleanup.live() and broken not in cleanup.live()


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    assert not cleanup.pid_alive(process.pid)
    return process.pid


def test_dead_and_live_pids_are_told_apart() -> None:
    assert cleanup.pid_alive(os.getpid())
    assert not cleanup.pid_alive(_dead_pid())


def test_the_sweep_removes_empty_run_directories_of_dead_runs_only(tmp_path: Path) -> None:
    base = tmp_path
    dead, alive = base / f"{_dead_pid()}-0", base / f"{_dead_pid()}-7"
    full, foreign = base / f"{_dead_pid()}-1", base / "notes-1"
    for path in (dead, alive, full, foreign):
        path.mkdir(parents=True)
    (full / "keep.txt").write_text("not ours to delete")
    for path in (dead, full):  # killed runs: their owner files stay, unlocked
        lifetime.Owner(cleanup.owner_file(path)).release(unlink=False)
    # A live run whose PID number is dead here (another PID namespace): its lock tells.
    owner = cleanup.claim(alive)
    try:
        removed = cleanup.sweep_stale(run_root=tmp_path, roots=CgroupRoots(None, None))
    finally:
        owner.release()
    # (the sweep also takes loop devices of dead runs machine-wide: other tests' too)
    assert [r for r in removed if r.startswith("run directory")] == [f"run directory {dead}"]
    assert alive.is_dir() and full.is_dir() and foreign.is_dir()
    assert not cleanup.owner_file(dead).exists()  # gone with its directory


@needs_root
def test_a_sweep_of_another_root_leaves_the_machines_live_runs_alone(tmp_path: Path) -> None:
    # A sweep given a root of its own once judged every live volume under the machine's
    # root by an owner file under its own root, found none, and detached them mid-fio
    # ("zero sized block device" in the runs beside it).
    device = EmulatedDevice(size_bytes=8 * 1024 * 1024, iops=1000).start()
    try:
        name = Path(device.path).name
        backing = loop.loop_backing_file(name)
        assert backing is not None and backing.startswith(str(cleanup.RUN_ROOT) + "/")
        removed = cleanup.sweep_stale(run_root=tmp_path, roots=CgroupRoots(None, None))
        assert not any(device.path in line for line in removed), removed
        assert loop.loop_backing_file(name) == backing  # still this run's volume
    finally:
        device.close()


def test_a_run_directory_without_an_owner_file_is_young_or_dead(tmp_path: Path) -> None:
    fresh, old = tmp_path / "5-0", tmp_path / "5-1"
    for path in (fresh, old):
        path.mkdir()
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert cleanup.run_alive(fresh) and not cleanup.run_alive(old)


def test_pid_zero_and_below_are_never_alive_because_kill_would_mean_a_process_group() -> None:
    assert not cleanup.pid_alive(0) and not cleanup.pid_alive(-1)


def test_an_owner_file_has_its_name_only_once_it_is_held(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Made and then locked under its own name, an owner file was unlocked for an instant:
    a sweep starting then (another test's pytest run, under CI's first pass) found a new
    run's fio directory unowned and removed it, and the run's engine probe failed with
    FileNotFoundError. It is now made and locked under a private name and linked into place:
    the instant it has its name, a sweep finds it held."""
    from pytest_ebsperf.fio.process import OwnedDir, sweep_fio_dirs

    seen: list[bool] = []
    link = os.link

    def linked(src: str | Path, dst: str | Path) -> None:
        link(src, dst)
        seen.append(lifetime.owner_alive(Path(dst)))  # what a sweep would see right then

    monkeypatch.setattr(os, "link", linked)
    made = tmp_path / "ebsperf-fio.abcdefgh"
    made.mkdir()
    owned = OwnedDir(str(made))
    assert seen == [True]
    assert sorted(p.name for p in made.iterdir()) == [".owner"]  # no private name left
    assert sweep_fio_dirs(str(tmp_path)) == [] and made.is_dir()
    with pytest.raises(FileExistsError, match="another run's, alive or left behind"):
        lifetime.Owner(made / ".owner")
    owned.close()
    assert not made.exists()
