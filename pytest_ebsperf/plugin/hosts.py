"""pytest hooks for a fleet: every check once per host of testinfra's ``--hosts``.

* Tests that use the ``ebsperf`` fixture are parametrized with ``ebsperf_host_id`` (one id per
  host, testinfra's own: ``[ssh://10.0.0.2]``); without ``--hosts`` nothing changes, ids
  included.
* Each host gets an :class:`~pytest_ebsperf.checks.session.EbsperfSession` whose fio runner goes
  through that host's testinfra Host object; it is checked (reachable, fio, the device and
  its refusals) before its first check. A host that cannot be measured fails its checks with
  the sentence that names it; the other hosts go on.
* Under pytest-xdist (``-n N``) each host's tests are one ``xdist_group``, and ``--dist load``
  becomes ``loadgroup``: two workers never load the same host's device at once, and hosts
  run in parallel.
* The terminal summary gains an "ebsperf: fleet" section: how many hosts passed, failed,
  were unreachable.
"""

from __future__ import annotations

import dataclasses
import tempfile
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_ebsperf.errors import ConfigError, EbsperfError
from pytest_ebsperf.plugin.groups import add_group, use_groups
from pytest_ebsperf.plugin.outcomes import fail_plainly, outcome_of
from pytest_ebsperf.plugin.run_code import (
    checks_fleet,
    checks_preflight,
    checks_servers,
    checks_session,
    fio_host,
)
from pytest_ebsperf.plugin.state import STATE_KEY

if TYPE_CHECKING:  # names for annotations; the modules come from run_code.py
    from pytest_ebsperf.checks.session import EbsperfSession

HOST_PROPERTY = "ebsperf_host"
BROKEN_PROPERTY = "ebsperf_host_broken"
FIXTURE = "ebsperf_host_id"


class FleetRun:
    """The hosts of the run, their sessions (made on first use) and their outcomes."""

    def __init__(self, config: pytest.Config, hosts: list[checks_fleet.FleetHost],
                 source: str) -> None:
        self.config = config
        self.hosts = {h.id: h for h in hosts}
        self.source = source
        self.states = {h.id: checks_fleet.HostState(h) for h in hosts}

        #: ssh master connections of this process (one per host, closed at the end).
        self.control_dir = tempfile.mkdtemp(prefix="ebsperf-ssh.")
        checks_fleet.multiplex(hosts, self.control_dir)
        #: Outcomes as the reports arrive (on the xdist controller too): id -> state.
        self.tally = {h.id: checks_fleet.HostState(h) for h in hosts}

    @property
    def ids(self) -> list[str]:
        return list(self.hosts)

    def session_for(self, host_id: str) -> checks_session.EbsperfSession:
        """The host's session, checked once; raises EbsperfError with the host's sentence."""

        state = self.states[host_id]
        if state.broken:
            raise EbsperfError(state.broken)
        if state.session is not None:
            return state.session  # type: ignore[no-any-return]
        fleet_host = self.hosts[host_id]
        why = checks_fleet.reachability(fleet_host)
        if why:
            state.broken = why
            raise EbsperfError(why)

        plugin = self.config.stash[STATE_KEY]
        settings = checks_fleet.settings_for(plugin.settings, fleet_host, self.source)
        session = checks_session.EbsperfSession(settings, inputs=plugin.inputs,
                                 fio_host=fio_host.FioHost(fleet_host.host), host_id=host_id)
        try:
            session = checks_preflight.run(session)
        except (EbsperfError, OSError) as exc:
            session.close()
            state.broken = checks_fleet.describe_error(exc, fleet_host)
            raise EbsperfError(state.broken) from None
        state.session = session
        return session

    def close_sessions(self) -> None:
        """Close every host's session (its emulated volumes there); safe to call twice. A
        host whose clean-up failed does not keep the others' from running; the first error
        is raised once all were tried."""
        errors: list[Exception] = []
        for state in self.states.values():
            if state.session is not None:
                session, state.session = state.session, None
                try:
                    session.close()
                except Exception as exc:  # noqa: BLE001 - raised below, after the others
                    errors.append(exc)
        if errors:
            raise errors[0]

    def close(self) -> None:
        try:
            self.close_sessions()
        finally:
            checks_fleet.end_multiplex(self.control_dir)


