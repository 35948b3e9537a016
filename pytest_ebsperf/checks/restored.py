"""B-INIT: a volume restored from a snapshot with a Provisioned Rate for Volume
Initialization is initialized at that rate. The check times AWS's initialization read of
every block (the one ``--ebsperf-initialize`` makes before a restored volume's first check,
or its own when the rate is given with ``--volume-init-rate``) and judges its mean against
what the rate promises a first read (:mod:`pytest_ebsperf.awsmodel.init_rate`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from pytest_ebsperf import awsmodel
from pytest_ebsperf.aws.initialization import INIT_READ_MIN_TIMEOUT_S, initialization_workload
from pytest_ebsperf.awsmodel.ebs import MIB
from pytest_ebsperf.awsmodel.init_rate import init_rate_expectation
from pytest_ebsperf.awsmodel.volume import Volume
from pytest_ebsperf.fio.result import FioResult
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.verdicts.first_read import judge_first_read
from pytest_ebsperf.verdicts.outcome import Verdict

if TYPE_CHECKING:
    from pytest_ebsperf.awsmodel.types import Expectation
    from pytest_ebsperf.checks.core import FirstRun

EMULATED = ("an emulated volume is created empty, and empty volumes need no initialization "
            "(B-INIT): there is no first read of a restored volume to time.")
NO_RATE = ("the volume was not created with a Provisioned Rate for Volume Initialization "
           "(AWS's VolumeInitializationRate; --volume-init-rate=MIBPS for one that was): "
           "nothing to check (B-INIT).")
INITIALIZED = ("AWS said the volume was fully initialized before this run, and its rate "
               "shows only in the first read of every block (B-INIT): run the suite on the "
               "volume before its first read, with --ebsperf-initialize.")


class Core(Protocol):
    """What the check needs of a :class:`~pytest_ebsperf.checks.core.CheckCore` (the plan
    imports this module for the rate; a Protocol keeps it below the core)."""

    settings: Any
    session: Any
    target: Any

    @property
    def volume(self) -> Volume: ...

    def skip(self, reason: str) -> NoReturn: ...

    def run(self, workload: Workload) -> FioResult: ...

    def conclude(self, found: Verdict, workload: Workload, result: FioResult,
                 started: float) -> Verdict: ...


def init_rate_of(core: Core) -> tuple[float | None, bool]:
    """The rate (MiB/s) the volume was created with (the option's, else AWS's), and whether
    AWS said it was initialized before the run began."""
    given = core.settings.volume_init_rate
    if given is not None:
        return float(given), False
    facts = core.session.facts.get("initialization") or {}
    rate = facts.get("rate_mibps")
    return (float(rate) if rate is not None else None), bool(facts.get("complete"))


def check_initialization_rate(core: Core, claim: str, what: str) -> Verdict:
    """The first read of every block against the provisioned initialization rate."""
    expectation, workload = _first_read(core, claim, what)
    result = core.session.initialization_result
    started = time.perf_counter()
    if result is None:
        result = core.run(workload)
    found = judge_first_read(expectation, result, workload, cpu_count=core.session.cpu_count,
                             policy=core.session.policy)
    return core.conclude(found, workload, result, started)


def first_initialization_read(core: Core, claim: str, what: str) -> FirstRun:
    """What :func:`check_initialization_rate` runs (the dry run asks)."""
    return _first_read(core, claim, what)[1], core.target


def _first_read(core: Core, claim: str, what: str) -> tuple[Expectation, Workload]:
    """B-INIT's expectation and the read of every block it judges (skips where it cannot
    run: emulated, no rate known, already initialized)."""
    if core.settings.emulate:
        core.skip(EMULATED)
    rate, complete = init_rate_of(core)
    if rate is None:
        core.skip(NO_RATE)
    volume = core.volume  # makes the session's initialization read of a restored volume
    result = core.session.initialization_result
    if result is None and complete:
        core.skip(INITIALIZED)
    probe = initialization_workload(INIT_READ_MIN_TIMEOUT_S)
    caps = awsmodel.limits(volume, probe, instance_limits=core.session.instance_limits)
    expectation = init_rate_expectation(claim, what, volume, probe, rate, caps=caps)
    # twice the floor's time for the whole volume is a FAIL whatever follows
    size = (volume.size_gib or 0) * 1024 * MIB
    limit = max(INIT_READ_MIN_TIMEOUT_S, 2.0 * size / max(expectation.threshold, 1.0))
    return expectation, initialization_workload(limit)
