"""pytest hooks: options, settings, fixtures and the terminal summary. Wiring only."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.plugin import hookspecs, outcomes
from pytest_ebsperf.plugin.keys import MEASUREMENT_KEY, ROW_KEY, STATE_KEY
from pytest_ebsperf.plugin.outcomes import fail_plainly
from pytest_ebsperf.settings import (
    OPTIONS,
    STRICT_FLAG_ALONE,
    STRICT_OUTCOMES,
    Option,
    Settings,
    resolve,
)

if TYPE_CHECKING:  # loaded when a check first needs them: a run without checks pays nothing
    from pytest_ebsperf.plugin.fixture import Ebsperf
    from pytest_ebsperf.session import EbsperfSession

__all__ = ["MEASUREMENT_KEY", "ROW_KEY", "STATE_KEY", "EbsperfPlugin"]

#: Feature modules with hooks of their own (options go into the same "ebsperf" group).
pytest_plugins = [
    "pytest_ebsperf.plugin.credits",
    "pytest_ebsperf.plugin.results",
    "pytest_ebsperf.plugin.aws",
    "pytest_ebsperf.plugin.fleet",
]

#: Summary lines that start so are printed in red (the run left something behind).
ALARMS = ("provisioning clean-up: Could", "NOT SAVED:")
MARKER_HELP = (
    "ebsperf(volume_type=None, emulated=None, **settings): the volume type a suite checks "
    "(other volumes skip it), the volume --emulate makes for it (a dict of volume facts, e.g. "
    "{'type': 'io1', 'size_gib': 200, 'iops': 2000}) and per-test settings (runtime=..., "
    "iodepth=...), which win over the command line."
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ebsperf", "block-storage performance claims (pytest-ebsperf)")
    for option in OPTIONS:
        group.addoption(option.flag, **_argparse_kwargs(option))
        if option.ini:
            parser.addini(option.ini, help=f"default for {option.flag}: {option.help}",
                          type="string", default=None)


def _argparse_kwargs(option: Option) -> dict[str, Any]:
    help_text = option.help
    if option.env:
        help_text += f" Environment: {option.env}."
    if option.kind == "bool":
        return {"action": "store_true", "dest": f"ebsperf_{option.dest}", "default": None,
                "help": help_text}
    if option.kind == "outcomes":  # --ebsperf-strict alone, or =inconclusive / =info
        return {"dest": f"ebsperf_{option.dest}", "metavar": "OUTCOMES", "nargs": "?",
                "const": STRICT_FLAG_ALONE, "default": None,
                "help": f"{help_text} Default: {option.default}."}
    if option.default is not None:
        help_text += f" Default: {option.default!r}."
    return {"dest": f"ebsperf_{option.dest}", "metavar": option.metavar, "default": None,
            "help": help_text}


def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    """``--ebsperf-strict suites/io1``: argparse would take the path as the flag's value
    (it takes one optionally); a flag followed by anything but a list of outcomes is the
    flag alone."""
    for index, arg in enumerate(args):
        if arg == "--":
            return
        if arg == "--ebsperf-strict" and (index + 1 == len(args)
                                          or not _outcome_list(args[index + 1])):
            args[index] = f"--ebsperf-strict={STRICT_FLAG_ALONE}"


def _outcome_list(text: str) -> bool:
    words = {*STRICT_OUTCOMES, STRICT_FLAG_ALONE, "both", "none", "true", "false", "yes", "no"}
    return all(part.strip().lower() in words for part in text.split(",")) and bool(text)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    try:
        settings = resolve(lambda o: config.getoption(f"ebsperf_{o.dest}"), os.environ,
                           lambda o: config.getini(o.ini) if o.ini else None)
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    plugin = EbsperfPlugin(config, settings)
    from pytest_ebsperf import lifetime

    # SIGTERM (a cancelled CI job) and SIGHUP stop fio and remove what the run made before
    # the process dies of them, as Ctrl-C does.
    lifetime.install()
    if hasattr(config, "workerinput"):
        lifetime.die_with_parent()  # an xdist worker ends with its controller, however it ends

    config.stash[STATE_KEY] = plugin
    config.pluginmanager.register(plugin, "ebsperf-state")


def pytest_unconfigure(config: pytest.Config) -> None:
    plugin = config.stash.get(STATE_KEY, None)
    if plugin is not None:
        plugin.close()
        config.pluginmanager.unregister(plugin)
        del config.stash[STATE_KEY]


class EbsperfPlugin:
    """The run's state, registered as a plugin so it receives hooks."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self._session: EbsperfSession | None = None
        self._setup: list[Callable[[EbsperfSession], None]] = []
        self.rows: list[dict[str, Any]] = []
        self.measurements: list[dict[str, Any]] = []
        xml = getattr(config.option, "xmlpath", None)
        self._junit_path = os.path.abspath(os.path.expanduser(xml)) if xml else None

    @property
    def session(self) -> EbsperfSession:
        """The measuring side of the run, made when a check first needs it (a pytest run in
        a project that has the plugin installed but runs no check never loads it)."""
        if self._session is None:
            from pytest_ebsperf.session import EbsperfSession

            session = EbsperfSession(self.settings)
            for setup in self._setup:
                setup(session)
            self._session = session
        return self._session

    @property
    def session_made(self) -> bool:
        return self._session is not None

    def prepare_session(self, session: EbsperfSession) -> None:
        """Give another session (a fleet host's) what the run's own session gets."""
        for setup in self._setup:
            setup(session)

    def on_session(self, setup: Callable[[EbsperfSession], None]) -> None:
        """Apply ``setup`` to the session when it is made (at once if it exists)."""
        if self._session is not None:
            setup(self._session)
        else:
            self._setup.append(setup)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()

    def pytest_sessionstart(self) -> None:
        # The terminal reporter exists from here on (not yet in pytest_configure).
        from pytest_ebsperf.plugin.terminal import progress_writer

        writer = progress_writer(self.config)
        self.on_session(lambda session: setattr(session, "progress", writer))
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            outcomes.add_to_short_summary(reporter, self.config)
        if not hasattr(self.config, "workerinput") and not self.config.option.collectonly:
            self._check_output_paths()
        keep = self.settings.keep_fio_dir(Path(self.config.invocation_params.dir))
        if keep is not None:  # fio's own evidence of each run, beside the results
            self.on_session(lambda session: setattr(session.runner, "keep_dir", keep))

    def _check_output_paths(self) -> None:
        """Every path the run will write, checked before the first fio run (exit code 4)."""
        from pytest_ebsperf.plots import HTML_DEST
        from pytest_ebsperf.results.paths import check_output_dir, check_output_file

        base = Path(self.config.invocation_params.dir)
        try:
            report = self.settings.report
            if report:
                check_output_file(str(report), "--ebsperf-report", base=base)
            if self.settings.csv:
                check_output_file(self.settings.csv, "--ebsperf-csv", base=base)
            html = self.config.getoption(HTML_DEST, None)
            if html:
                check_output_file(str(html), "--html", base=base)
            keep = self.settings.keep_fio_dir(base)
            if keep is not None:
                check_output_dir(str(keep), "--ebsperf-keep-fio", base=base)
            plots = str(self.settings.plots or "")
            if self.settings.given("plots") and plots.strip().lower() not in ("", "none", "off"):
                check_output_dir(plots, "--ebsperf-plots", base=base)
        except EbsperfError as exc:
            raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        ours = [item for item in items if "ebsperf" in getattr(item, "fixturenames", ())]
        if not ours:
            return  # nothing of ours was collected: stay silent (fio, devices not needed)
        option = self.config.option
        # The run's false-alarm level is shared by its checks (Bonferroni).
        planned = len(ours)
        self.on_session(lambda session: setattr(session, "checks_planned", planned))
        if getattr(option, "collectonly", False) or getattr(option, "showfixtures", False) \
                or getattr(option, "show_fixtures_per_test", False):
            return  # pytest's dry runs (IDE discovery, CI listings): no device, no fio
        from pytest_ebsperf.plugin.fleet import FLEET_KEY

        if self.config.stash.get(FLEET_KEY, None) is not None:
            return  # each host's session is checked before its first check
        if self.settings.fio_servers:
            try:  # the fio client runs here; the servers answer (or not) per check
                self.session.runner.version()
            except EbsperfError as exc:
                raise pytest.UsageError(str(exc)) from None
            return
        try:
            self.session.preflight()
            # the volume each suite checks, twins, markers and the opt-in to write: a
            # misconfigured job stops here (exit 4), never as a failed check
            self.session.check_plan([marker_kwargs(item) for item in ours])
        except EbsperfError as exc:
            raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        outcomes.settle(item, call, report)  # INFO and INCONCLUSIVE are outcomes of their own
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(self, report: pytest.TestReport) -> Any:
        found = outcomes.outcome_of(report)
        return outcomes.STATUS[found] if found else None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return  # the teardown report carries the same user_properties again
        for key, value in report.user_properties:
            if key == ROW_KEY and isinstance(value, dict):
                self.rows.append(dict(value))
            elif key == MEASUREMENT_KEY and isinstance(value, dict):
                self.measurements.append(dict(value))

    def pytest_sessionfinish(self) -> None:
        self.close()
        if self.rows and not hasattr(self.config, "workerinput"):
            self.config.hook.pytest_ebsperf_report_rows(rows=self.rows, config=self.config)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # after pytest's JUnit writer (its file is written at session finish)
        if self._junit_path and not hasattr(self.config, "workerinput"):
            outcomes.rewrite_junit(self._junit_path)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The one summary: sections as data ``(title, lines)`` from each feature, in order:
        volume facts, claims and seed-shaped tables, cost and results."""
        from pytest_ebsperf.plugin import aws, results

        sections = aws.summary_sections(self.config)
        if self.rows or self.measurements:
            from pytest_ebsperf import report

            sections += report.terminal_sections(self.rows, self.measurements)
        sections += results.summary_sections(self.config)
        from pytest_ebsperf.plugin import fleet

        sections += fleet.summary_sections(self.config, self.rows)
        for title, lines in sections:
            terminalreporter.write_sep("=", title)
            for line in lines:
                terminalreporter.write_line(line, red=line.startswith(ALARMS))


def marker_kwargs(item: pytest.Item) -> dict[str, Any]:
    """The test's ``ebsperf`` marker keywords, the closest marker winning."""
    found: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("ebsperf"))):
        found.update(marker.kwargs)
    return found


