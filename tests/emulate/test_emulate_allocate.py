"""Emulated volumes allocate their backing file before the first write (tmpfs page
allocation would otherwise slow writes below the volume's limit)."""

from __future__ import annotations

import os

import pytest
from support.common import needs_fio, needs_root

from pytest_ebsperf.emulate import EmulatedDevice
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload

MIB = 1024 * 1024


@needs_root
def test_allocate_fills_the_backing_file_once_and_reading_leaves_it_sparse() -> None:
    with EmulatedDevice(size_bytes=64 * MIB, iops=1000, bps=None, name="ebsperf-alloc") as dev:
        assert os.stat(dev.backing_file).st_blocks * 512 < MIB
        dev.allocate()
        dev.allocate()
        assert os.stat(dev.backing_file).st_blocks * 512 >= 64 * MIB


@needs_root
@needs_fio
@pytest.mark.alone  # times a rate closely: runs while no other test runs (conftest)
def test_sequential_1_mib_writes_reach_the_bytes_limit_at_queue_depth_8() -> None:
    limit = 300 * MIB
    with EmulatedDevice(size_bytes=256 * MIB, iops=None, bps=limit, io_unit_bytes=MIB,
                        name="ebsperf-alloc") as dev:
        dev.set_mix(0.0)
        dev.allocate()
        job = Workload("write", bs=MIB, iodepth=8, runtime_s=2, ramp_s=0.5, engine="libaio")
        result = FioRunner().run(job, dev.path, readonly=False, prefix=dev.argv_prefix())
    seconds = result.series["total_bw"].values
    assert seconds and min(seconds) >= 0.9 * limit
    assert 0.95 * limit <= result.total_bw_bytes <= 1.05 * limit
