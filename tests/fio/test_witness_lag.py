"""fio's Disk stats as a witness of a recorded run (``ebsperf judge``): fio samples a device's
counters every 250 ms, so a short run's count may lag fio's by up to that much of its rate.
Seen: a 0.31 s read of every block of a 64 MiB device (128 reads of 512 KiB at 207 MiB/s)
counted as 99 and as 84 reads by the device; judge then called the rest "answered without
device I/O" and judged 142 MB/s where the device had read 217 MB/s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ebsperf.fio.counted import DISK_STATS_LAG_S, apply_witness, witness_of
from pytest_ebsperf.fio.parse import result_from_data
from pytest_ebsperf.fio.workload import Workload

DATA = Path(__file__).resolve().parents[1] / "data" / "fio" / "randread.json"


def _run(seconds: float, ios: int, counted: int) -> tuple[dict[str, object], Workload]:
    data = json.loads(DATA.read_text())
    read = data["jobs"][0]["read"]
    read.update(runtime=round(seconds * 1000), total_ios=ios, iops=ios / seconds,
                io_bytes=ios * 512 * 1024, bw_bytes=ios * 512 * 1024 / seconds,
                bw=ios * 512 / seconds)
    data["disk_util"][0].update(read_ios=counted)
    return data, Workload("read", bs=512 * 1024, iodepth=8, runtime_s=seconds, ramp_s=0)


@pytest.mark.parametrize("counted", [99, 84])
def test_a_short_run_counted_late_by_fio_s_disk_stats_keeps_fio_s_figure(counted: int) -> None:
    data, workload = _run(0.309, 128, counted)
    result = result_from_data(data)
    seen = witness_of(data, result)
    assert seen is not None
    judged, said, replaced = apply_witness(result, workload, seen)
    assert not replaced and judged is result
    assert f"counted {counted:,} of fio's 128 reads" in said and "no evidence" in said, said


def test_a_count_far_behind_fio_s_is_judged_on_the_device_s_figure() -> None:
    # 3 s at 414 reads a second, of which the device served a third: the page cache's
    data, workload = _run(3.0, 1242, 414)
    result = result_from_data(data)
    seen = witness_of(data, result)
    assert seen is not None
    assert 1242 - 414 > result.read.iops * DISK_STATS_LAG_S
    judged, said, replaced = apply_witness(result, workload, seen)
    assert replaced and judged.read.total_ios == 414
    assert judged.read.iops == pytest.approx(414 / 3.0)
    assert "answered without device I/O" in said, said


def test_a_count_that_agrees_says_so() -> None:
    data, workload = _run(3.0, 1242, 1242)
    result = result_from_data(data)
    seen = witness_of(data, result)
    assert seen is not None
    judged, said, replaced = apply_witness(result, workload, seen)
    assert (judged, replaced) == (result, False)
    assert said == "loop2's own count agrees with fio's (Disk stats)"
