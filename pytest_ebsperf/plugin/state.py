"""The run object: settings, the measuring session (made when a check first needs it), the
rows and measurements of every check, INFO/INCONCLUSIVE outcomes and the terminal summary.
Registered as a plugin (so it receives hooks) and kept in the config's stash."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ebsperf.config.emulation import SHARED_CALIBRATION_ENV
from pytest_ebsperf.config.session_inputs import SessionInputs
from pytest_ebsperf.config.settings import Settings
from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.plugin import outcomes
from pytest_ebsperf.plugin.keys import (
    MEASUREMENT_KEY,
    PLAN_KEY,
    ROW_KEY,
    marker_kwargs,
)
from pytest_ebsperf.plugin.run_code import (
    checks_plan,
    checks_preflight,
    checks_session,
    emulate_witness,
    results_markdown,
    results_paths,
    results_plots,
    results_report,
)
from pytest_ebsperf.plugin.terminal import progress_writer, terminal_width

if TYPE_CHECKING:  # names for annotations; the modules come from run_code.py
    from pytest_ebsperf.checks.session import EbsperfSession
    from pytest_ebsperf.results.run import ResultsRun

#: The one run object (:class:`EbsperfPlugin`) in the config's stash.
STATE_KEY = pytest.StashKey["EbsperfPlugin"]()
#: Summary lines that start so are printed in red (the run left something behind).
ALARMS = ("provisioning clean-up: Could", "NOT SAVED:")
#: Sections of other features shown only when --ebsperf-tables names them.
OPTIONAL_SECTIONS = {"ebsperf volume facts": "facts", "ebsperf: cost per performance": "cost"}
#: pytest's outcome words in the order its last line gives them (ours among them).
COUNT_WORDS = ("failed", "passed", "skipped", "inconclusive", "info", "xfailed", "xpassed",
               "error")


def pytest_counts(terminalreporter: Any) -> str:
    """The counts pytest's own last line gives (``48 passed, 3 skipped, 2 inconclusive,
    4 info``), so the two never disagree."""
    stats = getattr(terminalreporter, "stats", {}) or {}
    parts = []
    for word in COUNT_WORDS:
        count = sum(1 for report in stats.get(word, ())
                    if getattr(report, "count_towards_summary", True))
        if count:
            parts.append(f"{count} {'errors' if word == 'error' and count > 1 else word}")
    return f"tests: {', '.join(parts)}" if parts else ""
#: Where the claims and the seeds' tables go among the summary's sections (volume facts 10,
#: results 30, fleet 40).
CLAIMS_ORDER = 20


class EbsperfPlugin:
    """The run's state, registered as a plugin so it receives hooks."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self._session: EbsperfSession | None = None
        #: What the session is built with besides the settings, filled by the hooks before
        #: the first check (:class:`~pytest_ebsperf.config.session_inputs.SessionInputs`).
        self.inputs = SessionInputs()
        #: The results file, regression gate and history, once started (at configure when
        #: asked for, else with the first check: ``results_later``).
        self.results: ResultsRun | None = None
        self.results_later = False
        #: Whether checks are recorded in pytest-benchmark's history.
        self.history_active = False
        #: The AWS side of the run (discovery, provisioning), made at configure: a
        #: :class:`pytest_ebsperf.plugin.aws.AwsRun` (``aws.aws_run`` gives it typed; the
        #: feature modules import this one, not the other way round).
        self.aws: object | None = None
        #: The fleet of testinfra's ``--hosts``, when the run has one: a
        #: :class:`pytest_ebsperf.plugin.hosts.FleetRun` (``hosts.fleet_run``).
        self.fleet: object | None = None
        self.rows: list[dict[str, Any]] = []
        self.measurements: list[dict[str, Any]] = []
        #: A dry run's entries (--ebsperf-plan), one per check.
        self.planned: list[dict[str, Any]] = []
        #: --ebsperf-keep-fio's directory when this run made it (removed at the end if empty)
        self._made_keep_dir: Path | None = None
        #: The folder this run's processes share emulated volumes' path corrections in
        #: (:meth:`share_path_calibration`; removed at the end)
        self._calibration_dir: Any = None  # fio.process.OwnedDir
        xml = getattr(config.option, "xmlpath", None)
        self._junit_path = os.path.abspath(os.path.expanduser(xml)) if xml else None

    @property
    def session(self) -> checks_session.EbsperfSession:
        """The measuring side of the run, made when a check first needs it (a pytest run in
        a project that has the plugin installed but runs no check never loads it)."""
        if self._session is None:
            self._session = checks_session.EbsperfSession(self.settings, inputs=self.inputs)
        return self._session

    @property
    def session_made(self) -> bool:
        return self._session is not None

    def share_path_calibration(self) -> None:
        """The run's emulated volumes measure their I/O path once per service time, for
        every xdist worker (they inherit the variable naming the folder); a run inside
        another emulated run's process uses the outer one's."""
        if not os.environ.get(SHARED_CALIBRATION_ENV):
            from pytest_ebsperf.fio.process import FIO_DIR_PREFIX, OwnedDir  # --emulate only

            # a run's own folder: removed with the run, on SIGTERM too, and by the next
            # run's sweep of fio's folders after a SIGKILL
            made = tempfile.mkdtemp(prefix=f"{FIO_DIR_PREFIX}calibration-")
            self._calibration_dir = OwnedDir(made)
            os.environ[SHARED_CALIBRATION_ENV] = made

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
        if self._calibration_dir is not None:
            os.environ.pop(SHARED_CALIBRATION_ENV, None)
            self._calibration_dir.close()
            self._calibration_dir = None
        keep = self._made_keep_dir
        if keep is not None:
            try:
                keep.rmdir()  # only when empty: a run that measured nothing leaves nothing
            except OSError:
                pass

    def pytest_report_header(self) -> list[str]:
        """With --emulate on this host: how its CPUs size the emulated volumes."""
        s = self.settings
        if not s.emulate or s.host != "local://" or s.hosts_file or s.fio_servers:
            return []
        return [emulate_witness.sizing_header()]

    def pytest_sessionstart(self) -> None:
        # The terminal reporter exists from here on (not yet in pytest_configure).

        self.inputs.progress = progress_writer(self.config)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            outcomes.add_to_short_summary(reporter, self.config)
        if not hasattr(self.config, "workerinput") and not self.config.option.collectonly:
            self._check_output_paths()
        keep = self.settings.keep_fio_dir(Path(self.config.invocation_params.dir))
        if keep is not None:  # fio's own evidence of each run, beside the results
            self.inputs.keep_dir = keep

    def _check_output_paths(self) -> None:
        """Every path the run will write, checked before the first fio run (exit code 4)."""

        base = Path(self.config.invocation_params.dir)
        try:
            report = self.settings.report
            if report:
                results_paths.check_output_file(str(report), "--ebsperf-report", base=base)
            if self.settings.csv:
                results_paths.check_output_file(self.settings.csv, "--ebsperf-csv", base=base)
            if self.settings.markdown:
                results_paths.check_output_file(self.settings.markdown, "--ebsperf-markdown",
                                                base=base)
            if self.settings.history:
                results_paths.check_output_file(self.settings.history, "--ebsperf-history",
                                                base=base)
            html = self.config.getoption(results_plots.HTML_DEST, None)
            if html:
                results_paths.check_output_file(str(html), "--html", base=base)
            keep = self.settings.keep_fio_dir(base)
            if keep is not None:
                made = not keep.exists()
                results_paths.check_output_dir(str(keep), "--ebsperf-keep-fio", base=base)
                if made:  # removed again at the end when no fio run was kept in it
                    self._made_keep_dir = keep
            plots = str(self.settings.plots or "")
            if self.settings.given("plots") and plots.strip().lower() not in ("", "none", "off"):
                results_paths.check_output_dir(plots, "--ebsperf-plots", base=base)
        except EbsperfError as exc:
            raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        ours = [item for item in items if "ebsperf" in getattr(item, "fixturenames", ())]
        if not ours:
            return  # nothing of ours was collected: stay silent (fio, devices not needed)
        option = self.config.option
        # The run's false-red budget is shared by its checks that can FAIL (Bonferroni):
        # not those that only record; those whose suite does not apply are known below.
        self.inputs.checks_planned = sum(1 for item in ours
                                         if not marker_kwargs(item).get("records"))
        if getattr(option, "collectonly", False) or getattr(option, "showfixtures", False) \
                or getattr(option, "show_fixtures_per_test", False):
            return  # pytest's dry runs (IDE discovery, CI listings): no device, no fio
        if self.fleet is not None:
            return  # each host's session is checked before its first check

        if self.settings.plan:  # a dry run: the plan is checked, no fio and no device touched
            try:
                judged = checks_preflight.check_plan(self.session,
                                                     [marker_kwargs(item) for item in ours])
                self._session = self.session.settle_checks(judged)
            except EbsperfError as exc:
                raise pytest.UsageError(str(exc)) from None
            return
        if self.settings.fio_servers:
            try:  # the fio client runs here; the servers answer (or not) per check
                self.session.runner.version()
            except EbsperfError as exc:
                raise pytest.UsageError(str(exc)) from None
            return
        try:
            self._session = checks_preflight.run(self.session)
            # the volume each suite checks, twins, markers and the opt-in to write: a
            # misconfigured job stops here (exit 4), never as a failed check
            judged = checks_preflight.check_plan(self.session,
                                                 [marker_kwargs(item) for item in ours])
            self._session = self.session.settle_checks(judged)
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
            elif key == PLAN_KEY and isinstance(value, dict):
                self.planned.append(dict(value))

    def pytest_sessionfinish(self) -> None:
        self.close()
        if self.rows and not hasattr(self.config, "workerinput"):
            self._write_markdown()
        if self.rows and not hasattr(self.config, "workerinput"):
            self.config.hook.pytest_ebsperf_report_rows(rows=self.rows, config=self.config)

    def _write_markdown(self) -> None:
        """--ebsperf-markdown's file, and GitHub's step summary when it is set."""
        # GitHub's step summary is shared by every step of a job: appended to, never
        # overwritten; --ebsperf-markdown's file is this run's own
        targets = [(t, mode) for t, mode in ((self.settings.markdown, "w"),
                                             (os.environ.get("GITHUB_STEP_SUMMARY"), "a")) if t]
        if not targets:
            return

        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        text = results_markdown.summary(self.rows, self.measurements,
                                counts=pytest_counts(reporter) if reporter else "")
        base = Path(self.config.invocation_params.dir)
        for target, mode in targets:
            path = Path(target) if Path(target).is_absolute() else base / target
            try:
                with open(path, mode, encoding="utf-8") as handle:
                    handle.write(text)
            except OSError as exc:
                if reporter is not None:
                    reporter.write_line(f"ebsperf: the Markdown summary could not be written "
                                        f"to {path} ({exc.strerror})", red=True)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self) -> None:
        # after pytest's JUnit writer (its file is written at session finish)
        if self._junit_path and not hasattr(self.config, "workerinput"):
            outcomes.rewrite_junit(self._junit_path)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The one summary: sections as data ``(order, title, lines)`` from each feature
        (``pytest_ebsperf_summary_sections``), in order: volume facts, claims and the seeds'
        tables, cost and results, the fleet."""
        tables = self.settings.tables_shown
        found: list[tuple[int, str, list[str]]] = [
            section for sections in self.config.hook.pytest_ebsperf_summary_sections(
                config=self.config) for section in sections
            if OPTIONAL_SECTIONS.get(section[1], "") in ("", *tables)]
        if self.rows or self.measurements:
            claims = results_report.terminal_sections(
                self.rows, self.measurements, width=terminal_width(self.config),
                color=bool(getattr(terminalreporter, "hasmarkup", False)), tables=tables,
                counts=pytest_counts(terminalreporter))
            found += [(CLAIMS_ORDER, title, lines) for title, lines in claims]
        if self.planned:
            entries = [checks_plan.PlanEntry(p["nodeid"], p["claim"], p["what"], p["fio"],
                                             p["expected"], p["typical_s"], p["longest_s"],
                                             p.get("note", ""))
                       for p in self.planned]
            found.append((0, "ebsperf: plan (a dry run: no fio started)",
                          checks_plan.table(entries, terminal_width(self.config))))
        sections = [(title, lines) for _, title, lines in sorted(found, key=lambda s: s[0])]
        for title, lines in sections:
            terminalreporter.write_sep("=", title)
            for line in lines:
                terminalreporter.write_line(line, red=line.startswith(ALARMS))
