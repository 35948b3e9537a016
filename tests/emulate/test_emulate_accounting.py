"""EBS's I/O accounting on emulated volumes (B-IOACCT): sequential I/O smaller than the unit
is merged and counted once, larger I/O is split, and the IOPS and throughput caps bind
together. Real fio on kernel-throttled loop devices; fio's figures against the model's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.common import needs_fio, needs_root

SCRIPT = """
import json, sys
from pytest_ebsperf.checks.claim_runner import ClaimRunner
from pytest_ebsperf.checks import preflight
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.config.consistency import validate

settings = Settings(emulate=True, volume_type=sys.argv[1], volume_size=int(sys.argv[2]),
                    volume_iops=int(sys.argv[3]) or None, runtime=4.0)
validate(settings)
session = EbsperfSession(settings)
out = {}
try:
    preflight.run(session)
    runner = ClaimRunner(session, name="accounting")
    for pattern, bs in (("randread", "4k"), ("read", "4k"), ("randread", "512k")):
        result = runner.run(runner.workload(pattern, bs))
        out[f"{pattern} {bs}"] = {"iops": result.total_iops, "bw": result.total_bw_bytes}
finally:
    session.close()
print(json.dumps(out))
"""

MIB = 1024 * 1024


def _measure(volume_type: str, size: int, iops: int) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, volume_type, str(size), str(iops)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@needs_root
@needs_fio
def test_gp3_counts_sequential_small_io_merged_and_large_random_io_split() -> None:
    # gp3 3,000 IOPS, 125 MiB/s, 256 KiB unit
    got = _measure("gp3", 100, 3000)
    assert got["randread 4k"]["iops"] == pytest.approx(3000, rel=0.06)
    # merged: 64 sequential 4 KiB I/Os are one EBS operation, so the throughput cap binds
    # (125 MiB/s / 4 KiB = 32,000 fio I/Os per second), far above the provisioned IOPS
    assert got["read 4k"]["iops"] > 5 * 3000
    assert got["read 4k"]["bw"] == pytest.approx(125 * MIB, rel=0.08)
    # split: a 512 KiB random read is two 256 KiB operations, and 3,000 / 2 x 512 KiB is
    # above 125 MiB/s, so the throughput cap binds: 250 I/Os per second
    assert got["randread 512k"]["bw"] == pytest.approx(125 * MIB, rel=0.08)


@needs_root
@needs_fio
def test_io1_charges_a_512_kib_random_read_two_operations() -> None:
    # io1 1,000 IOPS: its throughput cap (256 KiB x IOPS up to the type's maximum) is above
    # what 500 reads of 512 KiB move, so the IOPS cap binds at 2 operations per read
    got = _measure("io1", 100, 1000)
    assert got["randread 512k"]["iops"] == pytest.approx(500, rel=0.06)
    assert got["randread 4k"]["iops"] == pytest.approx(1000, rel=0.06)
