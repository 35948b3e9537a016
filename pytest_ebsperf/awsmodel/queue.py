"""How many I/Os to keep outstanding so a CAP check is bound by the volume, not by fio.

Little's law: outstanding I/Os = IOPS x latency. With too few, fio measures its own queue
depth (the seeds' ``numjobs=4``, QD1 = 4 outstanding was just enough for 3,000 IOPS at
~1.3 ms). We ask for twice the law's figure so a latency up to twice the assumed one still
saturates the volume, and clamp the total to [4, 512].
"""

from __future__ import annotations

import math

from pytest_ebsperf.awsmodel.accounting import ebs_ops_per_io
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import is_hdd, volume_type
from pytest_ebsperf.fio.workload import Workload

HEADROOM = 2.0
MIN_OUTSTANDING = 4
MAX_OUTSTANDING = 512
#: Above this many outstanding I/Os a single fio job (one submitting thread) starts to be the
#: bottleneck at high IOPS, so the load is spread over several jobs.
PER_JOB = 64
#: Where the load is spread, each job gets about this many: shallow queues over more jobs
#: drive a fast device hardest (random 4 KiB reads on an unthrottled tmpfs loop device, 2
#: CPUs, io_uring with registered buffers: QD16x8 372,000 IOPS, QD32x4 330,000, QD64x2
#: 323,000, QD64x4 250,000).
SPREAD_DEPTH = 16
#: Jobs per CPU at most: fio's jobs wait on I/O most of the time, so more jobs than CPUs
#: still help (8 jobs on 2 CPUs was the best of the grid above).
JOBS_PER_CPU = 4
#: ... but from 16 KiB per I/O on, the copying dominates and fewer, deeper jobs drive harder:
#: random 16 KiB reads on the same device, two independent grids of 30 jobs, put 4 jobs
#: first both times (QD16x4, then QD32x4 at 367,000 IOPS against QD16x8's 337,000).
LARGE_IO_BYTES = 16 * 1024
LARGE_IO_JOBS_PER_CPU = 2
#: Outstanding I/Os per CPU at most: deeper, and completion handling costs more than it
#: gains (QD64x4 on 2 CPUs lost a third against QD16x8).
OUTSTANDING_PER_CPU = 64

def default_latency_s(volume: Volume, workload: Workload) -> float:
    """Assumed latency of one fio I/O: the type's figure times the EBS I/Os it is split into
    (a 1 MiB I/O on SSD is four 256 KiB operations)."""
    kind = volume_type(volume.type)
    base = kind.latency_s  # the record's assumed service time, with its reasons
    if not kind.ebs:
        return base
    return base * ebs_ops_per_io(volume.type, workload.bs, sequential=False)


def default_queue_depth(
    volume: Volume,
    workload: Workload,
    expected_iops: float,
    latency_s: float | None = None,
    *,
    cpu_count: int = 1,
) -> tuple[int, int]:
    """``(iodepth, numjobs)`` for a check expecting ``expected_iops`` (fio IOPS).

    Total outstanding = ceil(expected_iops x latency x 2), clamped to [4, 512]. Above 64 the
    total (at most 64 per CPU) is spread over ``min(4 x cpu_count, ceil(total / 16))`` jobs,
    ``iodepth`` being the per-job share rounded up and at most 64 (2 jobs per CPU from
    16 KiB per I/O on). st1/sc1 always get one job: AWS warns that several direct-I/O
    jobs lower their throughput (B-HDD). ``cpu_count`` is passed in (``os.cpu_count()``) so
    the function stays pure; the default of 1 never spreads.
    """
    latency = default_latency_s(volume, workload) if latency_s is None else latency_s
    wanted = math.ceil(max(0.0, expected_iops) * latency * HEADROOM)
    total = min(MAX_OUTSTANDING, max(MIN_OUTSTANDING, wanted))
    if is_hdd(volume.type) or total <= PER_JOB:
        return total, 1
    # Spread over up to JOBS_PER_CPU jobs per CPU at about SPREAD_DEPTH each, and no more
    # than OUTSTANDING_PER_CPU in all per CPU: beyond that fio's own completion handling, not
    # the volume, sets the pace. A host too small for the claim then shows up as
    # load-generator bound instead of as a slow volume.
    total = min(total, max(PER_JOB, OUTSTANDING_PER_CPU * cpu_count))
    per_cpu = LARGE_IO_JOBS_PER_CPU if workload.bs >= LARGE_IO_BYTES else JOBS_PER_CPU
    numjobs = max(1, min(per_cpu * cpu_count, math.ceil(total / SPREAD_DEPTH)))
    return min(PER_JOB, math.ceil(total / numjobs)), numjobs


def little_iops(outstanding: int, latency_s: float) -> float:
    """The most IOPS ``outstanding`` I/Os can give at ``latency_s`` (Little's law)."""
    return outstanding / latency_s if latency_s > 0 else math.inf


def plan_queue(volume: Volume, workload: Workload, rate: float, *, cpu_count: int = 1,
               iodepth: int | None = None, numjobs: int | None = None,
               at_least: bool = False) -> Workload:
    """``workload`` with the queue that keeps ``rate`` fio IOPS in flight on ``volume``
    (:func:`default_queue_depth`), unless the user gave ``iodepth`` or ``numjobs``; with
    ``at_least``, never shallower than the workload already is. The one queue-depth planner:
    checks, fio servers and the credit checks call it."""
    depth, jobs = default_queue_depth(volume, workload, rate, cpu_count=cpu_count)
    if at_least:
        depth, jobs = max(depth, workload.iodepth), max(jobs, workload.numjobs)
    return workload.replace(iodepth=iodepth or depth, numjobs=numjobs or jobs)
