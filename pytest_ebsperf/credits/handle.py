"""What the credit checks (:mod:`.checks`) use of a run's session and of the ``ebsperf``
fixture object: the two sides are typed here, so the checks import neither."""

from __future__ import annotations

from typing import Any, Protocol

from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.credits.book import CreditBook
from pytest_ebsperf.emulate.target import Target
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.runner import FioRunner, Monitor
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts import evidence
from pytest_ebsperf.verdicts.outcome import Verdict


class Session(Protocol):
    """What the credit checks read of the run's session (the checks' ``EbsperfSession``)."""

    @property
    def credits(self) -> CreditBook: ...
    @property
    def runner(self) -> FioRunner: ...
    @property
    def cpu_count(self) -> int: ...
    @property
    def policy(self) -> evidence.Policy: ...


class Handle(Protocol):
    """What the checks use of the ``ebsperf`` fixture object (:class:`~pytest_ebsperf.checks.claim_runner.ClaimRunner`)."""

    settings: Settings
    notes: list[str]
    row_extras: dict[str, Any]
    nodeid: str

    @property
    def session(self) -> Session: ...
    @property
    def volume(self) -> Volume: ...
    @property
    def target(self) -> Target: ...

    def run(self, workload: Workload, *, target: Target | None = None,
            phase: str = "steady", monitor: Monitor | None = None) -> FioResult: ...
    def conclude(self, found: Verdict, workload: Workload, result: FioResult,
                 started: float) -> Verdict: ...
