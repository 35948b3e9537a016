"""Claims about time: burst credits (gp2 I/O credits, st1/sc1 throughput credits) - the
preconditions a burst check needs, and the four checks over time (the knee, the baseline after
it, the refill, no knee), run by :mod:`pytest_ebsperf.credits.checks`."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from pytest_ebsperf import awsmodel
from pytest_ebsperf.awsmodel import volume_types
from pytest_ebsperf.checks.core import CheckCore, FirstRun
from pytest_ebsperf.credits.checks import CreditChecks, NotApplicable
from pytest_ebsperf.device.lock import set_aside
from pytest_ebsperf.fio.workload import Workload
from pytest_ebsperf.units import format_quantity
from pytest_ebsperf.verdicts.outcome import Outcome, Verdict

#: A check at burst level waits this long at most for its bucket to earn what it needs
#: (earlier checks spent it); a longer wait skips with the time it would take.
MAX_CREDIT_WAIT_S = 30.0


class TimeChecks:
    """Burst credits over time (gp2, st1, sc1)."""

    def __init__(self, core: CheckCore) -> None:
        #: The runner's core: the volume, its devices, one fio run, concluding.
        self.core = core

    def require_burst_credits(self) -> None:
        """Skip unless the burst bucket can carry one check at burst level.

        With ``--burst-balance`` unknown the bucket is assumed full and the report row says
        so; a volume whose baseline reaches its burst level needs no credits.
        """
        volume = self.core.volume
        if not volume_types.volume_type(volume.type).bursts:
            return
        seconds = self.core.settings.runtime_s + self.core.settings.ramp_s
        wait = self.core.session.credits.credit_wait_s(volume, seconds)  # after earlier runs
        if 0 < wait <= MAX_CREDIT_WAIT_S:

            self.core.announce(f"{self.core.name}: {volume.label()} needs {wait:,.0f} s of idle "
                               "time to earn the credits this check spends at burst level; "
                               "waiting")
            with set_aside():  # idle: others may measure meanwhile
                time.sleep(wait)
            self.core.notes.append(f"waited {wait:,.0f} s for the bucket to earn the credits this "
                                   "check spends at burst level")
        problem = self.core.session.credits.burst_shortfall(volume, seconds)
        if problem:
            self.core.skip(problem)
        if volume.burst_balance_pct is None and awsmodel.has_burst(volume):
            self.core.notes.append("burst balance unknown: assumed a full bucket "
                                   "(pass --burst-balance=PERCENT)")

    def require_empty_bucket(self) -> None:
        """Skip a baseline-level check unless the burst bucket is known to be empty."""
        volume = self.core.volume
        if not awsmodel.has_burst(volume) or not volume.credits_assumed:
            return
        drain = awsmodel.drain_seconds(volume)
        self.core.skip(f"this claim needs an empty credit bucket: pass --burst-balance=0 once "
                    f"CloudWatch BurstBalance reads 0 (draining this {volume.label()} at "
                    f"burst takes about {drain:,.0f} s; the credit suite does it with "
                    "--ebsperf-long).")

    # -- burst credits over time (gp2, st1, sc1; pytest_ebsperf.credits) ------------------
    def check_burst_duration(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: run ``workload`` at burst level until the bucket is empty and judge when the
        knee came against balance / (burst - baseline). Skips with the duration when that
        is more than a few minutes, unless ``--ebsperf-long``."""
        return self._credit_check("burst_duration", claim, what, workload)

    def check_baseline_after_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """CAP at the baseline once the bucket is empty (drained first when needed)."""
        return self._credit_check("baseline_after_knee", claim, what, workload)

    def check_refill(self, claim: str, what: str, workload: Workload) -> Verdict:
        """TIME: idle N seconds on an empty bucket; the burst then lasts N x baseline /
        (burst - baseline)."""
        return self._credit_check("refill", claim, what, workload)

    def check_no_knee(self, claim: str, what: str, workload: Workload) -> Verdict:
        """A volume whose baseline reaches its burst level holds it with no knee."""
        return self._credit_check("no_knee", claim, what, workload)

    # what each would run first (the dry run asks; Check.first_run)
    def first_check_burst_duration(self, claim: str, what: str, workload: Workload
                                   ) -> FirstRun:
        return self._credit_first("burst_duration", workload)

    def first_check_baseline_after_knee(self, claim: str, what: str, workload: Workload
                                        ) -> FirstRun:
        return self._credit_first("baseline_after_knee", workload)

    def first_check_refill(self, claim: str, what: str, workload: Workload) -> FirstRun:
        return self._credit_first("refill", workload)

    def first_check_no_knee(self, claim: str, what: str, workload: Workload) -> FirstRun:
        return self._credit_first("no_knee", workload)

    def _credit_check(self, name: str, claim: str, what: str, workload: Workload) -> Verdict:
        credit = CreditChecks(self.core)
        found: Verdict = self._applicable(lambda: getattr(credit, name)(claim, what, workload))
        return found

    def _credit_first(self, name: str, workload: Workload) -> FirstRun:
        credit = CreditChecks(self.core)
        return self._applicable(lambda: credit.first_job(name, workload)), self.core.target

    def _applicable(self, call: Callable[[], Any]) -> Any:
        """``call()``, a credit check that does not apply skipped with its sentence."""
        try:
            return call()
        except NotApplicable as exc:
            self.core.skip(str(exc))


def burst_contradicted(core: CheckCore, found: Verdict, workload: Workload, metric: str,
                       credits: bool | None) -> Verdict:
    """A volume that bursts on credits fell short at about its baseline although the
    facts (--burst-balance, or the run's own ledger) say its bucket held enough for
    this check: the verdict names that contradiction (a stale BurstBalance, or a bucket
    smaller than the model's)."""
    if found.outcome is Outcome.PASS or credits is False or found.measured is None:
        return found
    volume = core.volume
    if not awsmodel.has_burst(volume):
        return found
    burst = core.expect_cap("", "", workload, metric=metric, credits=True).value
    baseline = core.expect_cap("", "", workload, metric=metric, credits=False).value
    if not burst > baseline or found.measured >= (burst + baseline) / 2.0:
        return found
    seconds = workload.runtime_s + workload.ramp_s
    ledger = core.session.credits.ledger(volume)
    if ledger is None or core.session.credits.credit_wait_s(volume, seconds) > 0:
        return found
    given = volume.burst_balance_pct
    said = (f"--burst-balance={given:g} and the runs since" if given is not None
            else "an assumed full bucket (BurstBalance unknown) and the runs since")
    sentence = (f" The volume ran at about its baseline ({format_quantity(found.measured, found.unit)}; "
                f"burst {format_quantity(burst, found.unit)}, baseline "
                f"{format_quantity(baseline, found.unit)}) although {said} leave its "
                f"bucket enough for this check: no burst where the balance says there must "
                "be one. Is the balance current, and the bucket the size the model says?")
    return dataclasses.replace(found, message=found.message + sentence, details={
        **found.details, "burst_contradicted": {
            "burst": burst, "baseline": baseline, "balance_pct": given,
            "ledger_left": ledger.at(core.session.credits.clock())}})
