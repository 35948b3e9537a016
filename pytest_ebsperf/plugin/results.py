"""pytest hooks of the results features: results file, regression gate, history, pictures,
JUnit properties and the HTML report. Wiring only; the work is in :mod:`pytest_ebsperf.results`.

Registered by :mod:`pytest_ebsperf.plugin` (``FEATURE_PLUGINS``).
"""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import os
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ebsperf.errors import EbsperfError
from pytest_ebsperf.plugin import outcomes as plugin_outcomes
from pytest_ebsperf.plugin.keys import MEASUREMENT_KEY, ROW_KEY, item_state
from pytest_ebsperf.plugin.run_code import (
    results,
    results_cost,
    results_csv_export,
    results_document,
    results_history,
    results_html,
    results_junit,
    results_paths,
    results_pictures,
    results_plots,
    results_run,
    results_tables,
    trends_store,
)
from pytest_ebsperf.plugin.state import STATE_KEY
from pytest_ebsperf.plugin.terminal import terminal_width

if TYPE_CHECKING:  # names for annotations; the modules come from run_code.py
    from pytest_ebsperf.results.run import ResultsRun



@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    settings = state.settings
    save = bool(config.getoption("benchmark_save", None)
                or config.getoption("benchmark_autosave", None))
    json_path = bool(config.getoption("benchmark_json", None))
    bench_compare = bool(config.getoption("benchmark_compare", None))
    state.results_later = True
    if not (settings.report or settings.compare or settings.history or save or json_path
            or bench_compare
            or settings.given("compare_threshold")):
        # nothing to check or load before the first check: the results machinery loads
        # with it (a pytest start that measures nothing pays nothing for it)
        state.history_active = False
        return
    run = _start_run(config)

    active, run.history_note = results_history.history_state(
        save=save, json_path=json_path, compare=bench_compare,
        disabled=bool(config.getoption("benchmark_disable", None)
                      and not config.getoption("benchmark_enable", None)),
        skip=bool(config.getoption("benchmark_skip", None)),
        xdist=_xdist_active(config))
    state.history_active = active


def _start_run(config: pytest.Config) -> results_run.ResultsRun:
    """The run's results (options checked, the baseline loaded), kept in the stash."""

    state = config.stash[STATE_KEY]
    settings = state.settings
    options = results_run.ResultsOptions(report=settings.report, compare=settings.compare,
                             threshold_pct=settings.compare_threshold,
                             price_region=settings.price_region)
    storage = config.getoption("benchmark_storage", None) or "file://./.benchmarks"
    try:
        run = results_run.ResultsRun.start(options, benchmark_storage=str(storage))
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None
    state.results = run
    return run


def _results_run(config: pytest.Config, *, start: bool = False) -> ResultsRun | None:
    """The run's results; with ``start``, made now when the start left them to the first
    check."""
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return None
    run = state.results
    if run is None and start and state.results_later:
        run = _start_run(config)
    return run


def _measured(config: pytest.Config) -> bool:
    """Whether the run has checks or measurements (here or from xdist workers)."""
    state = config.stash.get(STATE_KEY, None)
    return state is not None and bool(state.rows or state.measurements)


def _settings(config: pytest.Config) -> Any:
    state = config.stash.get(STATE_KEY, None)
    return state.settings if state is not None else None


def _xdist_active(config: pytest.Config) -> bool:
    return (config.getoption("dist", "no") not in ("no", None)
            or hasattr(config, "workerinput") or "PYTEST_XDIST_WORKER" in os.environ)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(STATE_KEY, None)
    if state is not None:
        state.results = None


@pytest.fixture(autouse=True)
def ebsperf_results(request: pytest.FixtureRequest) -> None:
    """(automatic) For tests that use ``ebsperf``: keeps the test's request, so that after
    the test body ran its checks are compared with a stored run (``--ebsperf-compare``),
    drawn (``--ebsperf-plots``) and recorded in pytest-benchmark's history."""
    if "ebsperf" in request.fixturenames:
        item_state(request.node).request = request


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    if item_state(item).request is None:
        return (yield)
    run = _results_run(item.config, start=True)
    if run is None:
        return (yield)
    try:
        result = yield
    except BaseException:
        _after_test_quietly(item, run)  # record and draw a failed claim too; its failure stands
        raise
    message = _after_test(item, run)
    if message:
        pytest.fail(message, pytrace=False)
    return result


