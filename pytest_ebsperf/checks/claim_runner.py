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

The runner is its families of checks together (:mod:`pytest_ebsperf.checks`), each a class
on the same core: rates, sets, passes, time, relative claims (fio servers answer through the
rates).
"""

from __future__ import annotations

from pytest_ebsperf.checks.core import CheckCore, ClaimRefused, ClaimSkipped
from pytest_ebsperf.checks.passes import PassChecks
from pytest_ebsperf.checks.rates import INSTANCE_BOUND_HIGH, MEAN_LATENCY_MIN_RUNTIME_S, RateChecks
from pytest_ebsperf.checks.relative import RelativeChecks
from pytest_ebsperf.checks.sets import SetChecks
from pytest_ebsperf.checks.time import TimeChecks

__all__ = ["INSTANCE_BOUND_HIGH", "MEAN_LATENCY_MIN_RUNTIME_S", "CheckCore", "ClaimRefused",
           "ClaimRunner", "ClaimSkipped"]


class ClaimRunner(RateChecks, SetChecks, PassChecks, TimeChecks, RelativeChecks):
    """Measure and judge claims on the volume under test of ``session``: every family of
    checks on one core (:class:`~pytest_ebsperf.checks.core.CheckCore`).

    ``suite_type`` is the volume type the claims are about (None: the run's own); ``name``
    names the runs (fio job names, progress lines) and ``nodeid`` the records. Subclasses
    adapt the hooks :meth:`skip`, :meth:`refuse`, :meth:`announce`, :meth:`record` and
    :meth:`decided`.
    """
