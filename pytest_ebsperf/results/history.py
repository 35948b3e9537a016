"""History through pytest-benchmark's storage: checks recorded as benchmarks.

pytest-benchmark stores only durations and flags a regression only when a number *grows*, so
every check is recorded as a **cost**, lower is better (ecosystem notes §1.2/1.3):

* IOPS as seconds per I/O (``1 / IOPS``): the "OPS" column then reads as IOPS;
* throughput as seconds per MiB (``1 / MiB/s``): "OPS" reads as MiB/s;
* latency as seconds.

Each per-second sample of the check's fio run is one round, replayed through
``benchmark.pedantic`` with a :class:`VirtualClock` as the test's timer, so ``pytest-benchmark
list/compare``, ``--benchmark-compare-fail=median:10%`` and its storage backends work on our
runs. ``benchmark(...)`` is never used: it calibrates the timer by spinning until the clock
moves, and this clock moves only when told to. The readable value, its unit and the whole
measurement (with the per-second series) go into ``extra_info["ebsperf"]``, which is saved
even without ``--benchmark-save-data``; that is what ``--ebsperf-compare=RUN`` reads back.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ebsperf.results import records
from pytest_ebsperf.units import MIB

#: Benchmark group of every ebsperf check (``pytest-benchmark compare --group-by=group``).
GROUP = "ebsperf"
#: Key of our payload in a benchmark's ``extra_info`` (read back by :mod:`.baseline`).
EXTRA_INFO_KEY = "ebsperf"
_MIB = float(MIB)


class VirtualClock:
    """A pytest-benchmark timer that only moves when :meth:`advance` is called."""

    __name__ = "VirtualClock"  # pytest-benchmark stores the timer's name in options.timer

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock by one round's cost."""
        self.now += seconds


@dataclass(frozen=True)
class CostSamples:
    """What one check records: per-round costs and the readable value they stand for."""

    metric: str
    unit: str
    cost_unit: str
    costs: tuple[float, ...]
    value: float


def cost_samples(row: Mapping[str, Any], measurement: Mapping[str, Any]) -> CostSamples | None:
    """The costs of ``row``'s check from its measurement's per-second series, or None.

    A second with no I/O at all (a stall) is recorded as the cost of one I/O (one byte) per
    second rather than infinity, which JSON and pytest-benchmark's statistics cannot
    hold; it still dominates the mean, as a stall should.
    """
    unit = row.get("unit")
    if unit == "B/s":
        values = records.series_values(measurement, "total_bw")
        costs = tuple(_MIB / max(v, 1.0) for v in values)
        return _samples("throughput", "MiB/s", "s/MiB", costs, values, 1.0 / _MIB)
    if unit == "ns":
        values = records.latency_samples(measurement)
        costs = tuple(v / 1e9 for v in values)
        return _samples("latency", "ns", "s", costs, values, 1.0)
    values = records.series_values(measurement, "total_iops")
    costs = tuple(1.0 / max(v, 1.0) for v in values)
    return _samples("IOPS", "IOPS", "s/IO", costs, values, 1.0)


def _samples(metric: str, unit: str, cost_unit: str, costs: tuple[float, ...],
             values: Sequence[float], scale: float) -> CostSamples | None:
    if not costs:
        return None  # pedantic(rounds=0) is an error: nothing to record
    return CostSamples(metric, unit, cost_unit, costs, sum(values) / len(values) * scale)


def extra_info(row: Mapping[str, Any], samples: CostSamples,
               measurements: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``extra_info["ebsperf"]``: the readable value and everything the gate needs later."""
    return {
        "format": 1,
        "claim": row.get("claim"), "what": row.get("what"), "outcome": row.get("outcome"),
        "metric": samples.metric, "unit": samples.unit, "value": round(samples.value, 4),
        "cost_unit": samples.cost_unit, "expected": row.get("expected_value"),
        "workload": row.get("workload"), "volume": row.get("volume"),
        "measurements": [dict(m) for m in measurements],
    }


def primary_measurement(row: Mapping[str, Any], measurements: Sequence[Mapping[str, Any]]
                        ) -> Mapping[str, Any] | None:
    """The measurement a row's verdict is about: the device's run with the row's workload
    (a sweep's row carries its largest block size), else the device's last run."""
    device = [m for m in measurements if m.get("role", "device") == "device"]
    same = [m for m in device if m.get("workload") == row.get("workload")]
    pool = same or device
    return pool[-1] if pool else None


def machine_info(settings: Mapping[str, Any]) -> dict[str, Any]:
    """What pytest-benchmark's ``machine_info`` gets: the volume and instance settings.

    Taken from the settings, not from the volumes seen, because pytest-benchmark asks for
    machine info twice - when loading a run to compare (before any test ran) and when saving -
    and warns whenever the two differ from the stored run's.
    """
    # --emulate-factor is left out: it is a testing aid that makes a run slower on purpose,
    # and a warning about "different machines" would only distract from what it shows.
    keys = ("volume_type", "volume_size", "volume_iops", "volume_throughput", "instance_type",
            "emulate", "device")
    return {"kernel": platform.release(), **{key: settings.get(key) for key in keys}}


def history_state(*, save: bool, json_path: bool, compare: bool, disabled: bool, skip: bool,
                  xdist: bool) -> tuple[bool, str]:
    """Whether checks are recorded as benchmarks, and why not (a sentence) when not.

    Recording happens only when pytest-benchmark was asked to keep or compare results, so a
    plain run behaves exactly as without pytest-benchmark.
    """
    if not (save or json_path or compare):
        return False, ""
    if xdist:
        return False, ("history not recorded: pytest-benchmark turns itself off under "
                       "pytest-xdist (-n); run one pytest process per host for benchmark runs")
    if disabled:
        return False, "history not recorded: --benchmark-disable is set"
    if skip:
        return False, "history not recorded: --benchmark-skip is set"
    return True, ""
