"""Run claims without pytest: the :class:`ClaimRunner` measures, stops fio when the verdict
is settled, confirms shortfalls, judges and records.

Given a session (settings, fio runner, volumes and devices), a claim's expectation and a
workload, it runs fio (with the confirmation run and the fail-fast stop), judges, and hands
back the verdict, fio's result and the measurement records. The ``ebsperf`` fixture
(:mod:`pytest_ebsperf.plugin.fixture`) is a runner whose hooks turn verdicts into passes,
failures and skips; scripts and benchmarks use the runner directly::

    runner = ClaimRunner(session, settings, "io1", name="nightly")
    found = runner.check_cap("S0-04", "io1 random read", runner.workload("randread", "16k"))
    print(found.outcome, found.message)

Where a test would be skipped or fail without a verdict, the runner raises
:class:`ClaimSkipped` or :class:`ClaimRefused` with the sentence.

The runner is a core (:class:`~pytest_ebsperf.checks.core.CheckCore`: the volume, its
devices, one fio run, concluding a verdict) that holds its families of checks, each an object
on that core: :attr:`ClaimRunner.rates`, :attr:`~ClaimRunner.latencies`,
:attr:`~ClaimRunner.passes`, :attr:`~ClaimRunner.time` and :attr:`~ClaimRunner.relative` (fio
servers answer through the rates; a set is :meth:`ClaimRunner.over`). The checks a suite
calls are the runner's :class:`Check` attributes, each handing over to its family; the dry
run asks each what it would run first (``first_<check>`` beside the check).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, overload

from pytest_ebsperf.checks.core import CheckCore, ClaimRefused, ClaimSkipped, FirstRun
from pytest_ebsperf.checks.latencies import MEAN_LATENCY_MIN_RUNTIME_S, LatencyChecks
from pytest_ebsperf.checks.passes import PassChecks
from pytest_ebsperf.checks.rates import INSTANCE_BOUND_HIGH, RateChecks
from pytest_ebsperf.checks.relative import RelativeChecks
from pytest_ebsperf.checks.restored import check_initialization_rate, first_initialization_read
from pytest_ebsperf.checks.time import TimeChecks

__all__ = ["CHECKS", "INSTANCE_BOUND_HIGH", "MEAN_LATENCY_MIN_RUNTIME_S", "Check", "CheckCore",
           "ClaimRefused", "ClaimRunner", "ClaimSkipped"]


#: Every check of the API by name, in the order declared (:class:`Check` adds itself).
CHECKS: dict[str, Check] = {}


class Check:
    """One check of the API, declared once as a class attribute of :class:`ClaimRunner`:
    ``runner.NAME(...)`` is ``runner.FAMILY.NAME(...)`` (or ``function(runner, ...)``), run
    through the runner's :meth:`ClaimRunner.checking` hook. What the check would run first is
    ``runner.FAMILY.first_NAME(...)`` (or ``first(runner, ...)``), with the same arguments:
    the dry run asks it (:meth:`first_run`) and runs nothing of the check. ``planned`` False:
    a precondition, called directly (it measures nothing). :data:`CHECKS` is the table."""

    def __init__(self, family: str | None, function: Callable[..., Any] | None = None, *,
                 first: Callable[..., FirstRun] | None = None, planned: bool = True) -> None:
        self.family, self.function, self.first, self.planned = family, function, first, planned
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        CHECKS[name] = self

    def bound(self, runner: ClaimRunner) -> Callable[..., Any]:
        """The check itself on ``runner``, not through the hook."""
        if self.function is None:
            return getattr(getattr(runner, str(self.family)), self.name)  # type: ignore[no-any-return]
        return functools.update_wrapper(functools.partial(self.function, runner), self.function)

    def first_run(self, runner: ClaimRunner) -> Callable[..., FirstRun]:
        """What the check would run first on ``runner``, asked with the check's arguments:
        (workload, target) or the sentence saying why it runs no fio. Skips and refusals
        come as the check's own would, before anything runs."""
        if self.first is not None:
            return functools.partial(self.first, runner)
        return getattr(getattr(runner, str(self.family)), f"first_{self.name}")  # type: ignore[no-any-return]

    @overload
    def __get__(self, runner: None, owner: type | None = None) -> Check: ...
    @overload
    def __get__(self, runner: ClaimRunner, owner: type | None = None) -> Callable[..., Any]: ...

    def __get__(self, runner: ClaimRunner | None, owner: type | None = None
                ) -> Check | Callable[..., Any]:
        if runner is None:
            return self
        check = self.bound(runner)
        if not self.planned:
            return check

        @functools.wraps(check)
        def call(*args: Any, **kwargs: Any) -> Any:
            return runner.checking(self, args, kwargs)

        return call


