"""pytest hooks of the burst-credit checks: testing-aid options, plots directory, progress line.

``--emulate-timescale`` and ``--ebsperf-plots`` live in :mod:`pytest_ebsperf.settings` (with
their environment variables; pictures are saved through :mod:`pytest_ebsperf.plots`). The two
testing aids that only shape an *emulated* bucket are read here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ebsperf.credits.progress import ProgressWriter
from pytest_ebsperf.errors import EbsperfError


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ebsperf")
    group.addoption(
        "--emulate-bucket-factor", dest="ebsperf_emulate_bucket_factor", metavar="FACTOR",
        type=float, default=None,
        help="testing aid: give the emulated burst bucket this share of the credits the model "
             "says it holds (0.7: a bucket 30 %% smaller than claimed, which the burst-"
             "duration check must catch). Default: 1.")
    group.addoption(
        "--emulate-burst-balance", dest="ebsperf_emulate_burst_balance", metavar="PERCENT",
        type=float, default=None,
        help="testing aid: start the emulated bucket at this balance while the model goes by "
             "--burst-balance (or a full bucket): 0 shows an empty bucket the model did not "
             "expect. Default: --burst-balance, else 100.")


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from pytest_ebsperf.plugin import STATE_KEY

    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    try:
        state.session.credits.configure(
            bucket_factor=config.getoption("ebsperf_emulate_bucket_factor"),
            start_pct=config.getoption("ebsperf_emulate_burst_balance"),
            plots=lambda: _plots_dir(config),
            progress=_progress_writer(config))
    except EbsperfError as exc:
        raise pytest.UsageError(str(exc)) from None


def _plots_dir(config: pytest.Config) -> Path | None:
    """``--ebsperf-plots`` (default ``ebsperf-results/plots``; None with ``none``): a knee is
    hard to judge from numbers alone, so time-based checks always draw theirs."""
    from pytest_ebsperf import plots

    return plots.plot_dir(config)


def _progress_writer(config: pytest.Config) -> ProgressWriter | None:
    from pytest_ebsperf.terminal import progress_writer

    return progress_writer(config)
