"""Hooks other plugins and conftest files can implement to extend pytest-ebsperf."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_ebsperf.verdicts.outcome import Verdict


@pytest.hookspec
def pytest_ebsperf_verdict(verdict: Verdict, item: pytest.Item) -> None:
    """Called with every judged claim, before the test passes, fails or is skipped.

    Use it to ship verdicts elsewhere (a metrics system, a chat channel) or to annotate the
    test. Example, in a ``conftest.py``::

        def pytest_ebsperf_verdict(verdict, item):
            if verdict.outcome.value == "fail":
                item.add_marker(pytest.mark.storage_regression)
    """


@pytest.hookspec
def pytest_ebsperf_report_rows(rows: list[dict[str, object]], config: pytest.Config) -> None:
    """Called once at the end of the run (on the controller) with every report row.

    Rows are the dicts printed in the claims table (claim, what, expected, measured, outcome,
    binding, volume, workload, nodeid...). Example: write them to your own format::

        def pytest_ebsperf_report_rows(rows, config):
            Path("ebsperf.csv").write_text("\\n".join(f"{r['claim']},{r['outcome']}" for r in rows))
    """


@pytest.hookspec
def pytest_ebsperf_summary_sections(config: pytest.Config) -> list[tuple[int, str, list[str]]]:
    """Sections of the ebsperf terminal summary: ``(order, title, lines)`` each, printed in
    order of ``order`` (volume facts 10, claims 20, results 30, fleet 40) under a ``====``
    heading. Example, a line of your own after the results::

        def pytest_ebsperf_summary_sections(config):
            return [(35, "storage owner", ["ask #storage about these volumes"])]
    """
    return []