def fleet_options(config: pytest.Config) -> dict[str, Any]:
    """testinfra's options that say how to reach the hosts."""

    return {name: getattr(config.option, name, None) for name in checks_fleet.TESTINFRA_OPTIONS}


def _configure_servers(config: pytest.Config, plugin: Any) -> None:
    """--ebsperf-fio-servers: the servers and their facts, given to the run's session."""

    settings = plugin.settings
    if getattr(config.option, "hosts", None):
        raise pytest.UsageError("--ebsperf-fio-servers with --hosts: choose one engine for the "
                                "fleet (fio's client/server mode, or testinfra's backends).")
    if settings.emulate:
        raise pytest.UsageError("--emulate with --ebsperf-fio-servers: emulated volumes are "
                                "made on this machine; give each server its real device.")

    try:
        entries = checks_fleet.load_hosts_file(settings.hosts_file) if settings.hosts_file else {}
        servers = checks_servers.server_hosts(settings, entries)
        known = {key for s in servers for key in (s.server.spec, s.server.address)}
        stray = [k for k in entries if k != "defaults" and k not in known]
        if stray:
            raise ConfigError(f"--ebsperf-hosts-file={settings.hosts_file} has entries for "
                              f"{', '.join(stray)}, which --ebsperf-fio-servers does not name.")
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    plugin.inputs.fio_servers = servers


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    specs = getattr(config.option, "hosts", None)
    plugin = config.stash.get(STATE_KEY, None)
    if plugin is not None and plugin.settings.fio_servers:
        _configure_servers(config, plugin)
        return
    if not specs and (plugin is None or not plugin.settings.hosts_file):
        return  # no fleet: nothing of the fleet is loaded

    if plugin is not None and not specs and plugin.settings.hosts_file:
        try:  # not used without --hosts, but a file that does not parse is said at once
            checks_fleet.load_hosts_file(plugin.settings.hosts_file)
        except EbsperfError as exc:
            raise pytest.UsageError(str(exc)) from None
    if not specs or plugin is None:
        return
    settings = plugin.settings
    if settings.provision:
        raise pytest.UsageError("--ebsperf-provision with --hosts: provisioning attaches "
                                "volumes to the instance pytest runs on; run it per host.")
    try:
        hosts = checks_fleet.hosts_from_testinfra(specs, fleet_options(config))
        entries: dict[str, dict[str, Any]] = {}
        source = "--device and volume options"
        if settings.hosts_file:
            entries = checks_fleet.load_hosts_file(settings.hosts_file)
            source = f"hosts file {settings.hosts_file}"
            stray = checks_fleet.unknown_entries(entries, hosts)
            if stray:
                raise ConfigError(
                    f"--ebsperf-hosts-file={settings.hosts_file} has entries for "
                    f"{', '.join(stray)}, which --hosts does not name (hosts: "
                    f"{', '.join(h.id for h in hosts)}).")
        hosts = [dataclasses.replace(h, facts=checks_fleet.facts_for(entries, h)) for h in hosts]
        missing = [h.id for h in hosts
                   if not (h.facts.get("device") or settings.device or settings.emulate)]
        if missing:
            raise ConfigError(f"No device for {', '.join(missing)}: give --device (the same "
                              "path on every host) or a hosts file (--ebsperf-hosts-file) "
                              "with a device per host.")
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    plugin.fleet = FleetRun(config, hosts, source)
    config.pluginmanager.register(FleetTally(config), "ebsperf-fleet-tally")
    use_groups(config)  # one host, one worker at a time


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The hosts' volumes and the run's ssh connections go at session finish, not at
    unconfigure: an xdist worker says it has finished only after this hook, and once it has,
    pytest-xdist gives it 10 s to exit before killing it. Closing a volume over SSH takes
    several round trips; on a busy machine two volumes took longer than that, and the killed
    worker left both behind (and, seen once on a busy CI machine, both workers' ssh control
    directories)."""
    run = fleet_run(session.config)
    if run is not None:
        run.close()


def pytest_unconfigure(config: pytest.Config) -> None:
    run = fleet_run(config)
    if run is not None:
        run.close()
        config.stash[STATE_KEY].fleet = None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    run = fleet_run(metafunc.config)
    if run is None or FIXTURE not in metafunc.fixturenames:
        return
    metafunc.parametrize(FIXTURE, run.ids, ids=run.ids, scope="session")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's worker reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if fleet_run(config) is None:
        return
    for item in items:
        callspec = getattr(item, "callspec", None)
        host_id = callspec.params.get(FIXTURE) if callspec is not None else None
        if host_id is not None:
            add_group(item, str(host_id))


@pytest.fixture(scope="session")
def ebsperf_host_id() -> str | None:
    """The fleet host of this test (testinfra's id, ``ssh://10.0.0.2``); None without
    ``--hosts``."""
    return None


def fleet_session(item: pytest.Item, host_id: str | None) -> EbsperfSession | None:
    """The session of ``host_id`` for ``item``, or None without a fleet. A host that cannot
    be measured fails the test with its sentence."""

    run = fleet_run(item.config)
    if run is None or host_id is None:
        return None
    item.user_properties.append((HOST_PROPERTY, host_id))
    try:
        return run.session_for(host_id)
    except EbsperfError as exc:
        item.user_properties.append((BROKEN_PROPERTY, str(exc)))

        fail_plainly(f"Host {host_id} cannot be measured: {exc}", pytrace=False)
    return None


class FleetTally:
    """Counts outcomes per host from the reports (works on the xdist controller too)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        run = fleet_run(self.config)
        if run is None:
            return
        props = {k: v for k, v in report.user_properties
                     if k in (HOST_PROPERTY, BROKEN_PROPERTY)}
        host_id = props.get(HOST_PROPERTY)
        if host_id not in run.tally:
            return
        state = run.tally[host_id]
        if BROKEN_PROPERTY in props:
            state.broken = str(props[BROKEN_PROPERTY])
        if report.when == "call" or (report.when == "setup" and not report.passed):
            if outcome_of(report) == "inconclusive":  # said as a skip or a pass by pytest
                state.inconclusive += 1
            elif report.passed:
                state.passed += 1
            elif report.skipped:
                state.skipped += 1
            else:
                state.failed += 1


#: The fleet section comes last in the summary.
SUMMARY_ORDER = 40


def pytest_ebsperf_summary_sections(config: pytest.Config
                                    ) -> list[tuple[int, str, list[str]]]:
    """The "ebsperf: fleet" section (none without --hosts or --ebsperf-fio-servers)."""
    if hasattr(config, "workerinput"):
        return []
    state = config.stash.get(STATE_KEY, None)
    servers, run = (state.inputs.fio_servers if state is not None else []), fleet_run(config)
    if not servers and run is None:
        return []

    if servers:
        rows = state.rows if state is not None else []
        return [(SUMMARY_ORDER, "ebsperf: fleet (fio client/server)",
                 checks_fleet.host_summary(_server_states(servers, rows)))]
    assert run is not None
    return [(SUMMARY_ORDER, "ebsperf: fleet", checks_fleet.host_summary(list(run.tally.values())))]


def _server_states(servers: list[Any], rows: list[dict[str, Any]]) -> list[checks_fleet.HostState]:

    states = []
    for server in servers:
        state = checks_fleet.HostState(checks_fleet.FleetHost(server.label, server.server.address, None))
        for row in (r for r in rows if r.get("host") == server.label):
            if row.get("binding") == "unreachable":
                state.broken = str(row.get("reason", "")).removeprefix("unreachable: ")
            elif row.get("outcome") == "fail":
                state.failed += 1
            elif row.get("outcome") == "inconclusive":
                state.inconclusive += 1
            elif row.get("outcome") in ("pass", "info"):
                state.passed += 1
            else:
                state.skipped += 1
        states.append(state)
    return states


def fleet_run(config: pytest.Config) -> FleetRun | None:
    """The run's fleet (``--hosts``), or None."""
    state = config.stash.get(STATE_KEY, None)
    return cast("FleetRun | None", state.fleet if state is not None else None)
