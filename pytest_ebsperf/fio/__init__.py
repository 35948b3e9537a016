"""fio layer: build jobs, run fio on a host, parse its JSON and interval logs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ebsperf.deferred import names_from

if TYPE_CHECKING:  # the same names, loaded on first use (deferred.names_from)
    from pytest_ebsperf.fio.host import FioHost, RunResult
    from pytest_ebsperf.fio.jobs import fio_argv
    from pytest_ebsperf.fio.logs import build_series, parse_log
    from pytest_ebsperf.fio.parse import parse_result, parse_version
    from pytest_ebsperf.fio.result import DirectionStats, FioResult, Latency, Series
    from pytest_ebsperf.fio.runner import FioRunner
    from pytest_ebsperf.fio.workload import Workload, format_size, parse_size

#: Where each name of the package lives: importing one of its modules, or the package for
#: one name, does not load the others.
_WHERE: dict[str, str] = {
    "DirectionStats": "result",
    "FioHost": "host",
    "FioResult": "result",
    "FioRunner": "runner",
    "Latency": "result",
    "RunResult": "host",
    "Series": "result",
    "Workload": "workload",
    "build_series": "logs",
    "fio_argv": "jobs",
    "format_size": "workload",
    "parse_log": "logs",
    "parse_result": "parse",
    "parse_size": "workload",
    "parse_version": "parse",
}


__getattr__ = names_from(__name__, _WHERE)

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