def _after_test_quietly(item: pytest.Item, run: ResultsRun) -> None:
    """:func:`_after_test` for a test that already failed: a problem here must not hide the
    test's own failure, so it becomes a warning."""
    try:
        _after_test(item, run)
    except Exception as exc:  # noqa: BLE001 - a warning, never raised over the real failure
        item.warn(pytest.PytestWarning(f"ebsperf results not recorded for this test: {exc}"))


def _after_test(item: pytest.Item, run: ResultsRun) -> str | None:

    rows = [v for k, v in item.user_properties if k == ROW_KEY and isinstance(v, dict)]
    measurements = [v for k, v in item.user_properties
                    if k == MEASUREMENT_KEY and isinstance(v, dict)]
    if not rows and not measurements:
        return None
    message = run.after_test(rows, measurements)
    # A test that uses pytest-benchmark itself keeps the fixture's one use per test.
    uses_benchmark = "benchmark" in getattr(item, "fixturenames", ())
    if item.config.stash[STATE_KEY].history_active and not uses_benchmark:
        _record_history(item, rows, measurements)
    directory = results_plots.check_pictures_dir(
        _settings(item.config), Path(item.config.invocation_params.dir),
        html=bool(item.config.getoption(results_plots.HTML_DEST, None)))
    if directory is not None:
        _draw(item, run, rows, measurements, directory)
    return message


def _draw(item: pytest.Item, run: ResultsRun, rows: list[dict[str, Any]],
          measurements: list[dict[str, Any]], directory: Path) -> None:
    try:
        pictures = results_pictures.draw_test(rows, measurements, directory)
    except ImportError:
        run.cannot_draw = True  # said once, in the summary (_notes)
        return
    except OSError as exc:
        item.warn(pytest.PytestWarning(f"no pictures: cannot write to {directory} "
                                       f"({exc.strerror or exc})"))
        return
    item_state(item).pictures = pictures
    run.pictures.extend(pictures)
    run.set_rows.extend(r for r in rows if r.get("volumes"))
    if any(r.get("volumes") for r in rows):
        try:  # redrawn as each count is measured: the last test's picture has every point
            for path in results_pictures.draw_scaling(run.set_rows, directory):
                if path not in run.pictures:
                    run.pictures.append(path)
        except OSError as exc:
            item.warn(pytest.PytestWarning(f"no scaling picture: cannot write to {directory} "
                                           f"({exc.strerror or exc})"))


def _record_history(item: pytest.Item, rows: list[dict[str, Any]],
                    measurements: list[dict[str, Any]]) -> None:
    """One benchmark per test (pytest-benchmark allows one use of its fixture per test)."""

    row = next((r for r in rows if r.get("outcome") in ("pass", "fail", "info")), None)
    measurement = results_history.primary_measurement(row, measurements) if row else None
    samples = results_history.cost_samples(row, measurement) if row and measurement else None
    if row is None or samples is None:
        return
    clock = results_history.VirtualClock()
    item.add_marker(pytest.mark.benchmark(timer=clock, group=results_history.GROUP))
    request = item_state(item).request
    assert request is not None  # only tests that use ebsperf are recorded
    bench = request.getfixturevalue("benchmark")
    bench.extra_info[results_history.EXTRA_INFO_KEY] = results_history.extra_info(
        row, samples, measurements)
    costs = iter(samples.costs)
    bench.pedantic(lambda: clock.advance(next(costs)), rounds=len(samples.costs))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and item_state(item).pictures:
        _attach_pictures(item, report)
    if report.when == "teardown":
        # JUnit XML reads the teardown report's properties; the terminal summary and the
        # results file read the call report's, so only this one gets the flat pairs.
        report.user_properties = results_junit.flatten(report.user_properties, row_key=ROW_KEY,
                                               measurement_key=MEASUREMENT_KEY)
    return report


