"""The emulated volumes of one run measure their I/O path once per service time: pytest-xdist
workers share the correction through the folder the controller names (the main job's
workers each spent about 5 s per service time measuring the same path)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_ebsperf.config.emulation import SHARED_CALIBRATION_ENV
from pytest_ebsperf.emulate import service_time


class _Server:
    def __init__(self, mean_us: float) -> None:
        self.mean_us = mean_us
        self.overhead_us = 0.0
        self.anchor_us: float | None = None

    def set(self, *, overhead_us: float) -> None:
        self.overhead_us = overhead_us

    def follow(self, anchor_us: float | None) -> None:
        self.anchor_us = anchor_us


def test_a_second_process_of_the_run_reads_the_correction_the_first_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def path(device: str) -> tuple[float, float]:
        calls.append(server.overhead_us)
        return server.mean_us + 80.0 - server.overhead_us, 30.0 + len(calls)

    server = _Server(500.0)
    monkeypatch.setattr(service_time, "measure_qd1", path)
    monkeypatch.setenv(SHARED_CALIBRATION_ENV, str(tmp_path))
    monkeypatch.setattr(service_time, "_calibrated", {})
    assert service_time.calibrate("/dev/loop9", server) == pytest.approx(80.0)
    assert len(calls) == service_time.LOOKS
    # the daemon follows the path from then on, less fio's own time (the least of the looks)
    assert server.anchor_us == pytest.approx(31.0)
    monkeypatch.setattr(service_time, "_calibrated", {})  # another worker's process
    other = _Server(500.0)
    server = other
    assert service_time.calibrate("/dev/loop8", other) == pytest.approx(80.0)
    assert other.overhead_us == pytest.approx(80.0) and other.anchor_us == pytest.approx(31.0)
    assert len(calls) == service_time.LOOKS  # read, not measured
    # another service time is measured; `fresh` measures again and shares the new figure
    server = _Server(5000.0)
    service_time.calibrate("/dev/loop8", server)
    assert len(calls) == 2 * service_time.LOOKS
    server = _Server(500.0)
    service_time.calibrate("/dev/loop8", server, fresh=True)
    assert len(calls) == 3 * service_time.LOOKS
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == \
        ["path-5000us", "path-500us"]


def test_without_the_folder_each_process_measures_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    server = _Server(300.0)

    def path(device: str) -> tuple[float, float]:
        calls.append(server.overhead_us)
        return server.mean_us + 40.0 - server.overhead_us, 25.0

    monkeypatch.setattr(service_time, "measure_qd1", path)
    monkeypatch.delenv(SHARED_CALIBRATION_ENV, raising=False)
    for _ in range(2):
        monkeypatch.setattr(service_time, "_calibrated", {})
        assert service_time.calibrate("/dev/loop9", server) == pytest.approx(40.0)
    assert len(calls) == 2 * service_time.LOOKS


def test_an_emulated_run_names_the_folder_to_its_workers_and_removes_it(
        pytester: pytest.Pytester) -> None:
    # the controller of an --emulate run makes the folder and names it in the environment
    # its xdist workers inherit; a run without --emulate names none; the folder is gone after
    pytester.makepyfile(test_seen=textwrap.dedent(f"""
        import os
        from pathlib import Path
        def test_seen():
            Path("seen.txt").write_text(os.environ.get({SHARED_CALIBRATION_ENV!r}, ""))
    """))
    env = {k: v for k, v in os.environ.items() if k != SHARED_CALIBRATION_ENV}
    folders = []
    for extra in (["--emulate", "-n", "2"], []):
        done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                               "test_seen.py", *extra], cwd=pytester.path, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout[-2000:]
        folders.append((pytester.path / "seen.txt").read_text())
    emulated, plain = folders
    assert plain == "", plain
    assert "ebsperf-fio.calibration-" in emulated, emulated  # seen by an xdist worker
    assert not Path(emulated).exists()


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGKILL])
def test_the_folder_of_a_killed_run_is_removed(pytester: pytest.Pytester,
                                               signal_number: int) -> None:
    # a signal to pytest's PID alone, while a test runs: SIGTERM removes the folder as the
    # run ends; after SIGKILL nothing in the run can, and its guardian (a process of its own
    # that sees the run die) sweeps fio's folders once the run is gone, or the next run's
    # sweep does (its owner is dead)
    from pytest_ebsperf.fio.process import sweep_fio_dirs

    pytester.makepyfile(test_slow=textwrap.dedent(f"""
        import os, time
        from pathlib import Path
        def test_slow():
            Path("seen.txt").write_text(os.environ.get({SHARED_CALIBRATION_ENV!r}, ""))
            time.sleep(60)
    """))
    env = {k: v for k, v in os.environ.items() if k != SHARED_CALIBRATION_ENV}
    # a temporary folder of its own: another run on this machine sweeps the folders of dead
    # owners in its own (it had swept this one after SIGKILL, before the test looked)
    env["TMPDIR"] = str(pytester.mkdir("tmp"))
    seen = pytester.path / "seen.txt"
    run = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                            "test_slow.py", "--emulate"], cwd=pytester.path, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not seen.exists() and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.1)
        folder = Path(seen.read_text())
        assert folder.is_dir() and folder.name.startswith("ebsperf-fio.calibration-")
        assert folder.parent == pytester.path / "tmp"
        run.send_signal(signal_number)
        run.wait(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    if signal_number == signal.SIGKILL:
        # the guardian waits for the run to be gone (at most 10 s), then sweeps: it had
        # swept the folder before this test looked, and another time while it did
        deadline = time.monotonic() + 20
        while folder.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if folder.exists():  # no guardian: the sweep every run starts with removes it
            sweep_fio_dirs(str(folder.parent))
    assert not folder.exists()


@pytest.mark.parametrize("other", ["alone", "shared"])
def test_the_path_is_measured_holding_the_host_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other: str) -> None:
    # another worker holds the host alone (a comparison, S1-09) or measures on it (an
    # ordinary check's fio, beside which the path measured slow and was over-corrected):
    # the path's fio waits for it rather than run beside it; inside this process's own hold
    # alone it runs at once
    from pytest_ebsperf.device import lock

    monkeypatch.setenv(SHARED_CALIBRATION_ENV, str(tmp_path))
    started: list[float] = []

    def path(device: str) -> tuple[float, float]:
        started.append(time.monotonic())
        return 340.0, 20.0

    monkeypatch.setattr(service_time, "measure_qd1", path)
    monkeypatch.setattr(service_time, "_calibrated", {})
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from pytest_ebsperf.device import lock
        with lock.measuring(alone=sys.argv[1] == "alone"):
            print("held", flush=True)
            time.sleep(2.0)
    """), other], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        asked = time.monotonic()
        service_time.calibrate("/dev/loop9", _Server(300.0))
        assert started and started[0] - asked >= 1.0, started[0] - asked
    finally:
        holder.wait(timeout=30)
    monkeypatch.setattr(service_time, "_calibrated", {})
    with lock.measuring(alone=True):
        asked = time.monotonic()
        service_time.calibrate("/dev/loop9", _Server(500.0))
        assert time.monotonic() - asked < 1.0


def test_a_correction_another_process_measured_is_read_without_waiting_for_the_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a worker of the run measured the path of 500 us (holding the host alone) and wrote it;
    # another worker making a 500 us volume while a comparison holds the host alone reads
    # it at once, measures nothing and waits for nobody
    monkeypatch.setenv(SHARED_CALIBRATION_ENV, str(tmp_path))
    monkeypatch.setattr(service_time, "_calibrated", {})
    (tmp_path / "path-500us").write_text("212.5 41.0\n")

    def never(device: str) -> tuple[float, float]:
        raise AssertionError("measured a path another process of the run had measured")

    monkeypatch.setattr(service_time, "measure_qd1", never)
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import time
        from pytest_ebsperf.device import lock
        with lock.measuring(alone=True):
            print("held", flush=True)
            time.sleep(5.0)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        asked = time.monotonic()
        server = _Server(500.0)
        assert service_time.calibrate("/dev/loop9", server) == 212.5
        assert time.monotonic() - asked < 1.0 and server.overhead_us == 212.5
        assert server.anchor_us == 41.0
    finally:
        holder.kill()
        holder.wait()
