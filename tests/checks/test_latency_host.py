"""Which checks hold the host alone: a latency check on an emulated volume whose bound a
neighbour could reach (checks/latencies.py; a loose one, gp3's and io1's single-digit
milliseconds, B-SLA, measures beside the other workers), and a comparison on real devices
(checks/paired.py; emulated twins measure beside the other workers)."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from pytest_ebsperf.checks.latencies import MEAN_LATENCY_ROOM, latency_host
from pytest_ebsperf.checks.witnesses import latency_again_if_spoiled
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict


def _core(held: list[str], emulated: object, emulated_any: bool = True) -> SimpleNamespace:
    @contextlib.contextmanager
    def measuring_alone(why: str = ""):
        held.append("alone")
        yield

    target = SimpleNamespace(emulated=emulated, emulated_any=emulated_any)
    return SimpleNamespace(target=target, measuring_alone=measuring_alone)


def test_a_loose_mean_bound_measures_beside_the_other_workers() -> None:
    held: list[str] = []
    gp3 = SimpleNamespace(latency_us=600.0)
    # B-SLA: under 10 ms
    with latency_host(_core(held, gp3), mean_bound_ns=10e6):  # type: ignore[arg-type]
        pass
    assert held == []
    assert 10e6 >= MEAN_LATENCY_ROOM * (600.0 + 1000.0) * 1000.0
    io2 = SimpleNamespace(latency_us=300.0)  # B-IO2: under 500 µs on a 300 µs volume
    with latency_host(_core(held, io2), mean_bound_ns=500e3):  # type: ignore[arg-type]
        pass
    assert held == ["alone"]
    # a percentile bound (no mean), or a volume without an emulated service time: alone
    with latency_host(_core(held, gp3)):  # type: ignore[arg-type]
        pass
    unset = SimpleNamespace(latency_us=None)
    with latency_host(_core(held, unset), mean_bound_ns=10e6):  # type: ignore[arg-type]
        pass
    assert held == ["alone"] * 3
    # a device given with --device: never the emulator's lock
    with latency_host(_core(held, None, emulated_any=False), mean_bound_ns=500e3):  # type: ignore[arg-type]
        pass
    assert held == ["alone"] * 3


def _verdict(outcome: Outcome, measured: float) -> Verdict:
    return Verdict(outcome, "B-IO2", "io2 random read 16 KiB, one at a time", 500_000.0,
                   measured, "ns", "claimed mean read latency", "r", f"measured {measured:.0f}")


def _runner(held: list[str], again: SimpleNamespace) -> SimpleNamespace:
    @contextlib.contextmanager
    def measuring_alone(why: str = ""):
        held.append(why)
        yield
        held.append("let go")

    def run(workload: object) -> SimpleNamespace:
        held.append("run")
        return again

    def calibrate_path() -> float:
        held.append("path measured")
        return 0.0

    io2 = SimpleNamespace(latency_us=300.0, calibrate_path=calibrate_path)
    return SimpleNamespace(measuring_alone=measuring_alone, run=run, nodeid="io2::latency",
                           target=SimpleNamespace(emulated=io2))


def test_a_latency_run_its_emulator_fell_behind_in_is_measured_again_alone() -> None:
    """A quiet main job's io2 mean-latency run went from 0.30-0.37 ms a second to 0.51-0.92
    ms in 5 of 10 s, its emulator behind there, and ended INCONCLUSIVE "run longer": that run
    was the host's, so a fresh one holding the host alone decides, and says why."""
    held: list[str] = []
    first = SimpleNamespace(emulator_behind=(4, 5, 6, 8, 9), kept_as="", measured=0.45e6)
    fresh = SimpleNamespace(emulator_behind=(), kept_as="", measured=0.31e6)

    def judge(run: SimpleNamespace) -> Verdict:
        return _verdict(Outcome.PASS if run.measured < 0.4e6 else Outcome.INCONCLUSIVE,
                        run.measured)

    found, result = latency_again_if_spoiled(_runner(held, fresh), judge(first), first,
                                             Workload("randread"), judge)
    assert result is fresh and found.outcome is Outcome.PASS
    # the daemon's path measured again, alone, before the fresh run
    assert held == ["its first run was the host's: measured again alone", "path measured",
                    "run", "let go"]
    assert "The first run's emulator fell behind in 5 s" in found.message
    assert found.details["first_run"]["measured"] == 0.45e6
    # a PASS, or a run the emulator kept up in, stands as it is (a volume set slower keeps
    # up with its setting: its FAIL is the volume's)
    for outcome, behind in ((Outcome.PASS, (4,)), (Outcome.FAIL, ())):
        held.clear()
        run = SimpleNamespace(emulator_behind=behind, kept_as="", measured=0.9e6)
        kept = _verdict(outcome, 0.9e6)
        assert latency_again_if_spoiled(_runner(held, fresh), kept, run, Workload("randread"),
                                        judge) == (kept, run)
        assert held == []


def test_a_comparison_holds_the_host_alone_on_real_devices_and_not_on_emulated_twins() -> None:
    """S0-08, S1-03, S1-08, S2-17 (checks/paired.py: held): twins on real devices share the
    instance's CPUs and EBS bandwidth with any other worker's fio, so the comparison holds the
    host alone; emulated twins measure run by run beside the other workers, their emulators
    saying which pairs the host held back (those are measured again)."""
    from pytest_ebsperf.checks import paired

    held: list[str] = []
    emulated = SimpleNamespace(emulated_any=True)
    real = SimpleNamespace(emulated_any=False)
    with paired.held(_core(held, object()), emulated):
        pass
    with paired.held(_core(held, object())):  # one device compared with itself (S1-03)
        pass
    assert held == []
    with paired.held(_core(held, object()), real):  # an emulated device against a real twin
        pass
    with paired.held(_core(held, None, emulated_any=False)):
        pass
    assert held == ["alone", "alone"]
