"""Figures that add up for any number of jobs: live windows, interval logs, fio's final report
and the kernel's counters agree at numjobs 1, 4 and 16 (real fio, a kernel-throttled device).

With ``--group_reporting`` fio's live status reports give one entry for all jobs whose
``job_runtime`` is the jobs' *sum*; dividing by it read a 4-job volume at a quarter of its
rate. The live series now takes each direction's ``runtime`` (the longest job's: wall time).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

import pytest
from support.common import needs_fio, needs_root

from pytest_ebsperf.device import kernelstat
from pytest_ebsperf.emulate import EmulatedDevice
from pytest_ebsperf.fio.live import Counters, LiveSeries
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

#: Times latencies or rates closely: runs while no other test runs (conftest).
pytestmark = pytest.mark.alone

RATE = 8000


def _report(ts: int, runtimes: list[float], ios: list[int], group: bool) -> dict[str, Any]:
    if group:  # one entry: job_runtime summed, direction runtime the longest job's
        return {"timestamp_ms": ts, "jobs": [{
            "job_runtime": sum(runtimes), "job options": {"numjobs": str(len(ios))},
            "read": {"total_ios": sum(ios), "io_bytes": 4096 * sum(ios),
                     "runtime": max(runtimes)}}]}
    return {"timestamp_ms": ts, "jobs": [
        {"job_runtime": r, "read": {"total_ios": n, "io_bytes": 4096 * n, "runtime": r}}
        for r, n in zip(runtimes, ios)]}


@pytest.mark.parametrize("group", [True, False], ids=["group", "per-job"])
@pytest.mark.parametrize("jobs", [1, 4, 16])
def test_live_windows_count_wall_time_for_any_number_of_jobs(jobs: int, group: bool) -> None:
    series = LiveSeries()
    for second in range(1, 4):  # each job does 1,000 I/O a second
        series.add(_report(1000 * second, [1000.0 * second] * jobs, [1000 * second] * jobs,
                           group))
    assert series.iops == [pytest.approx(1000.0 * jobs)] * 3
    assert Counters.from_report(_report(1000, [1000.0] * jobs, [5] * jobs, group)
                                ).runtime_ms == 1000.0


@pytest.fixture
def device() -> Iterator[EmulatedDevice]:
    with EmulatedDevice(size_bytes=256 * 1024 * 1024, iops=RATE) as made:
        yield made


@needs_root
@needs_fio
@pytest.mark.parametrize("jobs", [1, 4, 16])
def test_live_logs_report_and_kernel_agree(jobs: int, device: EmulatedDevice) -> None:
    runner = FioRunner()
    workload = Workload("randread", bs=4096, iodepth=4, numjobs=jobs, runtime_s=4, ramp_s=1,
                        engine="libaio")
    live: list[float] = []

    def monitor(series: LiveSeries) -> None:
        live.append(series.iops[-1])

    before = kernelstat.read(device.path)
    result = runner.run(workload, device.path, readonly=True, prefix=device.argv_prefix(),
                        monitor=monitor)
    after = kernelstat.read(device.path)
    assert before is not None and after is not None
    logged = list(result.series["total_iops"].values)
    final = result.read.iops
    # the device is held at RATE by the kernel: every figure must say so
    assert final == pytest.approx(RATE, rel=0.05)
    assert statistics.mean(live) == pytest.approx(final, rel=0.05), live
    assert statistics.mean(logged) == pytest.approx(final, rel=0.05), logged
    kernel_ios = after.reads - before.reads  # ramp included: fio counts it nowhere
    seconds = (workload.runtime_s + workload.ramp_s)
    assert kernel_ios / seconds == pytest.approx(final, rel=0.08)
    assert result.read.total_ios <= kernel_ios