def _attach_pictures(item: pytest.Item, report: pytest.TestReport) -> None:
    try:
        # pytest-html is optional: pictures join its report when it is there
        from pytest_html import extras
    except ImportError:
        return

    found = list(getattr(report, "extras", []))
    for path in item_state(item).pictures:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        found.append(extras.png(data, name=path.stem))
    report.extras = found  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    _write_csv(config)
    run = _results_run(config, start=_measured(config))
    history = _settings(config).history if _settings(config) is not None else None
    if run is None or hasattr(config, "workerinput") or not (run.options.report or history):
        return

    rows, measurements, settings = _run_state(config)
    document = results_document.build_document(rows, measurements, settings={**settings,
                                                            **run.options.as_settings()},
                              environment=_environment(config),
                              cost=_cost_dict(run, measurements),
                              compare=run.compare_settings(rows))
    if history and (rows or measurements):  # a run that measured nothing adds no run
        run.history_stored = _append_history(str(history), document,
                                             Path(config.invocation_params.dir))
    if not run.options.report:
        return

    problem = results_paths.write_or_keep(results_document.write_document, document,
                                          Path(run.options.report),
                                          base=Path(config.invocation_params.dir))
    if problem:
        run.unsaved = problem


def _append_history(path: str, document: dict[str, Any], base: Path) -> str:
    """The run appended to the history database at ``path`` (--ebsperf-history); what
    happened, for the summary (a failure is said there, never raised over the results)."""

    where = Path(path).expanduser()
    where = where if where.is_absolute() else base / where
    try:
        with trends_store.HistoryStore(where) as store:
            run_id = store.append(document)
            runs = len(store.runs())
    except (EbsperfError, OSError) as exc:
        return f"NOT SAVED: the history database {where}: {exc}"
    return (f"history: run {run_id} of {runs} in {where} (ebsperf history "
            f"--db {where})")


def _write_csv(config: pytest.Config) -> None:
    """``--ebsperf-csv``: the measurements, one row each (on the xdist controller)."""
    state = config.stash.get(STATE_KEY, None)
    run = _results_run(config, start=_measured(config))
    if state is None or run is None or not state.settings.csv or hasattr(config, "workerinput"):
        return

    results_document.annotate_measurements(state.rows, state.measurements)
    path = Path(config.invocation_params.dir) / Path(state.settings.csv).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(results_csv_export.to_csv(state.measurements))
    except OSError as exc:
        run.unsaved = f"the CSV could not be written to {path} ({exc.strerror or exc})"


def _run_state(config: pytest.Config) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                               dict[str, Any]]:
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return [], [], {}
    values = {f.name: getattr(state.settings, f.name)
              for f in dataclasses.fields(state.settings)}
    facts = results_document.settings_facts(values, state.settings.origin)
    return state.rows, state.measurements, facts


def _environment(config: pytest.Config) -> dict[str, Any]:

    state = config.stash.get(STATE_KEY, None)
    host = state.settings.host if state is not None else "local://"
    return results_document.environment_facts(pytest_version=pytest.__version__, fio_host=host)


def _cost_dict(run: ResultsRun, measurements: list[dict[str, Any]]) -> dict[str, Any] | None:

    table = results_cost.cost_table(measurements, run.options.region())
    return table.as_dict() if table is not None else None


#: Cost and results come after the claims in the summary.
SUMMARY_ORDER = 30


def pytest_ebsperf_summary_sections(config: pytest.Config
                                    ) -> list[tuple[int, str, list[str]]]:
    """The results part of the terminal summary: the cost table and the results notes."""
    run = _results_run(config, start=_measured(config))
    if run is None:
        return []
    state = config.stash.get(STATE_KEY, None)
    rows, measurements = (state.rows, state.measurements) if state is not None else ([], [])
    return [(SUMMARY_ORDER, title, lines)
            for title, lines in _summary_sections(run, rows, measurements, state,
                                                  terminal_width(config))]


def _summary_sections(run: ResultsRun, rows: list[dict[str, Any]],
                      measurements: list[dict[str, Any]], state: Any = None,
                      width: int | None = None) -> list[tuple[str, list[str]]]:
    sections: list[tuple[str, list[str]]] = []
    table = None
    if measurements:
        table = results_cost.cost_table(measurements, run.options.region())
    if table is not None:
        sections.append(("ebsperf: cost per performance",
                         [*results_tables.wrap_text(results_cost.caption(table), width),
                          *results_cost.format_cost_table(table, width=width).splitlines()]))
    notes = _notes(run, rows, state)
    if notes:
        sections.append(("ebsperf: results", [line for note in notes
                                              for line in results_tables.wrap_text(note, width)]))
    return sections


def _can_draw(settings: Any, run: ResultsRun) -> bool:
    """False when pictures were asked for (the default) and matplotlib is not installed, or a
    picture of this run could not load it. Whether it is installed is looked up, not loaded:
    loading it costs 0.4 s of CPU, and a run that drew no picture does not need it."""
    if str(settings.plots or "").strip().lower() in ("", "none", "off"):
        return True
    if run.cannot_draw:
        return False
    try:
        return importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        return False


