"""Which latency checks on an emulated volume hold the host alone (checks/rates.py): a bound
a neighbour could reach does, a loose one (gp3's and io1's single-digit milliseconds, B-SLA)
measures beside the other workers."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

from pytest_ebsperf.checks.rates import MEAN_LATENCY_ROOM, latency_host


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
