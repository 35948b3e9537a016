"""fio layer: build jobs, run fio on a host, parse its JSON and interval logs."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, loaded on first use (:func:`__getattr__`)
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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # not kept in the package's namespace: the module in sys.modules answers each time, so
    # a module imported anew (pytester's in-process runs) is never mixed with an old one
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)

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