@pytest.fixture(scope="session")
def ebsperf_session(pytestconfig: pytest.Config) -> EbsperfSession:
    """The run-wide :class:`~pytest_ebsperf.session.EbsperfSession`: settings, fio runner,
    the volume under test for each suite and its (real or emulated) device."""
    session: EbsperfSession = pytestconfig.stash[STATE_KEY].session
    return session


@pytest.fixture
def ebsperf(request: pytest.FixtureRequest, ebsperf_session: EbsperfSession,
            ebsperf_provisioned: object, ebsperf_host_id: str | None) -> Iterator[Ebsperf]:
    """Run fio on the volume under test and judge documented claims.

    ``ebsperf.workload(pattern, bs)`` builds a job with a queue depth chosen so the volume is
    the bottleneck; ``check_cap`` / ``check_floor`` / ``check_rel`` / ``check_sweep`` /
    ``record_info`` run it, judge it, add a row to the report and pass, fail (with the claim,
    expected, measured and binding limit) or skip. The suite's volume type comes from
    ``pytest.mark.ebsperf(volume_type=...)``. With ``--ebsperf-provision`` each test runs once
    per provisioned volume (see ``ebsperf_provisioned``).
    """
    markers = marker_kwargs(request.node)
    try:
        settings = ebsperf_session.settings.with_marker(markers)
    except EbsperfError as exc:
        fail_plainly(str(exc), pytrace=False)
    from pytest_ebsperf.plugin.fixture import Ebsperf
    from pytest_ebsperf.plugin.fleet import fleet_session

    session = fleet_session(request.node, ebsperf_host_id) or ebsperf_session
    if session is not ebsperf_session:
        try:
            settings = session.settings.with_marker(markers)
        except EbsperfError as exc:
            fail_plainly(str(exc), pytrace=False)
    yield Ebsperf(session, request.node, settings, markers.get("volume_type"),
                  emulated=markers.get("emulated"))
