"""Emulated volumes with latency: every I/O takes the set service time (a FUSE daemon under a
loop device with direct I/O), on top of the kernel's rate limits; data is kept; nothing is
left behind. Real fio on real loop devices."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import busy
from support.common import ROOT, needs_fio, needs_root

from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.awsmodel.volume_types import volume_type
from pytest_ebsperf.config.emulation import parse_latency
from pytest_ebsperf.emulate import EmulatedDevice, cleanup, loop, service_time, witness
from pytest_ebsperf.emulate.target import Target
from pytest_ebsperf.errors import ConfigError
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.paired_verdicts import median_latency_ns

#: Times latencies or rates closely: runs while no other test runs (conftest).
pytestmark = pytest.mark.alone

MIB = 1024 * 1024


def _usable() -> None:
    try:
        service_time.check_available()
    except Exception as exc:  # noqa: BLE001 - any reason is a reason to skip
        pytest.skip(f"emulated latency is not available here: {exc}")


#: The share of a set mean the host's own path may take, for a fidelity check of that mean:
#: half the daemon's 80 % (what it can take off at most), so that the path may wander to
#: 1.6 times what was seen and still be taken off whole.
PATH_SHARE = 0.4


def corrected(device: EmulatedDevice) -> float:
    """Measures the path again, now (:meth:`EmulatedDevice.calibrate_path`): what the loop
    device, FUSE and the daemon's wake-ups add at queue depth 1 is taken off each service
    time, up to 80 % of the mean, and the daemon follows it from then on (on this 2-CPU
    machine 150-700 µs, 0.5-3 ms settings then measured within -3 % and +3 %).

    A path more than :data:`PATH_SHARE` of the set mean cannot be taken off whole, and one that
    wanders then moves fio's figure with it (two CI runs: a 500 µs setting measured 879 and
    706 µs, 1,327 and 674 µs): the mean is raised to what this host can emulate
    (:func:`room_for_the_path`), and the checks hold that mean. Returns the mean held."""
    device.calibrate_path()
    read(device, 1, seconds=0.5)  # the daemon sees the path of the I/Os going through
    return room_for_the_path(device)


def room_for_the_path(device: EmulatedDevice, *, at_least: float = 0.0) -> float:
    """The mean held from now on: the set one, or (when the path the daemon saw, less its
    anchor, is more than :data:`PATH_SHARE` of it) a multiple of 100 µs at least path /
    PATH_SHARE, and at least ``at_least``."""
    server = device.latency_server
    path, samples, _ = server.seen()
    own = path - (server.anchor_us or 0.0) if path is not None and samples else 0.0
    mean = device.latency_us or 0.0
    wanted = max(at_least, math.ceil(own / PATH_SHARE / 100.0) * 100.0)
    if wanted > mean:
        mean = wanted
        server.set(mean_us=mean)
        device.latency_us = mean
    return mean


def steady_qd1(device: EmulatedDevice) -> tuple[float, float, float]:
    """Two 2-s runs at queue depth 1 that agree within 15 %: (IOPS, clat, total latency) of
    the first. Runs that do not agree (a CI run in the lanes: 668 and 525 µs for a set 500 µs
    whose path had looked 40 % of it or less) show a path this host does not hold at that
    mean: the mean is raised once, to at least twice what it was and to what the path seen
    through those runs leaves room for, and two more runs are made; a skip says so when even
    those do not agree. The mean held is ``device.latency_us``."""
    for attempt in range(2):
        first, second = read_with_total(device, 1), read_with_total(device, 1)
        if abs(first[1] - second[1]) <= 0.15 * min(first[1], second[1]):
            return first
        if attempt == 0:
            room_for_the_path(device, at_least=2 * (device.latency_us or 0.0))
    mean = device.latency_us or 0.0
    pytest.skip(f"this machine's I/O path wandered between two 2-s runs at queue depth 1 "
                f"({first[1]:.0f} and {second[1]:.0f} µs for a set {mean:.0f} µs, the "
                "mean already raised once for it): the emulator's figure cannot be checked "
                "against it now")


def read(device: EmulatedDevice, iodepth: int, seconds: float = 2) -> tuple[float, float]:
    """(IOPS, mean completion latency in µs) of 4 KiB random reads at ``iodepth``."""
    iops, clat, _ = read_with_total(device, iodepth, seconds)
    return iops, clat


def read_with_total(device: EmulatedDevice, iodepth: int, seconds: float = 2
                    ) -> tuple[float, float, float]:
    """(IOPS, mean completion latency, mean total latency (submission included), in µs)."""
    result = FioRunner().run(Workload("randread", bs=4096, iodepth=iodepth, runtime_s=seconds,
                                      ramp_s=0.5, engine="libaio"), device.path,
                             readonly=True, prefix=device.argv_prefix())
    return (result.read.iops, result.read.clat.mean_ns / 1000.0,
            result.read.lat.mean_ns / 1000.0)


def test_the_setting_reads_auto_none_and_milliseconds() -> None:
    assert parse_latency("auto") == "auto"
    assert parse_latency("none") is None
    assert parse_latency("0.5") == 500.0
    assert service_time.for_volume("auto", "io2") == volume_type("io2").emulated_latency_us == 300.0
    assert service_time.for_volume(2000.0, "io2") == 2000.0
    with pytest.raises(ConfigError, match="milliseconds"):
        parse_latency("fast")


@needs_root
@needs_fio
@pytest.mark.parametrize("mean_ms", [0.5, 2.0])
def test_queue_depth_one_sees_the_set_latency(mean_ms: float) -> None:
    _usable()
    with EmulatedDevice(size_bytes=64 * MIB, iops=100_000, latency_us=mean_ms * 1000) as dev:
        corrected(dev)  # the set mean, or what this host's path lets it emulate
        iops, clat, total = steady_qd1(dev)
        mean = dev.latency_us or 0.0
    # 5 % is the goal on a quiet machine (docs/benchmarks.md has the figures); on this 2-CPU
    # virtual machine, with the path measured once per process and taken off as a fixed
    # figure, 2-s runs at 0.5-2 ms were measured between -10 % and +14 % of the set mean
    # (-36 % once in a CI run); followed by the daemon, within -3 % and +3 %
    assert clat == pytest.approx(mean, rel=0.25), (mean_ms, mean)
    # Little's law at QD 1 holds with the whole time of an I/O, its submission included
    # (fio's lat; 25-70 µs more than clat here, 12 % of a 0.5 ms I/O at worst)
    assert iops == pytest.approx(1e6 / total, rel=0.05)


@needs_root
@needs_fio
def test_a_path_measured_in_a_slow_spell_is_not_kept() -> None:
    """The correction measured at the start is what a slow spell made it (a CI run: 1.2 ms
    taken off a 3 ms twin, which then measured 1.99 ms at QD 1): the daemon follows the path
    while the volume runs and serves the set mean. Here 80 % of the mean (800 µs of 1 ms) is
    taken off as if measured in a spell: kept fixed (the daemon's own account says so) each I/O
    would take 20 % of the mean plus the path; followed, what it takes off is what it saw of the path less
    the anchor, and fio sees the set mean."""
    _usable()
    with EmulatedDevice(size_bytes=64 * MIB, iops=100_000, latency_us=1000) as dev:
        mean = corrected(dev)  # 1 ms, or what this host's path lets it emulate
        spell = 0.8 * mean  # what a spell far slower than now would have had taken off
        server = dev.latency_server
        anchor = server.anchor_us
        assert anchor is not None and 0 <= anchor < mean
        server.set(overhead_us=spell)  # as if measured in that spell
        server.follow(None)
        read(dev, 1, seconds=0.5)
        _, _, fixed_taken = server.seen()
        server.follow(anchor)
        read(dev, 1, seconds=0.5)  # the daemon sees the path of the I/Os going through
        _, followed = read(dev, 1)
        path, samples, taken = server.seen()
    assert fixed_taken == spell
    assert path is not None and samples > 0
    assert taken == pytest.approx(min(max(path - anchor, 0.0), spell), abs=1.0)
    if taken >= 0.875 * spell:  # the path grew to more than twice what corrected() saw
        pytest.skip(f"this machine's own path was {path:.0f} µs through the runs: too close "
                    f"to the {spell:.0f} µs taken off to tell following from not")
    assert followed == pytest.approx(mean, rel=0.25), (followed, path, taken, mean)


@needs_root
@needs_fio
def test_deeper_queues_reach_queue_depth_over_latency() -> None:
    """8 in flight at 1 ms: the I/Os overlap (8,000 IOPS on a fast path). Here, with the
    daemon's wake-ups queueing behind one another on 2 CPUs, 6,200-7,800 IOPS at 0.98-1.25 ms
    were measured, 5,375 IOPS (1.49 ms) once in a CI run and 3,550 IOPS (3.8 times QD 1's
    rate) in another: Little's law holds whatever the path, the queue overlaps (never one I/O
    at a time: a daemon that serialised them gives QD 1's rate), no I/O is served faster than
    set, and what the emulator owed is what its witness holds the run's seconds to (below
    90 % of it a second is the host's, left out of any verdict: ``emulate/witness.py``, which
    the last assertion holds to the seconds of this very run)."""
    _usable()
    with EmulatedDevice(size_bytes=64 * MIB, iops=100_000, latency_us=1000) as dev:
        corrected(dev)  # 1 ms, or what this host's path lets it emulate
        one, _, _ = steady_qd1(dev)
        mean = dev.latency_us or 0.0
        started = time.monotonic()
        iops, clat, total = read_with_total(dev, 8)
        owed = witness.allowed_iops(dev, started, time.monotonic(), 4096, 8)
    assert owed == pytest.approx(8 / (mean / 1e6))  # the witness knows the queue's due: QD / latency
    assert iops * total / 1e6 == pytest.approx(8, rel=0.10)  # Little's law at QD 8
    # overlapped: at least two and a half I/Os' worth in flight at once (one at a time gives
    # about QD 1's rate; a daemon that serialised them, 1,000)
    assert iops >= 2.5 * one
    assert clat >= 0.7 * mean  # the service time is applied to every I/O
    # a run below 90 % of its due is one whose seconds the witness gives to the host
    late = witness.behind([dev], [1.0], [iops], started, bs=4096, outstanding=8)
    assert bool(late.seconds) == (iops < witness.BEHIND_SHARE * owed)


def median_qd1(device: EmulatedDevice, seconds: float) -> float:
    """fio's median completion latency (µs) of 16 KiB random reads at queue depth 1."""
    result = FioRunner().run(Workload("randread", bs=16384, iodepth=1, runtime_s=seconds,
                                      ramp_s=0.25, engine="libaio"), device.path,
                             readonly=True, prefix=device.argv_prefix())
    return (median_latency_ns(result) or 0.0) / 1000.0


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)  # takes every CPU in bursts itself
def test_a_median_followed_holds_while_the_host_steals_the_cpus_in_bursts() -> None:
    """Where the host takes its CPUs for milliseconds at a time (a hypervisor's steal), the
    path's mean the daemon follows by default carries those waits, and taking it off every
    I/O sinks fio's median: here 20 % of each CPU taken in 3 ms bursts (a real-time task), a
    0.5 ms volume whose median should be 485 µs measured 428-432 µs following the mean and
    473-477 µs following the median; with about 70 % taken, 253-268 and 518-553 µs (S2-17's
    latency term judges medians and asks for it: Target.latency_following)."""
    _usable()
    with EmulatedDevice(size_bytes=64 * MIB, iops=100_000, latency_us=500) as dev:
        corrected(dev)  # 0.5 ms, or what this host's path lets it emulate
        mean = dev.latency_us or 0.0
        wanted = mean * math.exp(-service_time.SIGMA ** 2 / 2)  # the log-normal's median
        server = dev.latency_server
        target = Target(dev.path, Volume("io1", 100, 5000), emulated=dev)
        with busy.steal(burst_s=0.003, share=0.2):
            following_mean = median_qd1(dev, 3)
            with target.latency_following("median"):
                assert server.statistic == "median"
                median_qd1(dev, 0.5)  # the daemon sees the path of the I/Os going through
                following_median = median_qd1(dev, 3)
        assert server.statistic == "mean"  # what it followed before, after the block
    assert 0.9 * wanted <= following_median <= 1.2 * wanted, (following_median,
                                                             following_mean, wanted)


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)
def test_the_kernels_rate_limit_still_binds_under_latency() -> None:
    # the emulator's own rate to 5 % over 3 s: beside the other lane's emulated volumes the
    # latency daemon once fell behind here (1,584 of 2,000 IOPS), which is the host's second,
    # not the emulator's setting, so it runs with nothing beside it
    _usable()
    with EmulatedDevice(size_bytes=64 * MIB, iops=2000, latency_us=500) as dev:
        iops, _ = read(dev, 16, seconds=3)
    assert iops == pytest.approx(2000, rel=0.05)


