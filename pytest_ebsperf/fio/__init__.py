"""fio layer: build jobs, run fio on a host, parse its JSON and interval logs."""

from __future__ import annotations

from pytest_ebsperf.fio.result import DirectionStats, FioResult, Latency, Series
from pytest_ebsperf.fio.workload import Workload, format_size, parse_size

__all__ = [
    "DirectionStats",
    "FioResult",
    "Latency",
    "Series",
    "Workload",
    "format_size",
    "parse_size",
]
