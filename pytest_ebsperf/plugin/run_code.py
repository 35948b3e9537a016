"""The run's code that the plugin's hooks use, loaded when a hook first reads one of its
names: the one table of those modules (:data:`MODULES`) and one loader.

A pytest run in a project that has the plugin installed loads the plugin modules; most runs
check nothing. So the plugin modules take the measuring modules from here,
``from pytest_ebsperf.plugin.run_code import checks_session``, and each name is a
:func:`~pytest_ebsperf.deferred.later` proxy that imports its module the first time a hook
reads it (the type checker sees the modules themselves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_ebsperf.deferred import later

if TYPE_CHECKING:  # the modules themselves, for the type checker
    from pytest_ebsperf import aws as aws_module
    from pytest_ebsperf import awsmodel, results
    from pytest_ebsperf.aws import failures as aws_failures
    from pytest_ebsperf.aws import instance as aws_instance
    from pytest_ebsperf.aws import pricing as aws_pricing
    from pytest_ebsperf.awsmodel import validation as awsmodel_validation
    from pytest_ebsperf.awsmodel import volume_types
    from pytest_ebsperf.checks import fleet as checks_fleet
    from pytest_ebsperf.checks import plan as checks_plan
    from pytest_ebsperf.checks import preflight as checks_preflight
    from pytest_ebsperf.checks import servers as checks_servers
    from pytest_ebsperf.checks import session as checks_session
    from pytest_ebsperf.emulate import witness as emulate_witness
    from pytest_ebsperf.fio import host as fio_host
    from pytest_ebsperf.results import cost as results_cost
    from pytest_ebsperf.results import csv_export as results_csv_export
    from pytest_ebsperf.results import document as results_document
    from pytest_ebsperf.results import history as results_history
    from pytest_ebsperf.results import html as results_html
    from pytest_ebsperf.results import junit as results_junit
    from pytest_ebsperf.results import markdown as results_markdown
    from pytest_ebsperf.results import paths as results_paths
    from pytest_ebsperf.results import pictures as results_pictures
    from pytest_ebsperf.results import plots as results_plots
    from pytest_ebsperf.results import report as results_report
    from pytest_ebsperf.results import run as results_run
    from pytest_ebsperf.results import tables as results_tables
    from pytest_ebsperf.trends import store as trends_store
    from pytest_ebsperf.verdicts import outcome as verdicts_outcome

#: Each name a plugin module takes from here, and the module it stands for.
MODULES: dict[str, str] = {
    "aws_failures": "pytest_ebsperf.aws.failures",
    "aws_instance": "pytest_ebsperf.aws.instance",
    "aws_module": "pytest_ebsperf.aws",
    "aws_pricing": "pytest_ebsperf.aws.pricing",
    "checks_fleet": "pytest_ebsperf.checks.fleet",
    "checks_plan": "pytest_ebsperf.checks.plan",
    "checks_preflight": "pytest_ebsperf.checks.preflight",
    "checks_servers": "pytest_ebsperf.checks.servers",
    "checks_session": "pytest_ebsperf.checks.session",
    "emulate_witness": "pytest_ebsperf.emulate.witness",
    "fio_host": "pytest_ebsperf.fio.host",
    "results": "pytest_ebsperf.results",
    "results_cost": "pytest_ebsperf.results.cost",
    "results_csv_export": "pytest_ebsperf.results.csv_export",
    "results_document": "pytest_ebsperf.results.document",
    "results_history": "pytest_ebsperf.results.history",
    "results_html": "pytest_ebsperf.results.html",
    "results_junit": "pytest_ebsperf.results.junit",
    "results_markdown": "pytest_ebsperf.results.markdown",
    "results_paths": "pytest_ebsperf.results.paths",
    "results_pictures": "pytest_ebsperf.results.pictures",
    "results_plots": "pytest_ebsperf.results.plots",
    "results_report": "pytest_ebsperf.results.report",
    "results_run": "pytest_ebsperf.results.run",
    "results_tables": "pytest_ebsperf.results.tables",
    "awsmodel": "pytest_ebsperf.awsmodel",
    "awsmodel_validation": "pytest_ebsperf.awsmodel.validation",
    "trends_store": "pytest_ebsperf.trends.store",
    "verdicts_outcome": "pytest_ebsperf.verdicts.outcome",
    "volume_types": "pytest_ebsperf.awsmodel.volume_types",
}


def __getattr__(name: str) -> Any:
    """``name``'s module as a proxy (PEP 562): nothing is imported until it is used."""
    try:
        return later(MODULES[name])
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


__all__ = [
    "aws_failures",
    "aws_instance",
    "aws_module",
    "aws_pricing",
    "awsmodel",
    "awsmodel_validation",
    "checks_fleet",
    "checks_plan",
    "checks_preflight",
    "checks_servers",
    "checks_session",
    "emulate_witness",
    "fio_host",
    "results",
    "results_cost",
    "results_csv_export",
    "results_document",
    "results_history",
    "results_html",
    "results_junit",
    "results_markdown",
    "results_paths",
    "results_pictures",
    "results_plots",
    "results_report",
    "results_run",
    "results_tables",
    "trends_store",
    "verdicts_outcome",
    "volume_types",
]
