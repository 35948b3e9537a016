"""The emulated volumes of one run measure their I/O path once per service time: pytest-xdist
workers share the correction through the folder the controller names (the main job's
workers each spent about 5 s per service time measuring the same path)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_ebsperf.config.emulation import SHARED_CALIBRATION_ENV
from pytest_ebsperf.emulate import service_time


class _Server:
    def __init__(self, mean_us: float) -> None:
        self.mean_us = mean_us
        self.overhead_us = 0.0

    def set(self, *, overhead_us: float) -> None:
        self.overhead_us = overhead_us


def test_a_second_process_of_the_run_reads_the_correction_the_first_measured(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    def path(device: str) -> float:
        calls.append(server.overhead_us)
        return server.mean_us + 80.0 - server.overhead_us

    server = _Server(500.0)
    monkeypatch.setattr(service_time, "measure_qd1_us", path)
    monkeypatch.setenv(SHARED_CALIBRATION_ENV, str(tmp_path))
    monkeypatch.setattr(service_time, "_calibrated", {})
    assert service_time.calibrate("/dev/loop9", server) == pytest.approx(80.0)
    assert len(calls) == service_time.LOOKS
    monkeypatch.setattr(service_time, "_calibrated", {})  # another worker's process
    other = _Server(500.0)
    server = other
    assert service_time.calibrate("/dev/loop8", other) == pytest.approx(80.0)
    assert other.overhead_us == pytest.approx(80.0)
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

    def path(device: str) -> float:
        calls.append(server.overhead_us)
        return server.mean_us + 40.0 - server.overhead_us

    monkeypatch.setattr(service_time, "measure_qd1_us", path)
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
    assert "ebsperf-calibration-" in emulated, emulated  # seen by an xdist worker
    assert not Path(emulated).exists()
