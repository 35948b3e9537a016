"""pytest hooks of the burst-credit checks: testing-aid options, plots directory, progress line.

``--emulate-timescale`` and ``--ebsperf-plots`` live in :mod:`pytest_ebsperf.config.options` (with
their environment variables; pictures are saved through :mod:`pytest_ebsperf.results.plots`). The two
testing aids that only shape an *emulated* bucket are read here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_ebsperf.credits.progress import ProgressWriter


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    from pytest_ebsperf.plugin.state import STATE_KEY

    state = config.stash.get(STATE_KEY, None)
    if state is None:
        return
    bucket_factor = state.settings.emulate_bucket_factor
    start_pct = state.settings.emulate_burst_balance
    # the credit book is made with the session, when a check first needs it
    state.on_session(lambda session: session.credits.configure(
        bucket_factor=bucket_factor, start_pct=start_pct, plots=lambda: _plots_dir(config),
        progress=_progress_writer(config)))


def _plots_dir(config: pytest.Config) -> Path | None:
    """``--ebsperf-plots`` (default ``ebsperf-results/plots``; None with ``none``): a knee is
    hard to judge from numbers alone, so time-based checks always draw theirs."""
    from pytest_ebsperf.plugin.state import STATE_KEY
    from pytest_ebsperf.results import plots

    state = config.stash.get(STATE_KEY, None)
    return plots.plot_dir(state.settings if state is not None else None,
                          Path(config.invocation_params.dir))


def _progress_writer(config: pytest.Config) -> ProgressWriter | None:
    from pytest_ebsperf.plugin.terminal import progress_writer

    return progress_writer(config)
