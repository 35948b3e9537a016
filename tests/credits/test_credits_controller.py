"""The emulated credit bucket: arithmetic, counting, limit writes only on state changes, clean-up.

The arithmetic is tested with a fake device and counter and a hand-driven clock; the kernel
side (cgroup counters, sysfs writes, threads and devices left behind) on a real emulated
volume with fio (root).
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from support.common import needs_fio, needs_root

from pytest_ebsperf.emulate import EmulatedDevice, cleanup
from pytest_ebsperf.emulate.bucket import (
    BASELINE,
    BURST,
    Bucket,
    CgroupCounter,
    CreditController,
    IoHint,
    hdd_cost,
    parse_v1,
    parse_v2,
    ssd_cost,
)

KIB, MIB = 1024, 1024 * 1024


class FakeDevice:
    """Records every limit change the controller asks for."""

    def __init__(self) -> None:
        self.calls: list[tuple[float | None, float | None]] = []

    def set_rates(self, iops: float | None, bps: float | None) -> None:
        self.calls.append((iops, bps))


class FakeCounter:
    """Cumulative (ops, bytes) that a test advances by hand."""

    def __init__(self) -> None:
        self.ops = self.nbytes = 0

    def read(self) -> tuple[int, int]:
        return self.ops, self.nbytes


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def rates(credits: bool) -> tuple[float | None, float | None]:
    return (3000.0, 128.0 * MIB) if credits else (300.0, 75.0 * MIB)


def make(balance: float = 54_000.0, capacity: float = 54_000.0
         ) -> tuple[CreditController, FakeDevice, FakeCounter, Clock]:
    device, counter, clock = FakeDevice(), FakeCounter(), Clock()
    bucket = Bucket(capacity, balance, earn_rate=300.0, resume_credits=2_700.0)
    controller = CreditController(device, counter, bucket, rates,  # type: ignore[arg-type]
                                  cost=ssd_cost, clock=clock)
    return controller, device, counter, clock


def run_at(controller: CreditController, counter: FakeCounter, clock: Clock, iops: float,
           seconds: float, tick: float = 0.05) -> None:
    """Drive the controller as if ``iops`` 16 KiB I/Os ran for ``seconds``."""
    for _ in range(round(seconds / tick)):
        clock.now += tick
        counter.ops += round(iops * tick)
        counter.nbytes += round(iops * tick) * 16 * KIB
        controller.tick()


# -- pure parts -----------------------------------------------------------------------------
def test_a_bucket_drains_at_demand_minus_baseline_and_switches_once() -> None:
    bucket = Bucket(54_000, 54_000, 300, resume_credits=2_700)
    changes = [bucket.step(1.0, 3_000) for _ in range(25)]
    assert changes.count(True) == 1 and changes.index(True) == 19  # empty after 20 s
    assert bucket.state == BASELINE and bucket.balance == 0.0


def test_an_empty_bucket_bursts_again_only_with_a_second_of_burst_in_it() -> None:
    bucket = Bucket(54_000, 0.0, 300, resume_credits=2_700)
    assert bucket.state == BASELINE
    for _ in range(8):
        assert not bucket.step(1.0, 300)  # under load at the baseline the balance stays 0
    assert bucket.balance == 0.0
    steps = [bucket.step(1.0, 0.0) for _ in range(9)]  # idle: 300 a second
    assert steps[-1] and bucket.state == BURST and bucket.balance == 2_700


def test_the_balance_never_exceeds_the_capacity() -> None:
    bucket = Bucket(1_000, 900, 300, resume_credits=10)
    bucket.step(10.0, 0.0)
    assert bucket.balance == 1_000


def test_an_impossible_bucket_is_refused() -> None:
    with pytest.raises(ValueError):
        Bucket(100, 200, 1, resume_credits=1)


def test_cgroup_v1_and_v2_counters_are_parsed_for_the_right_device() -> None:
    v1 = "7:3 Read 10\n7:3 Write 5\n7:3 Total 15\n7:4 Total 99\nTotal 114\n"
    assert parse_v1(v1, "7:3") == 15 and parse_v1(v1, "8:0") == 0
    v2 = "7:3 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n8:0 rbytes=1 rios=1\n"
    assert parse_v2(v2, "7:3") == (3, 12288) and parse_v2(v2, "9:9") == (0, 0)


def test_gp2_costs_one_credit_per_256_kib_operation() -> None:
    assert ssd_cost(10, 10 * 16 * KIB, None, 0) == 10
    assert ssd_cost(4, MIB, None, 0) == 4  # one 1 MiB I/O, split into four pieces


def test_hdd_costs_a_mib_per_small_random_io_and_bytes_for_sequential() -> None:
    exact = 512 * KIB
    assert hdd_cost(10, 10 * 16 * KIB, IoHint(16 * KIB, sequential=False), exact) == 10
    # 1 MiB sequential reads the loop device split into 1 or 2 pieces: bytes decide
    assert hdd_cost(7, 5 * MIB, IoHint(MIB, sequential=True), exact) == 5
    assert hdd_cost(7, 5 * MIB, IoHint(MIB, sequential=False), exact) == 5
    assert hdd_cost(3, 3 * 16 * KIB, None, exact) == 3  # unknown workload: per operation


# -- the controller, driven by hand ----------------------------------------------------------
def test_limits_are_written_once_at_start_and_once_per_state_change() -> None:
    controller, device, counter, clock = make()
    controller.start()
    controller.close()  # the thread is not needed: ticks are driven below
    assert device.calls == [rates(True)]
    run_at(controller, counter, clock, 3_000, 30)  # past the 20 s knee
    assert device.calls == [rates(True), rates(False)]
    assert [t.state for t in controller.transitions] == [BURST, BASELINE]
    assert controller.transitions[1].t == pytest.approx(20.0, abs=0.06)
    run_at(controller, counter, clock, 300, 30)  # held at the baseline: no rewrite
    assert len(device.calls) == 2


def test_idle_time_refills_the_bucket_and_switches_back_to_burst() -> None:
    controller, device, counter, clock = make(balance=0.0)
    controller.start()
    controller.close()
    assert device.calls == [rates(False)]
    run_at(controller, counter, clock, 0, 27)  # S0-13: 27 s x 300 = 8,100 credits
    assert controller.state == BURST and controller.balance == pytest.approx(8_100)
    run_at(controller, counter, clock, 3_000, 6)  # bursts 8,100 / 2,700 = 3 s
    assert controller.state == BASELINE
    knee = controller.transitions[-1].t - 27.0
    assert knee == pytest.approx(3.0, abs=0.06)
    assert len(device.calls) == 3


def test_new_workload_limits_are_applied_for_the_current_state() -> None:
    controller, device, _, _ = make(balance=0.0)
    controller.start()
    controller.close()
    controller.use_rates(lambda credits: (1.0, 2.0) if credits else (3.0, 4.0))
    assert device.calls[-1] == (3.0, 4.0)


def test_the_thread_ticks_until_closed_and_leaves_the_clean_up_registry() -> None:
    controller, _, _, _ = make()
    controller.tick_s = 0.01
    controller.start()
    assert controller.running and controller in cleanup.live()
    time.sleep(0.1)
    controller.close()
    controller.close()  # twice is fine
    assert not controller.running and controller not in cleanup.live()
    assert not any(t.name == "ebsperf-credits" for t in threading.enumerate())


def test_a_counter_that_vanishes_stops_the_thread_with_a_sentence() -> None:
    class Gone(FakeCounter):
        def read(self) -> tuple[int, int]:
            if self.ops:
                raise FileNotFoundError("the cgroup is gone")
            return 0, 0

    device, counter = FakeDevice(), Gone()
    controller = CreditController(device, counter, Bucket(10, 10, 1, 1), rates,  # type: ignore[arg-type]
                                  cost=ssd_cost, tick_s=0.01)
    controller.start()
    counter.ops = 1
    deadline = time.monotonic() + 2
    while controller.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not controller.running and "cgroup is gone" in (controller.error or "")
    with pytest.raises(RuntimeError, match="credit bucket stopped"):
        controller.use_rates(rates)
    controller.close()


# -- on a real emulated volume -----------------------------------------------------------------
def fio(device: EmulatedDevice, seconds: float, iodepth: int = 8) -> None:
    subprocess.run(device.argv_prefix() + [
        "fio", "--name=c", f"--filename={device.path}", "--direct=1", "--ioengine=libaio",
        "--rw=randread", "--bs=16k", f"--iodepth={iodepth}", "--time_based",
        f"--runtime={seconds}", "--readonly", "--output-format=json"], check=True,
        capture_output=True)


@needs_root
@needs_fio
def test_on_a_real_volume_the_kernel_sees_writes_only_at_state_changes() -> None:
    with EmulatedDevice(iops=3000, bps=128 * MIB, name="ebsperf-credtest") as device:
        device.set_mix(1.0)
        counter = CgroupCounter(device.cgroup_path, device.cgroup_version, device.major_minor)
        bucket = Bucket(6_000, 6_000, 300, resume_credits=2_700)  # 6,000 / 2,700 = 2.2 s
        controller = CreditController(device, counter, bucket, rates, cost=ssd_cost).start()
        try:
            writes = device.sysfs_writes
            fio(device, 4)
            after_knee = device.sysfs_writes
            states = [t.state for t in controller.transitions]
            assert states == [BURST, BASELINE]
            assert after_knee > writes  # the baseline limits reached the kernel ...
            fio(device, 2)
            assert device.sysfs_writes == after_knee  # ... and nothing since, under load
            read_iops = device.limits.read_iops
            assert read_iops == 300
            spent = bucket.spent
            ops, _ = counter.read()
            assert spent == pytest.approx(ops, rel=0.02)  # one credit per 16 KiB read
        finally:
            controller.close()
        assert not controller.running


@needs_root
@needs_fio
def test_closing_the_session_stops_the_bucket_before_removing_the_device(tmp_path: Path
                                                                         ) -> None:
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.config.settings import Settings

    session = EbsperfSession(Settings(emulate=True, emulate_timescale="100"))
    volume = session.volume_for("gp2")
    target = session.target_for(volume)
    controller = session.credits.controller(target.emulated)
    assert controller is not None and controller.running
    cgroup = target.emulated.cgroup_path if target.emulated else Path("/nonexistent")
    session.close()
    assert not controller.running and controller.error is None
    assert not cgroup.exists()
    assert controller not in cleanup.live()