class ClaimRunner(CheckCore):
    """Measure and judge claims on the volume under test of ``session``: a core and the
    families of checks it holds.

    ``suite_type`` is the volume type the claims are about (None: the run's own); ``name``
    names the runs (fio job names, progress lines) and ``nodeid`` the records. Subclasses
    adapt the hooks :meth:`skip`, :meth:`refuse`, :meth:`announce`, :meth:`record`,
    :meth:`decided` (the families call them through the core) and :meth:`checking`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hold_families()

    def checking(self, declared: Check, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Every check of the API (:class:`Check`) runs through here: the runner runs it; the
        fixture's dry run asks it what it would run first instead."""
        return declared.bound(self)(*args, **kwargs)

    def _hold_families(self) -> None:
        #: Rates against documented figures (CAP, FLOOR, INFO, sweeps, your own rate).
        self.rates = RateChecks(self)
        #: Latency bounds of your own (a percentile, a mean).
        self.latencies = LatencyChecks(self)
        #: Claims made of several passes over one device (TRIM, first writes, stability).
        self.passes = PassChecks(self)
        #: Burst credits over time (gp2, st1, sc1).
        self.time = TimeChecks(self)
        #: The device under test against its reference twin (REL).
        self.relative = RelativeChecks(self)

    def __copy__(self) -> ClaimRunner:
        """A runner on the same state whose families hold the copy, not the original."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin._hold_families()
        return twin

    def over(self, count: int | None = None) -> ClaimRunner:
        """A runner whose checks measure the first ``count`` volumes of the set together
        (default: all of them, ``--volume-count`` or the devices of ``--device=A,B,...``),
        against ``count`` x a member's ceiling, bounded by the instance (S4-04, S2-22).
        Rows, measurements and verdicts go where this runner's go."""
        twin = copy.copy(self)
        twin.set_count = count or self.session.set_size
        twin.notes = []
        twin.row_extras = {"volumes": twin.set_count}  # the sets table and scaling plot
        return twin

    # -- the check API: each check declared once, here (:class:`Check`) ----------------------
    #: Rates against documented figures (:class:`~pytest_ebsperf.checks.rates.RateChecks`):
    #: CAP, the instance's limit, FLOOR, INFO, your own rate, sweeps.
    check_cap = Check("rates")
    check_instance_bound = Check("rates")
    check_floor = Check("rates")
    record_info = Check("rates")
    check_at_least = Check("rates")
    check_sweep = Check("rates")
    #: Latency bounds (:class:`~pytest_ebsperf.checks.latencies.LatencyChecks`).
    check_latency = Check("latencies")
    check_mean_latency = Check("latencies")
    #: Passes over one device (:class:`~pytest_ebsperf.checks.passes.PassChecks`): S1-03,
    #: S1-08, S1-09, TRIM.
    check_first_write = Check("passes")
    check_write_after_trim = Check("passes")
    check_stability = Check("passes")
    check_discard = Check("passes")
    #: Burst credits over time (:class:`~pytest_ebsperf.checks.time.TimeChecks`); the two
    #: preconditions skip, they measure nothing (no plan).
    require_burst_credits = Check("time", planned=False)
    require_empty_bucket = Check("time", planned=False)
    check_burst_duration = Check("time")
    check_baseline_after_knee = Check("time")
    check_refill = Check("time")
    check_no_knee = Check("time")
    #: B-INIT: a restored volume's first read
    #: (:func:`~pytest_ebsperf.checks.restored.check_initialization_rate`).
    check_initialization_rate = Check(None, check_initialization_rate,
                                      first=first_initialization_read)
    #: The device against its reference twin
    #: (:class:`~pytest_ebsperf.checks.relative.RelativeChecks`): S2-17, S0-08.
    check_rel = Check("relative")
    check_encrypted_twin = Check("relative")
    check_faster_than = Check("relative")
