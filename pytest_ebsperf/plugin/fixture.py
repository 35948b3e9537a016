"""The ``ebsperf`` fixture's object: a :class:`~pytest_ebsperf.checks.claim_runner.ClaimRunner` whose
verdicts become a test's outcome.

Suites use only this public API, so they double as examples::

    pytestmark = pytest.mark.ebsperf(volume_type="io1")

    def test_random_read_holds_provisioned_iops(ebsperf):
        '''S0-04: io1 delivers >= 90 % of provisioned IOPS 99.9 % of the time.'''
        ebsperf.check_cap("S0-04", "io1 random read", ebsperf.workload("randread", "16k"))

This is the pytest edge: verdicts turn into passes, failures (``pytest.fail`` without a
traceback), INFO and INCONCLUSIVE outcomes (:mod:`pytest_ebsperf.plugin.outcomes`) and
skips (claims that need ``--ebsperf-destructive``, another volume type); rows
and measurement records travel as the test's user properties (also across xdist workers).
"""

from __future__ import annotations

import contextlib
from typing import Any, NoReturn

import pytest

from pytest_ebsperf.checks import plan
from pytest_ebsperf.checks.claim_runner import Check, ClaimRunner
from pytest_ebsperf.checks.session import EbsperfSession
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.plugin.keys import MEASUREMENT_KEY, PLAN_KEY, ROW_KEY
from pytest_ebsperf.plugin.outcomes import decide, fail_plainly
from pytest_ebsperf.verdicts.outcome import Verdict


class Ebsperf(ClaimRunner):
    """Per-test handle on the volume under test (the ``ebsperf`` fixture)."""

    def __init__(self, session: EbsperfSession, item: pytest.Item, settings: Settings,
                 suite_type: str | None, *, emulated: dict[str, Any] | None = None) -> None:
        super().__init__(session, settings, suite_type, name=item.name, nodeid=item.nodeid,
                         emulated=emulated)
        self.item = item

    def skip(self, reason: str) -> NoReturn:
        pytest.skip(reason)

    def refuse(self, message: str) -> NoReturn:
        fail_plainly(message, pytrace=False)

    def announce(self, line: str) -> None:
        """One line on the terminal (and in CI logs), whatever the capture settings."""
        config = self.item.config
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        capture = config.pluginmanager.get_plugin("capturemanager")
        if reporter is None:
            return
        context = (capture.global_and_fixture_disabled() if capture is not None
                   else contextlib.nullcontext())
        with context:
            reporter.write_line("")
            reporter.write_line(line, yellow=True)

    def record(self, key: str, value: dict[str, Any]) -> None:
        super().record(key, value)
        self.item.user_properties.append((ROW_KEY if key == "row" else MEASUREMENT_KEY, value))

    def decided(self, found: Verdict) -> Verdict:
        self.item.config.hook.pytest_ebsperf_verdict(verdict=found, item=self.item)
        return decide(self.item, found, self.settings.strict)

    def checking(self, declared: Check, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """With ``--ebsperf-plan`` a check is asked what it would run first and is skipped
        saying so; nothing of it runs (no fio, no idle wait, no hold of the host)."""
        if not self.settings.plan:
            return declared.bound(self)(*args, **kwargs)
        entry = plan.entry(self, declared.name, declared.first_run(self)(*args, **kwargs),
                           args, kwargs)
        self.item.user_properties.append((PLAN_KEY, entry.as_dict()))
        pytest.skip(f"planned (--ebsperf-plan): {entry.claim} {entry.what}")
