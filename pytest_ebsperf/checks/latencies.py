"""Latency bounds of your own: a percentile of fio's completion latencies
(:meth:`LatencyChecks.check_latency`) and the mean of its per-second means
(:meth:`LatencyChecks.check_mean_latency`, io2's B-IO2), each measured holding the host
alone on an emulated volume when the bound is within reach of what a neighbour adds."""

from __future__ import annotations

import contextlib
import functools
import time

from pytest_ebsperf.checks.core import CheckCore, FirstRun
from pytest_ebsperf.checks.witnesses import latency_again_if_spoiled
from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import latency
from pytest_ebsperf.verdicts.outcome import Verdict

#: Seconds a mean-latency check (and a floor check) runs at least (unless --ebsperf-runtime is
#: given): a PASS needs the mean's lower bound at the PASS level (t on the seconds' degrees of
#: freedom) to clear the bar, and 4 seconds (t = 10.2 on 3) leave a 2 % noisy volume short of
#: it where 9 (t = 4.5 on 8) do not.
MEAN_LATENCY_MIN_RUNTIME_S = 10.0
#: A mean-latency bound this many times (the emulated service time + 1 ms) or more does not
#: need the host alone: the most a neighbour added to an emulated mean was 0.28 ms (io2's
#: 0.3 ms beside two other workers' fio), and the bound leaves over 3 ms more than that.
MEAN_LATENCY_ROOM = 4.0


class LatencyChecks:
    """Latency bounds of your own (a percentile, a mean)."""

    def __init__(self, core: CheckCore) -> None:
        #: The runner's core: the volume, its devices, one fio run, concluding.
        self.core = core

    def check_latency(self, claim: str, what: str, workload: Workload, *,
                      percentile: float = 99.0, below: str | float = "2ms",
                      direction: str | None = None, source: str = "") -> Verdict:
        """Your own latency bound: fio's ``percentile``-th completion latency of ``workload``
        is at most ``below`` ("2ms", "500us"; a number is milliseconds), e.g. "p99 read
        latency stays under 2 ms at QD 4". ``direction`` is "read" or "write" (default: the
        workload's main one). See :mod:`pytest_ebsperf.verdicts.latency` for the test."""
        bound_ns, workload = self._latency_job(claim, workload, percentile, below)
        started = time.perf_counter()
        with latency_host(self.core):
            result = self.core.run(workload)
        judge = functools.partial(latency.judge_latency, claim, what, workload=workload,
                                  percentile=percentile, bound_ns=bound_ns, direction=direction,
                                  alpha=self.core.session.policy.alpha, source=source)
        found, result = latency_again_if_spoiled(self.core, judge(result), result, workload, judge)
        return self.core.conclude(found, workload, result, started)

    def first_check_latency(self, claim: str, what: str, workload: Workload, *,
                            percentile: float = 99.0, below: str | float = "2ms",
                            direction: str | None = None, source: str = "") -> FirstRun:
        return self._latency_job(claim, workload, percentile, below)[1], self.core.target

    def _latency_job(self, claim: str, workload: Workload, percentile: float,
                     below: str | float) -> tuple[float, Workload]:
        """The bound in ns and ``workload`` with fio's percentiles around ``percentile``."""
        try:
            bound_ns = latency.parse_duration_ns(below)
            ladder = latency.percentile_list(percentile)
        except EbsperfError as exc:
            self.core.refuse(f"{claim}: {exc}")
        extra = tuple((k, v) for k, v in workload.extra if k != "percentile_list")
        return bound_ns, workload.replace(extra=(*extra, ("percentile_list", ladder)))

    def check_mean_latency(self, claim: str, what: str, workload: Workload, *,
                           below: str | float, direction: str | None = None,
                           source: str = "") -> Verdict:
        """The average completion latency of ``workload`` is under ``below`` ("500us"; a
        number is milliseconds), judged on fio's per-second means (e.g. io2's "< 500 µs
        average for 16 KiB I/O", B-IO2)."""
        bound_ns, workload = self._mean_latency_job(claim, workload, below)
        started = time.perf_counter()
        with latency_host(self.core, mean_bound_ns=bound_ns):
            result = self.core.run(workload)
        policy = self.core.session.policy
        judge = functools.partial(latency.judge_mean_latency, claim, what, workload=workload,
                                  bound_ns=bound_ns, direction=direction, alpha=policy.alpha,
                                  pass_alpha=policy.pass_alpha, source=source)
        found, result = latency_again_if_spoiled(self.core, judge(result), result, workload, judge)
        return self.core.conclude(found, workload, result, started)

    def first_check_mean_latency(self, claim: str, what: str, workload: Workload, *,
                                 below: str | float, direction: str | None = None,
                                 source: str = "") -> FirstRun:
        return self._mean_latency_job(claim, workload, below)[1], self.core.target

    def _mean_latency_job(self, claim: str, workload: Workload, below: str | float
                          ) -> tuple[float, Workload]:
        """The bound in ns and ``workload`` run long enough for a mean of seconds."""
        try:
            bound_ns = latency.parse_duration_ns(below)
        except EbsperfError as exc:
            self.core.refuse(f"{claim}: {exc}")
        if self.core.settings.given("runtime"):
            return bound_ns, workload
        # the interval of a mean of per-second means needs seconds: at the run's false-alarm
        # level 5 of them left 77 us - 0.55 ms around a 0.31 ms mean when one second was
        # slow; 10 narrow it to a few percent
        return bound_ns, workload.replace(runtime_s=max(workload.runtime_s,
                                                        MEAN_LATENCY_MIN_RUNTIME_S))


def latency_host(core: CheckCore, *, mean_bound_ns: float | None = None
                 ) -> contextlib.AbstractContextManager[object]:
    """A latency claim on an emulated volume measures its emulated service time, whose
    path was calibrated on a quiet host: it holds the host alone (beside two other
    workers' fio, io2's 0.3 ms reads averaged 0.56 and 0.58 ms: INCONCLUSIVE twice).
    A mean bound :data:`MEAN_LATENCY_ROOM` times (the service time + 1 ms) or more
    (gp3's and io1's "single-digit milliseconds" over 0.5-0.6 ms) is out of reach of
    what a neighbour adds to the path, and measures beside the other workers."""
    target = core.target
    if not target.emulated_any:
        return contextlib.nullcontext()
    service_us = getattr(target.emulated, "latency_us", None)
    if mean_bound_ns is not None and service_us is not None and \
            mean_bound_ns >= MEAN_LATENCY_ROOM * (service_us + 1000.0) * 1000.0:
        return contextlib.nullcontext()
    return core.measuring_alone("a latency claim measures its service time alone")