def _notes(run: ResultsRun, rows: list[dict[str, Any]], state: Any = None) -> list[str]:

    notes = []
    if run.baseline is not None:
        compared, regressed = results_run.gate_counts(rows)
        notes.append(f"compared with {run.baseline.source}: {compared} tests, {regressed} "
                     f"regressed beyond {run.options.threshold_pct:g} % (statistically clear: "
                     f"t-test on per-second samples, p < {results.ALPHA:g})")
    if run.history_note:
        notes.append(run.history_note)
    if run.history_stored:
        notes.append(run.history_stored)
    if rows and state is not None and not _can_draw(state.settings, run):
        notes.append("no pictures: matplotlib is not installed (pip install "
                     "'pytest-ebsperf[plot]'); the credit checks' knee plots, each check's "
                     "per-second series and the scaling picture need it")
    if run.unsaved:
        notes.append(f"NOT SAVED: {run.unsaved}")
    elif run.options.report:
        notes.append(f"results file: {run.options.report}")
    if state is not None and state.settings.csv:
        notes.append(f"measurements as CSV: {state.settings.csv}")
    runner = state.session.runner if state is not None and state.session_made else None
    if runner is not None and runner.keep_dir is not None and runner.kept_runs:
        notes.append(f"fio evidence (report, logs, a job file to repeat each): "
                     f"{runner.kept_runs} runs in {runner.keep_dir}")
        notes += [f"could not keep fio evidence: {p}" for p in runner.keep_problems[:3]]
    if run.pictures:
        notes.append(f"pictures: {len(run.pictures)} in {run.pictures[0].parent}")
    return notes


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_machine_info(config: pytest.Config,
                                         machine_info: dict[str, Any]) -> None:
    """Add the volume and instance settings, so stored runs say what they measured."""


    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    settings = state.settings
    if not (settings.emulate or settings.device or settings.volume_type):
        return  # not an ebsperf run: leave other projects' machine info alone
    values = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    machine_info["ebsperf"] = results_history.machine_info(values)


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_table_row(report: pytest.TestReport, cells: list[str]) -> None:
    """INFO and INCONCLUSIVE in the result column (pytest-html counts them as skipped)."""

    found = plugin_outcomes.outcome_of(report)
    if found and cells:
        cells[0] = f'<td class="col-result">{plugin_outcomes.STATUS[found][2][0]}</td>'


@pytest.hookimpl(optionalhook=True)
def pytest_html_results_summary(prefix: list[str], summary: list[str], postfix: list[str],
                                session: pytest.Session) -> None:
    """The terminal summary's tables and the run's pictures, in pytest-html's report."""

    config = session.config
    run = _results_run(config, start=_measured(config))
    rows, measurements, _ = _run_state(config)
    if run is None or not (rows or measurements):
        return
    directory = results_plots.plot_dir(_settings(config), Path(config.invocation_params.dir))
    started = run.started - 1.0  # coarse file-system timestamps
    pictures = sorted(p for p in directory.glob("*.png") if p.stat().st_mtime >= started) \
        if directory is not None else []
    table = results_cost.cost_table(measurements, run.options.region()) if measurements else None
    notes = _notes(run, rows)
    counted = _test_outcomes(config)
    if counted:
        notes = [counted, *notes]
    prefix.extend(results_html.summary_fragments(rows, measurements, cost=table, notes=notes,
                                    pictures=pictures))


def _test_outcomes(config: pytest.Config) -> str:
    """``tests: 2 passed, 1 INFO, 1 INCONCLUSIVE`` (pytest-html's own filters count INFO
    and INCONCLUSIVE tests as skipped)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    stats = getattr(reporter, "stats", {}) or {}
    parts = [f"{len(stats[key])} {word}" for key, word in (
        ("passed", "passed"), ("failed", "failed"), ("info", "INFO"),
        ("inconclusive", "INCONCLUSIVE"), ("skipped", "skipped"), ("error", "errors"))
        if stats.get(key)]
    if not (stats.get("info") or stats.get("inconclusive")):
        return ""
    return ("tests: " + ", ".join(parts) + " (pytest-html's filters below count INFO and "
            "INCONCLUSIVE as skipped; the result column names them)")
