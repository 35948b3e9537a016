"""What a run holds while it measures: the fio runner, the devices it made or inspected, the
notes it said, and its record of the volumes it measured.

A session (:class:`~pytest_ebsperf.checks.session.EbsperfSession`) is a value: what the
settings, discovery and preflight say of the run, built once and derived, never assigned.
What it *holds* is here, in one object every session derived from the first one shares:
handles made when a check first needs them (each made once, closed once at the end) and
the run's record (:attr:`SessionResources.facts`), which grows as the run learns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_ebsperf.awsmodel.facts import RunFacts
from pytest_ebsperf.device.safety import inspect_on
from pytest_ebsperf.fio.host import FioHost
from pytest_ebsperf.fio.runner import FioRunner

if TYPE_CHECKING:
    from pytest_ebsperf.config.session_inputs import SessionInputs
    from pytest_ebsperf.config.settings import Settings
    from pytest_ebsperf.credits.book import CreditBook
    from pytest_ebsperf.device.safety import DeviceReport
    from pytest_ebsperf.emulate.registry import EmulatedVolumes
    from pytest_ebsperf.emulate.target import Target
    from pytest_ebsperf.fio.result import FioResult


@dataclass(eq=False)
class SessionResources:
    """The handles and the record of one measuring session (one host's)."""

    settings: Settings
    inputs: SessionInputs
    #: The host fio runs on when it is not the settings' ``--ebsperf-host`` (a fleet host's).
    fio_host: FioHost | None = None
    #: The volume(s) under test as plain JSON-friendly data, for reports and result files:
    #: ``volumes`` (per device each fact with its source: given, discovered, default, and
    #: notes), ``discovery`` (status, error, what AWS said), ``initialization`` and
    #: ``provisioning`` (cost, sweep, clean-up) when they apply.
    facts: RunFacts = field(default_factory=lambda: RunFacts())
    #: Devices made or described for a volume and role (emulated or given), made once.
    targets: dict[tuple[object, str], Target] = field(default_factory=dict)
    #: What each device path is and holds, inspected once.
    reports: dict[str, DeviceReport] = field(default_factory=dict)
    #: The notes said once per run, and the devices a writing check has reached.
    said: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    #: The initialization read of a volume still initializing (B-INIT), by path: None when
    #: it was read, else why it could not be; and what fio measured in the read.
    initialized: dict[str, str | None] = field(default_factory=dict)
    initialization_result: FioResult | None = None
    credits: CreditBook | None = None
    emulation: EmulatedVolumes | None = None
    _runner: FioRunner | None = None

    @property
    def runner(self) -> FioRunner:
        """fio on this session's host, made on first use."""
        if self._runner is None:
            host = self.fio_host
            where = self.settings.host
            if host is None and where in ("", "local://"):
                host = FioHost()
            elif host is None:
                # testinfra (and its backends): only for a remote --ebsperf-host
                import testinfra

                host = FioHost(testinfra.get_host(where))
            self._runner = FioRunner(host=host, fio=self.settings.fio,
                                     keep_dir=self.inputs.keep_dir)
        return self._runner

    def device_report(self, path: str) -> DeviceReport:
        """What ``path`` is and holds, on the host fio runs on (inspected once)."""
        if path not in self.reports:
            self.reports[path] = inspect_on(self.runner.host, path)
        return self.reports[path]

    def forget(self, path: str) -> None:
        """A later volume may appear under ``path``: forget what was learnt of the device."""
        self.reports.pop(path, None)
        self.initialized.pop(path, None)
        self.targets = {k: t for k, t in self.targets.items() if t.path != path}

    def first(self, seen: set[str], what: str) -> bool:
        """True the first time ``what`` is added to ``seen`` (:attr:`said`, :attr:`written`)."""
        if what in seen:
            return False
        seen.add(what)
        return True

    def close(self) -> None:
        """Remove every emulated device and release held devices; safe to call twice."""
        # Every device is closed whatever became of the one before (a remote host that
        # dropped a connection must not keep the next volume's loop device, mount and
        # cgroup in place); the first error is raised once all were tried.
        errors: list[Exception] = []

        def attempt(close: Callable[[], None]) -> None:
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - raised below, after the others
                errors.append(exc)

        if self.credits is not None:
            attempt(self.credits.close)  # stop the bucket threads before their devices go
        for target in list(self.targets.values()):
            if target.emulated is not None:
                attempt(target.emulated.close)
        if self.emulation is not None:
            attempt(self.emulation.close)
        self.targets.clear()
        if errors:
            raise errors[0]


__all__ = ["SessionResources"]