@needs_root
@needs_fio
def test_what_is_written_reads_back() -> None:
    _usable()
    with EmulatedDevice(size_bytes=16 * MIB, iops=100_000, latency_us=200) as dev:
        pattern = os.urandom(1 * MIB)
        fd = os.open(dev.path, os.O_RDWR)
        try:
            os.pwrite(fd, pattern, 3 * MIB)
            os.fsync(fd)
        finally:
            os.close(fd)
        with open(dev.path, "rb", buffering=0) as handle:
            handle.seek(3 * MIB)
            assert handle.read(MIB) == pattern


@needs_root
def test_closing_removes_daemon_mounts_and_loop_device() -> None:
    _usable()
    dev = EmulatedDevice(size_bytes=16 * MIB, iops=1000, latency_us=500).start()
    run_dir, name = dev.run_dir, Path(dev.path).name
    assert run_dir is not None
    assert any(m.source == "ebsperf-latfs" for m in loop.mounts())
    dev.close()
    assert not any(str(m.mountpoint).startswith(str(run_dir)) for m in loop.mounts())
    assert loop.loop_backing_file(name) is None or str(run_dir) not in (
        loop.loop_backing_file(name) or "")
    assert not run_dir.exists()


@needs_root
def test_a_sigkilled_owner_leaves_nothing_once_its_guardian_swept() -> None:
    _usable()
    script = ("import time\nfrom pytest_ebsperf.emulate import EmulatedDevice\n"
              "d = EmulatedDevice(size_bytes=16 * 1024 * 1024, iops=1000, latency_us=500)\n"
              "d.start()\nprint(d.run_dir, flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        assert proc.stdout is not None
        run_dir = proc.stdout.readline().strip()
        assert run_dir
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(str(m.mountpoint).startswith(run_dir) for m in loop.mounts()) or \
                loop.loops_backed_under(Path(run_dir)):
            assert time.monotonic() < deadline, "the latency mount or loop device stayed"
            time.sleep(0.1)
        assert not Path(run_dir).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        cleanup.sweep_stale()


@needs_root
@needs_fio
def test_trim_reaches_the_backing_file_through_the_daemon() -> None:
    _usable()
    with EmulatedDevice(size_bytes=16 * MIB, iops=100_000, latency_us=200) as dev:
        fd = os.open(dev.path, os.O_RDWR)
        try:
            os.pwrite(fd, b"\xff" * MIB, 0)
            os.fsync(fd)
        finally:
            os.close(fd)
        done = subprocess.run(["blkdiscard", "-o", "0", "-l", str(MIB), dev.path],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        with open(dev.path, "rb", buffering=0) as handle:
            assert handle.read(MIB) == bytes(MIB)  # a punched hole reads as zeros


IO2_LATENCY = ("suites/io2/test_io2.py::"
               "test_sixteen_kib_io_averages_under_half_a_millisecond")


@needs_root
@needs_fio
@pytest.mark.alone(machine=True)  # its mean-latency check holds the host alone nearly throughout
@pytest.mark.parametrize(("setting", "outcome"), [("none", "passed"), ("3.0", "failed")])
def test_io2_latency_claim_passes_and_fails_on_volumes_made_to_meet_or_miss_it(
        setting: str, outcome: str, tmp_path: Path) -> None:
    """B-IO2: < 500 µs average for 16 KiB I/O, asserted on emulated io2 volumes that meet it
    (no service time: a loop device in memory answers in tens of µs) or whose every I/O takes
    3 ms (misses it). Not 0.3 ms, nor 1 ms: the daemon's own path was measured at 0.15-0.5
    ms on a 2-CPU virtual machine, and wandering by that much from second to second it kept
    a volume at 1 ms from being told apart from 0.5 ms in 8 s. At 3 ms it is told apart on
    any machine, so this test needs no fast path."""
    _usable()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / IO2_LATENCY), "--emulate",
         f"--emulate-latency={setting}", "--ebsperf-runtime=12", "-p", "no:cacheprovider",
         "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    # 12 s, not 8: in 1 of 12 runs of 8 s the machine's own latency fell steadily from 244
    # to 65 µs over the run, a trend that leaves the mean's upper bound at 0.55 ms
    # (INCONCLUSIVE, "run longer"), which is right for 8 such seconds.
    said = [line for line in done.stdout.splitlines() if "B-IO2" in line]
    assert f"1 {outcome}" in done.stdout, said or done.stdout[-3000:]
    if outcome == "failed":
        assert "above the claim, FAIL" in done.stdout


GP3_LATENCY = "suites/gp3/test_gp3.py::test_sixteen_kib_io_takes_single_digit_milliseconds"


@needs_root
@needs_fio
@pytest.mark.parametrize(("setting", "outcome"), [("auto", "passed"), ("12", "failed")])
def test_gp3_single_digit_milliseconds_passes_and_fails(setting: str, outcome: str,
                                                        tmp_path: Path) -> None:
    """B-SLA: gp3's single-digit millisecond latency, met at gp3's emulated 0.6 ms and
    missed at 12 ms per I/O."""
    _usable()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / GP3_LATENCY), "--emulate",
         f"--emulate-latency={setting}", "--ebsperf-runtime=6", "-p", "no:cacheprovider",
         "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    said = [line for line in done.stdout.splitlines() if "B-SLA" in line]
    assert f"1 {outcome}" in done.stdout, said or done.stdout[-3000:]
