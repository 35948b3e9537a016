"""A pytest plugin for ``bench_main_timeline.py``: where each worker's time goes.

Loaded with ``-p timeline_plugin`` (``benchmarks/`` on ``PYTHONPATH``) in every pytest-xdist
worker, it appends one JSON line per event to ``$EBSPERF_TIMELINE``: each test's start and
end, each fio run, each wait for the host's measuring lock (shared or alone), each hold of
it alone, and each path calibration of the latency daemon. It wraps the package's own
functions and changes nothing they do.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

OUT = os.environ.get("EBSPERF_TIMELINE", "")
#: Set by the outermost pytest that loads this plugin (the project's own test run): the test
#: whose pytest runs (``run_pytest``, pytester's) an event came from; empty in the main job.
OUTER = "EBSPERF_TIMELINE_OUTER"
_OUTERMOST = OUTER not in os.environ
_CONTROLLER = False


def _log(kind: str, t0: float, seconds: float, what: str = "") -> None:
    if not OUT:
        return
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    with open(OUT, "a", encoding="utf-8") as out:
        out.write(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
                              "test": test, "kind": kind, "t0": t0, "s": seconds,
                              "what": what, "outer": os.environ.get(OUTER, "")}) + "\n")


def _timed(kind: str, describe: Callable[..., str]) -> Callable[[Any], Any]:
    def wrap(original: Any) -> Any:
        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.time()
            try:
                return original(*args, **kwargs)
            finally:
                _log(kind, t0, time.time() - t0, describe(*args, **kwargs))
        return timed
    return wrap


def _held_alone(original: Any) -> Any:
    depth = [0]  # a hold inside a hold is the same hold

    @functools.wraps(original)
    @contextlib.contextmanager
    def held(*args: Any, alone: bool = False, **kwargs: Any) -> Iterator[Any]:
        with original(*args, alone=alone, **kwargs) as value:
            t0 = time.time()
            depth[0] += alone
            try:
                yield value
            finally:
                depth[0] -= alone
                if alone and not depth[0]:
                    _log("alone", t0, time.time() - t0)
    return held


def pytest_configure(config: Any) -> None:
    global _CONTROLLER
    _CONTROLLER = bool(getattr(config.option, "numprocesses", None)) and \
        not hasattr(config, "workerinput")
    from pytest_ebsperf.checks import core
    from pytest_ebsperf.device import lock
    from pytest_ebsperf.emulate import service_time
    from pytest_ebsperf.fio import runner

    lock._take = _timed("wait", lambda mode: "alone" if mode == fcntl.LOCK_EX else "shared")(
        lock._take)
    runner.FioRunner.run = _timed("fio", lambda self, workload, *a, **k: workload.label())(
        runner.FioRunner.run)
    service_time.calibrate = _timed("calibrate", lambda *a, **k: "")(service_time.calibrate)
    core.measuring = _held_alone(core.measuring)  # every hold alone, by check or run


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    if _OUTERMOST and not _CONTROLLER and os.environ.get("EBSPERF_TIMELINE_TESTS"):
        os.environ[OUTER] = nodeid  # inherited by the runs this test starts
    if not _CONTROLLER:  # an xdist controller sees every worker's tests too
        _log("start", time.time(), 0.0, nodeid)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    if not _CONTROLLER:
        _log("end", time.time(), 0.0, nodeid)
