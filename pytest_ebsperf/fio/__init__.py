"""fio layer: build jobs, run fio on a host, parse its JSON and interval logs."""

from __future__ import annotations

from pytest_ebsperf.fio.host import FioHost, RunResult
from pytest_ebsperf.fio.jobs import fio_argv
from pytest_ebsperf.fio.logs import build_series, parse_log
from pytest_ebsperf.fio.parse import parse_result, parse_version
from pytest_ebsperf.fio.result import DirectionStats, FioResult, Latency, Series
from pytest_ebsperf.fio.runner import FioRunner
from pytest_ebsperf.fio.workload import Workload, format_size, parse_size

__all__ = [
    "DirectionStats",
    "FioHost",
    "FioResult",
    "FioRunner",
    "Latency",
    "RunResult",
    "Series",
    "Workload",
    "build_series",
    "fio_argv",
    "format_size",
    "parse_log",
    "parse_result",
    "parse_size",
    "parse_version",
]
