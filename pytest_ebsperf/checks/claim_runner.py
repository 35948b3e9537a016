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
on that core: :attr:`ClaimRunner.rates`, :attr:`~ClaimRunner.passes`,
:attr:`~ClaimRunner.time` and :attr:`~ClaimRunner.relative` (fio servers answer through the
rates; a set is :meth:`ClaimRunner.over`). The checks a suite calls are the runner's methods,
each handing over to its family.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from pytest_ebsperf.checks.core import CheckCore, ClaimRefused, ClaimSkipped
from pytest_ebsperf.checks.passes import PassChecks
from pytest_ebsperf.checks.rates import INSTANCE_BOUND_HIGH, MEAN_LATENCY_MIN_RUNTIME_S, RateChecks
from pytest_ebsperf.checks.relative import RelativeChecks
from pytest_ebsperf.checks.restored import check_initialization_rate
from pytest_ebsperf.checks.time import TimeChecks
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.spec.types import Expectation
from pytest_ebsperf.verdicts.outcome import Verdict

__all__ = ["INSTANCE_BOUND_HIGH", "MEAN_LATENCY_MIN_RUNTIME_S", "CheckCore", "ClaimRefused",
           "ClaimRunner", "ClaimSkipped"]


class ClaimRunner(CheckCore):
    """Measure and judge claims on the volume under test of ``session``: a core and the
    families of checks it holds.

    ``suite_type`` is the volume type the claims are about (None: the run's own); ``name``
    names the runs (fio job names, progress lines) and ``nodeid`` the records. Subclasses
    adapt the hooks :meth:`skip`, :meth:`refuse`, :meth:`announce`, :meth:`record` and
    :meth:`decided`; the families call them through the core.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hold_families()

    def _hold_families(self) -> None:
        #: Rates against documented figures (CAP, FLOOR, INFO, sweeps, latency).
        self.rates = RateChecks(self)
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

    # -- rates (RateChecks) ----------------------------------------------------------------
    def check_cap(self, claim: str, what: str, workload: Workload, *, metric: str = "iops",
                  credits: bool | None = None) -> Verdict:
        """CAP: ``workload`` against the documented ceiling (:meth:`RateChecks.check_cap`)."""
        return self.rates.check_cap(claim, what, workload, metric=metric, credits=credits)

    def check_instance_bound(self, claim: str, what: str, workload: Workload, *,
                             metric: str = "throughput") -> Verdict:
        """CAP at the instance's EBS-optimized limit (:meth:`RateChecks.check_instance_bound`)."""
        return self.rates.check_instance_bound(claim, what, workload, metric=metric)

    def check_floor(self, claim: str, what: str, workload: Workload) -> Verdict:
        """FLOOR: a published "at least" figure (:meth:`RateChecks.check_floor`)."""
        return self.rates.check_floor(claim, what, workload)

    def record_info(self, claim: str, what: str, workload: Workload, *,
                    expectation: Expectation | None = None) -> Verdict:
        """INFO: run and record without judging (:meth:`RateChecks.record_info`)."""
        return self.rates.record_info(claim, what, workload, expectation=expectation)

    def check_at_least(self, claim: str, what: str, workload: Workload, *,
                       iops: float | None = None, mibps: float | None = None,
                       share_of_seconds: float = 0.99, source: str = "") -> Verdict:
        """Your own rate (:meth:`RateChecks.check_at_least`)."""
        return self.rates.check_at_least(claim, what, workload, iops=iops, mibps=mibps,
                                         share_of_seconds=share_of_seconds, source=source)

    def check_latency(self, claim: str, what: str, workload: Workload, *,
                      percentile: float = 99.0, below: str | float = "2ms",
                      direction: str | None = None, source: str = "") -> Verdict:
        """Your own latency percentile (:meth:`RateChecks.check_latency`)."""
        return self.rates.check_latency(claim, what, workload, percentile=percentile,
                                        below=below, direction=direction, source=source)

    def check_mean_latency(self, claim: str, what: str, workload: Workload, *,
                           below: str | float, direction: str | None = None,
                           source: str = "") -> Verdict:
        """The mean completion latency (:meth:`RateChecks.check_mean_latency`)."""
        return self.rates.check_mean_latency(claim, what, workload, below=below,
                                             direction=direction, source=source)

    def check_sweep(self, claim: str, what: str, pattern: str, sizes: Sequence[str | int]
                    ) -> Verdict:
        """A block-size sweep against its curve (:meth:`RateChecks.check_sweep`)."""
        return self.rates.check_sweep(claim, what, pattern, sizes)

    # -- passes over one device (PassChecks) -------------------------------------------------
    def check_first_write(self, claim: str, what: str, workload: Workload) -> Verdict:
        """S1-03: first writes vs second writes (:meth:`PassChecks.check_first_write`)."""
        return self.passes.check_first_write(claim, what, workload)

    def check_write_after_trim(self, claim: str, what: str, workload: Workload, *,
                               prewarm_claim: str = "") -> list[Verdict]:
        """S1-08: writes after TRIM vs on a full device
        (:meth:`PassChecks.check_write_after_trim`)."""
        return self.passes.check_write_after_trim(claim, what, workload,
                                                  prewarm_claim=prewarm_claim)

    def check_stability(self, claim: str, what: str, workload: Workload) -> Verdict:
        """S1-09: run-to-run stability (:meth:`PassChecks.check_stability`)."""
        return self.passes.check_stability(claim, what, workload)

    def check_discard(self, claim: str, what: str) -> Verdict:
        """The device accepts TRIM/discard (:meth:`PassChecks.check_discard`)."""
        return self.passes.check_discard(claim, what)

    # -- burst credits over time (TimeChecks) ------------------------------------------------
    def require_burst_credits(self) -> None:
        """Skip unless the bucket can carry one check at burst level
        (:meth:`TimeChecks.require_burst_credits`)."""
        self.time.require_burst_credits()

    def require_empty_bucket(self) -> None:
        """Skip unless the bucket is known to be empty (:meth:`TimeChecks.require_empty_bucket`)."""
        self.time.require_empty_bucket()

    def check_burst_duration(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: the knee (:meth:`TimeChecks.check_burst_duration`)."""
        return self.time.check_burst_duration(claim, what, workload)

    def check_baseline_after_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """CAP at the baseline after the knee (:meth:`TimeChecks.check_baseline_after_knee`)."""
        return self.time.check_baseline_after_knee(claim, what, workload)

    def check_refill(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: the burst idle time buys (:meth:`TimeChecks.check_refill`)."""
        return self.time.check_refill(claim, what, workload)

    def check_no_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """No knee where the baseline reaches the burst (:meth:`TimeChecks.check_no_knee`)."""
        return self.time.check_no_knee(claim, what, workload)

    # -- a restored volume's first read ---------------------------------------------------------
    def check_initialization_rate(self, claim: str, what: str) -> Verdict:
        """B-INIT: the first read of every block against the volume's provisioned
        initialization rate (:func:`~pytest_ebsperf.checks.restored.check_initialization_rate`)."""
        return check_initialization_rate(self, claim, what)

    # -- the device against its reference twin (RelativeChecks) --------------------------------
    def check_rel(self, claim: str, what: str, workload: Workload) -> list[Verdict]:
        """REL: the twins give the same IOPS and latency (:meth:`RelativeChecks.check_rel`)."""
        return self.relative.check_rel(claim, what, workload)

    def check_encrypted_twin(self, claim: str, what: str, workload: Workload
                             ) -> list[Verdict]:
        """S2-17: encrypted vs plain twin (:meth:`RelativeChecks.check_encrypted_twin`)."""
        return self.relative.check_encrypted_twin(claim, what, workload)

    def check_faster_than(self, claim: str, what: str, workload: Workload, *,
                          reference_type: str, at_least: float, notes: Sequence[str] = ()
                          ) -> Verdict:
        """REL "at least" against a twin of another type
        (:meth:`RelativeChecks.check_faster_than`)."""
        return self.relative.check_faster_than(claim, what, workload,
                                               reference_type=reference_type,
                                               at_least=at_least, notes=notes)
